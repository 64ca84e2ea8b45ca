"""A project as of another commit, without touching the working tree a code location serves.

Branch environments plan each branch's head: its project folder is exported from git (``git archive``) into a
folder of its own per commit under the checkout's ``.sparkmesh/commits/``, and loaded from there with the checkout
as its home (the state store, warehouse and Spark server stay the checkout's: ``Project.home``).
"""

from __future__ import annotations

import fnmatch
import io
import os
import re
import shutil
import subprocess
import tarfile
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from dagster_sparkmesh.errors import ProjectError
from dagster_sparkmesh.records import Record

COMMITS_FOLDER = Path(".sparkmesh") / "commits"
_COMMIT = re.compile(r"^[0-9a-f]{40}([0-9a-f]{24})?$")


class BranchHead(Record):
    """A branch and the commit it points at. ``name``: the branch as a person says it (``feature/x``; a
    remote-tracking branch without its remote, ``origin/feature/x`` → ``feature/x``); ``ref``: git's full name."""

    name: str
    ref: str
    commit: str


def _git(repo: Path, *args: str, binary: bool = False, stdin: str | None = None) -> subprocess.CompletedProcess:
    """git without a terminal prompt (a fetch needing credentials fails instead of waiting for a person)."""
    environment = {**os.environ, "GIT_TERMINAL_PROMPT": "0"}
    try:
        return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=not binary, check=False,
                              timeout=120, env=environment, input=stdin)
    except subprocess.TimeoutExpired:
        raise ProjectError(f"git {args[0]} in {repo} did not finish within 120 s", hint="check the repository") from None


def repository_root(path: Path) -> Path | None:
    """The top folder of the git repository holding ``path``; None outside one."""
    done = _git(path, "rev-parse", "--show-toplevel")
    return Path(done.stdout.strip()).resolve() if done.returncode == 0 else None


def branch_heads(repo: Path, patterns: Sequence[str], excluded: Sequence[str] = ()) -> list[BranchHead]:
    """Local branches and remote-tracking branches whose name matches one of ``patterns`` (``fnmatch``: ``*``,
    ``feature/*``) and none of ``excluded``. A local branch wins over a remote-tracking one of the same name."""
    done = _git(repo, "for-each-ref", "--format=%(refname)%00%(objectname)", "refs/heads", "refs/remotes")
    if done.returncode != 0:
        raise ProjectError(f"git could not list the branches of {repo}: {done.stderr.strip()}")
    heads: dict[str, BranchHead] = {}
    for line in done.stdout.splitlines():
        ref, commit = line.split("\0")
        name = _branch_name(ref)
        if name is None or not _matches(name, patterns) or _matches(name, excluded):
            continue
        if name not in heads or ref.startswith("refs/heads/"):
            heads[name] = BranchHead(name=name, ref=ref, commit=commit)
    return sorted(heads.values(), key=lambda head: head.name)


def _branch_name(ref: str) -> str | None:
    if ref.startswith("refs/heads/"):
        return ref.removeprefix("refs/heads/")
    remote_branch = ref.removeprefix("refs/remotes/").partition("/")[2]
    return None if remote_branch in ("", "HEAD") else remote_branch


def _matches(name: str, patterns: Sequence[str]) -> bool:
    return any(fnmatch.fnmatchcase(name, pattern) for pattern in patterns)


def fetch_remote(repo: Path, remote: str) -> str | None:
    """``git fetch --prune <remote>``: its remote-tracking branches as the remote has them now (deleted ones go).
    None when it worked, else git's message (the previous refs stay)."""
    done = _git(repo, "fetch", "--prune", "--quiet", remote)
    return None if done.returncode == 0 else done.stderr.strip() or f"git fetch {remote} exited {done.returncode}"


def is_ancestor(repo: Path, commit: str, of: str) -> bool:
    """Whether ``commit`` is reachable from ``of`` (a branch merged into prod's branch, fast-forward or not)."""
    return _git(repo, "merge-base", "--is-ancestor", commit, of).returncode == 0


def commit_parents(repo: Path, commit: str) -> list[str]:
    """The commit's parents (a merge commit has two or more: the branch merged in follows the first)."""
    done = _git(repo, "rev-list", "--parents", "-n", "1", commit)
    return done.stdout.split()[1:] if done.returncode == 0 else []


def commit_trees(repo: Path, commits: list[str]) -> dict[str, str]:
    """Commit → the id of its tree (its files' content), for the commits the repository has, in one git call."""
    done = _git(repo, "cat-file", "--batch-check", stdin="".join(f"{commit}^{{tree}}\n" for commit in commits))
    answers = [line.split() for line in done.stdout.splitlines()] if done.returncode == 0 else []
    return {commit: answer[0] for commit, answer in zip(commits, answers) if answer[1:2] == ["tree"]}  # or "missing"


def squashed_branch(repo: Path, merge: str, branch_heads: Sequence[str]) -> str | None:
    """The first of ``branch_heads`` whose changes ``merge`` brings onto its parent: the same patch (git's patch id
    of the branch's diff since it left the parent's history, against the merge's own diff), whatever the parent
    moved on to meanwhile (a squash merge of a branch behind prod). None when none matches."""
    parents = commit_parents(repo, merge)
    wanted = _patch_id(repo, parents[0], merge) if len(parents) == 1 else None
    if wanted is None:
        return None
    for head in branch_heads:
        base = _git(repo, "merge-base", head, parents[0]).stdout.strip()
        if base and base != head and _patch_id(repo, base, head) == wanted:
            return head
    return None


def _patch_id(repo: Path, old: str, new: str) -> str | None:
    """git's stable patch id of the changes from ``old`` to ``new``: equal for equal changes, wherever applied."""
    diff = _git(repo, "diff", "--binary", "--no-color", "--no-ext-diff", old, new)
    if diff.returncode != 0 or not diff.stdout:
        return None
    done = _git(repo, "patch-id", "--stable", stdin=diff.stdout)
    return done.stdout.split()[0] if done.returncode == 0 and done.stdout else None


def resolve_commit(repo: Path, ref: str) -> str | None:
    done = _git(repo, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
    return done.stdout.strip() if done.returncode == 0 else None


def export_project(project_dir: Path, commit: str) -> Path:
    """The project folder as of ``commit``, exported once under the checkout's ``.sparkmesh/commits/<commit>``
    (a finished export is reused; a half-written one never appears under that name)."""
    project_dir = project_dir.resolve()
    root = repository_root(project_dir)
    if root is None:
        raise ProjectError(f"{project_dir} is not in a git repository", hint="branch environments read the project's git branches")
    if not _COMMIT.match(commit):
        raise ProjectError(f"{commit!r} is not a commit id", hint="give the full hexadecimal id of a commit")
    target = project_dir / COMMITS_FOLDER / commit
    if target.is_dir():
        os.utime(target)  # in use again: not an old export to forget
        return target
    inside = project_dir.relative_to(root).as_posix()
    tree = commit if inside == "." else f"{commit}:{inside}"
    archive = _git(root, "archive", "--format=tar", tree, binary=True)
    if archive.returncode != 0:
        raise ProjectError(f"git could not export {tree}: {archive.stderr.decode(errors='replace').strip()}")
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{commit[:12]}-", dir=target.parent))
    try:
        with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
            tar.extractall(staging, filter="data")
    except tarfile.TarError as error:  # a symbolic link out of the project, say
        shutil.rmtree(staging, ignore_errors=True)
        raise ProjectError(f"the project of commit {commit[:12]} cannot be exported: {error}") from None
    try:
        staging.rename(target)
    except OSError:  # another process exported the same commit meanwhile: theirs is as good
        shutil.rmtree(staging, ignore_errors=True)
    return target


def forget_exports(project_dir: Path, keep: Sequence[str], older_than_seconds: float = 3600.0) -> list[str]:
    """Delete the exported commits not in ``keep`` (branch heads moved on or went away) and exported more than
    ``older_than_seconds`` ago (a run that started on a branch's previous head may still read its files, seeds
    included); the commits deleted."""
    folder = project_dir.resolve() / COMMITS_FOLDER
    cutoff = time.time() - older_than_seconds
    gone = [
        entry for entry in folder.iterdir() if entry.name not in keep and entry.stat().st_mtime < cutoff
    ] if folder.is_dir() else []
    for entry in gone:
        shutil.rmtree(entry, ignore_errors=True)
    return [entry.name for entry in gone]
