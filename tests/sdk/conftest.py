"""Make the cascade example's modules importable by the end-to-end test."""

from __future__ import annotations

import sys
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "budget_cascade"
if str(EXAMPLE) not in sys.path:
    sys.path.insert(0, str(EXAMPLE))
