"""Blueprints: one ``@model`` function, several models, as SQLMesh's ``blueprints=[{...}, ...]`` writes them.

Each blueprint is a dict of variables. ``@{name}`` and ``@name`` in the model's name and in the string values of its
arguments are replaced by the blueprint's value, and the function reads the rest with
``context.blueprint_var("name")``. Every blueprint's variables are part of its model's hashed source, so a changed
value re-versions exactly that model.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from dagster_sparkmesh.project.python.options import Where

_HINT = 'write blueprints=[{"customer": "acme"}, {"customer": "globex"}] and name the model "@{customer}.orders"'


@dataclass(frozen=True)
class Blueprint:
    name: object
    options: dict[str, Any]
    variables: tuple[tuple[str, str], ...] = ()
    """(variable, value as JSON text), sorted: for the record, the hash and ``context.blueprint_var``."""


def expand(name: object, options: dict[str, Any], where: Where) -> list[Blueprint]:
    """The models one ``@model`` declares: itself, or one per blueprint."""
    blueprints = options.get("blueprints")
    if blueprints is None:
        return [Blueprint(name=name, options=options)]
    if not isinstance(blueprints, (list, tuple)) or not blueprints:
        raise where.error("blueprints", "expected a non-empty list of dicts", blueprints, _HINT)
    result = []
    for blueprint in blueprints:
        if not isinstance(blueprint, dict) or not all(isinstance(key, str) for key in blueprint):
            raise where.error("blueprints", "each blueprint must be a dict of variable name to value", blueprint, _HINT)
        variables = {key.lower(): value for key, value in blueprint.items()}
        rest = {key: _substitute(value, variables) for key, value in options.items() if key != "blueprints"}
        result.append(Blueprint(name=_substitute(name, variables), options=rest, variables=_as_json(variables, where)))
    return result


def _as_json(variables: dict[str, Any], where: Where) -> tuple[tuple[str, str], ...]:
    try:
        return tuple(sorted((key, json.dumps(value, default=str)) for key, value in variables.items()))
    except (TypeError, ValueError) as error:
        raise where.error("blueprints", f"blueprint values must be plain values: {error}", variables, _HINT) from None


def _substitute(value: Any, variables: dict[str, Any]) -> Any:
    if isinstance(value, str) and "@" in value:
        return _pattern(variables).sub(lambda match: str(variables[(match.group(1) or match.group(2)).lower()]), value)
    if isinstance(value, dict):
        return {key: _substitute(item, variables) for key, item in value.items()}
    if isinstance(value, list):
        return [_substitute(item, variables) for item in value]
    if isinstance(value, tuple):
        return tuple(_substitute(item, variables) for item in value)
    return value


def _pattern(variables: dict[str, Any]) -> re.Pattern[str]:
    names = "|".join(re.escape(name) for name in sorted(variables, key=len, reverse=True))
    return re.compile(rf"@\{{({names})\}}|@({names})\b", re.IGNORECASE)
