"""Fixtures for the alert tests: databases, receivers, a real Alertmanager, an SMTP server."""

from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path

import duckdb
import httpx
import pytest

from alertkit import HookServer
from serverproc import free_port

ALERTMANAGER = "/usr/bin/prometheus-alertmanager"


@pytest.fixture
def hook():
    """A recording webhook receiver on a free loopback port."""
    with HookServer() as server:
        yield server


@pytest.fixture
def alertmanager(tmp_path: Path):
    """A real Alertmanager (Debian's prometheus-alertmanager) on a free loopback port."""
    binary = shutil.which("prometheus-alertmanager") or (ALERTMANAGER if Path(ALERTMANAGER).exists() else None)
    if binary is None:
        pytest.fail("prometheus-alertmanager is not installed: scripts/test installs it "
                    "(apt-get install prometheus-alertmanager)")
    port = free_port()
    config = tmp_path / "am.yml"
    config.write_text("route:\n  receiver: blackhole\n  group_wait: 1s\n  group_interval: 1s\n"
                      "receivers:\n  - name: blackhole\n")
    proc = subprocess.Popen(
        [binary, f"--config.file={config}", f"--storage.path={tmp_path / 'am-data'}",
         f"--web.listen-address=127.0.0.1:{port}", "--cluster.listen-address=",
         "--log.level=warn"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 15
    while True:
        try:
            if httpx.get(url + "/-/ready", timeout=1).status_code == 200:
                break
        except httpx.TransportError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            pytest.fail(f"Alertmanager did not start: {proc.stderr.read().decode()[-2000:]}")
        time.sleep(0.1)
    yield url
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


@pytest.fixture(scope="session")
def incident_world(tmp_path_factory):
    """A simulated tool outage and the alert state it produced: (db, data_dir, anchor, config).

    Tests that change state copy `data_dir` first; the DuckDB file is read only.
    """
    import incidentkit
    from alertkit import HookServer

    root = tmp_path_factory.mktemp("incident")
    db = root / "agentsla.duckdb"
    anchor = incidentkit.simulate(db)
    with HookServer() as hook:
        config = incidentkit.alert_config(root, hook.url)
        con = duckdb.connect(str(db), read_only=True)
        try:
            svc = incidentkit.service(con, config, root / "data", anchor)
            incidentkit.drive(svc, anchor, anchor + incidentkit.END_S)
        finally:
            con.close()
        delivered = len(hook.ok())
    return {"db": db, "data_dir": root / "data", "anchor": anchor, "config": config,
            "delivered": delivered}
