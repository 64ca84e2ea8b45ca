"""The ``--spark`` stage: each example project built fresh on local Spark by both tools over the same days
(``bench/sqlmesh_spark``), its models' rows compared, folded into the project's score."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from sqlmesh_compat.records import Count, Difference, ProjectScore, SparkRows
from sqlmesh_compat.referee import Referee
from sqlmesh_spark.records import DIFFERENT, EQUAL, EXCLUDED, UNREADABLE, SparkComparison, Window
from sqlmesh_spark.runner import compare_on_spark


def spark_stage(
    referee: Referee, folders: list[Path], window: Window, scratch: Path, setup_sql: tuple[str, ...] = ()
) -> SparkComparison:
    return compare_on_spark(referee.python, folders, window, scratch, requirements=referee.project_requirements,
                            setup_sql=setup_sql)


def with_spark_rows(score: ProjectScore, comparison: SparkComparison) -> ProjectScore:
    """``score`` with the stage's counts and every model that is not equal (or set apart) as a difference. A model
    that one side could not build counts against the equal ones: it was meant to be compared."""
    equal = comparison.count(EQUAL)
    total = equal + comparison.count(DIFFERENT) + comparison.count(UNREADABLE)
    differences = [Difference(f"spark {v.model}", f"{v.outcome}: {v.reason}") for v in comparison.verdicts
                   if v.outcome != EQUAL]
    differences += [Difference(f"spark types {v.model}", v.type_note) for v in comparison.verdicts if v.type_note]
    for tool, error in (("SQLMesh", comparison.sqlmesh_error), ("sparkmesh", comparison.sparkmesh_error)):
        if error:
            differences.append(Difference(f"spark plan ({tool})", error))
    return dataclasses.replace(
        score, spark_rows=SparkRows(Count(equal, total), comparison.count(EXCLUDED)),
        differences=(*score.differences, *differences),
    )
