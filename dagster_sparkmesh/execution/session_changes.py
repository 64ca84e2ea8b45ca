"""Whether a model's own statements may change the Spark session it shares with the models beside it.

A pre- or post-statement ``SET spark.sql.ansi.enabled = false`` (or ``RESET``, ``SET TIME ZONE``, ``USE``, a session
variable) changes the session of every thread: the models running meanwhile would run under it, and every model
after would too. A model whose statements may change the session runs alone on it (``engine.settings_turns``) and
the session is put back as it was after it (``engine.catalog: session_settings``), as for its ``session_properties``.
A statement that is a macro call may render to any of these (SQLMesh projects write ``@IF(@runtime_stage =
'evaluating', SET ...)``), so it counts too.
"""

from __future__ import annotations

import re

from dagster_sparkmesh.model.records import Model

_MAY_CHANGE_SESSION = re.compile(r"^\s*(?:SET|RESET|USE|DECLARE|@)", re.IGNORECASE)


def changes_session(model: Model) -> bool:
    return any(_MAY_CHANGE_SESSION.match(statement) for statement in (*model.pre_statements, *model.post_statements))
