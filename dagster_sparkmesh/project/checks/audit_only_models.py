"""``kind AUDIT_ONLY`` models (SQLMesh): a model file whose query returns offending rows, loaded as a standalone audit.

SQLMesh keeps such a model in its DAG without a table and fails the run when its query returns rows. That is what a
standalone audit does here, so the model becomes one, named after the model: planned (run when new, changed, or when
a model it reads gets data), run after the backfill and before the promotion, shown as a Dagster check. The kind's
``blocking`` and ``max_failing_rows`` and the header's ``description`` carry over.

The loader takes these models out before the DAG is ordered and fingerprinted, so nothing that builds, versions or
promotes tables ever sees one; a model that reads one is an error, since there is no table to read.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from dagster_sparkmesh.errors import ProjectError
from dagster_sparkmesh.model.kinds import AuditOnlyKind
from dagster_sparkmesh.model.records import ExternalModel, Model
from dagster_sparkmesh.model.standalone_audit import StandaloneAudit
from dagster_sparkmesh.project.checks.standalone_audits import with_fingerprint
from dagster_sparkmesh.project.sql.references import TableReference

References = Mapping[str, Iterable[TableReference]]


def split_audit_only(models: Mapping[str, Model], references: References) -> tuple[dict[str, Model], dict[str, Model]]:
    """The models that build tables, and the AUDIT_ONLY ones (``references`` resolved already)."""
    audit_only = {name: model for name, model in models.items() if model.kind.audit_only}
    if not audit_only:
        return dict(models), {}
    for name, model in models.items():
        for reference in references.get(name, ()):
            if reference.name in audit_only:
                raise ProjectError(
                    f"{name} reads {reference.name}, an AUDIT_ONLY model, which has no table",
                    path=model.path,
                    line=reference.line or None,
                    snippet=reference.snippet or None,
                    hint=f"read the models {reference.name} checks instead (an AUDIT_ONLY model only returns the "
                    "offending rows of its audit)",
                )
    for model in audit_only.values():
        _check_is_an_audit(model)
    return {name: model for name, model in models.items() if name not in audit_only}, audit_only


def _check_is_an_audit(model: Model) -> None:
    """What an audit cannot do: it runs one query over tables that exist, and nothing else."""
    if model.source != "sql" or model.query is None:
        _refuse(model, "computes its rows in Python", "an audit is a query: return it from the function "
                "(@model(..., is_sql=True)) or write it in a .sql model file")
    if model.pre_statements or model.post_statements or model.on_virtual_update:
        _refuse(model, "has statements besides its query", "an AUDIT_ONLY model runs only its query: remove the "
                "other statements")
    if model.audits:
        _refuse(model, "attaches audits", "it has no table to audit: remove the audits (...) property")
    if not model.depends_on:
        _refuse(model, "reads no model", "an AUDIT_ONLY model selects the offending rows of the models it names "
                "(FROM schema.model)")


def _refuse(model: Model, problem: str, hint: str) -> None:
    raise ProjectError(f"AUDIT_ONLY model {model.name} {problem}", path=model.path, line=model.line, hint=hint)


def audit_only_audits(
    models: Mapping[str, Model],
    fingerprinted: Mapping[str, Model],
    externals: Mapping[str, ExternalModel],
    taken: Iterable[str] = (),
) -> dict[str, StandaloneAudit]:
    """Each AUDIT_ONLY model as a standalone audit, fingerprinted over ``fingerprinted`` (the project's models);
    ``taken``: the names of the other audits."""
    taken = set(taken)
    result: dict[str, StandaloneAudit] = {}
    for name, model in models.items():
        if name in taken:
            raise ProjectError(f"AUDIT_ONLY model {name} has the name of an audit", path=model.path, line=model.line,
                               hint="audit names are unique in the project; rename one of them")
        kind = model.kind
        assert isinstance(kind, AuditOnlyKind) and model.query is not None  # split_audit_only checked it
        audit = StandaloneAudit(
            name=name,
            query=model.query,
            depends_on=model.depends_on,
            blocking=kind.blocking,
            max_failing_rows=kind.max_failing_rows,
            description=model.description,
            path=model.path,
            line=model.line,
        )
        result[name] = with_fingerprint(audit, fingerprinted, externals)
    return result
