"""Functions of another dialect that Spark cannot compute as that dialect does, marked by the rewrites of
``dialect_functions`` (which see one node, not the model's file) so that ``spark_support.check_runs_on_spark``
refuses the model at load, with the file, the line, what is wrong and what to write instead.

The marker is a call of a function Spark does not have (``SPARKMESH_CANNOT_RUN``), holding the original call, so a
statement that is not checked at load (an audit's) fails on Spark with the marker's name rather than computing
something else.
"""

from __future__ import annotations

from sqlglot import exp

REFUSED_MARKER = "SPARKMESH_CANNOT_RUN"


def refused(node: exp.Expression, message: str, hint: str) -> exp.Expression:
    """``node`` marked to be refused at load: ``message`` says what is wrong, ``hint`` what to write instead."""
    return exp.Anonymous(this=REFUSED_MARKER, expressions=[node.copy(), exp.Literal.string(message),
                                                           exp.Literal.string(hint)])


def refusal_of(node: exp.Expression) -> tuple[str, str] | None:
    """The message and hint of a node ``refused`` marked, else None."""
    if not (isinstance(node, exp.Anonymous) and node.name == REFUSED_MARKER and len(node.expressions) == 3):
        return None
    _, message, hint = node.expressions
    return message.name, hint.name
