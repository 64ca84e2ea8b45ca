"""What /proc tells about the processes sparkmesh starts (Spark Connect servers, standalone masters and workers).

A JVM launched by ``spark-submit`` runs in its own process group under a shell wrapper, so "is it still running"
means "does any member of the group live"; a member that exited but was not reaped yet (a zombie) does not.
Without /proc (macOS) a group has no listed members, and the callers fall back to signals.
"""

from __future__ import annotations

from pathlib import Path

PROC = Path("/proc")


def group_members(pgid: int) -> list[int]:
    """The pids whose process group is ``pgid``."""
    members = []
    for entry in PROC.glob("[0-9]*"):
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid:
            members.append(int(entry.name))
    return members


def is_zombie(pid: int) -> bool:
    """The process exited and waits to be reaped by its parent."""
    try:
        return (PROC / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except (OSError, IndexError):
        return False
