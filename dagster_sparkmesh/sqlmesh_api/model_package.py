"""``sqlmesh.core.model``: the ``model`` decorator next to the kind names and classes, as SQLMesh exports them."""

from __future__ import annotations

from dagster_sparkmesh.project.python.models import model
from dagster_sparkmesh.sqlmesh_api.kinds import *  # noqa: F403 - the kind names and classes, re-exported
from dagster_sparkmesh.sqlmesh_api.kinds import __all__ as _kind_names

__all__ = ["model", *_kind_names]
