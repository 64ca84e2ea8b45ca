"""The lifecycle fuzzer: seeded random sequences of user actions on the lifecycle project, each ending with a
promotion of prod, whose views are then compared with a fresh build of the same files over the same range.

The final promotion's end is the latest day any action wrote (an incremental table keeps the days a longer plan
or a ranged run computed: a fresh build over a shorter range would differ by design). Forward-only changes are
only drawn with ``--end`` the last day and either ``--effective-from`` the model start or a restatement from it
afterwards, the cases where they promise a rebuild's result (days after the plan's end keep the old formula by
design).
A divergence is minimized by dropping actions one at a time while it still reproduces.
"""

from __future__ import annotations

import random
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from dagster_sparkmesh.execution.crashpoints import STAGES
from tests.lifecycle.actions import (
    ALL_MODELS,
    DAYS,
    PARTITIONED,
    Action,
    Crash,
    Edit,
    ForwardOnly,
    ForwardOnlyColumn,
    Janitor,
    PlanDev,
    PlanProd,
    RangedRun,
    Rebuild,
    Restate,
    Rollback,
    TakenBack,
    action_end,
)
from tests.lifecycle.cli_actions import Lifecycle, close_lifecycle, inclusive_end, open_lifecycle
from tests.lifecycle.oracle import Divergence

MIN_FINAL_END = "2024-01-05"
# Relative weights: plans and ranged runs are what users do most.
_WEIGHTS = {
    "plan_prod": 4, "plan_dev": 1, "ranged_run": 4, "restate": 2, "rebuild": 1, "edit": 3,
    "forward_only": 1, "forward_only_column": 1, "taken_back": 1, "rollback": 1, "janitor": 1, "crash": 1,
}


@dataclass(frozen=True)
class SequenceResult:
    actions: tuple[Action, ...]
    final_end: str
    divergences: tuple[Divergence, ...] = ()
    error: str | None = None
    """An exception that escaped an action, or the final promotion's refusal."""
    refusals: int = 0
    seconds: float = 0.0

    @property
    def failed(self) -> bool:
        return bool(self.divergences) or self.error is not None

    def describe(self) -> str:
        lines = [f"  {a!r}" for a in self.actions] + [f"  final: plan prod --end {self.final_end}"]
        lines += [f"  DIVERGES {d.describe()}" for d in self.divergences]
        if self.error:
            lines.append(f"  ERROR {self.error}")
        return "\n".join(lines)


@dataclass
class FuzzReport:
    sequences: int = 0
    actions: int = 0
    refusals: int = 0
    failures: list[SequenceResult] = field(default_factory=list)

    @property
    def divergences(self) -> int:
        return sum(len(r.divergences) for r in self.failures)


def generate(rng: random.Random, length: int) -> tuple[Action, ...]:
    kinds = list(_WEIGHTS)
    weights = [_WEIGHTS[k] for k in kinds]
    return tuple(_draw(rng, rng.choices(kinds, weights)[0]) for _ in range(length))


def _draw(rng: random.Random, kind: str) -> Action:
    start, end = _range(rng)
    if kind == "plan_prod":
        return PlanProd(end=end, start=start if rng.random() < 0.2 else None)
    if kind == "plan_dev":
        return PlanDev(end=end)
    if kind == "ranged_run":
        models = tuple(sorted(rng.sample(PARTITIONED, rng.randint(1, len(PARTITIONED)))))
        chosen = models if rng.random() < 0.7 else tuple(ALL_MODELS)
        if rng.random() < 0.3:  # a person's "Materialize" from the UI, after late data
            return RangedRun(models=chosen, start=start, end=end, restate=True, late_bonus=rng.choice([0, 100]))
        return RangedRun(models=chosen, start=start, end=end)
    if kind == "restate":
        return Restate(model="src.events", start=start, end=end, late_bonus=rng.choice([0, 0, 100, 1000]))
    if kind == "rebuild":
        return Rebuild(model=rng.choice(["m.customer_totals", "m.region_totals", "m.latest"]), end=end)
    if kind == "edit":
        choices = ["breaking", "non_breaking", "macro", "deferred_macro", "defaults", "rename", "owner", "end", "start"]
        return Edit(what=rng.choice(choices))
    if kind == "forward_only":
        # Up to the last day any action can write: forward-only keeps the old results after the plan's end.
        return ForwardOnly(end=DAYS[-1])
    if kind == "forward_only_column":
        change = rng.choice(["add", "add", "drop"])
        return ForwardOnlyColumn(end=DAYS[-1], change=change, effective_from=rng.random() < 0.5)
    if kind == "taken_back":
        return TakenBack(what=rng.choice(["retype", "repeated_keys"]), end=end)
    if kind == "rollback":
        return Rollback()
    if kind == "janitor":
        return Janitor()
    return Crash(stage=rng.choice(STAGES), count=rng.randint(1, 3), end=end)


def _range(rng: random.Random) -> tuple[str, str]:
    first, last = sorted(rng.sample(range(len(DAYS)), 2))
    return DAYS[first], DAYS[last]


def final_end(actions: Sequence[Action]) -> str:
    return max([MIN_FINAL_END, *(e for e in map(action_end, actions) if e)])


AfterPromotion = Callable[[Lifecycle, str], None]
"""Called with the lifecycle and the final end once prod is promoted and compared (a second referee: the bench's
SQLMesh build), before the project's schemas are dropped."""


def run_sequence(
    engine, workdir: Path, actions: Sequence[Action], after_promotion: AfterPromotion | None = None
) -> SequenceResult:
    """Play ``actions`` on a new copy of the project, promote prod over the final range, compare with the oracle."""
    began = time.monotonic()
    end = final_end(actions)
    lc = open_lifecycle(engine, workdir)
    refusals, error, divergences = 0, None, ()
    try:
        for action in actions:
            refusals += action.apply(lc).refused
        final = lc.plan("--end", end)
        if final.exit_code != 0:
            error = f"final promotion refused: {final.output.strip()[-300:]}"
        else:
            divergences = tuple(lc.divergences(end=inclusive_end(end)))
            if after_promotion is not None:
                after_promotion(lc, end)
    except Exception:  # noqa: BLE001 - an escaped exception is a finding; the traceback says where
        error = traceback.format_exc(limit=6)[-1500:]
    finally:
        close_lifecycle(lc)
    return SequenceResult(
        actions=tuple(actions),
        final_end=end,
        divergences=divergences,
        error=error,
        refusals=refusals,
        seconds=round(time.monotonic() - began, 1),
    )


def minimize(run: Callable[[Sequence[Action]], SequenceResult], failing: SequenceResult) -> SequenceResult:
    """Drop actions one at a time, keeping each drop after which the sequence still fails."""
    best = failing
    index = 0
    while index < len(best.actions):
        candidate = best.actions[:index] + best.actions[index + 1 :]
        result = run(candidate)
        if result.failed:
            best = result
        else:
            index += 1
    return best


def fuzz(
    engine,
    workdir: Path,
    *,
    sequences: int,
    seed: int,
    length: int = 5,
    minimize_failures: bool = False,
    on_result: Callable[[int, SequenceResult], None] | None = None,
    after_promotion: AfterPromotion | None = None,
) -> FuzzReport:
    """``after_promotion``: called after each drawn sequence (not after the minimizer's replays)."""
    rng = random.Random(seed)
    report = FuzzReport()
    for number in range(sequences):
        folder = workdir / f"seq{number}"

        def run(actions: Sequence[Action], _folder: Path = folder, hook: AfterPromotion | None = None) -> SequenceResult:
            _folder.mkdir(parents=True, exist_ok=True)
            return run_sequence(engine, Path(_folder, f"try{len(list(_folder.iterdir()))}"), actions, hook)

        result = run(generate(rng, length), hook=after_promotion)
        report.sequences += 1
        report.actions += len(result.actions)
        report.refusals += result.refusals
        if result.failed:
            report.failures.append(minimize(run, result) if minimize_failures else result)
        if on_result:
            on_result(number, report.failures[-1] if result.failed else result)
    return report
