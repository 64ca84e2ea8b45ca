"""Definitions served by the gRPC code server of ``test_terminate_abort.py``.

The code server and the run workers it launches import this file, so the project folder comes in through the
environment. The project's ``config.yaml`` connects to the test's Spark Connect server, which every run process
shares; the default (multiprocess) executor runs each step in a process of its own, as in a deployment.
"""

from __future__ import annotations

import os

from dagster_sparkmesh.dagster import build_sparkmesh_definitions

PROJECT_ENV = "SPARKMESH_TERMINATE_TEST_PROJECT"

defs = build_sparkmesh_definitions(os.environ[PROJECT_ENV], sensor=False)
