"""Static audit of a declared timeout chain: does each inner worst case fit what its caller has left?

The chain file (YAML, see docs/findings.md) lists `chain`, the hops from the outside in (each
calls the next), and `calls`, what the innermost chain hop calls during one task. The rules:

1. every hop has a timeout;
2. an inner hop's worst case fits in what its caller has left (the tightest timeout around it);
3. local worst cases summed over the expected number of calls fit that same limit;
4. timeouts are not retried.

Worst case of one hop, with A = retries + 1 attempts, C the connect timeout, R the read timeout
and P = C + R (or `timeout`, when given, capping it) the cost of one attempt:
- no retry (A = 1 or no `retry_on`): P;
- retrying only `connection_error`: a failed connect costs C, so (A - 1) × C + P + backoff;
- retrying anything that fails after the request was sent (timeout, server_error, rate_limited):
  A × P + backoff;
backoff being the sum of the A - 1 waits between attempts (backoff × multiplier^i, capped).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentsla import yamlsrc
from agentsla.config import parse_duration
from agentsla.errors import PermanentError
from agentsla.yamlsrc import SourceDict, SourceList

RULES = {
    "missing_timeout": "every hop has a timeout",
    "inner_exceeds_caller": "an inner hop's worst case fits what its caller has left",
    "calls_exceed_limit": "local timeouts summed over the expected calls fit the global one",
    "timeout_retried": "timeouts are not retried",
}
_NO_TIMEOUT = (None, "none", "never", "no", "off")
_HOP_KEYS = {"name", "kind", "timeout", "connect_timeout", "read_timeout", "retries", "attempts",
             "retry_on", "backoff", "backoff_multiplier", "max_backoff", "expected_calls", "note"}
_TOP_KEYS = {"chain", "calls", "max_agent_loops"}


class ChainError(PermanentError):
    """The chain file is malformed; the message starts with `file:line:column`."""


@dataclass(frozen=True)
class Hop:
    """One declared hop with its timeouts (ms; None = none) and retry policy."""

    name: str
    line: int
    kind: str | None = None
    timeout_ms: float | None = None
    connect_ms: float | None = None
    read_ms: float | None = None
    attempts: int = 1
    retry_on: tuple[str, ...] = ()
    backoff_ms: float = 0.0
    backoff_multiplier: float = 1.0
    max_backoff_ms: float | None = None
    expected_calls: int = 1

    @property
    def has_timeout(self) -> bool:
        """True when every attempt is bounded: a timeout, or both connect and read timeouts."""
        return bool(self.timeout_ms) or bool(self.connect_ms and self.read_ms)

    @property
    def attempt_ms(self) -> float | None:
        """Most one attempt can take, or None when unbounded."""
        split = self.connect_ms + self.read_ms if self.connect_ms and self.read_ms else None
        if self.timeout_ms and split:
            return min(self.timeout_ms, split)
        return self.timeout_ms or split


@dataclass(frozen=True)
class Chain:
    """A parsed chain file."""

    path: str
    chain: tuple[Hop, ...]
    calls: tuple[Hop, ...] = ()
    max_agent_loops: int | None = None


@dataclass(frozen=True)
class WorstCase:
    """A hop's worst case in ms and the arithmetic behind it."""

    ms: float
    arithmetic: str

    @property
    def text(self) -> str:
        """The arithmetic and its result: `3 attempts × 55 s = 165 s` (or just `60 s`)."""
        total = s(self.ms)
        return total if self.arithmetic == total else f"{self.arithmetic} = {total}"


@dataclass(frozen=True)
class Violation:
    """One broken rule, with the arithmetic shown in the message."""

    rule: str
    hop: str
    line: int
    message: str
    worst_ms: float | None = None
    limit_ms: float | None = None

    def as_json(self) -> dict:
        """Describe the violation for --json."""
        return {"rule": self.rule, "rule_text": RULES[self.rule], "hop": self.hop,
                "line": self.line, "message": self.message, "worst_ms": self.worst_ms,
                "limit_ms": self.limit_ms}


@dataclass
class _Limit:
    ms: float
    hop: str
    around: list[str] = field(default_factory=list)


def s(ms: float | None) -> str:
    """Format milliseconds as seconds for the arithmetic: `45 s`, `1.5 s`, `250 ms`."""
    if ms is None:
        return "none"
    if ms < 1000:
        return f"{ms:g} ms"
    return f"{ms / 1000:g} s"


# -- the worst case --------------------------------------------------------------------------

def _backoff(hop: Hop) -> tuple[float, str]:
    waits = []
    for i in range(hop.attempts - 1):
        wait = hop.backoff_ms * hop.backoff_multiplier ** i
        waits.append(min(wait, hop.max_backoff_ms) if hop.max_backoff_ms is not None else wait)
    total = sum(waits)
    if not total:
        return 0.0, ""
    if len(set(waits)) == 1:
        return total, f" + {len(waits)} × {s(waits[0])} backoff"
    return total, " + backoff " + " + ".join(s(w) for w in waits)


def _attempt_text(hop: Hop) -> str:
    if hop.connect_ms and hop.read_ms and hop.attempt_ms == hop.connect_ms + hop.read_ms:
        return f"({s(hop.connect_ms)} connect + {s(hop.read_ms)} read)"
    return s(hop.attempt_ms)


def worst_case(hop: Hop) -> WorstCase | None:
    """Return the most time one call of the hop may take, retries included (None: unbounded)."""
    per_attempt = hop.attempt_ms
    if per_attempt is None:
        return None
    if hop.attempts == 1 or not hop.retry_on:
        return WorstCase(per_attempt, _attempt_text(hop))
    backoff, backoff_text = _backoff(hop)
    retries = hop.attempts - 1
    only_connect = set(hop.retry_on) == {"connection_error"}
    if only_connect and hop.connect_ms and hop.read_ms:
        # A connection failure costs at most the connect timeout; the last attempt runs in full.
        total = retries * hop.connect_ms + per_attempt + backoff
        retried = f"{s(hop.connect_ms)}" if retries == 1 else f"{retries} × {s(hop.connect_ms)}"
        text = f"{retried} failed connect + {_attempt_text(hop)}{backoff_text}"
        return WorstCase(total, text)
    total = hop.attempts * per_attempt + backoff
    return WorstCase(total, f"{hop.attempts} attempts × {_attempt_text(hop)}{backoff_text}")


# -- the rules -------------------------------------------------------------------------------

def _missing_timeouts(chain: Chain) -> list[Violation]:
    found = []
    for hop in chain.chain + chain.calls:
        if hop.has_timeout:
            continue
        if hop.connect_ms and not hop.read_ms:
            why = "no read timeout: once connected it waits forever for the answer"
        elif hop.read_ms and not hop.connect_ms:
            why = "no connect timeout: a dead host is waited on forever"
        else:
            why = "no timeout: it waits forever on a hung dependency"
        found.append(Violation("missing_timeout", hop.name, hop.line,
                               f"{hop.name}: {why}; set one that fits its caller's budget"))
    return found


def _limits(chain: Chain) -> list[_Limit | None]:
    """For each chain hop, the tightest per-attempt timeout among the hops around it (or None)."""
    limits: list[_Limit | None] = []
    tightest: _Limit | None = None
    around: list[str] = []
    for hop in chain.chain:
        limits.append(tightest)
        if hop.attempt_ms:
            around.append(f"{hop.name} {s(hop.attempt_ms)}")
            if tightest is None or hop.attempt_ms < tightest.ms:
                tightest = _Limit(hop.attempt_ms, hop.name)
            tightest = _Limit(tightest.ms, tightest.hop, list(around))
    limits.append(tightest)  # what the innermost chain hop's calls have
    return limits


def _limit_text(limit: _Limit) -> str:
    if len(limit.around) > 1:
        return f"the {s(limit.ms)} {limit.hop} allows (tightest of {', '.join(limit.around)})"
    return f"the {s(limit.ms)} {limit.hop} allows"


def _inner_exceeding(chain: Chain) -> list[Violation]:
    found = []
    limits = _limits(chain)
    placed = [(hop, limits[i]) for i, hop in enumerate(chain.chain)]
    placed += [(hop, limits[-1]) for hop in chain.calls]
    for hop, limit in placed:
        worst = worst_case(hop)
        if limit is None or worst is None or worst.ms <= limit.ms:
            continue
        found.append(Violation(
            "inner_exceeds_caller", hop.name, hop.line,
            f"{hop.name}: worst case {worst.text} > {_limit_text(limit)}; "
            f"lower its timeouts or retries so it fits", worst.ms, limit.ms))
    return found


def _calls_exceeding(chain: Chain) -> list[Violation]:
    limit = _limits(chain)[-1]
    worst = [(hop, worst_case(hop)) for hop in chain.calls]
    if limit is None or not worst or any(w is None for _, w in worst):
        return []
    if sum(hop.expected_calls for hop in chain.calls) <= 1:
        return []  # a single call is judged by the inner-hop rule
    total = sum(hop.expected_calls * w.ms for hop, w in worst)
    if total <= limit.ms:
        return []
    terms = " + ".join(f"{hop.expected_calls} × {hop.name} {s(w.ms)}" for hop, w in worst)
    return [Violation(
        "calls_exceed_limit", chain.chain[-1].name if chain.chain else "calls", chain.calls[0].line,
        f"calls per task: {terms} = {s(total)} > {_limit_text(limit)}; give each call the budget "
        f"left instead of a fixed timeout, or expect fewer calls", total, limit.ms)]


def _timeouts_retried(chain: Chain) -> list[Violation]:
    found = []
    for hop in chain.chain + chain.calls:
        if hop.attempts < 2 or "timeout" not in hop.retry_on:
            continue
        slow = hop.read_ms or hop.attempt_ms
        retries = hop.attempts - 1
        wasted = f" = {s(retries * slow)}" if slow else ""
        found.append(Violation(
            "timeout_retried", hop.name, hop.line,
            f"{hop.name}: retries timeouts: {retries} retr{'y' if retries == 1 else 'ies'} × "
            f"{s(slow)}{wasted} more waiting on a dependency that just proved slow; retry "
            f"connection errors only (or fail over)", retries * slow if slow else None))
    return found


def audit(chain: Chain) -> list[Violation]:
    """Check the chain against the four rules; return the violations (empty when clean)."""
    return (_missing_timeouts(chain) + _inner_exceeding(chain) + _calls_exceeding(chain)
            + _timeouts_retried(chain))


def report(chain: Chain, violations: list[Violation]) -> dict:
    """Describe the audit for --json: each hop's worst case and the violations."""
    hops = []
    for hop in chain.chain + chain.calls:
        worst = worst_case(hop)
        hops.append({"name": hop.name, "kind": hop.kind, "line": hop.line,
                     "expected_calls": hop.expected_calls, "attempts": hop.attempts,
                     "worst_ms": worst.ms if worst else None,
                     "worst_case": worst.text if worst else None})
    return {"file": chain.path, "ok": not violations, "hops": hops,
            "violations": [v.as_json() for v in violations]}


# -- the file --------------------------------------------------------------------------------

class _Problem(Exception):
    """A mistake at (line, column) of the chain file; parse_chain adds the file's name."""

    def __init__(self, place: tuple[int, int], message: str) -> None:
        super().__init__(message)
        self.place, self.message = place, message


def _fail(place: tuple[int, int], message: str) -> _Problem:
    return _Problem(place, message)


def _duration(entry: SourceDict, key: str) -> float | None:
    value = entry.get(key)
    if value in _NO_TIMEOUT or value == 0:
        return None
    try:
        return parse_duration(value) * 1000.0
    except ValueError as exc:
        raise _fail(entry.place_of(key), f"bad {key} {value!r}: {exc} (or none)") from None


def _count(entry: SourceDict, key: str, default: int, least: int = 0) -> int:
    value = entry.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        raise _fail(entry.place_of(key), f"bad {key} {value!r}: expected a whole number >= {least}")
    return value


def _number(entry: SourceDict, key: str, default: float) -> float:
    value = entry.get(key, default)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 1:
        raise _fail(entry.place_of(key), f"bad {key} {value!r}: expected a number >= 1")
    return float(value)


def _attempts(entry: SourceDict) -> int:
    if "retries" in entry and "attempts" in entry:
        raise _fail(entry.place_of("attempts"), "give retries or attempts, not both "
                    "(attempts = retries + 1)")
    if "attempts" in entry:
        return _count(entry, "attempts", 1, least=1)
    return _count(entry, "retries", 0) + 1


def _retry_on(entry: SourceDict) -> tuple[str, ...]:
    value = entry.get("retry_on", [])
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise _fail(entry.place_of("retry_on"), "retry_on must be a list of error types such as "
                    "[connection_error]")
    return tuple(value)


def _hop(entry: Any, place: tuple[int, int], default_calls: int) -> Hop:
    if not isinstance(entry, SourceDict):
        raise _fail(place, "a hop must be a mapping with at least a name")
    unknown = sorted(set(entry) - _HOP_KEYS)
    if unknown:
        raise _fail(entry.key_place(unknown[0]), f"unknown key {unknown[0]!r}; expected one of "
                    f"{', '.join(sorted(_HOP_KEYS))}")
    if not isinstance(entry.get("name"), str) or not entry["name"]:
        raise _fail(entry.place_of("name"), "every hop needs a name")
    kind = entry.get("kind")
    attempts = _attempts(entry)
    return Hop(
        name=entry["name"], line=entry.line, kind=kind,
        timeout_ms=_duration(entry, "timeout"), connect_ms=_duration(entry, "connect_timeout"),
        read_ms=_duration(entry, "read_timeout"), attempts=attempts, retry_on=_retry_on(entry),
        backoff_ms=_duration(entry, "backoff") or 0.0,
        backoff_multiplier=_number(entry, "backoff_multiplier", 1.0),
        max_backoff_ms=_duration(entry, "max_backoff"),
        expected_calls=_count(entry, "expected_calls",
                              default_calls if kind == "model" else 1, least=1),
    )


def _hops(doc: SourceDict, key: str, default_calls: int) -> tuple[Hop, ...]:
    if key not in doc:
        return ()
    value = doc[key]
    if not isinstance(value, SourceList):
        raise _fail(doc.place_of(key), f"{key} must be a list of hops")
    return tuple(_hop(item, (value.lines[i], value.columns[i]), default_calls)
                 for i, item in enumerate(value))


def parse_chain(text: str, path: str = "<chain>") -> Chain:
    """Parse a chain file's text; raise ChainError naming the line of any mistake."""
    try:
        return _chain(yamlsrc.load(text, path), path)
    except yamlsrc.SourceError as exc:
        raise ChainError(str(exc)) from None
    except _Problem as exc:
        line, column = exc.place
        raise ChainError(f"{path}:{line}:{column}: {exc.message}") from None


def _chain(doc: Any, path: str) -> Chain:
    if not isinstance(doc, SourceDict):
        raise ChainError(f"{path}:1:1: expected a mapping with a `chain` list of hops")
    unknown = sorted(set(doc) - _TOP_KEYS)
    if unknown:
        raise _fail(doc.key_place(unknown[0]), f"unknown key {unknown[0]!r}; expected chain, "
                    "calls or max_agent_loops")
    if "chain" not in doc:
        raise _fail((doc.line, doc.column), "missing `chain`: the hops from the outside in")
    loops = _count(doc, "max_agent_loops", 0, least=1) if "max_agent_loops" in doc else None
    chain = Chain(path, _hops(doc, "chain", 1), _hops(doc, "calls", loops or 1), loops)
    if not chain.chain:
        raise _fail(doc.place_of("chain"), "chain needs at least one hop")
    return chain


def load_chain(path: str | Path) -> Chain:
    """Read and parse a chain file."""
    try:
        text = Path(path).read_text()
    except OSError as exc:
        raise ChainError(f"cannot read {path}: {exc.strerror}") from None
    return parse_chain(text, str(path))
