"""Budgets: limits on tokens, calls or cost per day or month, for a user, a project or a flow.

Usage is what ``observability_usage`` holds (written with each run's native trace). A run is refused before
it starts (``check_run``: 429 with ``Retry-After``, the seconds until the period ends) when a budget that
applies to it is spent; a run that spends one while it goes is stopped at its next model call
(``before_model_call``: the component fails with the budget's message). Periods are calendar UTC days and
months. The budgets are few: each process keeps them in memory for ``CACHE_SECONDS``, and a change in any
process bumps a generation in the deployment's shared state (``core.shared``), which every read compares: a
budget set on one web worker applies on every worker from their next run.
"""

from __future__ import annotations

import datetime as dt
import threading
import time
from dataclasses import dataclass
from typing import Any, cast

import sqlalchemy as sa

from core import db
from service_observability.models import Budget, Usage

SCOPES = ("user", "project", "flow")
METRICS = ("tokens", "calls", "cost")
PERIODS = ("day", "month")
CACHE_SECONDS = 5.0
_USAGE = cast(sa.Table, Usage.__table__)
_BUDGET = cast(sa.Table, Budget.__table__)

_lock = threading.Lock()
#: per engine: (valid until, the shared generation read, the budgets)
_cache: dict[int, tuple[float, str | None, list[BudgetRow]]] = {}
GENERATION = "observability:budgets:generation"


def _shared() -> Any:
    """The deployment's shared state, when an app is at hand (runs and requests), else None."""
    from flask import current_app, has_app_context

    from core import appstate

    return appstate.shared(current_app) if has_app_context() else None


@dataclass(frozen=True, slots=True)
class BudgetRow:
    id: str
    scope: str
    scope_id: str
    metric: str
    period: str
    limit: float


def period_bounds(period: str, now: dt.datetime | None = None) -> tuple[dt.datetime, dt.datetime]:
    """The start and end of the current UTC day or month."""
    now = now or dt.datetime.now(dt.UTC)
    if period == "day":
        start = now.replace(hour=0, minute=0, second=0, microsecond=0)
        return start, start + dt.timedelta(days=1)
    start = now.replace(day=1, hour=0, minute=0, second=0, microsecond=0)
    following = (start + dt.timedelta(days=32)).replace(day=1)
    return start, following


def all_budgets(engine: sa.Engine) -> list[BudgetRow]:
    """Every budget (cached per process for ``CACHE_SECONDS``)."""
    now = time.monotonic()
    shared = _shared()
    generation = shared.get(GENERATION) if shared is not None else None
    with _lock:
        hit = _cache.get(id(engine))
        if hit is not None and hit[0] > now and hit[1] == generation:
            return hit[2]
    with db.connection(engine) as conn:
        rows = [
            BudgetRow(r.id, r.scope, r.scope_id, r.metric, r.period, r.limit) for r in conn.execute(sa.select(_BUDGET))
        ]
    with _lock:
        _cache[id(engine)] = (now + CACHE_SECONDS, generation, rows)
    return rows


def forget() -> None:
    """Clear the cache after a budget changed: this process's at once, every other's from its next read (the
    shared generation)."""
    with _lock:
        _cache.clear()
    shared = _shared()
    if shared is not None:
        shared.incr(GENERATION)


def applying(engine: sa.Engine, user_id: str, flow_id: str, project_id: str | None) -> list[BudgetRow]:
    """The budgets a run of ``flow_id`` (in ``project_id``) by ``user_id`` counts against."""
    wanted = {("user", user_id), ("flow", flow_id)}
    if project_id:
        wanted.add(("project", project_id))
    return [b for b in all_budgets(engine) if (b.scope, b.scope_id) in wanted]


def used(engine: sa.Engine, budget: BudgetRow) -> float:
    """What the budget's scope used in its current period (this process's queued traces written first)."""
    from service_observability.native import writer

    writer(engine).flush()
    start, _end = period_bounds(budget.period)
    column = {"user": _USAGE.c.user_id, "project": _USAGE.c.project_id, "flow": _USAGE.c.flow_id}[budget.scope]
    measure: Any = {
        "tokens": _USAGE.c.input_tokens + _USAGE.c.output_tokens,
        "calls": _USAGE.c.calls,
        "cost": _USAGE.c.cost,
    }[budget.metric]
    with db.connection(engine) as conn:
        total = conn.execute(
            sa.select(sa.func.coalesce(sa.func.sum(measure), 0)).where(
                column == budget.scope_id, _USAGE.c.created_at >= start
            )
        ).scalar_one()
    return float(total or 0)


def message(budget: BudgetRow) -> str:
    limit = f"{budget.limit:g}"
    return f"The {budget.metric} budget of this {budget.scope} ({limit} per {budget.period}) is spent"


def retry_after(budget: BudgetRow) -> int:
    """Seconds until the budget's period ends (``Retry-After``)."""
    _start, end = period_bounds(budget.period)
    return max(1, int((end - dt.datetime.now(dt.UTC)).total_seconds()) + 1)


def spent(engine: sa.Engine, budgets: list[BudgetRow]) -> tuple[BudgetRow, float] | None:
    """The first budget already spent, with its use (None: all have some left)."""
    for budget in budgets:
        so_far = used(engine, budget)
        if so_far >= budget.limit:
            return budget, so_far
    return None


class RunBudget:
    """The budgets of one run while it goes: the use at its start plus what its model calls added."""

    __slots__ = ("added", "budgets")

    def __init__(self, budgets: list[tuple[BudgetRow, float]]) -> None:
        self.budgets = budgets
        self.added = {"tokens": 0.0, "calls": 0.0, "cost": 0.0}

    def add(self, tokens: int, cost: float) -> None:
        self.added["tokens"] += tokens
        self.added["calls"] += 1
        self.added["cost"] += cost

    def refused(self) -> BudgetRow | None:
        """The budget the next model call would exceed (None: it may be made)."""
        for budget, at_start in self.budgets:
            if at_start + self.added[budget.metric] >= budget.limit:
                return budget
        return None
