"""The ``sparkmesh`` command line: ``main`` is the click group (``main.add_command`` registers more commands)."""

from __future__ import annotations

from dagster_sparkmesh.cli.main import main

__all__ = ["main"]
