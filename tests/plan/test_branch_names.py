"""Branch names are untrusted input: each becomes a plain, collision-free environment name, or a clear refusal."""

from __future__ import annotations

import pytest

from dagster_sparkmesh.errors import PlanError
from dagster_sparkmesh.plan.branch_names import MAX_LENGTH, environment_for_branch
from dagster_sparkmesh.snapshot.naming import validate_identifier

NAMES = {
    # A name that is already a plain identifier stays itself.
    "feature_x": "feature_x",
    "main": "main",
    # Anything else is folded to one, and a digest of the exact name follows.
    "feature/x": "feature_x_217d2b",
    "Feature-X": "feature_x_991d5c",
    "a-b": "a_b_d44362",
    "it's": "it_s_24ceef",
    "ünïcode-ß": "unicode_a6089b",
    "1fix": "b_1fix_d48c6f",
    "..": "branch_5ec1f7",
    # A name ending like a digest gets one of its own: it cannot meet another branch's (`feature/x`).
    "feature_x_217d2b": "feature_x_217d2b_85bc6c",
    # Prod's name is never a branch's environment.
    "prod": "prod_6754af",
}


@pytest.mark.parametrize(("branch", "environment"), NAMES.items())
def test_a_branch_name_becomes_a_plain_environment_name(branch, environment):
    assert environment_for_branch(branch) == environment
    assert validate_identifier(environment, "environment") == environment


def test_names_that_fold_alike_stay_apart():
    branches = ["a-b", "a_b", "a/b", "A_B", "a.b", "a--b", "feature/x", environment_for_branch("feature/x")]
    assert len({environment_for_branch(branch) for branch in branches}) == len(branches)


def test_a_very_long_name_is_cut_and_stays_unique():
    first, second = "x" * 300 + "1", "x" * 300 + "2"
    assert len(environment_for_branch(first)) <= MAX_LENGTH
    assert environment_for_branch(first) != environment_for_branch(second)


@pytest.mark.parametrize("branch", ["", "bad\nname", "tab\tname", "nul\0name"])
def test_empty_names_and_control_characters_are_refused(branch):
    with pytest.raises(PlanError, match="control characters|empty"):
        environment_for_branch(branch)


def test_a_reserved_name_gets_a_digest():
    assert environment_for_branch("staging", reserved=frozenset({"staging"})) != "staging"
