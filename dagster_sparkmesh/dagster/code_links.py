"""Code references that open the model's file in the project's git host (GitHub, GitLab), as dagster-dbt's
``link_code_references_to_git`` usage does: detected from the repository the project lives in, or given."""

from __future__ import annotations

import re
import subprocess
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import dagster as dg

_SSH_REMOTE = re.compile(r"^(?:ssh://)?git@(?P<host>[^:/]+)[:/](?P<path>.+?)(?:\.git)?/?$")
_HTTPS_REMOTE = re.compile(r"^https?://(?:[^@/]+@)?(?P<host>[^/]+)/(?P<path>.+?)(?:\.git)?/?$")
_HOSTS = ("github", "gitlab")


@dataclass(frozen=True)
class GitLink:
    """Where the files of a local checkout are browsed: ``url`` of the repository, ``branch``, and ``root``, the
    local folder that is the repository's root."""

    url: str
    branch: str
    root: Path


def detect_git_link(project_path: Path) -> GitLink | None:
    """The repository holding ``project_path`` and its ``origin`` remote, when that is a GitHub or GitLab URL."""
    root = _git(project_path, "rev-parse", "--show-toplevel")
    remote = _git(project_path, "config", "--get", "remote.origin.url")
    branch = _git(project_path, "rev-parse", "--abbrev-ref", "HEAD")
    if not (root and remote and branch) or branch == "HEAD":  # a detached head has no branch to link to
        return None
    url = browse_url(remote)
    return GitLink(url, branch, Path(root)) if url else None


def browse_url(remote: str) -> str | None:
    """``git@github.com:org/repo.git`` or ``https://token@github.com/org/repo`` → ``https://github.com/org/repo``."""
    match = _SSH_REMOTE.match(remote.strip()) or _HTTPS_REMOTE.match(remote.strip())
    if match is None or not any(host in match["host"] for host in _HOSTS):
        return None
    return f"https://{match['host']}/{match['path']}"


def link_to_git(assets: Sequence, link: GitLink) -> list:
    """The local file references of ``assets`` as links into ``link``'s repository."""
    with warnings.catch_warnings():  # beta in Dagster 1.13 (as in dagster-dbt's use of it)
        warnings.simplefilter("ignore", dg.BetaWarning)
        mapping = dg.AnchorBasedFilePathMapping(local_file_anchor=link.root, file_anchor_path_in_repository=".")
        return list(dg.link_code_references_to_git(assets, git_url=link.url, git_branch=link.branch, file_path_mapping=mapping))


def _git(folder: Path, *args: str) -> str | None:
    try:
        done = subprocess.run(["git", "-C", str(folder), *args], capture_output=True, text=True, timeout=5, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None
