"""The user actions the lifecycle fuzzer draws from, each a typed record that applies itself to a ``Lifecycle``.

An action either succeeds or is refused the way a user sees it (the CLI's exit code 2, a refused promotion, a
failed ranged run): refusals are part of a normal life and are counted, not reported. What is reported is an
exception that escapes (a bug) and, at the end of a sequence, any view that differs from a fresh build.

Ranges stay inside ``DAYS`` (2024-01-01 .. 2024-01-14); ``end`` values are inclusive days, as on the CLI.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta

from dagster_sparkmesh.errors import SparkMeshError
from dagster_sparkmesh.execution import crashpoints
from dagster_sparkmesh.execution.apply import apply_plan
from dagster_sparkmesh.execution.plans import plan_for
from tests.lifecycle.cli_actions import Lifecycle, day, inclusive_end
from tests.lifecycle.project import PARTITIONED, add_late_data, with_changes

DAYS = tuple(f"2024-01-{d:02d}" for d in range(1, 15))
ALL_MODELS = ("src.customers", *PARTITIONED, "m.customer_totals", "m.region_totals", "m.report")


class SimulatedCrash(BaseException):
    """Raised at an armed crash point instead of SIGKILL: nothing after that point in the step runs.

    A BaseException, so that no ``except Exception`` of the package swallows it, as nothing catches a SIGKILL."""


@dataclass(frozen=True)
class Outcome:
    refused: bool = False
    note: str = ""


@dataclass(frozen=True)
class PlanProd:
    end: str
    start: str | None = None

    def apply(self, lc: Lifecycle) -> Outcome:
        args = ["--end", self.end] + (["--start", self.start] if self.start else [])
        return _cli_outcome(lc.plan(*args))


@dataclass(frozen=True)
class PlanDev:
    """A development environment over the same files: it shares prod's tables for unchanged models."""

    end: str

    def apply(self, lc: Lifecycle) -> Outcome:
        return _cli_outcome(lc.plan("--end", self.end, environment="dev"))


@dataclass(frozen=True)
class RangedRun:
    """A Dagster run of a partition range of some models (as the multi-asset step calls ``run_models``);
    ``restate``: launched by a person from the UI, so complete partitions are recomputed, bringing in the late
    data added first (``late_bonus``)."""

    models: tuple[str, ...]
    start: str
    end: str
    restate: bool = False
    late_bonus: int = 0

    def apply(self, lc: Lifecycle) -> Outcome:
        try:
            models = [lc.spec.region_model if m == "m.region_totals" else m for m in self.models]  # renamed meanwhile
            if self.restate and self.late_bonus and "src.events" in models:  # late data only for its source's run
                add_late_data(lc.engine, lc.project, [d for d in DAYS if self.start <= d <= self.end], self.late_bonus)
            lc.run_models(models, day(self.start), inclusive_end(self.end), restate=self.restate)
        except SparkMeshError as refused:
            return Outcome(refused=True, note=str(refused).splitlines()[0])
        return Outcome()


@dataclass(frozen=True)
class Restate:
    """``plan prod --restate-model M --start S --end E``; with ``late_bonus``, late data for those days first."""

    model: str
    start: str
    end: str
    late_bonus: int = 0

    def apply(self, lc: Lifecycle) -> Outcome:
        if self.late_bonus:
            days = [d for d in DAYS if self.start <= d <= self.end]
            add_late_data(lc.engine, lc.project, days, self.late_bonus)
        return _cli_outcome(lc.plan("--restate-model", self.model, "--start", self.start, "--end", self.end))


@dataclass(frozen=True)
class Rebuild:
    """Restate a FULL or unique-key model over everything it holds."""

    model: str
    end: str

    def apply(self, lc: Lifecycle) -> Outcome:
        current = lc.spec.region_model if self.model == "m.region_totals" else self.model  # renamed meanwhile
        return _cli_outcome(lc.plan("--restate-model", lc.project.name(current), "--end", self.end))


@dataclass(frozen=True)
class Edit:
    """``breaking``: the source's formula; ``non_breaking``: a column more in customer_totals; ``macro`` and
    ``deferred_macro``: what a Python macro of the source returns (the second reads the run's interval first);
    ``defaults``: ``model_defaults.batch_size`` switched between none and 2; ``rename``: m.region_totals gets a
    new name (its old view must go, its old table stays while an environment reads it);
    ``owner`` and ``end``: metadata only (``end`` moves every model's end later, never before any data);
    ``start``: every model's start a day earlier (the plan computes the new day; moving it later, or the end
    earlier, keeps rows a fresh build lacks, by design as in SQLMesh, with a plan note: not drawn)."""

    what: str

    def apply(self, lc: Lifecycle) -> Outcome:
        spec = lc.spec
        changes = {
            "breaking": {"formula": spec.formula + 1},
            "non_breaking": {"extra_columns": spec.extra_columns + 1},
            "macro": {"scale": spec.scale + 1},
            "deferred_macro": {"day_offset": spec.day_offset + 1},
            "defaults": {"default_batch_size": None if spec.default_batch_size else 2},
            "rename": {"region_renames": spec.region_renames + 1},
            "owner": {"owner": "bob" if spec.owner == "alice" else "alice"},
            "end": {"end": _later_end(spec.end)},
            "start": {"start": _earlier_start(spec.start)},
        }[self.what]
        lc.edit(with_changes(spec, **changes))
        return Outcome()


@dataclass(frozen=True)
class ForwardOnly:
    """A breaking edit applied ``--forward-only --effective-from`` the model start: it must equal a rebuild."""

    end: str

    def apply(self, lc: Lifecycle) -> Outcome:
        lc.edit(with_changes(lc.spec, formula=lc.spec.formula + 1))
        return _cli_outcome(lc.plan("--forward-only", "--effective-from", model_start(lc), "--end", self.end))


@dataclass(frozen=True)
class ForwardOnlyColumn:
    """A column added to the source (``change="drop"``: its last extra column dropped, which its kind allows),
    applied ``--forward-only``: the table is altered (not rebuilt). With ``effective_from`` the model start every
    day is recomputed at once; without, the days before keep their rows until the user restates the source from
    its start, as SQLMesh's docs advise. Either way prod must then equal a rebuild."""

    end: str
    change: str = "add"
    effective_from: bool = True

    def apply(self, lc: Lifecycle) -> Outcome:
        columns = lc.spec.source_columns + (1 if self.change == "add" or not lc.spec.source_columns else -1)
        lc.edit(with_changes(lc.spec, source_columns=columns, source_extra_type="INT"))
        if self.effective_from:
            return _cli_outcome(lc.plan("--forward-only", "--effective-from", model_start(lc), "--end", self.end))
        planned = _cli_outcome(lc.plan("--forward-only", "--end", self.end))
        if planned.refused:
            return planned
        return _cli_outcome(lc.plan("--restate-model", "src.events", "--start", model_start(lc), "--end", self.end))


@dataclass(frozen=True)
class TakenBack:
    """An edit the package must refuse before writing anything, which the user then takes back, as its message
    says: ``retype`` (the source's last extra column to DOUBLE, forward-only) or ``repeated_keys`` (m.latest
    returns two rows per customer). Prod must be as before, and the sequence goes on from the same files."""

    what: str
    end: str

    def apply(self, lc: Lifecycle) -> Outcome:
        before = lc.spec
        if self.what == "retype":
            if not before.source_columns:
                return Outcome(note="no extra column to retype")
            lc.edit(with_changes(before, source_extra_type="DOUBLE"))
            result = lc.plan("--forward-only", "--effective-from", model_start(lc), "--end", self.end)
        else:
            lc.edit(with_changes(before, latest_repeats_keys=True))
            result = lc.plan("--end", self.end)
        lc.edit(before)
        if result.exit_code != 2:
            raise AssertionError(f"{self.what} was not refused (exit {result.exit_code}): {result.output[-1500:]}")
        return Outcome(refused=True, note=result.output.strip().splitlines()[-1][:200])


@dataclass(frozen=True)
class Rollback:
    def apply(self, lc: Lifecycle) -> Outcome:
        return _cli_outcome(lc.cli("rollback", "prod"))


@dataclass(frozen=True)
class Janitor:
    """The janitor once every unreferenced snapshot has outlived its TTL."""

    def apply(self, lc: Lifecycle) -> Outcome:
        from datetime import datetime

        lc.janitor(clock=datetime.utcnow() + timedelta(days=30))
        unreadable = lc.unreadable_views()
        if unreadable:  # the janitor dropped a table that some environment's view still reads
            raise AssertionError(f"after the janitor, views fail: {unreadable}")
        return Outcome()


@dataclass(frozen=True)
class Crash:
    """Apply ``plan prod --end E`` and die the ``count``-th time it reaches crash point ``stage``."""

    stage: str
    count: int
    end: str

    def apply(self, lc: Lifecycle) -> Outcome:
        ctx = lc.context()
        try:
            with armed(self.stage, self.count):
                apply_plan(ctx, plan_for(ctx, None, inclusive_end(self.end)))
        except SimulatedCrash:
            return Outcome(note=f"crashed at {self.stage}:{self.count}")
        except SparkMeshError as refused:
            # A crash in a model's worker thread reaches here wrapped in BackfillFailed: still a crash.
            if isinstance(refused.__cause__, SimulatedCrash):
                return Outcome(note=f"crashed at {self.stage}:{self.count} in a model")
            return Outcome(refused=True, note=str(refused).splitlines()[0])
        finally:
            ctx.close()
        return Outcome(note="the crash point was not reached")


Action = (
    PlanProd | PlanDev | RangedRun | Restate | Rebuild | Edit | ForwardOnly | ForwardOnlyColumn | TakenBack | Rollback
    | Janitor | Crash
)


@contextlib.contextmanager
def armed(stage: str, count: int) -> Iterator[None]:
    """Arm ``crashpoints`` for one call: the n-th arrival at ``stage`` raises ``SimulatedCrash``."""

    def die(_delay: float) -> None:
        raise SimulatedCrash(stage)

    original = crashpoints._die_after
    crashpoints._reached.clear()
    os.environ[crashpoints.ENV_VAR] = f"{stage}:{count}"
    crashpoints._die_after = die
    try:
        yield
    finally:
        crashpoints._die_after = original
        os.environ.pop(crashpoints.ENV_VAR, None)
        crashpoints._reached.clear()


def action_end(action: Action) -> str | None:
    """The last day an action may write (the final promotion covers at least that)."""
    return getattr(action, "end", None)


def _later_end(current: str | None) -> str:
    # Never before the last day of DAYS: a model's end must not hide data a fresh build would compute.
    after = (day(current) if current else day(DAYS[-1])) + timedelta(days=1)
    return f"{after:%Y-%m-%d}"


def model_start(lc: Lifecycle) -> str:
    """The models' start as the files say now (an ``Edit("start")`` moves it before ``DAYS[0]``)."""
    return lc.spec.start or DAYS[0]


def _earlier_start(current: str | None) -> str:
    return f"{(day(current or DAYS[0]) - timedelta(days=1)):%Y-%m-%d}"


def _cli_outcome(result) -> Outcome:
    if result.exit_code == 0:
        return Outcome()
    if result.exit_code in (1, 2, 130):  # a refusal the CLI explains (a bug would have raised)
        return Outcome(refused=True, note=result.output.strip().splitlines()[-1][:200] if result.output.strip() else "")
    raise AssertionError(f"unexpected exit code {result.exit_code}: {result.output}")
