# Sourced by scripts/demo and scripts/test: create .venv and install agentsla with EXTRAS.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PY="${PYTHON:-python3}"
if ! "$PY" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
    echo "agentsla needs Python 3.11 or newer as '$PY' (set PYTHON=...)" >&2
    exit 1
fi
if [ ! -x .venv/bin/python ]; then
    echo "==> creating .venv"
    "$PY" -m venv .venv
fi
stamp=".venv/.installed-${EXTRAS}-$(cat pyproject.toml | sha1sum | cut -c1-12)"
if [ ! -f "$stamp" ]; then
    echo "==> installing agentsla[${EXTRAS}] into .venv (log: .venv/install.log)"
    if ! { .venv/bin/python -m pip install --disable-pip-version-check --upgrade pip &&
           .venv/bin/python -m pip install --disable-pip-version-check -e ".[${EXTRAS}]"; } \
           >.venv/install.log 2>&1; then
        tail -n 30 .venv/install.log >&2
        echo "installing agentsla failed; the whole log is in .venv/install.log" >&2
        exit 1
    fi
    touch "$stamp"
fi
export PATH="$ROOT/.venv/bin:$PATH"
# The dashboard draws its charts with plotly.js's cartesian bundle, pinned in
# dashboard/plotly_component/package-lock.json (docs/dashboard.md): npm installs it beside the
# component's chart.js. Debian: `apt-get install npm`.
chart_js="dashboard/plotly_component/node_modules/plotly.js-cartesian-dist-min/plotly-cartesian.min.js"
if [ ! -f "$chart_js" ]; then
    if ! command -v npm >/dev/null; then
        echo "==> installing Debian's npm for the dashboard's chart bundle"
        apt-get install -y --no-install-recommends npm >/dev/null 2>&1 ||
            { apt-get update >/dev/null && apt-get install -y --no-install-recommends npm >/dev/null; } ||
            { echo "the dashboard's charts need npm (apt-get install npm)" >&2; exit 1; }
    fi
    echo "==> installing the dashboard's plotly.js bundle (npm ci in dashboard/plotly_component)"
    (cd dashboard/plotly_component && npm ci --no-audit --no-fund --ignore-scripts --silent)
fi
