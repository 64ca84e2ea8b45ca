"""The run log in a reader's words: no ``[None, None)``, no interval counts for whole-table models."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from dagster_sparkmesh.dagster.run_log import model_done, step_started
from dagster_sparkmesh.execution.results import ModelRunResult
from dagster_sparkmesh.model import Model
from dagster_sparkmesh.snapshot.records import Interval


def _model(kind: str) -> Model:
    extra = {"SEED": {"path": "o.csv"}, "INCREMENTAL_BY_TIME_RANGE": {"time_column": "ds"}}.get(kind, {})
    return Model(name="raw.orders", kind={"name": kind, **extra}, source="seed" if kind == "SEED" else "sql",
                 path=Path("o.sql"))


def _days(count: int) -> tuple[Interval, ...]:
    return tuple(Interval(start=datetime(2024, 1, 1 + day), end=datetime(2024, 1, 2 + day)) for day in range(count))


def test_a_step_says_which_models_over_which_partitions_in_which_environment():
    assert step_started(["shop.a", "shop.b"], "prod", []) == "building 2 models in environment `prod`: shop.a, shop.b"
    assert step_started(["shop.a"], "dev", ["2024-01-01", "2024-01-02", "2024-01-03"]) == (
        "computing 1 model for partitions 2024-01-01 to 2024-01-03 (3) in environment `dev`: shop.a"
    )
    many = [f"s.m{i}" for i in range(9)]
    assert step_started(many, "prod", ["2024-01-01"]).endswith("s.m5 and 3 more")


def test_a_seed_is_loaded_not_a_thousand_intervals():
    result = ModelRunResult(model="raw.orders", version="v1", physical_table="t", intervals=_days(28) * 38,
                            rows_written=300, duration_seconds=1.234)
    assert model_done(result, _model("SEED"), partitioned=False) == "raw.orders: loaded the seed file, 300 rows written in 1.2 s"
    assert model_done(result, _model("VIEW"), partitioned=False) == "raw.orders: created the view in 1.2 s"


def test_partitions_computed_skips_and_incomplete_inputs_are_spelled_out():
    computed = ModelRunResult(model="shop.d", version="v1", physical_table="t", intervals=_days(3), rows_written=26,
                              incomplete=_days(1))
    text = model_done(computed, _model("INCREMENTAL_BY_TIME_RANGE"), partitioned=True)
    assert text.startswith("shop.d: computed 3 partitions, 26 rows written in 0.0 s; 1 interval(s) read parents")
    skipped = ModelRunResult(model="shop.d", version="v1", physical_table=None, skipped=True)
    assert model_done(skipped, None, partitioned=False).startswith("shop.d: already up to date (version v1), not recomputed")
