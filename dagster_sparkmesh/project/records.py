"""The loaded project: every model, external model, audit and unit test, in dependency order."""

from __future__ import annotations

from pathlib import Path

from dagster_sparkmesh.model.records import AuditDefinition, ExternalModel, Model, UnitTest
from dagster_sparkmesh.model.standalone_audit import StandaloneAudit
from dagster_sparkmesh.project.broken import BrokenModel
from dagster_sparkmesh.project.config import ProjectConfig
from dagster_sparkmesh.records import Record


class Project(Record):
    path: Path
    config: ProjectConfig
    models: dict[str, Model]
    """Model name → Model, in topological order (parents before children), fingerprints filled in."""
    external_models: dict[str, ExternalModel] = {}
    audits: dict[str, AuditDefinition] = {}
    model_audits: dict[str, dict[str, AuditDefinition]] = {}
    """Model name → the audits its own file defines (``AUDIT (...)`` after its query): its calls find them first,
    as in SQLMesh, where two model files may each define an audit of the same name."""
    standalone_audits: dict[str, StandaloneAudit] = {}
    """``AUDIT (..., standalone true)``: audits of their own, over the models they name, run before promotion."""
    unit_tests: tuple[UnitTest, ...] = ()
    warnings: tuple[str, ...] = ()
    broken: tuple[BrokenModel, ...] = ()
    """Models that did not load, when the loader was asked to set them aside (``load_project(set_aside_broken=...)``)."""
    home: Path | None = None
    """Where the project's state store, warehouse and Spark server live, when its files were read from elsewhere (a
    branch's commit exported beside the checkout: ``project.commit_trees``); None: ``path`` itself."""

    def audits_for(self, model_name: str) -> dict[str, AuditDefinition]:
        """The custom audits a model's calls can name: the project's, and its own file's over them."""
        own = self.model_audits.get(model_name)
        return {**self.audits, **own} if own else self.audits

    @property
    def runtime_path(self) -> Path:
        """The folder the state store's relative URL, the local warehouse and the managed server belong to."""
        return self.home or self.path

    def children(self) -> dict[str, set[str]]:
        result: dict[str, set[str]] = {name: set() for name in self.models}
        for model in self.models.values():
            for parent in model.depends_on:
                if parent in result:
                    result[parent].add(model.name)
        return result

    def descendants(self, name: str) -> set[str]:
        children = self.children()
        seen: set[str] = set()
        stack = [name]
        while stack:
            for child in children.get(stack.pop(), ()):
                if child not in seen:
                    seen.add(child)
                    stack.append(child)
        return seen

    def tables_read_by(self, name: str) -> set[str]:
        """The models (with a table) and external models whose tables ``name`` reads: models without one are inlined,
        so what they read counts instead; the model's own name (a self-reference) does not count."""
        parents: set[str] = set()
        stack = list(self.models[name].depends_on) if name in self.models else []
        seen: set[str] = set()
        while stack:
            parent = stack.pop()
            if parent in seen or parent == name:
                continue
            seen.add(parent)
            model = self.models.get(parent)
            if model is not None and not model.kind.has_physical_layer:
                stack.extend(model.depends_on)
            elif model is not None or parent in self.external_models:
                parents.add(parent)
        return parents
