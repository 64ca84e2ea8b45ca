"""The ``sqlmesh`` submodules that SQLMesh's own example projects import (found by ``bench/sqlmesh_compat``):
``sqlmesh.core.config`` is a package in SQLMesh, and ``sqlmesh.core.model`` exports ``TimeColumn``."""

from __future__ import annotations

from pathlib import Path

from dagster_sparkmesh.project.loader import load_project
from dagster_sparkmesh.sqlmesh_api import project_imports


def test_config_submodules_import_as_in_sqlmesh() -> None:
    with project_imports():
        from sqlmesh.core.config import Config
        from sqlmesh.core.config.common import TableNamingConvention, VirtualEnvironmentMode
        from sqlmesh.core.config.linter import LinterConfig

        assert VirtualEnvironmentMode.DEV_ONLY == "dev_only" and TableNamingConvention.HASH_MD5 == "hash_md5"
        assert LinterConfig(enabled=False).fields == {"enabled": False}
        assert Config(linter=LinterConfig(enabled=True)).fields["linter"].fields == {"enabled": True}


def test_a_config_py_importing_config_submodules_loads(tmp_path: Path) -> None:
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "a.sql").write_text("MODEL (name s.a, kind FULL);\nSELECT 1 AS x\n")
    (tmp_path / "config.py").write_text(
        "from sqlmesh.core.config.common import VirtualEnvironmentMode\n"
        "from sqlmesh.core.config.linter import LinterConfig\n"
        "from sqlmesh.core.config import Config, ModelDefaultsConfig\n"
        "config = Config(model_defaults=ModelDefaultsConfig(dialect='spark'), linter=LinterConfig(enabled=False),\n"
        "                virtual_environment_mode=VirtualEnvironmentMode.DEV_ONLY)\n"
    )
    assert list(load_project(tmp_path, use_cache=False).models) == ["s.a"]


def test_time_column_with_a_format_in_a_python_kind(tmp_path: Path) -> None:
    (tmp_path / "models").mkdir()
    (tmp_path / "config.yaml").write_text("model_defaults:\n  dialect: spark\n  start: '2024-01-01'\n")
    (tmp_path / "models" / "orders.py").write_text(
        "import pandas as pd\n"
        "from sqlmesh import model\n"
        "from sqlmesh.core.model import IncrementalByTimeRangeKind, TimeColumn\n"
        "@model('s.orders', columns={'order_ds': 'string'},\n"
        "       kind=IncrementalByTimeRangeKind(time_column=TimeColumn(column='order_ds', format='%Y-%m-%d')))\n"
        "def execute(context, start, end, execution_time, **kwargs):\n"
        "    return pd.DataFrame({'order_ds': ['2024-01-01']})\n"
        "@model('s.orders_by_dict', columns={'ds': 'string'},\n"
        "       kind=dict(name='INCREMENTAL_BY_TIME_RANGE', time_column=TimeColumn(column='ds', format='%Y%m%d')))\n"
        "def other(context, start, end, execution_time, **kwargs):\n"
        "    return pd.DataFrame({'ds': ['20240101']})\n"
    )
    models = load_project(tmp_path, use_cache=False).models
    kind = models["s.orders"].kind
    assert (kind.time_column, kind.time_column_format) == ("order_ds", "yyyy-MM-dd")
    kind = models["s.orders_by_dict"].kind
    assert (kind.time_column, kind.time_column_format) == ("ds", "yyyyMMdd")


def test_named_constructors_of_configuration_classes() -> None:
    """``CategorizerConfig.all_full()`` (sushi's config.py): an alternative constructor, recorded by its name."""
    with project_imports():
        from sqlmesh.core.config import CategorizerConfig, PlanConfig

        categorizer = CategorizerConfig.all_full()
        assert type(categorizer).__name__ == "CategorizerConfig" and categorizer.constructor == "all_full"
        assert PlanConfig(auto_categorize_changes=categorizer).fields["auto_categorize_changes"] is categorizer
