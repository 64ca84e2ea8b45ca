"""The walk of one ranged Dagster step, from its partition window to the recorded intervals: which functions of the
package it enters, in how many files, and how many of them plan (``python bench/step_walk.py``).

A step is what ``dagster/assets.py`` runs for a run of two partitions (2024-01-02..03, then 04..05) of ``shop.daily``
and ``shop.daily_flags`` (tests/dagster/projects/shop) on local Spark, after prod was applied for its first day. It is
measured for a run tagged with a stored plan (what the git sensor launches) and for an untagged run's first step
(launched from the UI: it plans once for the run). Releases before stored plans had one kind of step: it built the
whole project's plan; the script runs it when the package has no ``execution.plans``.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
import threading
import uuid
from collections import Counter
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHOP = ROOT / "tests" / "dagster" / "projects" / "shop"
PACKAGE = "dagster_sparkmesh"
MODELS = ["shop.daily", "shop.daily_flags"]


class Walk:
    """Records each package function entered (file, name) while active, through ``sys.setprofile``; and those
    handed the step's partition range (``window``): an argument that is one of its bounds, or holds one (an
    interval, a time window, a collection of them)."""

    def __init__(self, window: tuple[datetime, datetime] | None = None) -> None:
        self.entered: Counter[tuple[str, str]] = Counter()
        self.window = frozenset(window or ())
        self.handed: set[tuple[str, str]] = set()

    def __enter__(self) -> Walk:
        sys.setprofile(self._on_event)
        threading.setprofile(self._on_event)  # models run on the scheduler's worker threads
        return self

    def __exit__(self, *_exc: object) -> None:
        sys.setprofile(None)
        threading.setprofile(None)

    def _on_event(self, frame, event, _arg) -> None:
        if event != "call":
            return
        path = frame.f_code.co_filename
        marker = f"/{PACKAGE}/"
        if marker in path:
            key = (path.split(marker, 1)[1], frame.f_code.co_qualname)
            self.entered[key] += 1
            if self.window and key not in self.handed and _carries(frame, self.window):
                self.handed.add(key)

    def figures(self) -> dict:
        files = {file for file, _ in self.entered}
        handed = sorted(f"{file}:{name}" for file, name in self.handed)
        by_package = Counter(file.split("/")[0] if "/" in file else "." for file, _ in self.entered)
        return {
            "functions": len(self.entered),
            "files": len(files),
            "functions_by_package": dict(sorted(by_package.items())),
            "build_plan_calls": sum(n for (file, name), n in self.entered.items() if name == "build_plan"),
            "plan_functions": sorted(f"{file}:{name}" for file, name in self.entered if file.startswith("plan/")),
            "range_functions": len(handed),
            "range_files": len({name.split(":")[0] for name in handed}),
            "range_walk": handed,
        }


def _carries(frame, window: frozenset[datetime]) -> bool:
    """Whether one of the frame's arguments is a bound of the window or holds one (an interval's start, in a list
    or mapping of them, two levels down at most)."""
    code = frame.f_code
    names = code.co_varnames[: code.co_argcount + code.co_kwonlyargcount]
    return any(_holds(frame.f_locals.get(name), window, depth=2) for name in names)


def _holds(value, window: frozenset[datetime], depth: int) -> bool:
    if isinstance(value, datetime):
        return value in window
    if value is None or isinstance(value, (str, bytes, int, float, bool)):
        return False
    if isinstance(value, (dict, list, tuple, set, frozenset)):
        items = list(value.values() if isinstance(value, dict) else value)[:50]
        return depth > 0 and any(_holds(item, window, depth - 1) for item in items)
    return any(isinstance(getattr(value, bound, None), datetime) and getattr(value, bound) in window
               for bound in ("start", "end"))


def main() -> None:
    from dagster_sparkmesh.execution.apply import apply_plan
    from dagster_sparkmesh.execution.context import ExecutionContext
    from dagster_sparkmesh.project.loader import load_project

    try:
        from dagster_sparkmesh.execution import plans
    except ImportError:
        plans = None
    work = Path(tempfile.mkdtemp(prefix="step_walk_"))
    try:
        project_dir = work / "shop"
        shutil.copytree(SHOP, project_dir, ignore=shutil.ignore_patterns(".sparkmesh"))
        project = load_project(project_dir, use_cache=False)
        ctx = ExecutionContext.open(project.path, "prod", project=project)
        start, end = datetime(2024, 1, 2), datetime(2024, 1, 4)
        build = plans.plan_for if plans else _old_plan_for()
        apply_plan(ctx, build(ctx, datetime(2024, 1, 1), start))
        figures = {"tagged": _tagged(ctx, start, end)} if plans else {"every step": _old_step(ctx, start, end)}
        if plans:
            figures["untagged, first step"] = _untagged(ctx, datetime(2024, 1, 4), datetime(2024, 1, 6))
        print(json.dumps(figures, indent=2))
        ctx.close()
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _tagged(ctx, start: datetime, end: datetime) -> dict:
    from dagster_sparkmesh.dagster.sensor import StatePlanner
    from dagster_sparkmesh.execution.apply import backfill_window
    from dagster_sparkmesh.execution.plans import plan_for_run

    plan_id = StatePlanner("prod", None).plan(ctx.project).plan_id  # the sensor's tick, not the step
    with Walk((start, end)) as walk:
        plan = plan_for_run(ctx, plan_id, "tagged-run")
        backfill_window(ctx, plan, MODELS, start, end)
    return walk.figures()


def _untagged(ctx, start: datetime, end: datetime) -> dict:
    from dagster_sparkmesh.execution.apply import backfill_window
    from dagster_sparkmesh.execution.plans import plan_for_run

    with Walk((start, end)) as walk:
        plan = plan_for_run(ctx, None, uuid.uuid4().hex)
        backfill_window(ctx, plan, MODELS, start, end)
    return walk.figures()


def _old_plan_for():
    from dagster_sparkmesh.execution.backfill import plan_for

    return plan_for


def _old_step(ctx, start: datetime, end: datetime) -> dict:
    from dagster_sparkmesh.execution.backfill import run_models

    with Walk() as walk:
        run_models(ctx, MODELS, start, end)
    return walk.figures()


if __name__ == "__main__":
    main()
