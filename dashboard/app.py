"""The agentsla dashboard: a Streamlit multipage app reading only the query API.

Run it with `agentsla dashboard` (or `streamlit run dashboard/app.py`); the API address comes
from AGENTSLA_API (default http://127.0.0.1:8710), the token from AGENTSLA_API_TOKEN, the login
password (dashboard/gate.py) from AGENTSLA_DASHBOARD_PASSWORD.
"""

from __future__ import annotations

import os
from pathlib import Path

import streamlit as st

from agentsla.config import load_config
from agentsla.dashboard import data, filters, gate, render
from agentsla.errors import AgentslaError

# Not `pages/`: a folder of that name beside the main script makes Streamlit run its legacy
# multipage mode for the first request after start, executing a page without this script.
PAGES_DIR = Path(__file__).parent / "views"
#: (file, title, icon, url path) of every page, in the order of the navigation.
PAGES = (
    ("overview.py", "Overview", ":material/monitoring:", "overview"),
    ("root_causes.py", "Root causes", ":material/troubleshoot:", "root-causes"),
    ("hops.py", "Hops", ":material/hub:", "hops"),
    ("budgets.py", "Budgets & findings", ":material/timer:", "budgets"),
    ("tasks.py", "Task explorer", ":material/search:", "tasks"),
    ("alerts.py", "Alerts", ":material/notifications:", "alerts"),
    ("incidents.py", "Incidents", ":material/emergency:", "incidents"),
)


def main() -> None:
    """Configure the page, the API target, the sidebar filters, and run the chosen page."""
    st.set_page_config(page_title="agentsla", page_icon=":material/monitoring:", layout="wide")
    try:
        # config enters once, at the edge: the loader reads the environment it is given
        config = load_config({}, dict(os.environ))
    except AgentslaError as exc:
        st.error(f"The dashboard is misconfigured: {exc.message}")
        st.stop()
    if not gate.passed(config.client.dashboard_password):
        st.stop()
    client = config.client
    data.set_target(data.ApiTarget(client.api, config.server.api_token or None, client.api_ca_file,
                                   client.api_cert_file, client.api_key_file))
    navigation = st.navigation([
        st.Page(PAGES_DIR / file, title=title, icon=icon, url_path=url, default=i == 0)
        for i, (file, title, icon, url) in enumerate(PAGES)])
    filters.sidebar()
    if st.sidebar.button("Refresh now", icon=":material/refresh:"):
        data.clear()
    st.sidebar.caption(f"API: {data.target().url}")
    navigation.run()
    render.freeze_heap()


main()
