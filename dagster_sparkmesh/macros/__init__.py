"""SQLMesh's macro language, evaluated over sqlglot ASTs.

- ``syntax``: macro text → parseable SQL with sentinel names;
- ``evaluator``: ``MacroEvaluator`` walks a statement and expands every macro (what user macros receive);
- ``builtins``: one module per built-in operator; ``clauses``: the SQL clause operators;
- ``registry``: the ``@macro()`` decorator and the loading of a project's ``macros/`` folder;
- ``expansion``: a model file's statements parsed and expanded, as the loader and the renderer use it.
"""

from __future__ import annotations

from dagster_sparkmesh.macros.evaluator import Deferred, MacroEvaluator
from dagster_sparkmesh.macros.registry import MACRO_ATTRIBUTE, UserMacros, collect_macros, load_user_macros, macro

__all__ = ["Deferred", "MacroEvaluator", "MACRO_ATTRIBUTE", "UserMacros", "collect_macros", "load_user_macros", "macro"]
