"""One project built fresh on local Spark by both tools over the same days, each model's rows compared.

Each tool gets a copy of the project folders in a scratch folder of its own (neither writes into the source, nor
sees the other's files or catalog): SQLMesh in its virtualenv (``sqlmesh_side.py``), sparkmesh through its CLI
(``sparkmesh_build.py``). Models the non-determinism rule names are reported, not compared."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

from sqlmesh_spark.compare import compare_builds
from sqlmesh_spark.nondeterminism import nondeterministic_models
from sqlmesh_spark.records import SparkComparison, Window
from sqlmesh_spark.sparkmesh_build import sparkmesh_build
from sqlmesh_spark.sqlmesh_side import ensure_pyspark, sqlmesh_build

# What a previous run left in a project folder: never part of a fresh build.
LEFTOVERS = (".cache", ".sparkmesh", ".sqlmesh_bench", "__pycache__", "logs", "*.duckdb", "*.duckdb.wal")


def compare_on_spark(referee_python: Path, sources: list[Path], window: Window, scratch: Path,
                     env: dict[str, str] | None = None, requirements: Path | None = None,
                     setup_sql: tuple[str, ...] = ()) -> SparkComparison:
    """``sources``: the project's folders (several for a multi-repo project), copied under ``scratch``;
    ``requirements``: a folder of the project's own imports for sparkmesh's side (SQLMesh's has them installed);
    ``setup_sql``: run in each tool's catalog before its build (the tables the project reads as externals)."""
    env = dict(os.environ if env is None else env)
    ensure_pyspark(referee_python)
    theirs = sqlmesh_build(referee_python, copy_folders(sources, scratch / "sqlmesh"), window,
                           scratch / "sqlmesh_spark", env, setup_sql)
    ours = sparkmesh_build(Path(sys.executable), copy_folders(sources, scratch / "sparkmesh"), window, env, requirements,
                           setup_sql)
    return compare_builds(theirs, ours, nondeterministic_models(theirs.sources))


def copy_folders(sources: list[Path], under: Path) -> list[Path]:
    """Each folder copied under ``under`` by its own name (a multi-repo project's folders stay siblings)."""
    copies = []
    for source in sources:
        target = under / source.name
        shutil.copytree(source, target, ignore=shutil.ignore_patterns(*LEFTOVERS))
        copies.append(target)
    return copies


def describe(comparison: SparkComparison) -> list[str]:
    """One line per model, then the plans' errors."""
    lines = [f"{v.model}: {v.outcome}" + (f" ({v.reason})" if v.reason else "") + (f"; {v.type_note}" if v.type_note else "")
             for v in comparison.verdicts]
    lines += [f"SQLMesh plan: {comparison.sqlmesh_error}"] if comparison.sqlmesh_error else []
    lines += [f"sparkmesh plan: {comparison.sparkmesh_error}"] if comparison.sparkmesh_error else []
    return lines
