"""``./dev``'s Java checks, run by bash as ``./dev`` runs them: a Java runtime without javac works, but ``./dev`` says
that local writes then take Hadoop's slower filesystem and which package brings the JDK."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _ensure_javac(java: Path, path: Path) -> subprocess.CompletedProcess:
    """``ensure_javac`` of ./dev, on its own, with ``path`` as the whole PATH."""
    script = f"""
        say() {{ echo "[dev] $*" >&2; }}
        source <(sed -n '/^ensure_javac()/,/^}}/p' {ROOT / 'dev'})
        PATH={path}
        ensure_javac {java}
    """
    return subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=30)


def _tools(folder: Path) -> Path:
    folder.mkdir()
    for tool in ("dirname", "readlink"):
        (folder / tool).symlink_to(shutil.which(tool))
    return folder


def test_a_java_runtime_without_javac_is_told_about_the_slower_filesystem_and_the_jdk(tmp_path):
    runtime = tmp_path / "jre" / "bin"
    runtime.mkdir(parents=True)
    shutil.copy(shutil.which("true"), runtime / "java")
    result = _ensure_javac(runtime / "java", _tools(tmp_path / "path"))
    assert result.returncode == 0
    assert "this Java has no javac" in result.stderr
    assert "openjdk-17-jdk-headless" in result.stderr


def test_a_jdk_is_not_told_anything(tmp_path):
    jdk = tmp_path / "jdk" / "bin"
    jdk.mkdir(parents=True)
    for tool in ("java", "javac"):
        shutil.copy(shutil.which("true"), jdk / tool)
    result = _ensure_javac(jdk / "java", _tools(tmp_path / "path"))
    assert (result.returncode, result.stderr) == (0, "")
