"""The login gate: with a dashboard_password set, no page renders until it is entered.

A shared secret, compared in constant time, remembered for the browser session (Streamlit's
session state lives on the server; the secret never goes back to the browser). `agentsla
dashboard` refuses to bind beyond loopback without one (agentsla/commands/dashboard.py).
"""

from __future__ import annotations

import hmac

import streamlit as st

_PASSED_KEY = "_agentsla_gate_passed"


def passed(secret: str) -> bool:
    """Tell whether this session may see the pages; otherwise draw the login form."""
    if not secret or st.session_state.get(_PASSED_KEY):
        return True
    st.title("agentsla")
    with st.form("agentsla-login"):
        given = st.text_input("Password", type="password", key="_agentsla_gate_password")
        submitted = st.form_submit_button("Sign in")
    if submitted:
        if hmac.compare_digest(given.encode(), secret.encode()):
            st.session_state[_PASSED_KEY] = True
            st.session_state.pop("_agentsla_gate_password", None)
            st.rerun()
        st.error("Wrong password.", icon="🔒")
    st.caption("This dashboard asks for the password set as dashboard_password "
               "(AGENTSLA_DASHBOARD_PASSWORD).")
    return False
