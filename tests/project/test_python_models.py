from __future__ import annotations

import ast
import sys
from datetime import datetime
from pathlib import Path

import pytest

from dagster_sparkmesh.errors import ProjectError
from dagster_sparkmesh.model.kinds import FullKind, IncrementalByTimeRangeKind
from dagster_sparkmesh.model.records import AuditCall
from dagster_sparkmesh.project.config import ModelDefaults
from dagster_sparkmesh.project.python.models import load_python_model, resolve_python_entrypoint

FIXTURE = Path(__file__).parent / "fixtures" / "other_project" / "models" / "item_scores.py"
DEFAULTS = ModelDefaults(start="2024-01-01", owner="team", batch_size=7)
HEADER = "from dagster_sparkmesh.project.python.models import model\n\n"


def _model_file(tmp_path: Path, body: str, name: str = "m.py") -> Path:
    path = tmp_path / name
    path.write_text(HEADER + body)
    return path


def test_builds_the_model_record() -> None:
    model = load_python_model(FIXTURE, DEFAULTS)

    assert model.name == "shop.item_scores"
    assert model.source == "python"
    assert model.kind == IncrementalByTimeRangeKind(time_column="ds", batch_size=7)
    assert model.python_entrypoint == f"{FIXTURE.resolve()}:execute"
    assert model.python_source == ast.dump(ast.parse(FIXTURE.read_text()))
    assert model.columns == (("item_id", "INT"), ("score", "DOUBLE"), ("ds", "DATE"))
    assert model.depends_on == frozenset({"raw.items", "raw.events"})
    assert (model.cron, model.start, model.owner, model.tags, model.grains) == (
        "@hourly", "2024-01-01", "data", ("python",), ("item_id",),
    )  # fmt: skip
    assert model.audits == (
        AuditCall(name="not_null", args=(("columns", "(item_id, ds)"),)),
        AuditCall(name="accepted_range", args=(("column", "score"), ("min_v", "0"))),
    )
    assert model.line == 11  # the @model line
    assert model.path == FIXTURE.resolve()


def test_comments_and_formatting_do_not_change_the_source_hash(tmp_path: Path) -> None:
    body = '@model("a.b")\ndef run(context, start, end, execution_time, **kwargs):\n    return 1\n'
    plain = load_python_model(_model_file(tmp_path, body, "one.py"), DEFAULTS)
    noisy = load_python_model(
        _model_file(tmp_path, "# comment\n" + body.replace("return 1", "return  (1)  # one"), "two.py"), DEFAULTS
    )
    changed = load_python_model(_model_file(tmp_path, body.replace("return 1", "return 2"), "three.py"), DEFAULTS)

    assert plain.python_source == noisy.python_source
    assert plain.python_source != changed.python_source
    assert plain.kind == FullKind()
    assert (plain.cron, plain.owner, plain.start) == ("@daily", "team", "2024-01-01")


def test_resolve_entrypoint_returns_the_callable() -> None:
    model = load_python_model(FIXTURE, DEFAULTS)
    function = resolve_python_entrypoint(model.python_entrypoint or "")
    moment = datetime(2024, 1, 1)
    assert function(None, moment, moment, moment) == ("called", moment, moment, moment)


def test_same_file_name_in_two_folders_does_not_collide(tmp_path: Path) -> None:
    for folder, value in (("a", 1), ("b", 2)):
        (tmp_path / folder).mkdir()
        _model_file(tmp_path / folder, f'@model("s.{folder}")\ndef run(context, start, end, execution_time):\n    return {value}\n', "json.py")
    first = resolve_python_entrypoint(load_python_model(tmp_path / "a" / "json.py", DEFAULTS).python_entrypoint or "")
    second = resolve_python_entrypoint(load_python_model(tmp_path / "b" / "json.py", DEFAULTS).python_entrypoint or "")

    assert (first(None, None, None, None), second(None, None, None, None)) == (1, 2)
    assert sys.modules["json"].__name__ == "json"  # the standard library module is not shadowed


def test_resolve_picks_up_edits(tmp_path: Path) -> None:
    path = _model_file(tmp_path, '@model("s.m")\ndef run(context, start, end, execution_time):\n    return 1\n')
    entrypoint = load_python_model(path, DEFAULTS).python_entrypoint or ""
    path.write_text(path.read_text().replace("return 1", "return 22"))
    assert resolve_python_entrypoint(entrypoint)(None, None, None, None) == 22


def test_import_error_names_file_and_line(tmp_path: Path) -> None:
    path = _model_file(tmp_path, "x = 1\nraise RuntimeError('no config here')\n")
    with pytest.raises(ProjectError) as error:
        load_python_model(path, DEFAULTS)
    assert (error.value.path, error.value.line) == (path.resolve(), 4)
    assert "RuntimeError: no config here" in error.value.message
    assert error.value.snippet == "raise RuntimeError('no config here')"


def test_error_in_helper_called_at_import_points_at_the_call(tmp_path: Path) -> None:
    path = _model_file(tmp_path, "def helper():\n    return {}['missing']\n\nVALUE = helper()\n")
    with pytest.raises(ProjectError) as error:
        load_python_model(path, DEFAULTS)
    assert error.value.line == 4  # the deepest frame in the model file
    assert "KeyError" in error.value.message


def test_syntax_error(tmp_path: Path) -> None:
    path = _model_file(tmp_path, "def broken(:\n    pass\n")
    with pytest.raises(ProjectError) as error:
        load_python_model(path, DEFAULTS)
    assert error.value.line == 3
    assert "syntax error" in error.value.message


def test_unknown_decorator_argument(tmp_path: Path) -> None:
    path = _model_file(tmp_path, '@model("s.m", crons="@daily")\ndef run(context, start, end, execution_time):\n    pass\n')
    with pytest.raises(ProjectError) as error:
        load_python_model(path, DEFAULTS)
    assert error.value.line == 3
    assert error.value.path == path.resolve()
    assert "unknown argument 'crons'" in error.value.message
    assert "did you mean 'cron'?" in (error.value.hint or "")


@pytest.mark.parametrize("count", [0, 2])
def test_exactly_one_model_function(tmp_path: Path, count: int) -> None:
    functions = "".join(f'@model("s.m{i}")\ndef run{i}(context, start, end, execution_time):\n    pass\n' for i in range(count))
    with pytest.raises(ProjectError, match=f"exactly one @model function, found {count}"):
        load_python_model(_model_file(tmp_path, "import os\n" + functions), DEFAULTS)


def test_imported_model_function_does_not_count(tmp_path: Path) -> None:
    _model_file(tmp_path, '@model("s.base")\ndef base(context, start, end, execution_time):\n    pass\n', "base.py")
    body = (
        "import importlib.util, pathlib\n"
        "spec = importlib.util.spec_from_file_location('helper_mod', pathlib.Path(__file__).with_name('base.py'))\n"
        "mod = importlib.util.module_from_spec(spec); spec.loader.exec_module(mod)\nbase = mod.base\n"
        '@model("s.own")\ndef own(context, start, end, execution_time):\n    pass\n'
    )
    assert load_python_model(_model_file(tmp_path, body), DEFAULTS).name == "s.own"


def test_invalid_kind(tmp_path: Path) -> None:
    path = _model_file(tmp_path, '@model("s.m", kind="INCREMENTAL_BY_TIME_RANGE")\ndef run(context, start, end, execution_time):\n    pass\n')
    with pytest.raises(ProjectError) as error:
        load_python_model(path, DEFAULTS)
    assert "time_column" in error.value.message
    assert error.value.line == 3


def test_kind_string_and_lowercase_dict(tmp_path: Path) -> None:
    body = '@model("s.m", kind=dict(name="incremental_by_unique_key", unique_key="id"))\ndef run(context, start, end, execution_time):\n    pass\n'
    model = load_python_model(_model_file(tmp_path, body), DEFAULTS)
    assert model.kind.name == "INCREMENTAL_BY_UNIQUE_KEY"
    assert model.kind.unique_key == ("id",)


def test_bad_name_and_column_type(tmp_path: Path) -> None:
    with pytest.raises(ProjectError, match="not of the form name, schema.name"):
        load_python_model(_model_file(tmp_path, '@model("a.b.c.d")\ndef run(c, s, e, x):\n    pass\n', "a.py"), DEFAULTS)
    with pytest.raises(ProjectError, match="invalid column type 'integr'"):
        load_python_model(_model_file(tmp_path, '@model("s.m", columns={"a": "integr"})\ndef run(c, s, e, x):\n    pass\n', "b.py"), DEFAULTS)


def test_resolve_unknown_entrypoint(tmp_path: Path) -> None:
    with pytest.raises(ProjectError, match="does not name an existing file"):
        resolve_python_entrypoint(f"{tmp_path}/missing.py:run")
    path = _model_file(tmp_path, '@model("s.m")\ndef run(c, s, e, x):\n    pass\n')
    with pytest.raises(ProjectError, match="has no function 'other'"):
        resolve_python_entrypoint(f"{path}:other")


def test_scd_type_2_alias(tmp_path: Path) -> None:
    body = '@model("s.m", kind=dict(name="scd_type_2", unique_key="id"))\ndef run(context, start, end, execution_time):\n    pass\n'
    kind = load_python_model(_model_file(tmp_path, body), DEFAULTS).kind
    assert (kind.name, kind.unique_key, kind.updated_at_name) == ("SCD_TYPE_2_BY_TIME", ("id",), "updated_at")


def test_model_defaults_schema_change_policies_and_batch_concurrency_reach_python_kinds(tmp_path: Path) -> None:
    defaults = ModelDefaults(on_destructive_change="allow", on_additive_change="ignore", batch_concurrency=3)
    by_time = ('@model("s.t", kind=dict(name="incremental_by_time_range", time_column="ds", on_additive_change="error"))\n'
               "def run(context, start, end, execution_time):\n    pass\n")
    kind = load_python_model(_model_file(tmp_path, by_time), defaults).kind
    assert (kind.on_destructive_change, kind.on_additive_change, kind.batch_concurrency) == ("allow", "error", 3)
    by_key = ('@model("s.k", kind=dict(name="incremental_by_unique_key", unique_key="id"))\n'
              "def run(context, start, end, execution_time):\n    pass\n")
    kind = load_python_model(_model_file(tmp_path, by_key, "k.py"), defaults).kind
    assert (kind.on_destructive_change, kind.on_additive_change) == ("allow", "ignore")
    full = '@model("s.f", kind="FULL")\ndef run(context, start, end, execution_time):\n    pass\n'
    assert load_python_model(_model_file(tmp_path, full, "f.py"), defaults).kind.name == "FULL"
    # As SQLMesh: a kind written by name (or as a kind object) keeps its own policies.
    named = '@model("s.n", kind="INCREMENTAL_UNMANAGED")\ndef run(context, start, end, execution_time):\n    pass\n'
    assert load_python_model(_model_file(tmp_path, named, "n.py"), defaults).kind.on_destructive_change == "error"


def test_sqlmeshs_change_policy_enums_in_a_python_kind(tmp_path: Path) -> None:
    body = ("from sqlmesh.core.model.kind import ModelKindName, OnAdditiveChange, OnDestructiveChange\n\n"
            '@model("s.t", kind=dict(name=ModelKindName.INCREMENTAL_BY_TIME_RANGE, time_column="ds",\n'
            "                        on_destructive_change=OnDestructiveChange.WARN, on_additive_change=OnAdditiveChange.IGNORE))\n"
            "def run(context, start, end, execution_time):\n    pass\n")
    kind = load_python_model(_model_file(tmp_path, body), DEFAULTS).kind
    assert (kind.on_destructive_change, kind.on_additive_change) == ("warn", "ignore")


def test_sqlmesh_kind_properties_without_effect_and_a_kinds_dialect_in_a_python_kind(tmp_path: Path) -> None:
    keyed = ('@model("s.u", kind=dict(name="incremental_by_unique_key", unique_key="id", dialect="duckdb",\n'
             '                        merge_filter="source.x // 2 > 0"))\n'
             "def run(context, start, end, execution_time):\n    pass\n")
    assert load_python_model(_model_file(tmp_path, keyed), DEFAULTS).kind.merge_filter == "source.x DIV 2 > 0"
    by_column = ('@model("s.h", kind=dict(name="scd_type_2_by_column", unique_key="id", columns=["x"], updated_at_name="u"))\n'
                 "def run(context, start, end, execution_time):\n    pass\n")
    assert load_python_model(_model_file(tmp_path, by_column, "h.py"), DEFAULTS).kind.columns == ("x",)
    full = '@model("s.f", kind=dict(name="full", dialect="spark"))\ndef run(context, start, end, execution_time):\n    pass\n'
    with pytest.raises(ProjectError, match="dialect"):
        load_python_model(_model_file(tmp_path, full, "f.py"), DEFAULTS)


def test_a_history_time_data_type_in_a_python_kind_is_read_in_the_kinds_dialect(tmp_path: Path) -> None:
    body = ('@model("s.h", kind=dict(name="scd_type_2_by_time", unique_key="id", time_data_type="timestamp", dialect="duckdb"))\n'
            "def run(context, start, end, execution_time):\n    pass\n")
    assert load_python_model(_model_file(tmp_path, body), DEFAULTS).kind.time_data_type == "TIMESTAMP_NTZ"
    wrong = body.replace('"timestamp", dialect="duckdb"', '"int"')
    with pytest.raises(ProjectError, match="time_data_type 'INT' is not a date or timestamp type"):
        load_python_model(_model_file(tmp_path, wrong, "w.py"), DEFAULTS)
