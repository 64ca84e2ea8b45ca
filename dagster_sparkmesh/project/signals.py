"""Signals: ``@signal()`` functions in a project's ``signals/`` folder that gate a model's intervals.

A model names its signals (``@model(signals=[("one_week_ago", {})])`` or ``signals [one_week_ago()]`` in a MODEL
header); ``ready_intervals`` asks each of them, SQLMesh's way, which of the model's candidate intervals are
ready: a signal receives the batch as a list of ``(start, end)`` UTC datetimes plus its arguments (and
``context`` if it takes one) and returns True, False or the ready subset. Planning and running are meant to call
``check_missing_intervals`` before computing a model's intervals: an interval any signal holds back is reported
as not ready, with that signal's name.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError

from dagster_sparkmesh.clock import to_naive_utc
from dagster_sparkmesh.errors import ExecutionError, ProjectError
from dagster_sparkmesh.model.records import Model, SignalCall
from dagster_sparkmesh.snapshot.records import Interval
from dagster_sparkmesh.project.code_files import import_project_file, project_code, python_files
from dagster_sparkmesh.sqlmesh_api.signals import collect_signals
from dagster_sparkmesh.macros.parse_errors import parse_error_description

SIGNALS_FOLDER = "signals"
_CALL_HINT = 'write signals=["name"], signals=[("name", {"arg": 1})] or signals=["name(arg := 1)"]'


@dataclass(frozen=True)
class SignalCheck:
    ready: tuple[Interval, ...]
    not_ready: tuple[tuple[Interval, str], ...] = ()
    """(interval, the name of the first signal that held it back)."""


def signal_calls(value: object, *, path: Path, line: int) -> tuple[SignalCall, ...]:
    """A Python model's ``signals=`` argument → records."""
    if value is None:
        return ()
    if not isinstance(value, (list, tuple)):
        raise ProjectError(f"@model signals must be a list, not {type(value).__name__}", path=path, line=line,
                           snippet=f"signals={value!r}"[:200], hint=_CALL_HINT)
    return tuple(_signal_call(entry, path, line) for entry in value)


def _signal_call(entry: object, path: Path, line: int) -> SignalCall:
    if isinstance(entry, str):
        return parse_signal_text(entry, path=path, line=line)
    if isinstance(entry, tuple) and len(entry) == 2 and isinstance(entry[0], str) and isinstance(entry[1], dict):
        try:
            args = tuple((str(key).lower(), json.dumps(value, default=str)) for key, value in entry[1].items())
        except (TypeError, ValueError) as error:
            raise ProjectError(f"signal arguments of {entry[0]!r} are not plain values: {error}", path=path, line=line,
                               hint="use numbers, strings, booleans, lists and dicts") from None
        return SignalCall(name=entry[0].lower(), args=args)
    raise ProjectError(f"invalid signal {entry!r}", path=path, line=line, hint=_CALL_HINT)


def parse_signal_text(text: str, *, path: Path, line: int | None = None) -> SignalCall:
    """``name`` or ``name(arg := value, ...)`` (SQL syntax, as in a MODEL header) → SignalCall."""
    try:
        call = sqlglot.parse_one(text, dialect="spark")
    except ParseError as error:
        raise ProjectError(f"cannot parse signal {text!r}: {parse_error_description(error)}", path=path, line=line, snippet=text) from None
    if isinstance(call, exp.Column) and not call.table:
        return SignalCall(name=call.name.lower())
    if not isinstance(call, exp.Anonymous):
        raise ProjectError(f"signal {text!r} is not a call", path=path, line=line, snippet=text, hint=_CALL_HINT)
    args = []
    for argument in call.expressions:
        if not isinstance(argument, (exp.PropertyEQ, exp.EQ)) or not isinstance(argument.this, (exp.Column, exp.Identifier)):
            raise ProjectError(f"signal arguments must be named: {text!r}", path=path, line=line, snippet=text,
                               hint="write name(arg := value)")
        args.append((argument.this.name.lower(), json.dumps(_python_value(argument.expression))))
    return SignalCall(name=call.name.lower(), args=tuple(args))


def _python_value(node: exp.Expression) -> Any:
    if isinstance(node, exp.Literal):
        return node.this if node.is_string else (float(node.this) if "." in node.this else int(node.this))
    if isinstance(node, exp.Boolean):
        return node.this
    if isinstance(node, exp.Null):
        return None
    if isinstance(node, (exp.Array, exp.Tuple)):
        return [_python_value(item) for item in node.expressions]
    if isinstance(node, exp.Neg):
        return -_python_value(node.this)
    return node.sql(dialect="spark")  # a name or an expression: the signal receives its text


def load_signals(project_root: Path) -> dict[str, Callable[..., Any]]:
    """Signal name → function, for the ``@signal`` functions under ``signals/`` (imported afresh)."""
    files = python_files(project_root / SIGNALS_FOLDER)
    if not files:
        return {}
    with project_code(project_root):
        modules = [import_project_file(file, project_root, "signal file") for file in files]
    return collect_signals(modules)


def check_signal_names(project_root: Path, models: Iterable[Model]) -> None:
    """Every signal a model names exists: an unknown name is a load-time error, not a silently ready interval."""
    used = [(model, call) for model in models for call in model.signals]
    if not used:
        return
    known = load_signals(project_root)
    for model, call in used:
        if call.name not in known:
            raise ProjectError(
                f"model {model.name} uses signal {call.name!r}, which no @signal function defines",
                path=model.path,
                line=model.line,
                hint=f"define it in signals/ (known: {', '.join(sorted(known)) or 'none'})",
            )


def check_missing_intervals(
    project_root: Path, models: Mapping[str, Model], missing: Mapping[str, Iterable[Interval]], context: object = None
) -> dict[str, SignalCheck]:
    """For planning and running: each model's missing intervals split into ready and held back by its signals.

    Models without signals are all ready, and the signal files are imported only when some model has signals.
    """
    signals = load_signals(project_root) if any(models[name].signals for name in missing if name in models) else {}
    return {
        name: ready_intervals(models[name], intervals, signals, context) if name in models else SignalCheck(tuple(intervals))
        for name, intervals in missing.items()
    }


def ready_intervals(
    model: Model, intervals: Iterable[Interval], signals: Mapping[str, Callable[..., Any]], context: object = None
) -> SignalCheck:
    """Which of ``intervals`` every signal of ``model`` reports ready (all of them when it has none)."""
    ready = sorted(intervals)
    held: list[tuple[Interval, str]] = []
    for call in model.signals:
        if not ready:
            break
        answer = _ask(model, call, signals, ready, context)
        held.extend((interval, call.name) for interval in ready if interval not in answer)
        ready = [interval for interval in ready if interval in answer]
    return SignalCheck(ready=tuple(ready), not_ready=tuple(sorted(held)))


def _ask(model: Model, call: SignalCall, signals: Mapping[str, Callable[..., Any]], batch: list[Interval],
         context: object) -> set[Interval]:
    function = signals.get(call.name)
    if function is None:
        raise ExecutionError(f"model {model.name} uses signal {call.name!r}, which no @signal function defines",
                             path=model.path, line=model.line, hint="define it in signals/")
    arguments: dict[str, Any] = {name: json.loads(value) for name, value in call.args}
    if "context" in inspect.signature(function).parameters:
        arguments["context"] = context
    ranges = [(_utc(interval.start), _utc(interval.end)) for interval in batch]
    try:
        answer = function(ranges, **arguments)
    except Exception as error:  # the user's signal: report it with its name and the model
        raise ExecutionError(f"signal {call.name!r} of model {model.name} raised {type(error).__name__}: {error}",
                             path=model.path, line=model.line) from error
    return _answered(answer, batch, call, model)


def _answered(answer: object, batch: list[Interval], call: SignalCall, model: Model) -> set[Interval]:
    if isinstance(answer, bool):
        return set(batch) if answer else set()
    if isinstance(answer, (list, tuple)):
        try:
            chosen = {Interval(start=to_naive_utc(start), end=to_naive_utc(end)) for start, end in answer}
        except (TypeError, ValueError):
            chosen = None
        if chosen is not None and chosen <= set(batch):
            return chosen
    raise ExecutionError(
        f"signal {call.name!r} of model {model.name} returned {answer!r:.200}",
        path=model.path,
        line=model.line,
        hint="return True (all ready), False (none) or the ready (start, end) pairs of the batch it was given",
    )


def _utc(moment: datetime) -> datetime:
    return moment.replace(tzinfo=timezone.utc)
