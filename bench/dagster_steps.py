"""The measurements of ``dagster_bench.py``, one per fresh process: ``python bench/dagster_steps.py STEP PROJECT``.

``defs``: import + load + ``build_sparkmesh_definitions`` + repository resolution (what a code location load does).
``range``: one direct Spark INSERT OVERWRITE over the range vs one Dagster run of the same partition range, on a
throwaway instance whose event log is the stock SQLite one or ``BatchedSqliteEventLogStorage`` (``--event-storage``).
Each prints one JSON line of figures.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from contextlib import contextmanager
from datetime import date, datetime, timedelta
from pathlib import Path

STARTED = time.perf_counter()

from timing import emit, warm_up  # noqa: E402 (sibling script)


def step_defs(args) -> dict:
    import dagster  # noqa: F401 - a code location imports it anyway; timed as import

    from dagster_sparkmesh.dagster import build_sparkmesh_definitions
    from dagster_sparkmesh.project.loader import load_project

    imported = time.perf_counter()
    project = load_project(args.project)
    loaded = time.perf_counter()
    defs = build_sparkmesh_definitions(args.project, sensor=True)
    built = time.perf_counter()
    repository = defs.get_repository_def()
    assets = len(repository.asset_graph.get_all_asset_keys())
    resolved = time.perf_counter()
    return {
        "import_seconds": imported - STARTED,
        "load_seconds": loaded - imported,
        "build_seconds": built - loaded,
        "resolve_seconds": resolved - built,
        "models": len(project.models),
        "asset_keys": assets,
    }


def step_range(args) -> dict:
    import dagster as dg
    from floor import direct_overwrite

    from dagster_sparkmesh.dagster import (
        SparkMeshResource,
        SparkMeshTranslator,
        SparkMeshTranslatorSettings,
        build_sparkmesh_definitions,
    )
    from dagster_sparkmesh.engine.session import open_session
    from dagster_sparkmesh.project.loader import load_project
    from dagster_sparkmesh.project.rendering import render_query

    project = load_project(args.project)
    resource = SparkMeshResource(project_dir=str(project.path), engine_mode="local")
    spark = open_session(resource.connection(project), project.path)  # the session the run's steps reuse
    warm_up(spark)
    model = project.models[args.model]
    query = render_query(model, start=args.start, end=args.end, execution_time=args.end, table_for={}, models=project.models)
    spark.sql("CREATE SCHEMA IF NOT EXISTS direct")
    direct_first = direct_overwrite(spark, "direct.first", query, model.kind.time_column)
    settings = SparkMeshTranslatorSettings(partition_row_counts_up_to=None if args.count_all_partitions else 92)
    defs = build_sparkmesh_definitions(project.path, resource=resource, sensor=False, translator=SparkMeshTranslator(settings))
    key = dg.AssetKey(args.model.split("."))
    tags = {"dagster/asset_partition_range_start": args.first_key, "dagster/asset_partition_range_end": args.last_key}
    partitions_def = model_partitions(defs, args.model)
    dagster_floor = _dagster_floor(partitions_def, tags, args.event_storage)
    days = len(partitions_def.get_partition_keys_in_range(dg.PartitionKeyRange(args.first_key, args.last_key)))
    floor_365 = dagster_floor if days == 365 else _dagster_floor(*_days_365(), args.event_storage)
    with bench_instance(args.event_storage) as instance:
        began = time.perf_counter()
        result = dg.materialize(
            defs.assets, selection=[key], resources=defs.resources, instance=instance, tags=tags, raise_on_error=False
        )
        dagster_seconds = time.perf_counter() - began
        record = instance.get_run_record_by_id(result.run_id)  # the run's duration as the UI shows it
        run_seconds = record.end_time - record.start_time if record and record.end_time and record.start_time else None
        events = result.get_asset_materialization_events()
        materializations = len(events)
        step_seconds = events[0].materialization.metadata["sparkmesh/duration_seconds"].value if events else None
        failures = [event.event_specific_data.error.message for event in result.all_events if event.is_step_failure]
    direct_again = direct_overwrite(spark, "direct.again", query, model.kind.time_column)
    physical = [row["tableName"] for row in spark.sql("SHOW TABLES IN sparkmesh__" + args.model.split(".")[0]).collect()]
    rows = spark.table(f"sparkmesh__{args.model.split('.')[0]}.{physical[0]}").count() if physical else 0
    return {
        "direct_seconds": [direct_first, direct_again],
        "dagster_seconds": dagster_seconds,
        "dagster_floor_seconds": dagster_floor,
        "dagster_floor_365_seconds": floor_365,
        "event_storage": args.event_storage,
        "run_seconds": run_seconds,
        "sparkmesh_step_seconds": step_seconds,
        "success": result.success,
        "failure": failures[0].strip() if failures else None,
        "materializations": materializations,
        "rows": rows,
        "direct_rows": spark.table("direct.first").count(),
    }


def model_partitions(defs, model: str):
    import dagster as dg

    return defs.resolve_asset_graph().get(dg.AssetKey(model.split("."))).partitions_def


@contextmanager
def bench_instance(event_storage: str):
    """A throwaway instance in a temp dir: stock, or with the batched SQLite event log (which sets
    DAGSTER_EVENT_BATCH_SIZE in this process when it loads)."""
    import dagster as dg
    import yaml

    from dagster_sparkmesh.dagster.event_storage import batched_instance_yaml

    with tempfile.TemporaryDirectory(prefix="sparkmesh_bench_instance_") as home:
        runs_dir = os.path.join(home, "history", "runs")
        overrides = yaml.safe_load(batched_instance_yaml(runs_dir)) if event_storage == "batched" else {}
        with dg.instance_for_test(temp_dir=home, overrides=overrides) as instance:
            yield instance


def _days_365():
    """365 daily partitions (2023) and the tags of one run over all of them."""
    import dagster as dg

    first, end = date(2023, 1, 1), date(2024, 1, 1)
    partitions_def = dg.DailyPartitionsDefinition(start_date=first.isoformat(), end_date=end.isoformat())
    last = (end - timedelta(days=1)).isoformat()
    return partitions_def, {"dagster/asset_partition_range_start": first.isoformat(),
                            "dagster/asset_partition_range_end": last}


def _dagster_floor(partitions_def, tags: dict[str, str], event_storage: str) -> float:
    """The same ranged run of an asset that does nothing, on an instance of the same kind: what Dagster itself
    costs (run creation, one planned and one materialization event per partition: each a SQLite commit on the
    stock event log, a few batches on the batched one)."""
    import dagster as dg

    @dg.asset(partitions_def=partitions_def, backfill_policy=dg.BackfillPolicy.single_run())
    def nothing():  # no annotation: Dagster resolves annotations, and they are strings here
        return dg.MaterializeResult()

    with bench_instance(event_storage) as instance:
        began = time.perf_counter()
        dg.materialize([nothing], instance=instance, tags=tags)
        return time.perf_counter() - began


STEPS = {"defs": step_defs, "range": step_range}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("step", choices=sorted(STEPS))
    parser.add_argument("project", type=Path)
    parser.add_argument("--model", default="bench.events")
    parser.add_argument("--start", type=datetime.fromisoformat)
    parser.add_argument("--end", type=datetime.fromisoformat)
    parser.add_argument("--first-key")
    parser.add_argument("--last-key")
    parser.add_argument("--event-storage", choices=("stock", "batched"), default="stock")
    parser.add_argument("--count-all-partitions", action="store_true", help="dagster/partition_row_count on all")
    args = parser.parse_args()
    emit(STEPS[args.step](args))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
