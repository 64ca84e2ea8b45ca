"""Where SQLMesh and sparkmesh put a model of a declared Spark catalog, side by side (issue 35's real catalogs).

    python bench/catalog_placement.py --sqlmesh ~/.cache/dagster-sparkmesh/sqlmesh-0.236.4/venv/bin/sqlmesh

The same project for both tools: ``lake.sales.orders`` (an incremental model named with the catalog ``lake``,
declared in the connection's Spark settings as Iceberg's JDBC catalog in a SQLite file of each tool's own) and
``shop.summary`` (Spark's session catalog) reading it across catalogs. Each tool plans prod, then a development
environment ``dev`` of a breaking change to the orders model, each command its own process. Then each tool's
Iceberg catalog is read without Spark (its SQLite tables, and PyIceberg for the physical tables' rows), and the two
are compared: every table and view by namespace and name (physical prefixes and versions made alike), and the rows
each physical table holds. Prints one JSON object; exit 1 when the placements or rows differ.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SPARKMESH = Path(sys.executable).parent / "sparkmesh"
PACKAGES = "org.apache.iceberg:iceberg-spark-runtime-4.1_2.13:1.12.0,org.xerial:sqlite-jdbc:3.54.1.0"
ORDERS = (
    "MODEL (name lake.sales.orders, kind INCREMENTAL_BY_TIME_RANGE (time_column ds), end '2024-01-03');\n"
    "SELECT ds, COUNT(*) AS orders FROM (SELECT id, DATE '2024-01-01' + CAST(id % 3 AS INT) AS ds FROM range(30)) "
    "WHERE ds BETWEEN @start_ds AND @end_ds AND {where} GROUP BY ds\n"
)
SUMMARY = "MODEL (name shop.summary, kind FULL);\nSELECT SUM(orders) AS orders FROM lake.sales.orders\n"


def _catalog_settings(folder: Path) -> dict[str, str]:
    return {
        "spark.jars.packages": PACKAGES,
        "spark.sql.extensions": "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions",
        "spark.sql.catalog.lake": "org.apache.iceberg.spark.SparkCatalog",
        "spark.sql.catalog.lake.type": "jdbc",
        "spark.sql.catalog.lake.uri": f"jdbc:sqlite:{folder / 'lake.db'}",
        "spark.sql.catalog.lake.jdbc.schema-version": "V1",
        "spark.sql.catalog.lake.warehouse": str(folder / "warehouse"),
    }


def _settings_yaml(settings: dict[str, str], indent: str) -> str:
    return "".join(f"{indent}{key}: '{value}'\n" for key, value in settings.items())


def _write_project(folder: Path, config: str) -> None:
    (folder / "models").mkdir(parents=True)
    (folder / "config.yaml").write_text(config)
    (folder / "models" / "orders.sql").write_text(ORDERS.format(where="TRUE"))
    (folder / "models" / "summary.sql").write_text(SUMMARY)


def _sqlmesh_project(folder: Path) -> None:
    settings = {
        "spark.master": "local[2]", "spark.ui.enabled": "false", "spark.sql.shuffle.partitions": "2",
        "spark.jars.ivy": str(Path.home() / ".cache" / "dagster-sparkmesh" / "ivy"),
        "spark.sql.warehouse.dir": str(folder / "hive"), **_catalog_settings(folder),
    }
    config = ("gateways:\n  spark:\n    connection:\n      type: spark\n      config:\n"
              + _settings_yaml(settings, "        ")
              + f"    state_connection:\n      type: duckdb\n      database: {folder / 'state.db'}\n"
              "default_gateway: spark\nmodel_defaults:\n  dialect: spark\n  start: '2024-01-01'\n")
    _write_project(folder, config)


def _sparkmesh_project(folder: Path) -> None:
    config = ("gateways:\n  local:\n    connection:\n      type: spark\n      mode: local\n      config:\n"
              + _settings_yaml(_catalog_settings(folder), "        ")
              + "model_defaults:\n  dialect: spark\n  start: '2024-01-01'\n")
    _write_project(folder, config)


def _run(command: list[str], folder: Path) -> None:
    environment = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1"}
    done = subprocess.run(command, cwd=folder, capture_output=True, text=True, env=environment, timeout=900)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed in {folder}:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")


def _build(folder: Path, tool: list[str]) -> None:
    """prod, then dev of a breaking change, as a user types them."""
    _run([*tool, "plan", "--auto-apply", "--no-prompts"], folder)
    (folder / "models" / "orders.sql").write_text(ORDERS.format(where="id >= 3"))
    _run([*tool, "plan", "dev", "--auto-apply", "--no-prompts"], folder)


def _placements(folder: Path) -> list[tuple[str, str, str]]:
    """(kind, namespace, name) of every table and view in the tool's Iceberg catalog, sorted, with the tools'
    physical prefixes and versions made alike."""
    with sqlite3.connect(folder / "lake.db") as catalog:
        rows = catalog.execute(
            "SELECT COALESCE(iceberg_type, 'TABLE'), table_namespace, table_name, metadata_location "
            "FROM iceberg_tables WHERE catalog_name = 'lake'"
        ).fetchall()
    placed = []
    for kind, namespace, name, _ in rows:
        namespace = re.sub(r"^(sqlmesh|sparkmesh)__", "<physical>__", namespace)
        name = re.sub(r"__[a-z0-9]+$", "__<version>", name) if namespace.startswith("<physical>") else name
        placed.append((kind, namespace, name))
    return sorted(placed)


def _physical_rows(folder: Path) -> list[int]:
    """Each physical table's total of ``orders``, read by PyIceberg from the tool's catalog."""
    from pyiceberg.catalog.sql import SqlCatalog

    catalog = SqlCatalog("lake", uri=f"sqlite:///{folder / 'lake.db'}", warehouse=str(folder / "warehouse"))
    totals = []
    for namespace in catalog.list_namespaces():
        if namespace[0].endswith("__sales") and namespace[0] != "sales":
            for identifier in catalog.list_tables(namespace):
                rows = catalog.load_table(identifier).scan().to_arrow().to_pylist()
                totals.append(sum(row["orders"] for row in rows))
    return sorted(totals)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sqlmesh", required=True, help="the sqlmesh executable of its own virtualenv")
    parser.add_argument("--keep", action="store_true", help="keep both projects and catalogs (their folder is printed)")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="sparkmesh-catalogs-"))
    sqlmesh_folder, sparkmesh_folder = work / "sqlmesh", work / "sparkmesh"
    _sqlmesh_project(sqlmesh_folder)
    _sparkmesh_project(sparkmesh_folder)
    _build(sqlmesh_folder, [args.sqlmesh])
    _build(sparkmesh_folder, [str(SPARKMESH), "-p", str(sparkmesh_folder)])
    theirs, ours = _placements(sqlmesh_folder), _placements(sparkmesh_folder)
    figures = {
        "sqlmesh_objects": [" ".join(key) for key in theirs],
        "sparkmesh_objects": [" ".join(key) for key in ours],
        "same_placement": theirs == ours,
        "sqlmesh_physical_totals": _physical_rows(sqlmesh_folder),
        "sparkmesh_physical_totals": _physical_rows(sparkmesh_folder),
        "work": str(work) if args.keep else None,
    }
    figures["same_rows"] = figures["sqlmesh_physical_totals"] == figures["sparkmesh_physical_totals"]
    print(json.dumps(figures, indent=1))
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    return 0 if figures["same_placement"] and figures["same_rows"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
