"""The ``sqlmesh`` import surface for project Python files, without SQLMesh.

Project files written for SQLMesh import from ``sqlmesh`` (``model``, ``macro``, ``signal``, ``ExecutionContext``,
``sqlmesh.core.model.kind``, ``sqlmesh.core.macros``, ``sqlmesh.utils.date``, ``sqlmesh.core.config``). Those
names resolve to the modules of this package only inside ``project_imports()`` (see ``importer``): loading a
project behaves the same whether or not SQLMesh is installed, and an installed SQLMesh is never shadowed.
"""

from __future__ import annotations

from dagster_sparkmesh.sqlmesh_api.importer import MODULES, project_imports

__all__ = ["MODULES", "project_imports"]
