"""Local Spark as a SQLMesh user would configure it for one project, everything under one folder of its own: the
warehouse, the Derby metastore (embedded Derby admits one process: each build gets its own) and DuckDB state
(SQLMesh refuses Spark as its state store). Standard library only: the referee's script imports it too."""

from __future__ import annotations

import json
import os
from pathlib import Path

SHUFFLE_PARTITIONS = 4
# Models written at once, by both tools: one. Python models share their process's random generators (Python's
# ``random``, numpy's global one): two running at once interleave their draws, so a model that seeds its generator
# still gets other draws than in a build where it ran alone (sushi.order_items: equal built alone, different beside
# raw_marketing). One at a time, a seeded model's rows depend only on its inputs.
CONCURRENT_TASKS = 1
EXTRA_CONFIG_VARIABLE = "SQLMESH_BENCH_SPARK_CONFIG"
"""JSON of more ``spark.*`` settings for SQLMesh's session, e.g. the ones that serve Iceberg tables: set by
``sqlmesh_side_by_side.py --table-format``, inherited by the child processes that read SQLMesh's catalog."""


def local_spark_config(folder: Path) -> dict[str, str]:
    """The ``spark.*`` settings of a local[2] session whose catalog lives in ``folder``."""
    metastore = folder / "metastore"
    return {
        "spark.master": "local[2]",
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.shuffle.partitions": str(SHUFFLE_PARTITIONS),
        "spark.sql.session.timeZone": "UTC",
        "spark.driver.host": "127.0.0.1",
        "spark.driver.bindAddress": "127.0.0.1",
        "spark.sql.catalogImplementation": "hive",
        "spark.sql.warehouse.dir": str(folder / "warehouse"),
        "spark.hadoop.javax.jdo.option.ConnectionURL": f"jdbc:derby:;databaseName={metastore / 'db'};create=true",
        "spark.driver.extraJavaOptions": f"-Dderby.system.home={metastore}",
        **json.loads(os.environ.get(EXTRA_CONFIG_VARIABLE, "{}")),
    }


def state_database(folder: Path) -> Path:
    return folder / "state.duckdb"


def gateway_yaml(folder: Path, concurrent_tasks: int = 4) -> str:
    """A ``gateways:`` entry named ``local`` (YAML text) for a project's config.yaml."""
    (folder / "metastore").mkdir(parents=True, exist_ok=True)
    settings = "\n".join(f"        {key}: '{value}'" for key, value in local_spark_config(folder).items())
    return (
        "gateways:\n  local:\n    connection:\n      type: spark\n"
        f"      concurrent_tasks: {concurrent_tasks}\n      config:\n{settings}\n"
        f"    state_connection:\n      type: duckdb\n      database: {state_database(folder)}\n"
        f"      concurrent_tasks: {concurrent_tasks}\n"
    )
