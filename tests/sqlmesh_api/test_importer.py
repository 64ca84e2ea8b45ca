from __future__ import annotations

import sys
from pathlib import Path

import pytest

from dagster_sparkmesh.sqlmesh_api import project_imports


def test_sqlmesh_names_resolve_only_inside() -> None:
    with project_imports():
        from sqlmesh import ExecutionContext, macro, model, signal
        from sqlmesh.core.config import Config, SnowflakeConnectionConfig
        from sqlmesh.core.macros import MacroEvaluator
        from sqlmesh.core.model.kind import IncrementalByTimeRangeKind, ModelKindName
        from sqlmesh.utils.date import to_ds

        assert callable(model) and callable(macro) and callable(signal) and ExecutionContext and MacroEvaluator
        assert ModelKindName.FULL == "FULL" and str(ModelKindName.INCREMENTAL_BY_TIME_RANGE) == "INCREMENTAL_BY_TIME_RANGE"
        assert IncrementalByTimeRangeKind(time_column="ds").as_dict() == {"name": "INCREMENTAL_BY_TIME_RANGE", "time_column": "ds"}
        assert Config(default_gateway="x").fields == {"default_gateway": "x"}
        assert type(SnowflakeConnectionConfig(user="u")).__name__ == "SnowflakeConnectionConfig"
        assert to_ds("2024-01-02T03:00:00") == "2024-01-02"
    assert not [name for name in sys.modules if name.split(".")[0] == "sqlmesh"]
    with pytest.raises(ModuleNotFoundError):
        import sqlmesh  # noqa: F401


def test_sqlmesh_core_model_exports_the_decorator_and_kinds() -> None:
    with project_imports():
        from sqlmesh.core.model import FullKind, ModelKindName, model
        from sqlmesh.core.model.kind import ModelKindName as same

        assert callable(model) and FullKind().as_dict() == {"name": "FULL"} and ModelKindName is same


def test_unsupported_names_say_so() -> None:
    with project_imports():
        with pytest.raises(ImportError, match="sqlmesh.Context is not available"):
            from sqlmesh import Context  # noqa: F401
        with pytest.raises(ImportError, match="not part of the SQLMesh API"):
            import sqlmesh.core.engine_adapter  # noqa: F401


def test_a_real_sqlmesh_installation_is_left_alone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = tmp_path / "site" / "sqlmesh"
    real.mkdir(parents=True)
    (real / "__init__.py").write_text("REAL = True\n")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    try:
        import sqlmesh

        assert sqlmesh.REAL
        with project_imports():
            import sqlmesh as inside

            assert "REAL" not in vars(inside) and callable(inside.model)
        import sqlmesh as after

        assert after is sqlmesh
    finally:
        sys.modules.pop("sqlmesh", None)


def test_project_root_is_importable_and_forgotten_after(tmp_path: Path) -> None:
    (tmp_path / "helper_for_test_13.py").write_text("VALUE = 1\n")
    (tmp_path / "macros").mkdir()
    (tmp_path / "macros" / "utils_for_test_13.py").write_text("from helper_for_test_13 import VALUE\nDOUBLE = VALUE * 2\n")
    with project_imports(tmp_path):
        from macros.utils_for_test_13 import DOUBLE

        assert DOUBLE == 2
    assert "helper_for_test_13" not in sys.modules and "macros.utils_for_test_13" not in sys.modules
    assert str(tmp_path) not in sys.path


def test_nested_use_keeps_the_outer_scope() -> None:
    with project_imports():
        with project_imports():
            import sqlmesh  # noqa: F401
        from sqlmesh import model  # noqa: F401
    assert "sqlmesh" not in sys.modules


def test_a_project_package_shadows_another_projects_of_the_same_name(tmp_path: Path) -> None:
    """A namespace package (no __init__.py) of one project must not hide the next project's modules."""
    for project, value in (("one", 1), ("two", 2)):
        (tmp_path / project / "macros").mkdir(parents=True)
        (tmp_path / project / "macros" / f"only_in_{project}_13.py").write_text(f"VALUE = {value}\n")
    with project_imports(tmp_path / "one"):
        from macros.only_in_one_13 import VALUE as first
    with project_imports(tmp_path / "two"):
        from macros.only_in_two_13 import VALUE as second
    assert (first, second) == (1, 2) and "macros" not in sys.modules
