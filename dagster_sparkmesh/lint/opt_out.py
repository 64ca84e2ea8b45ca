"""Per-model opt-out: a ``-- sparkmesh: ignore-lint rule[, rule]`` comment anywhere in the model file.

A comment rather than a header property because the MODEL header's properties are part of the model's
definition (and the loader refuses names it does not know); silencing a lint rule must not change the model.
Without rule names the comment silences every rule for that model.
"""

from __future__ import annotations

import re

from dagster_sparkmesh.macros import sql_text

ALL = "*"
_DIRECTIVE = re.compile(r"(?:--|#|/\*)\s*sparkmesh\s*:\s*ignore-lint\b([^\n*]*)", re.IGNORECASE)


def ignored_rules(text: str) -> frozenset[str]:
    """Rule names that the file's comments switch off (``ALL`` for a bare directive)."""
    ignored: set[str] = set()
    for comment in _comments(text):
        for match in _DIRECTIVE.finditer(comment):
            names = [name.strip().lower() for name in re.split(r"[,\s]+", match.group(1)) if name.strip()]
            ignored.update(names or [ALL])
    return frozenset(ignored)


def _comments(text: str) -> list[str]:
    # Only real comments count: the same words inside a string literal are data, not a directive.
    comments = [token.text for token in sql_text.tokens(text) if token.kind == "comment"]
    comments += [line for line in text.splitlines() if line.lstrip().startswith("#")]  # Python models
    return comments
