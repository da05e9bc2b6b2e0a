"""The one YAML loader with line numbers (agentsla.yamlsrc), shared by alert files and the budget audit."""

from __future__ import annotations

import pytest

from agentsla import yamlsrc
from agentsla.alerts.rules.groups import load_rule_file


def test_places_of_values_keys_and_items():
    doc = yamlsrc.load("a: 1\nlist:\n  - x\n  -   y\n", "f.yaml")
    assert doc.place_of("a") == (1, 4)
    assert doc.key_place("list") == (2, 1)
    assert (doc["list"].lines, doc["list"].columns) == ([3, 4], [5, 7])


def test_a_key_given_twice_is_refused_where_it_repeats():
    with pytest.raises(yamlsrc.SourceError) as err:
        yamlsrc.load("groups:\n  - name: a\n    name: b\n", "rules.yaml")
    assert str(err.value) == "rules.yaml:3:5: duplicate key 'name'"


def test_rule_files_refuse_duplicate_keys(tmp_path):
    # a repeated `expr` would otherwise silently replace the first one
    path = tmp_path / "rules.yaml"
    path.write_text("groups:\n  - name: g\n    rules:\n      - alert: A\n"
                    "        expr: task_success_rate [5m] < 0.9\n"
                    "        expr: task_success_rate [5m] < 0.5\n")
    with pytest.raises(yamlsrc.SourceError, match=r"rules.yaml:6: .*duplicate key 'expr'"):
        load_rule_file(path)


def test_invalid_yaml_names_line_and_column():
    with pytest.raises(yamlsrc.SourceError, match=r"^x.yaml:2:\d+: not valid YAML"):
        yamlsrc.load("a: [1,\nb: }\n", "x.yaml")
