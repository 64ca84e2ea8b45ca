"""``blueprints ((customer := a, field := x), (customer := b, field := y))``: one model per blueprint.

Each blueprint's values are SQL expressions (``a`` a name, ``'a'`` a string), the blueprint variables of that
model: ``@customer``, ``@{customer}``, ``@BLUEPRINT_VAR('customer')`` in its header and SQL.
"""

from __future__ import annotations

from dataclasses import replace

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError

from dagster_sparkmesh.project.sql.header import ModelFile

Blueprint = dict[str, exp.Expression]


def split_blueprints(model_file: ModelFile, dialect: str) -> tuple[list[Blueprint], ModelFile]:
    """The file's blueprints (none: an ordinary model) and the file without the ``blueprints`` property."""
    found = [prop for prop in model_file.properties if prop.key == "blueprints"]
    if not found:
        return [], model_file
    value = found[0].value
    try:
        parsed = sqlglot.parse_one(f"SELECT {value.text}", dialect=dialect).expressions[0]
    except ParseError:
        raise value.error("blueprints must be a list of (name := value, ...) tuples",
                          "write blueprints ((customer := a), (customer := b))") from None
    items = parsed.expressions if isinstance(parsed, (exp.Tuple, exp.Array)) else [parsed]
    blueprints = [_blueprint(item, value) for item in items]
    rest = tuple(prop for prop in model_file.properties if prop.key != "blueprints")
    return blueprints, replace(model_file, properties=rest)


def _blueprint(item: exp.Expression, value: object) -> Blueprint:
    pairs = item.expressions if isinstance(item, exp.Tuple) else [item.this if isinstance(item, exp.Paren) else item]
    blueprint: Blueprint = {}
    for pair in pairs:
        if not isinstance(pair, (exp.PropertyEQ, exp.EQ, exp.Kwarg)):
            raise value.error(f"a blueprint entry must be name := value, got {pair.sql()}",  # type: ignore[attr-defined]
                              "write blueprints ((customer := a), (customer := b))")
        blueprint[pair.this.name.lower()] = pair.expression
    return blueprint
