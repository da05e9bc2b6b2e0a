"""SLOs per task type: error budget remaining over the SLO period and multi-window burn rates.

The one definition of the SLO arithmetic; alert metrics and incidents use it too. Good tasks
succeeded within budget (`success`; also `degraded` when the SLO's degraded_is_good); bad tasks
are the other finished outcomes (degraded when not good, failed, budget_exhausted, rejected,
lost). Cancelled tasks are neither. Windows end at `end_ns` and hold the tasks that finished in
[end_ns - window, end_ns).

  bad_fraction            bad / (good + bad), null without finished tasks
  burn rate               bad_fraction / (1 - objective): 1 spends the budget exactly in a period
  error_budget_remaining  1 - bad_fraction(period) / (1 - objective); negative when overspent
  budget share            bad_fraction × window / ((1 - objective) × period): the share of a
                          period's error budget a window spent
"""

from __future__ import annotations

from typing import Mapping

from agentsla.config import Config, SloObjective
from agentsla.queries.rollup import HOUR_NS, MINUTE_NS, split
from agentsla.queries.store import ReadStore

NS = 1_000_000_000
#: Burn-rate windows (label, seconds), shortest first.
BURN_WINDOWS: tuple[tuple[str, float], ...] = (
    ("5m", 300.0), ("30m", 1800.0), ("1h", 3600.0), ("6h", 21600.0), ("1d", 86400.0),
    ("3d", 259200.0))


def _window_counts(store: ReadStore, end_ns: int, windows_ns: list[int],
                   task_type: str | None, raw: bool = False) -> dict:
    # each window reads whole hours [hour cut, hr_hi), its other whole minutes from its cut on
    # (before roll_hi), the rest from tasks (slo_counts.sql)
    roll_hi = split(end_ns - max(windows_ns), end_ns, raw)["roll_hi"]
    hr_hi = roll_hi // HOUR_NS * HOUR_NS
    cuts = [min(split(end_ns - w, end_ns, raw)["roll_lo"], roll_hi) for w in windows_ns]
    hour_cuts = [max(cut, min(-(-cut // HOUR_NS) * HOUR_NS, hr_hi)) for cut in cuts]
    # the only minute rows read: each window's minutes before its first whole hour, and the
    # minutes after the last (under an hour each), not every minute of the longest window
    minutes = sorted({m for cut, hour_cut in zip(cuts, hour_cuts)
                      for m in range(cut, hour_cut, MINUTE_NS)} | set(range(hr_hi, roll_hi,
                                                                              MINUTE_NS)))
    rows = store.rows("slo_counts", {
        "minutes_ns": minutes,
        "windows_ns": windows_ns, "cuts_ns": cuts, "hour_cuts_ns": hour_cuts, "end_ns": end_ns,
        "roll_lo": min(cuts), "roll_lo_max": max(cuts), "roll_hi": roll_hi,
        "hr_lo": min(hour_cuts), "hr_hi": hr_hi, "longest_ns": max(windows_ns),
        "task_type": task_type})
    return {(r["task_type"], r["window_ns"]): r for r in rows}


def good_bad(counts: Mapping | None, slo: SloObjective) -> tuple[int, int]:
    """Split a window's counts (success, degraded, total) into good and bad tasks."""
    if not counts:
        return 0, 0
    good = counts["success"] + (counts["degraded"] if slo.degraded_is_good else 0)
    return good, counts["total"] - good


def bad_fraction(good: int, bad: int) -> float | None:
    """Return the share of bad tasks, None without finished tasks."""
    return None if good + bad == 0 else bad / (good + bad)


def burn_rate(good: int, bad: int, objective: float) -> float | None:
    """Return how fast the window burns the error budget (1: exactly one budget per period)."""
    fraction = bad_fraction(good, bad)
    return None if fraction is None else fraction / (1 - objective)


def budget_share(fraction: float, minutes: float, slo: SloObjective) -> float | None:
    """Return the share of a period's error budget that `minutes` at a bad fraction spend."""
    allowed = (1 - slo.objective) * slo.period / 60.0  # error-budget minutes per period
    return fraction * minutes / allowed if allowed else None


def slo_window(store: ReadStore, config: Config, start_ns: int, end_ns: int,
               task_type: str | None = None, raw: bool = False) -> list[dict]:
    """Answer: per task type, how many tasks finished in [start_ns, end_ns), how many were bad?

    Rows, one per task type with finished tasks, by type: task_type, good, bad, total,
    bad_fraction, burn_rate (against the type's SLO). Any window, so burn windows can scale with the period.
    """
    out = []
    counts_by = _window_counts(store, end_ns, [end_ns - start_ns], task_type, raw)
    for (type_, _), counts in sorted(counts_by.items(), key=lambda kv: (kv[0][0] is None,
                                                                        kv[0][0] or "")):
        slo = config.slo_for(type_)
        good, bad = good_bad(counts, slo)
        out.append({"task_type": type_, "good": good, "bad": bad, "total": good + bad,
                    "bad_fraction": bad_fraction(good, bad),
                    "burn_rate": burn_rate(good, bad, slo.objective)})
    return out


def slo_status(store: ReadStore, config: Config, end_ns: int,
               task_type: str | None = None) -> list[dict]:
    """Answer: per task type, how much error budget is left and how fast is it burning?

    Rows, one per task type seen in the longest window or configured (not `*`), sorted by
    type: task_type, objective, period_s, degraded_is_good, good, bad, bad_fraction,
    error_budget_remaining (over the period), burn_rates {window label: burn or null},
    windows {window label: {good, bad}}.
    """
    periods = {slo.period for slo in config.slos} | {SloObjective("*").period}
    windows_ns = sorted({int(s * NS) for _, s in BURN_WINDOWS} | {int(p * NS) for p in periods})
    counts = _window_counts(store, end_ns, windows_ns, task_type)
    types = {t for t, _ in counts} | {s.task_type for s in config.slos if s.task_type != "*"}
    if task_type is not None:
        types &= {task_type}
    return [_status(counts, t, config.slo_for(t)) for t in sorted(types, key=lambda t: (t is None, t))]


def _status(counts: dict, task_type: str | None, slo: SloObjective) -> dict:
    good, bad = good_bad(counts.get((task_type, int(slo.period * NS))), slo)
    burn = burn_rate(good, bad, slo.objective)
    windows, burn_rates = {}, {}
    for label, seconds in BURN_WINDOWS:
        w_good, w_bad = good_bad(counts.get((task_type, int(seconds * NS))), slo)
        windows[label] = {"good": w_good, "bad": w_bad}
        burn_rates[label] = burn_rate(w_good, w_bad, slo.objective)
    return {"task_type": task_type, "objective": slo.objective, "period_s": slo.period,
            "degraded_is_good": slo.degraded_is_good, "good": good, "bad": bad,
            "bad_fraction": bad_fraction(good, bad),
            "error_budget_remaining": None if burn is None else 1 - burn,
            "burn_rates": burn_rates, "windows": windows}
