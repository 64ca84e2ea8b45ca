"""Model selectors: the names a user types after ``--select-model``, ``--restate-model``, ``run`` or ``table-diff``.

A selector is an exact name (``db.orders``; ``orders`` is ``default.orders``), a shell wildcard (``db*``, ``*.orders``), or a tag (``tag:expensive``,
``tag:exp*``); a leading ``+`` adds every upstream model, a trailing ``+`` every downstream one. Several selectors
select the union. A selector that matches nothing is an error listing near matches: a typo must never silently
select zero models (a restatement of nothing would look like success).
"""

from __future__ import annotations

import difflib
import fnmatch
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from dagster_sparkmesh.errors import PlanError
from dagster_sparkmesh.model.records import Model
from dagster_sparkmesh.snapshot.naming import with_default_schema

_TAG_PREFIX = "tag:"


@dataclass(frozen=True)
class Selector:
    """One parsed selector: a name or tag pattern, and whether to add upstream / downstream models."""

    text: str
    pattern: str
    by_tag: bool
    upstream: bool
    downstream: bool


def parse_selector(text: str) -> Selector:
    raw = text.strip()
    upstream = raw.startswith("+")
    downstream = raw.endswith("+") and len(raw) > 1
    core = raw[1 if upstream else 0 : len(raw) - 1 if downstream else len(raw)].strip()
    by_tag = core.lower().startswith(_TAG_PREFIX)
    pattern = core[len(_TAG_PREFIX) :].strip() if by_tag else core.lower()
    if not pattern or "+" in pattern:
        raise PlanError(
            f"malformed model selector {text!r}",
            snippet=text,
            hint="write schema.model, a wildcard like db*, tag:name, with + before (upstream) or after (downstream)",
        )
    return Selector(text=text, pattern=pattern, by_tag=by_tag, upstream=upstream, downstream=downstream)


def select_models(models: Mapping[str, Model], selectors: Iterable[str]) -> tuple[str, ...]:
    """The names the selectors pick, in the mapping's order (topological for ``Project.models``)."""
    chosen: set[str] = set()
    for text in selectors:
        chosen |= _expand(models, parse_selector(text))
    return tuple(name for name in models if name in chosen)


def is_selector(text: str) -> bool:
    """Whether ``text`` selects by wildcard, tag or lineage rather than naming one model."""
    return text.startswith(("tag:", "+")) or text.endswith("+") or any(c in text for c in "*?[")


def select_one_model(models: Mapping[str, Model], selector: str) -> str:
    """The one model a selector picks, for commands that work on a single model (``table-diff``)."""
    chosen = select_models(models, [selector])
    if len(chosen) > 1:
        raise PlanError(
            f"selector {selector!r} picks {len(chosen)} models; this command compares one",
            snippet=", ".join(chosen[:20]),
            hint="name one model, or narrow the selector",
        )
    return chosen[0]


def _expand(models: Mapping[str, Model], selector: Selector) -> set[str]:
    matched = _matches(models, selector)
    if not matched:
        raise _no_match(models, selector)
    result = set(matched)
    if selector.upstream:
        result |= _closure(matched, _parents(models))
    if selector.downstream:
        result |= _closure(matched, _children(models))
    return result


def _matches(models: Mapping[str, Model], selector: Selector) -> set[str]:
    if selector.by_tag:
        pattern = selector.pattern.lower()
        return {name for name, model in models.items() if any(fnmatch.fnmatchcase(t.lower(), pattern) for t in model.tags)}
    if not _is_wildcard(selector.pattern):
        name = with_default_schema(selector.pattern)
        return {name} if name in models else set()
    return {name for name in models if fnmatch.fnmatchcase(name, selector.pattern)}


def _is_wildcard(pattern: str) -> bool:
    return any(char in pattern for char in "*?[")


def _parents(models: Mapping[str, Model]) -> dict[str, set[str]]:
    return {name: {p for p in model.depends_on if p in models} for name, model in models.items()}


def _children(models: Mapping[str, Model]) -> dict[str, set[str]]:
    children: dict[str, set[str]] = {name: set() for name in models}
    for name, parents in _parents(models).items():
        for parent in parents:
            children[parent].add(name)
    return children


def _closure(start: set[str], edges: dict[str, set[str]]) -> set[str]:
    seen: set[str] = set()
    stack = list(start)
    while stack:
        for nxt in edges.get(stack.pop(), ()):
            if nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    return seen


def _no_match(models: Mapping[str, Model], selector: Selector) -> PlanError:
    if selector.by_tag:
        tags = sorted({tag.lower() for model in models.values() for tag in model.tags})
        close = difflib.get_close_matches(selector.pattern.lower(), tags, n=3)
        what, known = f"no model has a tag matching {selector.pattern!r}", [f"tag:{tag}" for tag in close]
        fallback = f"known tags: {', '.join(tags[:10]) or 'none'}"
    else:
        close = difflib.get_close_matches(selector.pattern.replace("*", ""), list(models), n=3, cutoff=0.5)
        what, known = f"no model matches {selector.pattern!r}", close
        fallback = "`sparkmesh info` lists the models"
    return PlanError(
        f"{what} (selector {selector.text!r})",
        snippet=selector.text,
        hint=f"did you mean {', '.join(known)}?" if known else fallback,
    )
