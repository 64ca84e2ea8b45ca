"""The measurements of ``core_bench.py``, one per fresh process: ``python bench/core_steps.py STEP PROJECT ...``.

Steps: ``floor``, ``floor-daily`` (the daily run's plain statements on a floor written before), ``apply`` (plan + apply an environment), ``noop-api`` (plan only, through the Python API),
``promote`` (plan + promote an environment whose tables are computed). Each prints one JSON line of figures.
"""

from __future__ import annotations

import argparse
import dataclasses
import cProfile
import pstats
import sys
import time
from datetime import datetime
from pathlib import Path

STARTED = time.perf_counter()  # before the heavy imports: a fresh process pays them too

from floor import LAYOUTS, run_daily_floor, run_floor  # noqa: E402 (sibling script)
from timing import emit, warm_up  # noqa: E402 (sibling script)

from dagster_sparkmesh.project.loader import load_project  # noqa: E402


def connection(project, mode: str, port: int):
    return project.config.connection.model_copy(update={"mode": mode, "connect_port": port})


def served_format(project) -> str | None:
    """The lakehouse format the project's tables are in (its session must serve it), if any."""
    from dagster_sparkmesh.model.table_formats import project_lakehouse_format

    return project_lakehouse_format(project.models.values())


def step_floor(args) -> dict:
    from dagster_sparkmesh.engine.session import open_session

    project = load_project(args.project)
    spark = open_session(connection(project, "local", args.port), project.path, served_format(project))
    if not args.cold:
        warm_up(spark)
    figures = {}
    for layout in args.layouts:
        began = time.perf_counter()
        per_model = run_floor(spark, project, args.start, args.end, layout=layout, workers=args.workers)
        figures[layout] = {"seconds": time.perf_counter() - began, "models": len(per_model)}
    return figures


def step_floor_daily(args) -> dict:
    """The daily run's floor on a ``plain`` floor written before over ``[args.start, args.day)``: the new day
    ``[args.day, args.end)``, in a fresh process (``--cold`` is implied: the whole process is what is timed)."""
    from dagster_sparkmesh.engine.session import open_session

    project = load_project(args.project)
    spark = open_session(connection(project, "local", args.port), project.path, served_format(project))
    began = time.perf_counter()
    per_model = run_daily_floor(spark, project, args.start, args.day, args.end, workers=args.workers)
    return {"seconds": time.perf_counter() - began, "models": len(per_model)}


def step_apply(args) -> dict:
    from dagster_sparkmesh.execution.apply import apply_plan
    from dagster_sparkmesh.execution.plans import plan_for
    from dagster_sparkmesh.execution.context import ExecutionContext

    project = load_project(args.project)
    ctx = _as_of_end(ExecutionContext.open(project.path, args.environment, connection=connection(project, args.mode, args.port)), args)
    warm_up(ctx.engine.spark)
    began = time.perf_counter()
    with _profiled(args.profile):
        plan = plan_for(ctx, args.start)
        planned = time.perf_counter()
        result = apply_plan(ctx, plan)
    done = time.perf_counter()
    written = [m.physical_table for m in result.models if not m.skipped]
    return {
        "seconds": done - began,
        "plan_seconds": planned - began,
        "apply_seconds": done - planned,
        "written": written,
        "directly_modified": list(plan.directly_modified),
        "indirectly_modified": list(plan.indirectly_modified),
        "categories": {name: category.value for name, category in plan.categories.items()},
        "views": [f"{v.action} {v.view}" for v in (result.promotion.views if result.promotion else ())],
        "slowest": sorted(((m.duration_seconds, m.model) for m in result.models), reverse=True)[:5],
        "durations": sorted(m.duration_seconds for m in result.models if not m.skipped),
        "peak_heap_mb": _peak_heap_mb(ctx.engine.spark),
    }


def _peak_heap_mb(spark) -> float | None:
    """The driver JVM's peak heap use, summed over its heap pools (in-process sessions only: Connect has no JVM
    handle)."""
    jvm = getattr(getattr(spark, "sparkContext", None), "_jvm", None) if not _is_connect(spark) else None
    if jvm is None:
        return None
    pools = jvm.java.lang.management.ManagementFactory.getMemoryPoolMXBeans()
    heap = [pool for pool in pools if str(pool.getType()) == "Heap memory"]
    return sum(pool.getPeakUsage().getUsed() for pool in heap) / 2**20


def _is_connect(spark) -> bool:
    return type(spark).__module__.startswith("pyspark.sql.connect")


def step_noop_api(args) -> dict:
    from dagster_sparkmesh.execution.plans import plan_for
    from dagster_sparkmesh.execution.context import ExecutionContext

    ctx = _as_of_end(ExecutionContext.open(args.project, args.environment), args)
    plan = plan_for(ctx, args.start)
    return {
        "seconds": time.perf_counter() - STARTED,
        "noop": plan.is_noop,
        "engine_started": ctx.engine_started,
        "jvm": "pyspark.context" in sys.modules and _spark_context_active(),
    }


def step_promote(args) -> dict:
    """Plan an environment whose new tables are already computed, and promote it (views only)."""
    from dagster_sparkmesh.execution.plans import plan_for
    from dagster_sparkmesh.execution.context import ExecutionContext
    from dagster_sparkmesh.execution.promotion import promote

    began = time.perf_counter()
    project = load_project(args.project)
    ctx = _as_of_end(ExecutionContext.open(project.path, args.environment, connection=connection(project, args.mode, args.port)), args)
    with _profiled(args.profile):
        plan = plan_for(ctx, args.start)
        planned = time.perf_counter()
        missing = {name: len(i) for name, i in plan.missing_intervals.items() if i}
        ctx.engine  # noqa: B018 - connect (and start the server when cold) apart from the promotion itself
        connected = time.perf_counter()
        result = promote(ctx, plan)
    done = time.perf_counter()
    return {
        "process_seconds": done - STARTED,
        "seconds": done - began,
        "plan_seconds": planned - began,
        "connect_seconds": connected - planned,
        "promote_seconds": done - connected,
        "missing_before": missing,
        "views": [f"{v.action} {v.view}" for v in result.views],
    }


def _as_of_end(ctx, args):
    """The window's end is the steps' "now", not an explicit plan end: an environment planned with an explicit
    end is a bounded preview that ``run`` never extends, and the daily run (core_bench h) must extend prod."""
    return dataclasses.replace(ctx, clock=lambda: args.end)


def _spark_context_active() -> bool:
    from pyspark import SparkContext

    return SparkContext._active_spark_context is not None


class _profiled:
    """cProfile around a block when ``path`` is set; the stats are printed to stderr, sorted by cumulative time."""

    def __init__(self, path: str | None) -> None:
        self.path, self.profile = path, cProfile.Profile() if path else None

    def __enter__(self) -> None:
        if self.profile:
            self.profile.enable()

    def __exit__(self, *_exc: object) -> None:
        if self.profile:
            self.profile.disable()
            self.profile.dump_stats(self.path)
            pstats.Stats(self.profile, stream=sys.stderr).sort_stats("cumulative").print_stats(40)


STEPS = {"floor": step_floor, "floor-daily": step_floor_daily, "apply": step_apply, "noop-api": step_noop_api, "promote": step_promote}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("step", choices=sorted(STEPS))
    parser.add_argument("project", type=Path)
    parser.add_argument("--environment", default="prod")
    parser.add_argument("--start", type=datetime.fromisoformat, required=True)
    parser.add_argument("--end", type=datetime.fromisoformat, required=True)
    parser.add_argument("--day", type=datetime.fromisoformat, help="floor-daily: the new day's start")
    parser.add_argument("--mode", default="local", choices=("local", "managed"))
    parser.add_argument("--port", type=int, default=15002)
    parser.add_argument("--layouts", nargs="+", default=["plain", "monthly"], choices=LAYOUTS)
    parser.add_argument("--profile", help="write cProfile stats of the timed block to this file")
    parser.add_argument("--cold", action="store_true", help="floor: no warm-up (the whole process is what is timed)")
    parser.add_argument("--workers", type=int, default=2,
                        help="floor: models written at once (the product's: 2 in-process, 4 on the managed server)")
    args = parser.parse_args()
    figures = STEPS[args.step](args)
    if args.mode == "managed":
        # Close the Connect client before exit: one left to the garbage collector can hang the interpreter.
        from dagster_sparkmesh.engine.session import close_sessions

        close_sessions()
    emit(figures)


if __name__ == "__main__":
    main()
