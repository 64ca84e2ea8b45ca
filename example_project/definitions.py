"""Dagster entry point of the example shop (named in ../workspace.yaml; `./dev ui` serves it).

It lives beside the project, outside `models/`, so neither dagster-sparkmesh nor SQLMesh reads it as a model.
"""

from pathlib import Path

from dagster_sparkmesh.dagster import build_sparkmesh_definitions

defs = build_sparkmesh_definitions(Path(__file__).resolve().parent)
