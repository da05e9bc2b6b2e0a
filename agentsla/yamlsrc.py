"""YAML with line numbers: load a document keeping where each mapping value came from.

Rule, routing and test files report errors as `file:line: message`; PyYAML's node marks give
the line, so documents are composed into nodes and converted here, remembering the marks.
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
        self.line = 0

    def line_of(self, key: str) -> int:
        """Line of a key's value, else of the mapping itself."""
        return self.lines.get(key, self.line)


class SourceList(list):
    """A list that remembers the line of each item."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.lines: list[int] = []
        self.line = 0


class SourceError(ConfigError):
    """An error at a place in a source file: `file:line: message`."""

    def __init__(self, source: str, line: int, message: str) -> None:
        super().__init__(f"{source}:{line}: {message}" if line else f"{source}: {message}")
        self.source, self.line, self.detail = source, line, message


def load(text: str, source: str) -> Any:
    """Parse YAML text into SourceDict/SourceList/scalars, or raise SourceError."""
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.MarkedYAMLError as exc:
        line = exc.problem_mark.line + 1 if exc.problem_mark else 0
        raise SourceError(source, line, f"not valid YAML: {exc.problem}") from None
    return None if node is None else _convert(node)


def _convert(node: yaml.Node) -> Any:
    if isinstance(node, yaml.MappingNode):
        out = SourceDict()
        out.line = node.start_mark.line + 1
        for key_node, value_node in node.value:
            key = _convert(key_node)
            out[str(key)] = _convert(value_node)
            out.lines[str(key)] = value_node.start_mark.line + 1
            out.columns[str(key)] = value_node.start_mark.column + 1
        return out
    if isinstance(node, yaml.SequenceNode):
        items = SourceList(_convert(n) for n in node.value)
        items.lines = [n.start_mark.line + 1 for n in node.value]
        items.line = node.start_mark.line + 1
        return items
    return yaml.SafeLoader(" ").construct_object(node, deep=True)


def line_of(container: Any, key: Any) -> int:
    """Line of `container[key]` when known, else 0."""
    if isinstance(container, SourceDict):
        return container.line_of(str(key))
    if isinstance(container, SourceList) and isinstance(key, int) and key < len(container.lines):
        return container.lines[key]
    return getattr(container, "line", 0)
