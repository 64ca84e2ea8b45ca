"""What a lint rule sees (one model, its project, its parsed query, its file) and what it reports."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from sqlglot import exp

from dagster_sparkmesh.model.records import Model
from dagster_sparkmesh.macros import sql_text
from dagster_sparkmesh.project.records import Project
from dagster_sparkmesh.records import Record


class LintViolation(Record):
    rule: str
    model: str
    message: str
    path: Path
    line: int = 1
    col: int = 1
    snippet: str = ""
    hint: str = ""

    def format(self) -> str:
        lines = [f"{self.path}:{self.line}:{self.col}: [{self.rule}] {self.model}: {self.message}"]
        if self.snippet:
            lines.append(f"    {self.snippet.strip()}")
        if self.hint:
            lines.append(f"  hint: {self.hint}")
        return "\n".join(lines)


@dataclass(frozen=True)
class LintTarget:
    model: Model
    project: Project
    query: exp.Expression | None
    """The canonical query parsed once for every rule (None for Python and seed models)."""
    text: str
    """The model file's text ("" when unreadable), used to point at lines the canonical query has lost."""

    def violation(self, rule: str, message: str, hint: str, *, near: str | None = None) -> LintViolation:
        """A violation located at the first match of the regex ``near`` in the file (else the MODEL line)."""
        line, col, snippet = self.model.line, 1, ""
        match = re.search(near, sql_text.strip_comments(self.text), re.IGNORECASE) if near and self.text else None
        if match:
            line, col = sql_text.line_col(self.text, match.start())
            snippet = sql_text.line_at(self.text, match.start())
        return LintViolation(
            rule=rule, model=self.model.name, message=message, path=self.model.path,
            line=line, col=col, snippet=snippet, hint=hint,
        )


@dataclass(frozen=True)
class Rule:
    name: str
    description: str
    check: Callable[[LintTarget], Iterable[LintViolation]]
