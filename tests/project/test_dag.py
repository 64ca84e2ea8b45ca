"""Dependency order, cycles, unknown and disabled references."""

from __future__ import annotations

from pathlib import Path

import pytest

from dagster_sparkmesh.errors import ProjectError
from dagster_sparkmesh.model import Model
from dagster_sparkmesh.project import dag
from dagster_sparkmesh.project.sql.references import TableReference


def model(name: str, *parents: str, enabled: bool = True) -> Model:
    return Model(
        name=name, kind={"name": "FULL"}, source="sql", path=Path(f"{name}.sql"), query="SELECT 1",
        depends_on=frozenset(parents), enabled=enabled,
    )


def graph(*models: Model) -> dict[str, Model]:
    return {m.name: m for m in models}


def refs(models: dict[str, Model]) -> dict[str, tuple[TableReference, ...]]:
    return {name: tuple(TableReference(name=p, line=3, snippet=f"FROM {p}") for p in sorted(m.depends_on)) for name, m in models.items()}


def test_parents_come_before_children_and_ties_go_by_name():
    models = graph(model("a.top", "a.mid", "a.side"), model("a.mid", "a.base"), model("a.side"), model("a.base"))
    assert dag.topological_order(models) == ["a.base", "a.mid", "a.side", "a.top"]


def test_external_parents_do_not_block_ordering():
    assert dag.topological_order(graph(model("a.x", "raw.source"))) == ["a.x"]


def test_a_cycle_is_named():
    models = graph(model("a.x", "a.y"), model("a.y", "a.z"), model("a.z", "a.x"), model("a.free"))
    with pytest.raises(ProjectError) as caught:
        dag.topological_order(models)
    assert "dependency cycle: a.x -> a.y -> a.z -> a.x" in caught.value.message
    assert caught.value.path == Path("a.x.sql")


def test_a_two_model_cycle_inside_a_bigger_graph():
    models = graph(model("a.base"), model("a.x", "a.base", "a.y"), model("a.y", "a.x"), model("a.child", "a.y"))
    with pytest.raises(ProjectError, match=r"a\.x -> a\.y -> a\.x"):
        dag.topological_order(models)


def test_unknown_references_are_listed_with_file_and_line():
    models = graph(model("a.x", "raw.nowhere", "a.y"), model("a.y", "raw.missing"))
    with pytest.raises(ProjectError) as caught:
        dag.check_references(models, refs(models), externals={})
    error = caught.value
    assert "raw.nowhere (a.x.sql:3)" in error.message and "raw.missing (a.y.sql:3)" in error.message
    assert "external_models.yaml" in error.hint
    assert error.line == 3


def test_external_models_resolve_references():
    models = graph(model("a.x", "raw.source"))
    dag.check_references(models, refs(models), externals={"raw.source": object()})


def test_a_self_reference_reads_the_models_own_table_and_is_no_dependency():
    models = graph(model("a.x", "a.x", "raw.s"))
    dag.check_references(models, refs(models), externals={"raw.s": object()})
    with pytest.raises(ProjectError, match="a.x reads itself but declares no columns") as caught:
        dag.with_self_references(models)
    assert "declare its columns" in caught.value.hint
    declared = {"a.x": models["a.x"].model_copy(update={"columns": (("id", "INT"),)})}
    resolved = dag.with_self_references(declared)["a.x"]
    assert resolved.depends_on == {"raw.s"} and resolved.depends_on_self
    assert dag.topological_order(dag.with_self_references(declared)) == ["a.x"]


def test_disabled_models_are_dropped_and_reading_one_is_an_error():
    models = graph(model("a.off", enabled=False), model("a.on"))
    assert list(dag.drop_disabled(models, refs(models))) == ["a.on"]
    models = graph(model("a.off", enabled=False), model("a.reader", "a.off"))
    with pytest.raises(ProjectError, match="a.reader reads a.off, which is disabled"):
        dag.drop_disabled(models, refs(models))
