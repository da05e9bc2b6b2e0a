"""An alerts.sqlite written before the first failing hop was JSON opens, reads and exports as
before, and takes structured hops from then on."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from agentsla.alerts.incidents.export import render
from agentsla.alerts.incidents.report import document
from agentsla.alerts.incidents.store import IncidentAlert, IncidentStore
from agentsla.alerts.state import Store
from agentsla.contract import FailingHop

OLD_SCHEMA = (Path(__file__).parent / "testdata" / "incidents_schema_v1.sql").read_text()
T = 1_700_000_000.0
#: What 0.1 stored: display text, with spaces and parentheses inside the tool's name.
OLD_TEXT = "tool query (v2) orders db (timeout)"


def _old_file(path: Path) -> None:
    con = sqlite3.connect(path)
    con.executescript(OLD_SCHEMA)
    con.execute("insert into incidents values ('INC-old', 'TaskSuccessLow: chat', 'resolved', "
                "'P0', '{\"task_type\": \"chat\"}', ?, ?, ?, null, null, null, ?, ?, null, null, "
                "'{}', ?)", (OLD_TEXT, T - 30, T, T + 300, T + 900, T + 900))
    con.execute("insert into incident_alerts values ('INC-old', 'fp1', 'TaskSuccessLow', 'P0', "
                "'{\"alertname\": \"TaskSuccessLow\"}', ?, ?, ?)", (OLD_TEXT, T, T + 300))
    con.commit()
    con.close()


def test_old_rows_stay_readable_and_new_ones_are_structured(tmp_path):
    path = tmp_path / "alerts.sqlite"
    _old_file(path)
    store = IncidentStore(Store(path))
    old = store.get("INC-old")
    # kept whole, never split: it displays exactly as before, and names no hop kind to query
    assert old.first_failing_hop == FailingHop(None, OLD_TEXT)
    assert old.first_failing_hop.label() == OLD_TEXT and old.first_failing_hop_share is None
    [member] = store.alerts("INC-old")
    assert member.first_failing_hop.label() == OLD_TEXT
    doc = document(store, "INC-old", T + 1000)
    markdown = render(doc, "md").text
    assert "First failing hop: tool query (v2) orders db (timeout)." in markdown
    # new writes carry the structured value, in the migrated file
    hop = FailingHop("model", "gpt-4o (eu)", "rate_limited", "a" * 16)
    old.first_failing_hop, old.first_failing_hop_share = hop, 0.53
    store.save(old)
    store.put_alert("INC-old", IncidentAlert("fp2", "ModelSlow", "P1", {}, hop, T + 10))
    store.store.close()
    again = IncidentStore(Store(path))  # opening a migrated file again changes nothing
    assert (again.get("INC-old").first_failing_hop, again.get("INC-old").first_failing_hop_share) \
        == (hop, 0.53)
    assert [a.first_failing_hop for a in again.alerts("INC-old")] == [FailingHop(None, OLD_TEXT),
                                                                       hop]
    again.store.close()
