"""SLOs per task type: error budget remaining over the SLO period and multi-window burn rates.

Good tasks succeeded within budget (`success`; also `degraded` when the SLO's degraded_is_good);
bad tasks are the other finished outcomes (degraded when not good, failed, budget_exhausted,
rejected, lost). Cancelled tasks are neither. Windows end at `end_ns` and hold the tasks that
finished in [end_ns - window, end_ns).

  bad_fraction            bad / (good + bad), null without finished tasks
  burn rate               bad_fraction / (1 - objective): 1 spends the budget exactly in a period
  error_budget_remaining  1 - bad_fraction(period) / (1 - objective); negative when overspent
"""

from __future__ import annotations

from agentsla.config import Config, SloObjective
from agentsla.queries._sql import fetch_dicts

NS = 1_000_000_000
#: Burn-rate windows (label, seconds), shortest first.
BURN_WINDOWS: tuple[tuple[str, float], ...] = (
    ("5m", 300.0), ("30m", 1800.0), ("1h", 3600.0), ("6h", 21600.0), ("1d", 86400.0),
    ("3d", 259200.0))

_COUNTS_SQL = """
with windows as (
    select unnest($windows_s) as window_s
),
finished as (
    select task_type, outcome, end_ns
    from tasks
    where finished and outcome <> 'cancelled'
      and end_ns >= $end_ns - $longest_ns and end_ns < $end_ns
      and ($task_type is null or task_type = $task_type)
)
select
    w.window_s, f.task_type,
    count(*) filter (where f.outcome = 'success') as success,
    count(*) filter (where f.outcome = 'degraded') as degraded,
    count(*) as total
from windows w
join finished f on f.end_ns >= $end_ns - cast(w.window_s * 1e9 as bigint)
group by w.window_s, f.task_type
"""


def _window_counts(cur, end_ns: int, windows_s: list[float], task_type: str | None) -> dict:
    rows = fetch_dicts(cur, _COUNTS_SQL, {
        "windows_s": windows_s, "end_ns": end_ns, "longest_ns": int(max(windows_s) * NS),
        "task_type": task_type})
    return {(r["task_type"], r["window_s"]): r for r in rows}


def _good_bad(counts: dict | None, slo: SloObjective) -> tuple[int, int]:
    if not counts:
        return 0, 0
    good = counts["success"] + (counts["degraded"] if slo.degraded_is_good else 0)
    return good, counts["total"] - good


def _burn(good: int, bad: int, objective: float) -> float | None:
    total = good + bad
    return None if total == 0 else (bad / total) / (1 - objective)


def slo_status(cur, config: Config, end_ns: int, task_type: str | None = None) -> list[dict]:
    """Answer: per task type, how much error budget is left and how fast is it burning?

    Rows, one per task type seen in the longest window or configured (not `*`), sorted by
    type: task_type, objective, period_s, degraded_is_good, good, bad, bad_fraction,
    error_budget_remaining (over the period), burn_rates {window label: burn or null},
    windows {window label: {good, bad}}.
    """
    periods = {slo.period for slo in config.slos} | {SloObjective("*").period}
    windows_s = sorted({s for _, s in BURN_WINDOWS} | periods)
    counts = _window_counts(cur, end_ns, windows_s, task_type)
    types = {t for t, _ in counts} | {s.task_type for s in config.slos if s.task_type != "*"}
    if task_type is not None:
        types &= {task_type}
    return [_status(counts, t, config.slo_for(t)) for t in sorted(types, key=lambda t: (t is None, t))]


def _status(counts: dict, task_type: str | None, slo: SloObjective) -> dict:
    good, bad = _good_bad(counts.get((task_type, slo.period)), slo)
    burn = _burn(good, bad, slo.objective)
    windows, burn_rates = {}, {}
    for label, seconds in BURN_WINDOWS:
        w_good, w_bad = _good_bad(counts.get((task_type, seconds)), slo)
        windows[label] = {"good": w_good, "bad": w_bad}
        burn_rates[label] = _burn(w_good, w_bad, slo.objective)
    return {"task_type": task_type, "objective": slo.objective, "period_s": slo.period,
            "degraded_is_good": slo.degraded_is_good, "good": good, "bad": bad,
            "bad_fraction": None if good + bad == 0 else bad / (good + bad),
            "error_budget_remaining": None if burn is None else 1 - burn,
            "burn_rates": burn_rates, "windows": windows}
