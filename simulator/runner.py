"""Play a schedule of scenarios: plan tasks in virtual time, emit spans as virtual time passes.

Virtual time t (seconds) maps to unix time anchor + t. Arrivals are planned in order; each
task's spans are emitted when their end time comes, paced against the wall clock at `speed`
virtual seconds per wall second (0: as fast as possible).
"""

from __future__ import annotations

import heapq
import itertools
import random
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator, Mapping

from opentelemetry.sdk.trace.export import SpanExporter

from agentsla.errors import AgentslaError
from agentsla.simulator.export import Emitter, build_exporter
from agentsla.simulator.model import TaskPlan
from agentsla.simulator.platform import plan_task
from agentsla.simulator.scenarios import Segment, parse_schedule, scale_schedule
from agentsla.simulator.truth import Tally, TruthWriter
from agentsla.simulator.world import World


class Interrupted(Exception):
    """The stop event was set while the run was playing."""


@dataclass
class Summary:
    """What a run sent: counts by outcome and scenario, and the truth of every finished task."""

    seed: object
    anchor_unix_nano: int
    tasks: int
    spans: int
    outcomes: dict[str, int]
    by_scenario: dict[str, dict[str, int]]
    planted_findings: dict[str, list[str]]
    virtual_seconds: float
    wall_seconds: float
    interrupted: bool
    truth: list[dict] = field(default_factory=list, repr=False)


def _segments(schedule: str | list[Segment], duration: float | None,
              tasks: int | None) -> list[Segment]:
    segments = parse_schedule(schedule, duration) if isinstance(schedule, str) else schedule
    explicit = all(s.duration_s is not None for s in segments)
    if explicit and duration is not None and len(segments) > 1:
        segments = scale_schedule(segments, duration)
    if any(s.duration_s is None for s in segments):
        if tasks is None or len(segments) > 1:
            raise AgentslaError("give --duration or --tasks (or seconds for every scenario)")
    return segments


def _arrivals(segments: list[Segment], seed: object, rate: float | None, tasks: int | None
              ) -> Iterator[tuple[int, float, Segment, float, World]]:
    """Yield (index, arrival, segment, segment start, world) in arrival order."""
    rng = random.Random(f"{seed}/arrivals")
    index, start = 0, 0.0
    for seg in segments:
        world, t = World(start), start
        end = start + seg.duration_s if seg.duration_s is not None else float("inf")
        per_s = rate or seg.profile.rate
        while True:
            t += rng.expovariate(_rate_at(seg, per_s, t - start))
            if t >= end or (tasks is not None and index >= tasks):
                break
            yield index, t, seg, start, world
            index += 1
        if tasks is not None and index >= tasks:
            return
        start = end


def _rate_at(seg: Segment, per_s: float, elapsed: float) -> float:
    """Return the arrival rate `elapsed` seconds into a segment (rate_growth ramps it linearly)."""
    growth = seg.profile.rate_growth
    if growth == 1.0 or not seg.duration_s:
        return per_s
    return per_s * (1.0 + (growth - 1.0) * min(elapsed / seg.duration_s, 1.0))


def _anchor_ns(anchor: str, total: float, speed: float) -> int:
    now = time.time_ns()
    if anchor == "start":
        return now
    if anchor != "end":
        raise AgentslaError(f"unknown anchor {anchor!r}; use start or end")
    wall = total / speed if speed > 0 else 0.0
    return now - int((total - wall) * 1e9)


class _Player:
    """Emits planned spans in end-time order, pacing virtual time against the wall clock."""

    def __init__(self, emitter: Emitter, writer: TruthWriter, speed: float,
                 stop: threading.Event, on_task: Callable[[Tally], None] | None,
                 on_failure: Callable[[str, int], None] | None = None) -> None:
        self.emitter, self.writer, self.speed, self.stop = emitter, writer, speed, stop
        self.on_task, self.on_failure = on_task, on_failure
        self.heap: list = []
        self.pending: dict[int, int] = {}
        self.planted: dict[int, tuple[str, ...]] = {}
        self.seq = itertools.count()
        self.wall0 = time.monotonic()
        self.now = 0.0

    def wait_until(self, v: float) -> None:
        """Sleep until the virtual clock reaches v (never, at speed 0)."""
        if self.stop.is_set():
            raise Interrupted
        self.now = max(self.now, v)
        if self.speed <= 0:
            return
        target = self.wall0 + v / self.speed
        while (delay := target - time.monotonic()) > 0:
            if self.stop.wait(min(delay, 0.2)):
                raise Interrupted

    def add(self, task: TaskPlan, planted: tuple[str, ...]) -> None:
        """Queue every span of a planned task for emission at its end time."""
        self.pending[task.index] = len(task.spans)
        self.planted[task.index] = planted
        for span in task.spans:
            heapq.heappush(self.heap, (span.end, next(self.seq), task, span))

    def advance(self, until: float) -> None:
        """Emit every span ending before `until`, in order, then let the clock reach it."""
        while self.heap and self.heap[0][0] <= until:
            end, _, task, span = heapq.heappop(self.heap)
            self.wait_until(end)
            self.emitter.emit(task, span)
            if span.error is not None and self.on_failure:
                self.on_failure(task.scenario, self.emitter.ns(span.end))
            self.pending[task.index] -= 1
            if not self.pending[task.index]:
                del self.pending[task.index]
                self.writer.task(task, self.planted.pop(task.index))
                if self.on_task:
                    self.on_task(self.writer.tally)
        if until != float("inf"):
            self.wait_until(until)


def _planted_by_finding(segments: list[Segment]) -> dict[str, list[str]]:
    """Each planted finding type -> the scenarios that plant it, in play order."""
    planted: dict[str, list[str]] = {}
    for seg in segments:
        for finding in seg.profile.planted:
            names = planted.setdefault(finding, [])
            if seg.profile.name not in names:
                names.append(seg.profile.name)
    return planted


def run(schedule: str | list[Segment], *, seed: object = 0, tasks: int | None = None,
        duration: float | None = None, rate: float | None = None,
        exporter: SpanExporter | None = None, endpoint: str | None = None,
        protocol: str = "http", headers: Mapping[str, str] | None = None,
        environ: Mapping[str, str] | None = None, speed: float = 0.0,
        truth_path: str | Path | None = None, anchor: str = "start",
        vocabulary: str = "agentsla",
        stop: threading.Event | None = None,
        on_task: Callable[[Tally], None] | None = None,
        on_failure: Callable[[str, int], None] | None = None) -> Summary:
    """Play `schedule` (a scenario name, "name:secs,...", or segments) and export its spans.

    Give `exporter` (e.g. an InMemorySpanExporter) or `endpoint`/`protocol`/`headers` for OTLP.
    Stops after `tasks` tasks or `duration` virtual seconds; `stop` ends it early (interrupted).
    `vocabulary` (agentsla, genai, openinference) is the attribute set the spans speak.
    `on_failure(scenario, unix_ns)` hears of every failing span as it is sent, in end order.
    """
    if tasks is None and duration is None and isinstance(schedule, str) and ":" not in schedule:
        raise AgentslaError("give --duration or --tasks")
    segments = _segments(schedule, duration, tasks)
    total = sum(s.duration_s for s in segments if s.duration_s is not None) or (
        (tasks or 0) / (rate or segments[0].profile.rate))
    anchor_ns = _anchor_ns(anchor, total, speed)
    exporter = exporter or build_exporter(endpoint, protocol, headers or {}, environ or {})
    emitter = Emitter(exporter, anchor_ns, vocabulary)
    writer = TruthWriter(truth_path, emitter.ns, vocabulary)
    starts = list(itertools.accumulate([0.0] + [s.duration_s or 0.0 for s in segments]))
    writer.header(seed, speed, [(s, starts[i], None if s.duration_s is None else starts[i + 1],
                                 rate or s.profile.rate) for i, s in enumerate(segments)])
    stop = stop or threading.Event()
    player = _Player(emitter, writer, speed, stop, on_task, on_failure)
    ids = random.Random(f"{seed}/ids")
    interrupted = False
    try:
        for index, arrival, seg, seg_start, world in _arrivals(segments, seed, rate, tasks):
            player.advance(arrival)
            # A run by task count has no end: its phases play over the expected length.
            task = plan_task(index, arrival, seg.profile, world, seed, ids,
                             (seg_start, seg.duration_s or total))
            player.add(task, seg.profile.planted)
        player.advance(float("inf"))
    except Interrupted:
        interrupted = True
    finally:
        emitter.close()
        planted = _planted_by_finding(segments)
        writer.footer(interrupted, planted)
    t = writer.tally
    return Summary(seed=seed, anchor_unix_nano=anchor_ns, tasks=t.tasks, spans=t.spans,
                   outcomes=dict(t.outcomes),
                   by_scenario={k: dict(v) for k, v in t.by_scenario.items()},
                   planted_findings=planted, virtual_seconds=player.now,
                   wall_seconds=time.monotonic() - player.wall0, interrupted=interrupted,
                   truth=writer.records)
