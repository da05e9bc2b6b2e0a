"""The ground-truth file: JSON lines, a header, one line per finished task, a summary footer."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from agentsla.simulator.model import TaskPlan, truth_record
from agentsla.simulator.scenarios import Segment
from agentsla.simulator.vocabulary import findings, incidental, knowable

FORMAT = "agentsla-simulator-truth/1"


@dataclass
class Tally:
    """Running counts of finished tasks, by outcome and by scenario."""

    tasks: int = 0
    spans: int = 0
    outcomes: Counter = field(default_factory=Counter)
    by_scenario: dict[str, Counter] = field(default_factory=dict)

    def add(self, record: dict[str, Any]) -> None:
        """Count one finished task's truth record."""
        self.tasks += 1
        self.spans += record["spans"]
        self.outcomes[record["outcome"]] += 1
        self.by_scenario.setdefault(record["scenario"], Counter())[record["outcome"]] += 1


class TruthWriter:
    """Writes the truth file (or only tallies, when no path is given)."""

    def __init__(self, path: str | Path | None, to_ns, vocabulary: str = "agentsla") -> None:
        self.to_ns = to_ns
        self.vocabulary = vocabulary
        self.tally = Tally()
        self.records: list[dict[str, Any]] = []
        self._file: IO[str] | None = open(path, "w", encoding="utf-8") if path else None

    def _write(self, obj: dict[str, Any]) -> None:
        if self._file is not None:
            self._file.write(json.dumps(obj, sort_keys=False) + "\n")

    def header(self, seed: object, speed: float, segments: list[tuple[Segment, float, float,
                                                                      float]]) -> None:
        """Write the header: seed, anchor and every segment with what it plants."""
        self._write({"type": "header", "format": FORMAT, "seed": seed, "speed": speed,
                     "vocabulary": self.vocabulary,
                     "anchor_unix_nano": self.to_ns(0.0), "segments": [
                         {"scenario": seg.profile.name, "description": seg.profile.description,
                          "start_unix_nano": self.to_ns(start),
                          "end_unix_nano": None if end is None else self.to_ns(end),
                          "rate": rate,
                          "planted": findings(seg.profile.planted, self.vocabulary),
                          "incidental": incidental(seg.profile, self.vocabulary)}
                         for seg, start, end, rate in segments]})

    def task(self, task: TaskPlan, planted: tuple[str, ...]) -> dict[str, Any]:
        """Write one finished task's line and return it."""
        record = knowable(truth_record(task, planted), task, self.vocabulary)
        record["start_unix_nano"] = self.to_ns(task.root.start)
        record["end_unix_nano"] = self.to_ns(task.root.end)
        self.tally.add(record)
        self.records.append(record)
        self._write(record)
        return record

    def footer(self, interrupted: bool, planted: dict[str, list[str]]) -> None:
        """Write the summary line and close the file."""
        t = self.tally
        self._write({"type": "summary", "tasks": t.tasks, "spans": t.spans,
                     "outcomes": dict(t.outcomes),
                     "by_scenario": {k: dict(v) for k, v in t.by_scenario.items()},
                     "planted_findings": planted, "interrupted": interrupted})
        if self._file is not None:
            self._file.close()
            self._file = None
