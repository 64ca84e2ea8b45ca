"""The benchmark generator writes exactly the project it promises: N models, a DAG, deterministic bytes."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import pytest
import sqlglot

BENCH = Path(__file__).resolve().parents[2] / "bench"


def _load_generator():
    spec = importlib.util.spec_from_file_location("bench_generate_project", BENCH / "generate_project.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses resolve annotations through sys.modules
    spec.loader.exec_module(module)
    return module


generator = _load_generator()


def _files(root: Path) -> dict[str, bytes]:
    return {str(path.relative_to(root)): path.read_bytes() for path in sorted(root.rglob("*")) if path.is_file()}


def _split(path: Path) -> tuple[str, str]:
    header, _, query = path.read_text().partition(");\n")
    return header, query


@pytest.mark.parametrize("models", [3, 30, 301])
def test_writes_exactly_the_requested_number_of_models(tmp_path: Path, models: int) -> None:
    generator.generate_project(tmp_path, models=models)
    assert len(list((tmp_path / "models").rglob("*.sql"))) == models
    assert (tmp_path / "config.yaml").read_text().count("dialect: spark") == 1


def test_same_arguments_give_the_same_bytes_and_another_seed_does_not(tmp_path: Path) -> None:
    generator.generate_project(tmp_path / "a", models=60, seed=1)
    generator.generate_project(tmp_path / "b", models=60, seed=1)
    generator.generate_project(tmp_path / "c", models=60, seed=2)
    assert _files(tmp_path / "a") == _files(tmp_path / "b")
    assert _files(tmp_path / "a") != _files(tmp_path / "c")


def test_regenerating_into_a_folder_replaces_the_old_models(tmp_path: Path) -> None:
    generator.generate_project(tmp_path, models=100)
    generator.generate_project(tmp_path, models=30)
    assert len(list((tmp_path / "models").rglob("*.sql"))) == 30


def test_every_model_reads_only_models_of_earlier_layers(tmp_path: Path) -> None:
    specs = generator.generate_project(tmp_path, models=200)
    layer_of = {spec.name: spec.layer for spec in specs}
    for spec in specs:
        header, query = _split(tmp_path / spec.relative_path)
        assert f"name {spec.name}," in header
        read = {f"{table.db}.{table.name}" for table in sqlglot.parse_one(query, dialect="spark").find_all(sqlglot.exp.Table)}
        assert read == set(spec.parents)
        assert all(layer_of[parent] < spec.layer for parent in spec.parents)
        assert (spec.layer == 0) == (not spec.parents)


def test_incremental_models_filter_on_their_interval_and_sources_span_the_days(tmp_path: Path) -> None:
    specs = generator.generate_project(tmp_path, models=120, days=90)
    kinds = {spec.kind for spec in specs if spec.layer > 0}
    assert kinds == {"INCREMENTAL_BY_TIME_RANGE", "FULL", "VIEW"}
    for spec in specs:
        text = (tmp_path / spec.relative_path).read_text()
        incremental = spec.kind == "INCREMENTAL_BY_TIME_RANGE"
        assert incremental == ("time_column ds" in text)
        assert incremental == ("BETWEEN @start_ds AND @end_ds" in text)
        if spec.layer == 0:
            assert re.search(r"SEQUENCE\(DATE'2024-01-01', DATE'2024-03-30', INTERVAL 1 DAY\)", text)
