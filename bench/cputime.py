"""A bench helper: record the process CPU time of each call of a function."""

from __future__ import annotations

import functools
import time
from typing import Any, Callable


def recording_cpu(function: Callable[..., Any], into: list[float]) -> Callable[..., Any]:
    """Return `function` wrapped to append each call's CPU seconds (this process) to `into`."""

    @functools.wraps(function)
    def timed(*args: Any, **kwargs: Any) -> Any:
        start = time.process_time()
        try:
            return function(*args, **kwargs)
        finally:
            into.append(time.process_time() - start)

    return timed
