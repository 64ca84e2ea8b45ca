"""``kind AUDIT_ONLY`` models load as standalone audits named after the model, never as models with a table. No Spark."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from dagster_sparkmesh.errors import ProjectError
from dagster_sparkmesh.model.kinds import AuditOnlyKind, kind_type
from dagster_sparkmesh.project.loader import load_project

PROJECT = Path(__file__).parents[1] / "execution" / "projects" / "audit_only"
CHECK = Path("models") / "checks" / "orders_have_customers.sql"


@pytest.fixture
def project_dir(tmp_path) -> Path:
    target = tmp_path / "audit_only"
    shutil.copytree(PROJECT, target, ignore=shutil.ignore_patterns(".sparkmesh"))
    return target


def _edit(path: Path, old: str, new: str) -> None:
    assert old in path.read_text()
    path.write_text(path.read_text().replace(old, new))


def test_an_audit_only_model_loads_as_a_standalone_audit_with_its_kind_options(project_dir):
    project = load_project(project_dir, use_cache=False)

    assert list(project.models) == ["bistro.customers", "bistro.orders"]  # no table for the checks
    audit = project.standalone_audits["checks.orders_have_customers"]
    assert audit.depends_on == {"bistro.orders", "bistro.customers"}
    assert (audit.blocking, audit.max_failing_rows, audit.skip) == (True, 10, False)  # SQLMesh's defaults
    assert (audit.path, audit.line) == (project_dir / CHECK, 2)
    assert audit.description == "every order belongs to a known customer"
    assert audit.query.startswith("SELECT o.order_id, o.customer_id FROM bistro.orders AS o LEFT JOIN")
    assert len(audit.fingerprint) == 64
    large = project.standalone_audits["checks.large_orders"]
    assert (large.blocking, large.max_failing_rows, large.depends_on) == (False, 2, {"bistro.orders"})


def test_the_kind_builds_nothing():
    kind = kind_type("AUDIT_ONLY")
    assert kind is AuditOnlyKind and kind.audit_only
    assert not (kind.has_physical_layer or kind.inlined or kind.external or kind.incremental_by_interval)


def test_a_read_model_change_moves_the_audit_fingerprint(project_dir):
    before = load_project(project_dir, use_cache=False).standalone_audits
    _edit(project_dir / "models" / "orders.sql", "order_id * 2.5", "order_id * 3")
    after = load_project(project_dir, use_cache=False).standalone_audits
    name = "checks.orders_have_customers"
    assert after[name].fingerprint != before[name].fingerprint


@pytest.mark.parametrize(
    ("edit", "message", "line"),
    [
        (("FROM bistro.orders AS o", "FROM checks.large_orders AS x JOIN bistro.orders AS o ON TRUE"),
         "checks.orders_have_customers reads checks.large_orders, an AUDIT_ONLY model, which has no table", 11),
        (("kind AUDIT_ONLY,", "kind AUDIT_ONLY (blocking maybe),"), "expected true or false, got 'maybe'", 4),
        (("kind AUDIT_ONLY,", "kind AUDIT_ONLY (max_failing_rows 0),"), "max_failing_rows must be at least 1", 4),
        (("kind AUDIT_ONLY,", "kind AUDIT_ONLY (blockng false),"), "unknown property 'blockng' of kind AUDIT_ONLY", 4),
        (("WHERE c.customer_id IS NULL", "WHERE c.customer_id IS NULL;\nDROP TABLE x"),
         "AUDIT_ONLY model checks.orders_have_customers has statements besides its query", 2),
    ],
)
def test_what_an_audit_only_model_cannot_be_is_a_clear_error(project_dir, edit, message, line):
    _edit(project_dir / CHECK, *edit)
    with pytest.raises(ProjectError) as raised:
        load_project(project_dir, use_cache=False)
    assert message in str(raised.value)
    assert (raised.value.path, raised.value.line) == (project_dir / CHECK, line)


def test_a_model_that_reads_an_audit_only_model_is_an_error(project_dir):
    _edit(project_dir / "models" / "orders.sql", "AS ids", "AS ids, checks.large_orders")
    with pytest.raises(ProjectError, match="bistro.orders reads checks.large_orders, an AUDIT_ONLY model"):
        load_project(project_dir, use_cache=False)


def _python_model(project_dir: Path, decorator: str, body: str) -> None:
    (project_dir / "models" / "python_check.py").write_text(
        "from sqlmesh import model\n"
        "from sqlmesh.core.model.kind import ModelKindName\n\n\n"
        f"@model('checks.in_python', {decorator}kind=dict(name=ModelKindName.AUDIT_ONLY, blocking=False))\n"
        f"def entrypoint(evaluator, **kwargs):\n    {body}\n"
    )


def test_a_python_model_returning_its_audit_query_is_an_audit(project_dir):
    _python_model(project_dir, "is_sql=True, ", "return 'SELECT * FROM bistro.orders WHERE amount < 0'")
    project = load_project(project_dir, use_cache=False)
    audit = project.standalone_audits["checks.in_python"]
    assert (audit.depends_on, audit.blocking) == ({"bistro.orders"}, False)
    assert "checks.in_python" not in project.models


def test_a_python_audit_only_model_computing_rows_is_refused_with_a_hint(project_dir):
    _python_model(project_dir, "columns={'order_id': 'int'}, depends_on=['bistro.orders'], ", "return None")
    with pytest.raises(ProjectError, match="AUDIT_ONLY model checks.in_python computes its rows in Python") as raised:
        load_project(project_dir, use_cache=False)
    assert "is_sql=True" in str(raised.value)
