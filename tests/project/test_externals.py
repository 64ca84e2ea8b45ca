from __future__ import annotations

from pathlib import Path

import pytest

from dagster_sparkmesh.errors import ProjectError
from dagster_sparkmesh.project.externals import load_external_models, normalize_table_name

FIXTURE = Path(__file__).parent / "fixtures" / "other_project"


def _project(tmp_path: Path, text: str) -> Path:
    (tmp_path / "external_models.yaml").write_text(text)
    return tmp_path


def test_loads_every_file_with_normalized_names_and_types() -> None:
    externals = load_external_models(FIXTURE)

    assert sorted(externals) == ["raw.countries", "raw.events", "raw.users"]
    events = externals["raw.events"]
    assert events.columns == (("event_id", "BIGINT"), ("event_ts", "TIMESTAMP"), ("amount", "DECIMAL(10, 2)"))
    assert events.description == "Raw click events."
    assert events.fingerprint == ""
    assert externals["raw.countries"].path == FIXTURE / "external_models" / "more.yaml"
    assert externals["raw.users"].columns == (("user_id", "INT"),)


def test_project_without_external_models_has_none(tmp_path: Path) -> None:
    assert load_external_models(tmp_path) == {}
    assert load_external_models(_project(tmp_path, "# nothing yet\n")) == {}


def test_bad_yaml_names_the_line(tmp_path: Path) -> None:
    with pytest.raises(ProjectError) as error:
        load_external_models(_project(tmp_path, "- name: raw.a\n  columns: {a: int\n- name: raw.b\n"))
    assert error.value.path == tmp_path / "external_models.yaml"
    assert error.value.line == 3
    assert "invalid YAML" in str(error.value)


def test_not_a_list(tmp_path: Path) -> None:
    with pytest.raises(ProjectError, match="must be a YAML list"):
        load_external_models(_project(tmp_path, "name: raw.a\n"))


def test_missing_name_points_at_the_entry(tmp_path: Path) -> None:
    with pytest.raises(ProjectError) as error:
        load_external_models(_project(tmp_path, "- name: raw.a\n- columns: {a: int}\n"))
    assert (error.value.line, error.value.message) == (2, "external model without a name")


def test_bad_column_type_names_line_and_text(tmp_path: Path) -> None:
    with pytest.raises(ProjectError) as error:
        load_external_models(_project(tmp_path, "- name: raw.a\n  columns:\n    a: int\n    b: integr\n"))
    assert (error.value.line, error.value.col, error.value.snippet) == (4, 8, "integr")


def test_duplicate_names_across_spellings(tmp_path: Path) -> None:
    with pytest.raises(ProjectError) as error:
        load_external_models(_project(tmp_path, "- name: raw.a\n- name: '`RAW`.`A`'\n"))
    assert error.value.line == 2
    assert "declared twice" in error.value.message
    assert ":1" in (error.value.hint or "")


def test_unknown_key_suggests_the_right_one(tmp_path: Path) -> None:
    with pytest.raises(ProjectError) as error:
        load_external_models(_project(tmp_path, "- name: raw.a\n  colums: {a: int}\n"))
    assert "'columns'" in (error.value.hint or "")


@pytest.mark.parametrize("text", ["", "a.b.c.d", "a b.c", "raw.a-b"])
def test_names_must_be_name_schema_dot_name_or_three_parts(text: str) -> None:
    with pytest.raises(ProjectError):
        normalize_table_name(text, path=Path("x.yaml"), line=1)


@pytest.mark.parametrize(
    ("text", "expected"),
    [("spark_catalog.raw.events", "raw.events"), ("`Spark_Catalog`.raw.events", "raw.events"),
     ("lake.raw.events", "lake.raw.events"), ('"Lake"."Raw"."Events"', "lake.raw.events")],
)
def test_a_catalog_is_kept_unless_it_is_the_sessions_default(text: str, expected: str) -> None:
    assert normalize_table_name(text, path=Path("x.yaml"), line=1) == expected


@pytest.mark.parametrize("text", ["Raw.Events", "`raw`.`events`", '"raw"."events"', " raw.events"])
def test_quoted_names_are_normalized(text: str) -> None:
    assert normalize_table_name(text, path=Path("x.yaml"), line=1) == "raw.events"
