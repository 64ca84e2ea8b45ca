"""The lifecycle fuzzer's second referee (``bench/lifecycle_fuzz.py --sqlmesh-referee VENV``): after each sequence's
final promotion, SQLMesh builds the same final project files fresh on local Spark of its own, and every prod view
sparkmesh shows is compared with SQLMesh's prod view of that model (row count and checksums, ``digest.py``).

The first referee (``tests/lifecycle/oracle.py``) compares prod with a fresh build by sparkmesh itself: a mistake
both builds share goes unseen there. SQLMesh shares none of sparkmesh's code.

Where SQLMesh takes the same files otherwise by design, the referee's copy is adapted by rule (``BY_DESIGN``); the
external table of late data is recreated in SQLMesh's catalog with the rows it holds in sparkmesh's.
"""

from __future__ import annotations

import os
import re
import shutil
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path

from sqlmesh_spark.compare import compare_builds
from sqlmesh_spark.nondeterminism import nondeterministic_models
from sqlmesh_spark.records import EQUAL, EXCLUDED, BuildOutcome, SparkComparison, Window
from sqlmesh_spark.sparkmesh_build import prod_digests
from sqlmesh_spark.sqlmesh_side import ensure_pyspark, sqlmesh_build

BY_DESIGN = {
    "model_defaults.batch_size": "sparkmesh reads `batch_size` under `model_defaults`; SQLMesh 0.236.4 has no such "
    "model default (its config refuses the key, batch_size is a kind property there). Batching never changes these "
    "models' rows, so the referee's copy drops the key.",
}
_BATCH_SIZE_DEFAULT = re.compile(r"^\s+batch_size:.*\n", re.MULTILINE)


@dataclass
class RefereeTally:
    sequences: int = 0
    models: int = 0
    """Models compared (equal or different), over all sequences."""
    equal: int = 0
    excluded: int = 0
    differences: list[str] = field(default_factory=list)
    """``sequence N: model: how``, also a model one build lacks or cannot read."""
    errors: list[str] = field(default_factory=list)
    """SQLMesh's plan errors (its build then reads the tables it did build)."""


def referee_copy(project_dir: Path, target: Path) -> Path:
    """The project's files as SQLMesh gets them: sparkmesh's state left out, the ``BY_DESIGN`` rules applied."""
    shutil.copytree(project_dir, target, ignore=shutil.ignore_patterns(".sparkmesh", "__pycache__"))
    config = target / "config.yaml"
    config.write_text(_BATCH_SIZE_DEFAULT.sub("", config.read_text()))
    return target


def external_setup_sql(spark, table: str, columns: str) -> tuple[str, ...]:
    """Statements that recreate ``table`` (``schema.name``, declared ``columns``) with the rows ``spark`` holds."""
    schema = table.split(".")[0]
    rows = spark.sql(f"SELECT * FROM {table}").collect()
    statements = [f"CREATE DATABASE IF NOT EXISTS {schema}",
                  f"CREATE TABLE IF NOT EXISTS {table} ({columns}) USING parquet"]
    if rows:
        statements.append(f"INSERT INTO {table} VALUES " + ", ".join(_values(row) for row in rows))
    return tuple(statements)


def _values(row) -> str:
    def literal(value) -> str:
        if value is None:
            return "NULL"
        if isinstance(value, (int, float)):
            return repr(value)
        if isinstance(value, datetime):  # typed literals: no string-to-date conversion left to the INSERT
            return f"TIMESTAMP'{value.isoformat(sep=' ')}'"
        if isinstance(value, date):
            return f"DATE'{value.isoformat()}'"
        return "'" + str(value).replace("'", "''") + "'"

    return "(" + ", ".join(literal(value) for value in row) + ")"


def without_prefix(outcome: BuildOutcome, prefix: str) -> BuildOutcome:
    """Names compared without the sequence's schema prefix (``l1a2b3c4d_m.daily`` -> ``m.daily``)."""
    return BuildOutcome(
        error=outcome.error,
        digests={name.removeprefix(prefix): digest for name, digest in outcome.digests.items()},
        sources={name.removeprefix(prefix): source for name, source in outcome.sources.items()},
    )


class SqlmeshReferee:
    """The fuzzer's ``after_promotion`` hook: one SQLMesh build per sequence, tallied."""

    def __init__(self, python: Path, workdir: Path) -> None:
        ensure_pyspark(python)
        self.python = python
        self.workdir = workdir
        self.tally = RefereeTally()

    def __call__(self, lifecycle, end: str) -> None:
        from dagster_sparkmesh.project.loader import load_project

        number = self.tally.sequences
        self.tally.sequences += 1
        project = lifecycle.project
        spark = lifecycle.engine.spark
        ours = BuildOutcome("", prod_digests(spark, load_project(project.path, use_cache=False)))
        folder = self.workdir / f"sqlmesh_referee_{number}"
        try:
            setup = external_setup_sql(spark, f"{project.external_schema}.adjustments", "ds DATE, bonus INT")
            theirs = sqlmesh_build(self.python, [referee_copy(project.path, folder / "project")], Window(end=end),
                                   folder / "spark", dict(os.environ), setup)
        finally:
            shutil.rmtree(folder, ignore_errors=True)
        theirs, ours = without_prefix(theirs, project.prefix), without_prefix(ours, project.prefix)
        self.record(number, compare_builds(theirs, ours, nondeterministic_models(theirs.sources)))

    def record(self, number: int, comparison: SparkComparison) -> None:
        tally = self.tally
        tally.models += comparison.compared
        tally.equal += comparison.count(EQUAL)
        tally.excluded += comparison.count(EXCLUDED)
        tally.differences += [f"sequence {number}: {v.model}: {v.outcome}: {v.reason}" for v in comparison.verdicts
                              if v.outcome not in (EQUAL, EXCLUDED)]
        if comparison.sqlmesh_error:
            tally.errors.append(f"sequence {number}: {comparison.sqlmesh_error}")
        print(f"  SQLMesh referee, sequence {number}: {comparison.count(EQUAL)} of {len(comparison.verdicts)} prod "
              f"views equal to SQLMesh's ({comparison.count(EXCLUDED)} excluded)", flush=True)

    def summary(self) -> str:
        tally = self.tally
        different = len(tally.differences)
        return (f"SQLMesh referee: {tally.sequences} sequences refereed, {tally.models} models compared, "
                f"{tally.equal} equal, {different} different or unreadable, {tally.excluded} excluded, "
                f"{len(tally.errors)} SQLMesh plan error(s)")
