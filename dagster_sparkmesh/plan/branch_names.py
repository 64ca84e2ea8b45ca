"""A git branch's environment name: an identifier made of the branch's name, collision-free, never prod's.

Branch names are untrusted input (slashes, dots, quotes, unicode, hundreds of characters). The environment is
the branch's name lower-cased with every run of other characters as one ``_``, when that is the branch's name
exactly (``feature_x``). Otherwise (``Feature/X``, ``prod``, a name cut to length, a name ending like a digest) a short digest of the exact branch
name follows (``feature_x_3f9a1c``), so two branches never share an environment (``a-b`` and ``a_b`` differ).
"""

from __future__ import annotations

import hashlib
import re
import unicodedata

from dagster_sparkmesh.errors import PlanError
from dagster_sparkmesh.snapshot.naming import validate_identifier

MAX_LENGTH = 48
"""Environment views live in ``<schema>__<environment>``: long names make schema names no one can read."""

_OTHER = re.compile(r"[^a-z0-9]+")
_DIGEST_END = re.compile(r"_[0-9a-f]{6}$")
_RESERVED = frozenset({"prod"})


def environment_for_branch(branch: str, reserved: frozenset[str] = _RESERVED) -> str:
    """The environment of ``branch``; ``reserved``: names a branch may not take as they are (prod's)."""
    if not branch or any(unicodedata.category(char).startswith("C") for char in branch):
        raise PlanError(
            f"the branch name {branch!r} is empty or holds control characters",
            hint="rename the branch, or leave it out of the branch environments' patterns",
        )
    readable = unicodedata.normalize("NFKD", branch).encode("ascii", "ignore").decode().lower()
    words = _OTHER.sub("_", readable).strip("_") or "branch"
    if words[0].isdigit():
        words = f"b_{words}"
    digest = hashlib.sha256(branch.encode()).hexdigest()[:6]
    # A name that already ends like a digest (`feature_x_217d2b`) could meet the digest of another branch's name.
    exact = (words == branch and len(words) <= MAX_LENGTH and words not in reserved and words not in _RESERVED
             and not _DIGEST_END.search(words))
    name = words if exact else f"{words[:MAX_LENGTH - 7].rstrip('_')}_{digest}"
    return validate_identifier(name, "environment name")
