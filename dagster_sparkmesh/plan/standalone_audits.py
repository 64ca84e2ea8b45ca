"""Which standalone audits a plan runs. Pure.

A standalone audit has no table and no intervals: what the environment keeps of it is the fingerprint it last
passed with (``Environment.standalone_audits``). A plan runs it when that fingerprint is not the project's (the
audit is new, or it or a model it reads changed), and when a model it reads gets data in this plan (computed or
restated intervals): the rows it checks are new. Skipped audits never run and are not recorded.
"""

from __future__ import annotations

from dagster_sparkmesh.model.standalone_audit import StandaloneAudit
from dagster_sparkmesh.plan.definition import Plan
from dagster_sparkmesh.project.records import Project
from dagster_sparkmesh.project.checks.standalone_audits import tables_read
from dagster_sparkmesh.snapshot.records import Environment


def with_standalone_audits(plan: Plan, project: Project, base: Environment | None) -> Plan:
    """``plan`` with the standalone audits to run, those changed since ``base``, and the fingerprints it records."""
    audits = {name: audit for name, audit in project.standalone_audits.items() if not audit.skip}
    recorded = base.standalone_audits if base is not None else {}
    changed = sorted(
        name for name in {*audits, *recorded} if name not in audits or recorded.get(name) != audits[name].fingerprint
    )
    to_run = tuple(name for name, audit in audits.items() if name in changed or _reads_new_data(plan, project, audit))
    after = plan.environment_after.model_copy(
        update={"standalone_audits": {name: audit.fingerprint for name, audit in audits.items()}}
    )
    return plan.model_copy(update={"standalone_audits": to_run, "changed_audits": tuple(changed), "environment_after": after})


def _reads_new_data(plan: Plan, project: Project, audit: StandaloneAudit) -> bool:
    computed = {name for name, intervals in plan.missing_intervals.items() if intervals} | set(plan.restatements)
    tables = plan.tables(project.external_models)
    return bool(tables_read(audit, tables.__contains__, lambda name: _parents(project, name)) & computed)


def _parents(project: Project, name: str) -> frozenset[str]:
    model = project.models.get(name)
    return model.depends_on if model is not None else frozenset()
