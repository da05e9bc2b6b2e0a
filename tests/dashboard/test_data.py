"""dashboard.data.call_all: a page's API calls are made at once, and each answers for itself."""

from __future__ import annotations

import threading

from streamlit.testing.v1 import AppTest

from agentsla.dashboard import data
from agentsla.errors import AgentslaError

SCRIPT = """
import streamlit as st
from agentsla.dashboard import data
from agentsla.errors import AgentslaError
data.set_target(data.ApiTarget("http://127.0.0.1:9"))
sla, slo, broken = data.call_all(("sla", {"window": st.query_params["window"]}),
                                 ("slo", {}), ("tasks", {"window": st.query_params["window"]}))
st.write(sla.result()["asked"])
st.write(slo.result()["asked"])
try:
    broken.result()
except AgentslaError as exc:
    st.error(exc.message)
"""


class _BarrierClient:
    """An API client whose calls each wait until all three have arrived (they would wait
    forever, here 10 s, if a page asked them one after the other)."""

    def __init__(self) -> None:
        self.arrived = threading.Barrier(3, timeout=10)

    def sla(self, window: str) -> dict:
        self.arrived.wait()
        return {"asked": f"sla {window}"}

    def slo(self) -> dict:
        self.arrived.wait()
        return {"asked": "slo"}

    def tasks(self, window: str) -> dict:
        self.arrived.wait()
        raise AgentslaError(f"tasks {window} failed")


def test_calls_are_made_at_once_and_each_answers_or_fails_for_itself(tmp_path,
                                                                     monkeypatch) -> None:
    client = _BarrierClient()
    monkeypatch.setattr(data, "_client", lambda where, timeout=data.TIMEOUT_S: client)
    app = tmp_path / "app.py"
    app.write_text(SCRIPT)
    at = AppTest.from_file(str(app), default_timeout=30)
    at.query_params["window"] = "7h"  # a window no other test asks: nothing cached
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert [m.value for m in at.markdown] == ["sla 7h", "slo"]
    assert [e.value for e in at.error] == ["tasks 7h failed"]
    assert client.arrived.n_waiting == 0 and not client.arrived.broken
