"""The read store: the one interface the read side asks its named questions through.

A question is a name (`sla_totals`, `findings/ghost_work`) whose SQL lives in
`queries/sql/<dialect>/<name>.sql`, one folder per engine. `{{placeholder}}`s in that text are
filled when the question is asked: with a fragment the caller names (`dimension="tenant_id"`),
else with the snippet file of the placeholder's own name (`_<placeholder>.sql`, same folder).
A fragment is a snippet name, a whitelisted column (queries._sql.DIMENSIONS), a table the code
names (`table(name)`: one of a family of tables of the same shape, such as each finding
question's evidence) or "" (nothing): never a user value, which is always a bound parameter. A placeholder may name one table for its
snippet, `{{rollup_tiers(hop_minutes)}}`: the snippet's `{{_}}` stands for it (written in the
SQL files, never by a caller), so one snippet serves every table of the same shape.
"""

from __future__ import annotations

import math
import re
from functools import lru_cache
from importlib import resources
from typing import Any, Mapping, Protocol

import pyarrow as pa

from agentsla.errors import NotOnThisStore
from agentsla.queries._sql import DIMENSIONS

_PLACEHOLDER = re.compile(r"\{\{(\w+)(?:\(([a-z_][a-z0-9_]*)\))?\}\}")
#: In a snippet named with a table (`{{name(table)}}`), the placeholder standing for the table.
_ARGUMENT = "_"
#: A fragment naming a table (`table`): this prefix, then the table's name.
_TABLE = "table:"
_TABLE_NAME = re.compile(r"[a-z_][a-z0-9_]*")
#: Snippets nest (a snippet may hold placeholders); deeper than this is a loop.
_MAX_DEPTH = 8


class ReadStore(Protocol):
    """Answers named read-side questions with bound parameters, on one thread at a time."""

    #: Names the engine and its SQL folder under queries/sql/.
    dialect: str

    def rows(self, question: str, params: Mapping[str, Any] | None = None,
             **fragments: str) -> list[dict]:
        """Run one question; return its rows as dicts (NaN and infinities as None)."""

    def arrow(self, question: str, params: Mapping[str, Any] | None = None,
              **fragments: str) -> pa.Table:
        """Run one question; return its result as an Arrow table."""

    def interrupt(self) -> None:
        """Cancel the question running now (called from another thread, e.g. at shutdown)."""

    def sibling(self) -> "ReadStore | None":
        """Another store over the same data for a second thread of one answer (its own
        snapshot; closed and interrupted with this one), or None where a second thread gains
        nothing or cannot see what this store sees (a shared runner, temporary tables)."""

    def close(self) -> None:
        """Release what the store holds (a cursor); the store is not used afterwards."""


def question_sql(dialect: str, question: str, fragments: Mapping[str, str]) -> str:
    """Return the SQL of a question for one engine, placeholders filled (see the module doc)."""
    return _fill(dialect, _read(dialect, question), tuple(sorted(fragments.items())))


@lru_cache(maxsize=512)
def _fill(dialect: str, text: str, fragments: tuple[tuple[str, str], ...], depth: int = 0,
          argument: str | None = None) -> str:
    if depth > _MAX_DEPTH:
        raise ValueError(f"snippets of {dialect} nest deeper than {_MAX_DEPTH}: a loop?")
    chosen = dict(fragments)

    def fill(match: re.Match) -> str:
        name, table = match.groups()
        if name == _ARGUMENT:
            if argument is None:
                raise ValueError(f"{{{{{_ARGUMENT}}}}} outside a snippet named with a table "
                                 f"({dialect})")
            return argument
        return _fill(dialect, _fragment(dialect, chosen.get(name, name)), fragments, depth + 1,
                     table)

    return _PLACEHOLDER.sub(fill, text)


def table(name: str) -> str:
    """A fragment that puts the table `name` into a question's SQL (a plain lower-case
    identifier, checked: the code names it, never a user)."""
    return _TABLE + _checked_table(name)


def _checked_table(name: str) -> str:
    if not _TABLE_NAME.fullmatch(name):
        raise ValueError(f"not a table name: {name!r}")
    return name


def _fragment(dialect: str, choice: str) -> str:
    if choice == "" or choice in DIMENSIONS:
        return choice  # nothing, or a column from the whitelist: safe as SQL text
    if choice.startswith(_TABLE):
        return _checked_table(choice[len(_TABLE):])  # a plain identifier: safe as SQL text
    return _read(dialect, f"_{choice}")


@lru_cache(maxsize=None)
def _read(dialect: str, name: str) -> str:
    sql = resources.files("agentsla.queries").joinpath("sql")
    path = sql.joinpath(dialect, f"{name}.sql")
    if not re.fullmatch(r"[a-z0-9_]+(/[a-z0-9_]+)*", name):
        raise ValueError(f"no question or snippet {name!r} for the {dialect} store")
    if not path.is_file():
        if sql.joinpath("duckdb", f"{name}.sql").is_file():
            raise NotOnThisStore(f"the {dialect} store does not answer {name!r} yet; "
                                 "docs/scale-out.md lists what it answers")
        raise ValueError(f"no question or snippet {name!r} for the {dialect} store")
    return path.read_text(encoding="utf-8")


def bound(sql: str, params: Mapping[str, Any] | None, marker: str = "$") -> dict[str, Any]:
    """Return the parameters a statement names (`$name`), so callers may pass a superset."""
    wanted = set(re.findall(re.escape(marker) + r"([a-z_][a-z0-9_]*)", sql))
    return {k: v for k, v in (params or {}).items() if k in wanted}


def plain(value: Any) -> Any:
    """Return a value as JSON can carry it: NaN and infinities (an empty aggregate) as None."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value
