"""What a model's own statements change in the Spark session they share with the models beside them.

A pre- or post-statement ``SET spark.sql.ansi.enabled = false`` (or ``RESET``, ``SET TIME ZONE``, ``USE``) changes
the session of every thread: the models running meanwhile would run under it, and every model after would too. A
model whose statements change the session runs alone on it (``engine.settings_turns``), and what they changed is
put back after it, as its ``session_properties`` are: the settings they name and the current namespace.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from dagster_sparkmesh.model.records import Model

_SETTING = re.compile(r"^\s*(?:SET|RESET)\s+(?!TIME\s+ZONE\b|VAR(?:IABLE)?\b)`?([A-Za-z0-9_.\-]+)`?\s*(?:=|$)", re.IGNORECASE)
_TIME_ZONE = re.compile(r"^\s*SET\s+TIME\s+ZONE\b", re.IGNORECASE)
_NAMESPACE = re.compile(r"^\s*USE\b", re.IGNORECASE)
_SESSION_STATE = re.compile(r"^\s*(?:SET|RESET|USE|DECLARE)\b", re.IGNORECASE)
TIME_ZONE_KEY = "spark.sql.session.timeZone"


@dataclass(frozen=True)
class SessionChanges:
    """``keys``: the settings the statements set or reset; ``namespace``: they change the current catalog or
    database; ``alone``: they change the session in any way (also a session variable)."""

    keys: tuple[str, ...] = ()
    namespace: bool = False
    alone: bool = False


def session_changes(model: Model) -> SessionChanges:
    statements = (*model.pre_statements, *model.post_statements)
    keys: list[str] = []
    for statement in statements:
        setting = _SETTING.match(statement)
        if setting:
            keys.append(setting.group(1))
        elif _TIME_ZONE.match(statement):
            keys.append(TIME_ZONE_KEY)
    return SessionChanges(
        keys=tuple(dict.fromkeys(keys)),
        namespace=any(_NAMESPACE.match(statement) for statement in statements),
        alone=any(_SESSION_STATE.match(statement) for statement in statements),
    )
