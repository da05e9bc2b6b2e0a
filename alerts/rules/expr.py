"""The alert expression language: parse `metric{filters} by (labels) [window] op threshold`.

Grammar (see docs/alerts.md):

    expr      := condition ('and' condition)*
    condition := vector cmp threshold
    vector    := selector | 'predict_linear' '(' selector ',' DURATION ')'
    selector  := METRIC ['{' matcher (',' matcher)* '}'] ['by' '(' label (',' label)* ')']
                 '[' DURATION ']'        (`by` may also follow the window)
    matcher   := LABEL ('=' | '!=' | '=~' | '!~') STRING
    cmp       := '<' | '<=' | '>' | '>=' | '==' | '!='
    threshold := NUMBER ['%'] | 'objective'

Metric names and labels come from alerts/catalog.py; errors give the column (1-based).
"""

from __future__ import annotations

import operator
import re
from dataclasses import dataclass
from typing import Callable, Union

from agentsla.alerts.rules.catalog import METRICS
from agentsla.config import parse_duration

COMPARATORS: dict[str, Callable[[float, float], bool]] = {
    "<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge,
    "==": operator.eq, "!=": operator.ne}
MATCH_OPS = ("=", "!=", "=~", "!~")

_TOKEN = re.compile(r"""
    (?P<ws>\s+)
  | (?P<string>"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')
  | (?P<window>\[[^\]]*\])
  | (?P<duration_word>\d+(?:\.\d+)?(?:ms|s|m|h|d|w)(?:\d+(?:\.\d+)?(?:ms|s|m|h|d|w))*)(?![A-Za-z0-9_])
  | (?P<number>\d+(?:\.\d+)?(?:[eE][-+]?\d+)?%?)
  | (?P<ident>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<op><=|>=|==|!=|=~|!~|<|>|=)
  | (?P<punct>[{}(),])
""", re.VERBOSE)


class ExprError(ValueError):
    """A parse or validation error at a column (1-based) of the expression."""

    def __init__(self, column: int, message: str) -> None:
        super().__init__(f"column {column}: {message}")
        self.column, self.message = column, message


@dataclass(frozen=True)
class Matcher:
    """One label matcher such as `hop_kind="tool"` or `task_type!~"a|b"`."""

    label: str
    op: str
    value: str

    def matches(self, labels: dict) -> bool:
        """Tell whether a label set satisfies this matcher (a missing label is "")."""
        actual = str(labels.get(self.label) or "")
        if self.op == "=":
            return actual == self.value
        if self.op == "!=":
            return actual != self.value
        found = re.fullmatch(self.value, actual) is not None
        return found if self.op == "=~" else not found

    def __str__(self) -> str:
        return f'{self.label}{self.op}"{self.value}"'


@dataclass(frozen=True)
class Selector:
    """A metric over a trailing window, filtered by matchers and grouped by labels."""

    metric: str
    matchers: tuple[Matcher, ...]
    by: tuple[str, ...]
    window_s: float

    def __str__(self) -> str:
        text = self.metric
        if self.matchers:
            text += "{" + ", ".join(map(str, self.matchers)) + "}"
        if self.by:
            text += " by (" + ", ".join(self.by) + ")"
        return text + f" [{_fmt_duration(self.window_s)}]"

    def equal_labels(self) -> dict[str, str]:
        """Labels fixed by `=` matchers (they scope the alert, e.g. its task_type)."""
        return {m.label: m.value for m in self.matchers if m.op == "="}


@dataclass(frozen=True)
class PredictLinear:
    """The value `horizon_s` from now of a straight line fitted to the selector's history."""

    selector: Selector
    horizon_s: float

    def __str__(self) -> str:
        return f"predict_linear({self.selector}, {_fmt_duration(self.horizon_s)})"


Vector = Union[Selector, PredictLinear]


@dataclass(frozen=True)
class Condition:
    """A vector compared with a number or with the SLO objective of the series' task type."""

    vector: Vector
    op: str
    threshold: float | str  # a number or "objective"

    def __str__(self) -> str:
        threshold = self.threshold if isinstance(self.threshold, str) else f"{self.threshold:g}"
        return f"{self.vector} {self.op} {threshold}"

    @property
    def selector(self) -> Selector:
        """The selector inside the vector."""
        return self.vector.selector if isinstance(self.vector, PredictLinear) else self.vector


@dataclass(frozen=True)
class Expr:
    """Conditions joined by `and`: a series holds when every condition holds for its labels."""

    conditions: tuple[Condition, ...]

    def __str__(self) -> str:
        return " and ".join(map(str, self.conditions))

    @property
    def selector(self) -> Selector:
        """The first condition's selector: it gives the alert its value and scope."""
        return self.conditions[0].selector


def _fmt_duration(seconds: float) -> str:
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60), ("s", 1)):
        if seconds >= size and seconds % size == 0:
            return f"{int(seconds // size)}{unit}"
    return f"{seconds:g}s"


@dataclass
class _Tok:
    kind: str
    text: str
    col: int


def _tokenize(text: str) -> list[_Tok]:
    tokens, pos = [], 0
    while pos < len(text):
        match = _TOKEN.match(text, pos)
        if not match:
            raise ExprError(pos + 1, f"unexpected character {text[pos]!r}")
        if match.lastgroup != "ws":
            tokens.append(_Tok(match.lastgroup or "", match.group(), pos + 1))
        pos = match.end()
    tokens.append(_Tok("end", "", len(text) + 1))
    return tokens


class _Parser:
    def __init__(self, text: str) -> None:
        self.tokens = _tokenize(text)
        self.i = 0

    @property
    def tok(self) -> _Tok:
        return self.tokens[self.i]

    def take(self, text: str | None = None, kind: str | None = None) -> _Tok:
        tok = self.tok
        if (text is not None and tok.text != text) or (kind is not None and tok.kind != kind):
            want = repr(text) if text is not None else kind
            got = repr(tok.text) if tok.text else "the end of the expression"
            raise ExprError(tok.col, f"expected {want}, found {got}")
        self.i += 1
        return tok

    def accept(self, text: str) -> bool:
        if self.tok.text == text:
            self.i += 1
            return True
        return False

    def expr(self) -> Expr:
        conditions = [self.condition()]
        while self.accept("and"):
            conditions.append(self.condition())
        if self.tok.kind != "end":
            raise ExprError(self.tok.col, f"unexpected {self.tok.text!r} after the comparison")
        return Expr(tuple(conditions))

    def condition(self) -> Condition:
        vector = self.vector()
        tok = self.tok
        if tok.text not in COMPARATORS:
            raise ExprError(tok.col, "expected a comparison (<, <=, >, >=, ==, !=) "
                                     f"and a threshold, found {tok.text or 'the end'!r}")
        self.i += 1
        return Condition(vector, tok.text, self.threshold())

    def threshold(self) -> float | str:
        tok = self.tok
        if tok.text == "objective":
            self.i += 1
            return "objective"
        if tok.kind != "number":
            raise ExprError(tok.col, f"expected a number or 'objective', found {tok.text or 'the end'!r}")
        self.i += 1
        return float(tok.text[:-1]) / 100 if tok.text.endswith("%") else float(tok.text)

    def vector(self) -> Vector:
        if self.tok.text == "predict_linear":
            self.i += 1
            self.take("(")
            selector = self.selector()
            self.take(",")
            tok = self.tok
            if tok.kind not in ("duration_word", "number"):
                raise ExprError(tok.col, "expected the prediction horizon, a duration such as 30m")
            self.i += 1
            horizon = self.duration(tok.text, tok.col)
            self.take(")")
            return PredictLinear(selector, horizon)
        return self.selector()

    def selector(self) -> Selector:
        tok = self.take(kind="ident")
        spec = METRICS.get(tok.text)
        if spec is None:
            raise ExprError(tok.col, f"unknown metric {tok.text!r}; known: {', '.join(sorted(METRICS))}")
        matchers = self.matchers(spec) if self.tok.text == "{" else []
        by = self.by(spec) if self.tok.text == "by" else None
        window_tok = self.tok
        if window_tok.kind != "window":
            raise ExprError(window_tok.col, f"expected a window such as [5m] after {tok.text}")
        self.i += 1
        window = self.duration(window_tok.text[1:-1].strip(), window_tok.col + 1)
        if window <= 0:
            raise ExprError(window_tok.col + 1, "the window must be longer than zero")
        if by is None:
            by = self.by(spec) if self.tok.text == "by" else ()
        implied = tuple(Matcher(label, "=", value) for label, value in spec.implied
                        if not any(m.label == label for m in matchers))
        selector = Selector(tok.text, implied + tuple(matchers), by, window)
        _check_reachable(selector, tok.col)
        return selector

    def matchers(self, spec) -> list[Matcher]:
        self.take("{")
        out: list[Matcher] = []
        while not self.accept("}"):
            if out:
                self.take(",")
                if self.accept("}"):
                    break
            label = self.take(kind="ident")
            if label.text not in _filter_labels(spec):
                raise ExprError(label.col, f"{spec.name} cannot be filtered by {label.text!r}; "
                                           f"allowed: {', '.join(_filter_labels(spec))}")
            op = self.tok
            if op.text not in MATCH_OPS:
                raise ExprError(op.col, "expected =, !=, =~ or !~ after the label")
            self.i += 1
            value = self.take(kind="string")
            text = _unquote(value.text)
            if op.text in ("=~", "!~"):
                try:
                    re.compile(text)
                except re.error as exc:
                    raise ExprError(value.col, f"bad regular expression: {exc}") from None
            out.append(Matcher(label.text, op.text, text))
        return out

    def by(self, spec) -> tuple[str, ...]:
        self.take("by")
        self.take("(")
        labels: list[str] = []
        while not self.accept(")"):
            if labels:
                self.take(",")
            label = self.take(kind="ident")
            if label.text not in spec.family.row_labels:
                raise ExprError(label.col, f"{spec.name} cannot be grouped by {label.text!r}; "
                                           f"allowed: {', '.join(spec.family.row_labels)}")
            labels.append(label.text)
        if spec.family.max_by is not None and len(labels) > spec.family.max_by:
            raise ExprError(self.tokens[self.i - 1].col,
                            f"{spec.name} can be grouped by at most {spec.family.max_by} label")
        return tuple(labels)

    @staticmethod
    def duration(text: str, col: int) -> float:
        try:
            return parse_duration(text)
        except ValueError as exc:
            raise ExprError(col, f"bad duration {text!r}: {exc}") from None


def _filter_labels(spec) -> tuple[str, ...]:
    return tuple(dict.fromkeys(spec.family.pushed + spec.family.row_labels))


def _check_reachable(selector: Selector, col: int) -> None:
    """Refuse matchers the query can neither push down nor apply to its rows."""
    family = METRICS[selector.metric].family
    for m in selector.matchers:
        in_rows = m.label in family.row_labels and (family.name != "task" or m.label in selector.by)
        pushed = m.op == "=" and m.label in family.pushed
        if not (in_rows or pushed):
            raise ExprError(col, f"matcher {m} on {selector.metric} needs `by ({m.label})` "
                                 f"(only `=` on {', '.join(family.pushed)} filters inside the query)")


def _unquote(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text[1:-1])


def parse(text: str) -> Expr:
    """Parse an alert expression, or raise ExprError naming the column."""
    if not str(text).strip():
        raise ExprError(1, "the expression is empty")
    return _Parser(str(text)).expr()
