"""What /proc tells about the processes sparkmesh starts (Spark Connect servers, standalone masters and workers).

A JVM launched by ``spark-submit`` runs in its own process group under a shell wrapper, so "is it still running"
means "does any member of the group live"; a member that exited but was not reaped yet (a zombie) does not.
Without /proc (macOS) a group has no listed members, and the callers fall back to signals.
"""

from __future__ import annotations

import os
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


def is_running(pid: int) -> bool:
    """Whether a process of that pid runs (a zombie has ended: only its exit status is left)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return not is_zombie(pid)


def is_zombie(pid: int) -> bool:
    """The process exited and waits to be reaped by its parent."""
    try:
        return (PROC / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except (OSError, IndexError):
        return False


def group_listens_on(pgid: int, port: int) -> bool:
    """Whether the socket listening on ``port`` belongs to a member of process group ``pgid``: an open port is not
    proof that the server we launched holds it (another program may have bound it first). True without /proc."""
    inodes = _listening_inodes(port)
    if inodes is None:
        return True
    wanted = {f"socket:[{inode}]" for inode in inodes}
    return any(_open_files(pid) & wanted for pid in group_members(pgid))


def _open_files(pid: int) -> set[str]:
    """What the process's descriptors point at (a descriptor closed while listed is left out)."""
    targets = set()
    try:
        descriptors = list((PROC / str(pid) / "fd").iterdir())
    except OSError:
        return targets
    for descriptor in descriptors:
        try:
            targets.add(str(descriptor.readlink()))
        except OSError:
            continue
    return targets


_LISTEN = "0A"


def _listening_inodes(port: int) -> set[str] | None:
    """Inodes of the sockets listening on ``port`` (IPv4 and IPv6); None when /proc has no socket tables."""
    tables = [PROC / "net" / "tcp", PROC / "net" / "tcp6"]
    if not any(table.exists() for table in tables):
        return None
    inodes = set()
    for table in tables:
        try:
            rows = table.read_text().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            fields = row.split()
            if len(fields) > 9 and fields[3] == _LISTEN and int(fields[1].rsplit(":", 1)[1], 16) == port:
                inodes.add(fields[9])
    return inodes
