"""Branch heads read with git: local and remote-tracking branches, patterns, merges, and a commit's project exported
without touching the checkout."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from dagster_sparkmesh.project.commit_trees import (
    branch_heads,
    commit_parents,
    commit_trees,
    export_project,
    fetch_remote,
    is_ancestor,
    squashed_branch,
)


def _git(repo: Path, *args: str) -> str:
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.com", "PATH": os.environ["PATH"], "HOME": str(repo)}
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True, env=env).stdout.strip()


def _commit(repo: Path, file: str, text: str) -> str:
    (repo / file).parent.mkdir(parents=True, exist_ok=True)
    (repo / file).write_text(text)
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", f"write {file}")
    return _git(repo, "rev-parse", "HEAD")


def test_local_and_remote_tracking_branches_by_pattern(tmp_path):
    origin = tmp_path / "origin"
    origin.mkdir()
    _git(origin, "init", "-q", "-b", "main")
    _commit(origin, "project/models/a.sql", "SELECT 1 AS a")
    _git(origin, "checkout", "-q", "-b", "feature/remote-only")
    remote_only = _commit(origin, "project/models/b.sql", "SELECT 2 AS b")
    _git(origin, "checkout", "-q", "-b", "feature/both")
    remote_both = _commit(origin, "project/models/c.sql", "SELECT 3 AS c")
    _git(origin, "checkout", "-q", "main")

    clone = tmp_path / "clone"
    _git(tmp_path, "clone", "-q", str(origin), str(clone))
    _git(clone, "checkout", "-q", "-b", "feature/both", "origin/feature/both")
    local_both = _commit(clone, "project/models/c.sql", "SELECT 4 AS c")
    _git(clone, "checkout", "-q", "-b", "experiment/x", "main")
    experiment = _commit(clone, "project/models/d.sql", "SELECT 5 AS d")
    _git(clone, "checkout", "-q", "main")

    heads = {h.name: h for h in branch_heads(clone, ["*"], ["main"])}
    assert set(heads) == {"feature/remote-only", "feature/both", "experiment/x"}  # origin/HEAD is no branch
    assert heads["feature/remote-only"].ref == "refs/remotes/origin/feature/remote-only"
    assert heads["feature/remote-only"].commit == remote_only
    assert heads["feature/both"].commit == local_both != remote_both  # the local branch wins
    assert heads["experiment/x"].commit == experiment
    assert [h.name for h in branch_heads(clone, ["feature/*"], ["main", "feature/remote-*"])] == ["feature/both"]

    exported = export_project(clone / "project", experiment)  # the project folder, not the repository's root
    assert sorted(p.name for p in (exported / "models").iterdir()) == ["a.sql", "d.sql"]
    assert not (clone / "project" / "models" / "d.sql").exists()  # the checkout stays on main

    _git(clone, "merge", "-q", "--no-ff", "-m", "merge experiment", "experiment/x")
    merge = _git(clone, "rev-parse", "HEAD")
    assert is_ancestor(clone, experiment, "main") and not is_ancestor(clone, local_both, "main")
    assert commit_parents(clone, merge)[1] == experiment


def test_a_fetch_brings_the_remotes_new_branches_and_prunes_its_deleted_ones(tmp_path):
    origin = tmp_path / "origin"
    origin.mkdir()
    _git(origin, "init", "-q", "-b", "main")
    _commit(origin, "models/a.sql", "SELECT 1 AS a")
    clone = tmp_path / "clone"
    _git(tmp_path, "clone", "-q", str(origin), str(clone))
    assert branch_heads(clone, ["*"], ["main"]) == []

    _git(origin, "checkout", "-q", "-b", "feature/new")
    pushed = _commit(origin, "models/b.sql", "SELECT 2 AS b")
    _git(origin, "checkout", "-q", "main")
    assert branch_heads(clone, ["*"], ["main"]) == []  # not fetched yet
    assert fetch_remote(clone, "origin") is None
    assert [(h.name, h.commit) for h in branch_heads(clone, ["*"], ["main"])] == [("feature/new", pushed)]

    _git(origin, "branch", "-D", "feature/new")
    assert fetch_remote(clone, "origin") is None
    assert branch_heads(clone, ["*"], ["main"]) == []
    assert "nowhere" in (fetch_remote(clone, "nowhere") or "")  # git's own message, refs left as they are


def test_a_squash_merge_has_the_same_tree_as_the_branch_it_squashes(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    first = _commit(repo, "a.sql", "SELECT 1")
    _git(repo, "checkout", "-q", "-b", "feature")
    _commit(repo, "a.sql", "SELECT 2")
    tip = _commit(repo, "b.sql", "SELECT 3")
    _git(repo, "checkout", "-q", "main")
    _git(repo, "merge", "-q", "--squash", "feature")
    _git(repo, "commit", "-qm", "squashed")
    squashed = _git(repo, "rev-parse", "HEAD")
    trees = commit_trees(repo, [squashed, tip, first, "0" * 40])
    assert trees[squashed] == trees[tip] != trees[first]
    assert "0" * 40 not in trees and commit_parents(repo, squashed) == [first]


def test_a_squash_of_a_branch_behind_its_target_is_told_by_its_changes(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    _commit(repo, "a.sql", "SELECT 1")
    _git(repo, "checkout", "-q", "-b", "feature")
    _commit(repo, "a.sql", "SELECT 2")
    feature = _commit(repo, "b.sql", "SELECT 3")
    _git(repo, "checkout", "-q", "main")
    _git(repo, "checkout", "-q", "-b", "other")
    other = _commit(repo, "a.sql", "SELECT 4")
    _git(repo, "checkout", "-q", "main")
    _commit(repo, "c.sql", "SELECT 5")  # prod moved on after the branch left it
    _git(repo, "merge", "-q", "--squash", "feature")
    _git(repo, "commit", "-qm", "squashed")
    squashed = _git(repo, "rev-parse", "HEAD")

    assert commit_trees(repo, [squashed])[squashed] != commit_trees(repo, [feature])[feature]  # not the same files
    assert squashed_branch(repo, squashed, [other, feature]) == feature
    assert squashed_branch(repo, squashed, [other]) is None
    assert squashed_branch(repo, _git(repo, "rev-parse", "HEAD~1"), [feature]) is None  # not the squash
