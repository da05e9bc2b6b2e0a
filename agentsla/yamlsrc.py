"""YAML with line numbers: load a document keeping where each mapping value came from.

Rule, routing and test files report errors as `file:line: message`, timeout-chain files (the
budget audit) as `file:line:column: message`; PyYAML's node marks give both, so documents are
composed into nodes and converted here, remembering the marks. A key given twice in one mapping
is an error (plain YAML lets the last one win silently), as in Prometheus' strict loading.
"""

from __future__ import annotations

from typing import Any

import yaml

from agentsla.errors import ConfigError


class SourceDict(dict):
    """A mapping that remembers the line (1-based) of each key's value."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lines: dict[str, int] = {}
        self.columns: dict[str, int] = {}
        self.key_places: dict[str, tuple[int, int]] = {}
        self.line = 0
        self.column = 0

    def line_of(self, key: str) -> int:
        """Line of a key's value, else of the mapping itself."""
        return self.lines.get(key, self.line)

    def place_of(self, key: str) -> tuple[int, int]:
        """(line, column) of a key's value, else of the mapping itself."""
        if key in self.lines:
            return self.lines[key], self.columns[key]
        return self.line, self.column

    def key_place(self, key: str) -> tuple[int, int]:
        """(line, column) where a key itself is written."""
        return self.key_places.get(key, (self.line, self.column))


class SourceList(list):
    """A list that remembers the line of each item."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.lines: list[int] = []
        self.columns: list[int] = []
        self.line = 0
        self.column = 0


class SourceError(ConfigError):
    """An error at a place in a source file: `file:line: message`."""

    def __init__(self, source: str, line: int, message: str, column: int = 0) -> None:
        where = f"{source}:{line}:{column}" if line and column else (
            f"{source}:{line}" if line else source)
        super().__init__(f"{where}: {message}")
        self.source, self.line, self.column, self.detail = source, line, column, message


def load(text: str, source: str) -> Any:
    """Parse YAML text into SourceDict/SourceList/scalars, or raise SourceError."""
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, column = (mark.line + 1, mark.column + 1) if mark else (0, 0)
        raise SourceError(source, line, f"not valid YAML: {exc.problem}", column) from None
    return None if node is None else _convert(node, source)


def _place(node: yaml.Node) -> tuple[int, int]:
    return node.start_mark.line + 1, node.start_mark.column + 1


def _convert(node: yaml.Node, source: str) -> Any:
    if isinstance(node, yaml.MappingNode):
        out = SourceDict()
        out.line, out.column = _place(node)
        for key_node, value_node in node.value:
            key = str(_convert(key_node, source))
            if key in out:
                line, column = _place(key_node)
                raise SourceError(source, line, f"duplicate key {key!r}", column)
            out[key] = _convert(value_node, source)
            out.lines[key], out.columns[key] = _place(value_node)
            out.key_places[key] = _place(key_node)
        return out
    if isinstance(node, yaml.SequenceNode):
        items = SourceList(_convert(n, source) for n in node.value)
        places = [_place(n) for n in node.value]
        items.lines = [line for line, _ in places]
        items.columns = [column for _, column in places]
        items.line, items.column = _place(node)
        return items
    return yaml.SafeLoader(" ").construct_object(node, deep=True)


def line_of(container: Any, key: Any) -> int:
    """Line of `container[key]` when known, else 0."""
    if isinstance(container, SourceDict):
        return container.line_of(str(key))
    if isinstance(container, SourceList) and isinstance(key, int) and key < len(container.lines):
        return container.lines[key]
    return getattr(container, "line", 0)
