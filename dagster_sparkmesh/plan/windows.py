"""Each model's window in a plan: from max(model start, plan start) to min(model end, plan end).

A model without a start (nor a project default) starts with the earliest model that has one, as in SQLMesh (the
day before the execution time when none has one); a model's ``end``
given as a plain date includes that whole day. Bad dates and crons are errors located in the model's file.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from dagster_sparkmesh.errors import PlanError
from dagster_sparkmesh.model.records import Model
from dagster_sparkmesh.dates import DateLike, parse_datetime
from dagster_sparkmesh.model.interval_units import unit_longer_than_cron, unit_longer_than_cron_message
from dagster_sparkmesh.plan.intervals import Schedule, due_on_every_interval, interval_cron, interval_unit, last_tick
from dagster_sparkmesh.plan.missing import Window
from dagster_sparkmesh.project.records import Project


def model_windows(
    project: Project, models: dict[str, Model], start: DateLike | None, end: DateLike | None, now: datetime,
    *, ignore_cron: bool = False, partials: bool = True,
) -> tuple[dict[str, Window], datetime, datetime]:
    """Each model's window in a plan from ``start`` to ``end``, and the plan's own bounds. ``ignore_cron``: a
    model whose cron ticks less often than its intervals computes them up to ``end`` too (a Dagster step of the
    partitions a person chose), not only up to its cron's last tick. ``partials``: an ``allow_partials`` model's
    window may end inside an interval (its last one is computed partly); False (Dagster, whose partitions are
    whole intervals): it ends on its last complete interval."""
    yesterday = now.replace(hour=0, minute=0, second=0, microsecond=0) - timedelta(days=1)
    starts = {name: _model_date(m, m.start or project.config.model_defaults.start, now) for name, m in models.items()}
    # The project's earliest start, also when ``models`` are a few of them (a Dagster step of one FULL model).
    everyone = (_model_date(m, m.start or project.config.model_defaults.start, now)
                for name, m in project.models.items() if m.enabled and name not in starts)
    default_start = min((s for s in (*starts.values(), *everyone) if s is not None), default=yesterday)
    plan_start = parse_datetime(start, now=now) if start is not None else None
    plan_end = parse_datetime(end, now=now) if end is not None else now
    if plan_start is None:
        plan_start = default_start
    if plan_start >= plan_end:
        raise PlanError(
            f"the plan starts at {plan_start} but ends at {plan_end}",
            snippet=f"--start {start} --end {end}",
            hint="give a start before the end",
        )
    windows = {}
    reach: dict[str, datetime] = {}
    for name, model in models.items():  # parents first
        _check_cron(model)
        due = min([plan_end, *(reach[parent] for parent in model.depends_on if parent in reach)])
        may_be_partial = model.allow_partials and not _without_intervals_of_its_own(model)
        partial = partials and may_be_partial
        due = due if ignore_cron else _due_by_cron(model, due, now, partial)
        if may_be_partial and not partial:
            due = Schedule.of(interval_cron(model)).floor(due)  # whole intervals only (Dagster's partitions)
        windows[name] = _window(model, max(starts[name] or default_start, plan_start), starts[name] or default_start,
                                due, now, partial)
        reached = _reach(model, due)
        if reached is not None:
            reach[name] = reached
    return windows, plan_start, plan_end


def _window(model: Model, begin: datetime, own_start: datetime, due: datetime, now: datetime, partial: bool) -> Window:
    """From ``begin`` to ``due`` (or the model's own end); empty when it ends before it begins. Only a window
    that is not empty ends in a partial interval (a ``--start`` after the cron's last tick computes nothing)."""
    end_bound = model_end(model, now)
    model_plan_end = min(due, end_bound) if end_bound else due
    return Window(begin, max(model_plan_end, begin), own_start, partial=partial and model_plan_end > begin)


def _reach(model: Model, due: datetime) -> datetime | None:
    """How far a model's data can reach by ``due``: the end of its last interval due by then. Its readers' windows
    end there: an hourly model does not ask for today's hours while its daily parent's today is not due (they could
    only read a missing day, and would block a promotion until tomorrow). A seed's rows do not depend on time (no
    limit); an embedded model reaches as far as its parents."""
    if model.kind.from_seed_file:
        return None
    if model.kind.inlined or model.allow_partials:
        return due
    return Schedule.of(interval_cron(model)).floor(due)


def _due_by_cron(model: Model, due: datetime, now: datetime, partial: bool) -> datetime:
    """No model computes an interval that ends after the execution time, whatever the plan's end: its rows are
    not all there yet, and a recorded interval is never computed again. A model whose cron ticks less often than
    its intervals (``@weekly``: daily intervals) computes them up to its cron's last tick, as SQLMesh does: each
    Sunday, the seven days before it. An ``allow_partials`` model computes up to its cron's last tick, also
    inside an interval (SQLMesh's upper bound, not floored to the interval unit)."""
    if _without_intervals_of_its_own(model):
        return due
    if partial:
        return min(due, last_tick(model, now))
    if due_on_every_interval(model):
        return min(due, now)
    return min(due, Schedule.of(interval_cron(model)).floor(last_tick(model, now)))


def _without_intervals_of_its_own(model: Model) -> bool:
    """A seed (its rows do not depend on time) or an embedded model (computed inside its readers): neither has a
    cron to wait for, and neither is ever partial."""
    return model.kind.from_seed_file or model.kind.inlined


def _model_date(model: Model, text: str | None, now: datetime) -> datetime | None:
    if text is None:
        return None
    try:
        return parse_datetime(text, now=now)
    except PlanError as error:
        raise _at_model(model, error, text) from None


def _check_cron(model: Model) -> None:
    try:
        interval_unit(model.cron)
        implied = None if model.allow_partials else unit_longer_than_cron(model.interval_unit, model.cron)
    except PlanError as error:
        raise _at_model(model, error, model.cron) from None
    if implied is not None:  # (refused at load too: a model built by other code meets it here)
        message, hint = unit_longer_than_cron_message(model.interval_unit, model.cron, implied)
        raise _at_model(model, PlanError(message, hint=hint), model.cron)


def _at_model(model: Model, error: PlanError, text: str) -> PlanError:
    """The same error, located in the model's file."""
    return PlanError(f"{model.name}: {error.message}", path=model.path, line=model.line, snippet=text, hint=error.hint)


def model_end(model: Model, now: datetime) -> datetime | None:
    """A model's ``end`` as an exclusive bound; a plain date means that whole day is included."""
    value = _model_date(model, model.end, now)
    if value is None or model.end is None:
        return None
    return value + timedelta(days=1) if len(model.end.strip()) == 10 else value
