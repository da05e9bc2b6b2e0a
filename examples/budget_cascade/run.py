"""Play the post-mortem's cascade without and with agentsla-budget, and print agentsla's verdict.

Each run starts a fresh `agentsla serve` (unless --otlp/--api point at one per run), then the
chain on loopback: model server (8 s tail), queue, gateway (3 s budget, uvicorn), worker (2 s
read timeout x 3 attempts). Prints the figures as Markdown; --svg writes the picture.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import httpx

import chain
import figures
import picture


@contextmanager
def agentsla_serve(python: str, data_dir: Path) -> Iterator[tuple[str, str]]:
    """Run `python -m agentsla serve` on free loopback ports; yield its OTLP and API base URLs."""
    otlp, grpc, api = (chain.free_port() for _ in range(3))
    proc = subprocess.Popen([python, "-m", "agentsla", "serve", "--data-dir",
                             str(data_dir), "--otlp-http-port", str(otlp), "--otlp-grpc-port",
                             str(grpc), "--api-port", str(api)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    api_url = f"http://127.0.0.1:{api}"
    try:
        chain.wait_listening(api, proc)
        chain.wait_for(lambda: httpx.get(f"{api_url}/api/v1/health").status_code == 200,
                        "agentsla serve")
        yield f"http://127.0.0.1:{otlp}", api_url
    finally:
        proc.terminate()
        proc.wait(30)


def main() -> None:
    """Run both modes and print the before/after figures."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--svg", type=Path, help="write the picture of both runs here")
    parser.add_argument("--workdir", type=Path, help="keep logs and data here")
    parser.add_argument("--agentsla-python", default=sys.executable,
                        help="the Python whose agentsla runs the server (default: this one)")
    args = parser.parse_args()
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="budget-cascade-"))
    summaries, drawn = {}, []
    for mode in ("before", "after"):
        with agentsla_serve(args.agentsla_python, workdir / f"agentsla-{mode}") as (otlp, api):
            started = time.monotonic()
            run = chain.play(mode, otlp, workdir / mode)
            print(f"{mode}: played in {time.monotonic() - started:.0f} s", file=sys.stderr)
            summaries[mode] = figures.summarize(api, run)
            if args.svg:
                drawn.append(picture.collect(api, run))
    print(figures.table(summaries["before"], summaries["after"]))
    if args.svg:
        args.svg.write_text(picture.svg(drawn))


if __name__ == "__main__":
    main()
