"""The two sides of one project compared: load, models, dependencies, renders, unit tests."""

from __future__ import annotations

from sqlmesh_compat.canonical import canonical_sql, first_difference, schema_of
from sqlmesh_compat.records import Count, Difference, ProjectScore, SideResult


def compare(name: str, sqlmesh: SideResult, sparkmesh: SideResult) -> ProjectScore:
    differences: list[Difference] = []
    if not sqlmesh.loaded:
        differences.append(Difference("load (SQLMesh)", sqlmesh.error))
    if not sparkmesh.loaded:
        differences.append(Difference("load", sparkmesh.error))
    differences += [Difference(f"model {name}", f"set aside: {why}") for name, why in sorted(sparkmesh.broken.items())]
    both = sorted(set(sqlmesh.models) & set(sparkmesh.models))
    differences += _model_set_differences(sqlmesh, sparkmesh) if sparkmesh.models else []
    deps = _compare_deps(both, sqlmesh, sparkmesh, differences)
    renders = _compare_renders(sqlmesh, sparkmesh, differences)
    statements = _compare_statements(sqlmesh, sparkmesh, differences)
    tests = _compare_tests(sqlmesh, sparkmesh, differences)
    return ProjectScore(
        name=name,
        sqlmesh_loads=sqlmesh.loaded,
        sparkmesh_loads=sparkmesh.loaded,
        models_equal=set(sqlmesh.models) == set(sparkmesh.models),
        deps=deps,
        renders=renders,
        statements=statements,
        unit_tests=tests,
        sqlmesh_tests_passing=sum(outcome.passed for outcome in sqlmesh.unit_tests.values()),
        sparkmesh_tests_passing=sum(outcome.passed for outcome in sparkmesh.unit_tests.values()),
        differences=tuple(differences),
    )


def _model_set_differences(sqlmesh: SideResult, sparkmesh: SideResult) -> list[Difference]:
    missing = sorted(set(sqlmesh.models) - set(sparkmesh.models) - set(sparkmesh.broken))
    extra = sorted(set(sparkmesh.models) - set(sqlmesh.models))
    return [Difference(f"model {name}", "a model in SQLMesh, not in sparkmesh") for name in missing] + [
        Difference(f"model {name}", "a model in sparkmesh, not in SQLMesh") for name in extra
    ]


def _compare_deps(names: list[str], sqlmesh: SideResult, sparkmesh: SideResult, out: list[Difference]) -> Count:
    equal = 0
    for name in names:
        theirs, ours = set(sqlmesh.models[name].depends_on), set(sparkmesh.models[name].depends_on)
        if theirs == ours:
            equal += 1
            continue
        parts = [f"missed {sorted(theirs - ours)}" if theirs - ours else "",
                 f"extra {sorted(ours - theirs)}" if ours - theirs else ""]
        out.append(Difference(f"deps {name}", ", ".join(part for part in parts if part)))
    return Count(equal, len(sqlmesh.models))


def _compare_renders(sqlmesh: SideResult, sparkmesh: SideResult, out: list[Difference]) -> Count:
    """Of the models SQLMesh renders: how many sparkmesh renders to the same canonical query."""
    schema = schema_of({**sqlmesh.external_columns, **{name: facts.columns for name, facts in sqlmesh.models.items()}})
    rendered = {name: facts for name, facts in sqlmesh.models.items() if facts.sql is not None}
    equal = 0
    for name, theirs in sorted(rendered.items()):
        ours = sparkmesh.models.get(name)
        if ours is None or ours.sql is None:
            reason = "model not loaded" if ours is None else (ours.render_error or "no SQL query here")
            out.append(Difference(f"render {name}", reason))
            continue
        left = canonical_sql(theirs.sql, theirs.sql_dialect, schema)
        right = canonical_sql(ours.sql, ours.sql_dialect, schema)
        if left == right:
            equal += 1
        else:
            out.append(Difference(f"render {name}", first_difference(left, right)))
    return Count(equal, len(rendered))


def _compare_statements(sqlmesh: SideResult, sparkmesh: SideResult, out: list[Difference]) -> Count:
    """Of the models SQLMesh renders pre/post-statements for: the same statements, in order, in canonical form.
    A statement that renders to nothing (a macro returning None) is no statement on either side."""
    schema = schema_of({**sqlmesh.external_columns, **{name: facts.columns for name, facts in sqlmesh.models.items()}})
    with_statements = {name: facts for name, facts in sqlmesh.models.items() if facts.statements is not None}
    equal = 0
    for name, theirs in sorted(with_statements.items()):
        ours = sparkmesh.models.get(name)
        if ours is None:
            out.append(Difference(f"statements {name}", "model not loaded"))
            continue
        left = [canonical_sql(text, theirs.sql_dialect, schema) for text in theirs.statements or ()]
        right = [text if text.startswith("-- error") else canonical_sql(text, ours.sql_dialect, schema)
                 for text in ours.statements or ()]
        if left == right:
            equal += 1
        else:
            out.append(Difference(f"statements {name}", f"SQLMesh {left} / sparkmesh {right}"))
    return Count(equal, len(with_statements))


def _compare_tests(sqlmesh: SideResult, sparkmesh: SideResult, out: list[Difference]) -> Count:
    same = 0
    for name, theirs in sorted(sqlmesh.unit_tests.items()):
        ours = sparkmesh.unit_tests.get(name)
        if ours is not None and ours.passed == theirs.passed:
            same += 1
            continue
        verdict = "not run" if ours is None else ("passes" if ours.passed else f"fails: {ours.message}")
        out.append(Difference(f"test {name}", f"SQLMesh {'passes' if theirs.passed else 'fails'}, sparkmesh {verdict}"))
    return Count(same, len(sqlmesh.unit_tests))
