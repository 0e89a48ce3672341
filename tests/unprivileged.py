"""Run the CLI as an unprivileged user, so permission errors are real even when tests run as root.

Why: CI containers often run as root, which reads and writes anything; `setpriv` (util-linux) drops
to `nobody` for one subprocess. As a normal user the command simply runs as that user.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

NOBODY = 65534


def shared_dir(tmp_path: Path) -> Path:
    """A directory the unprivileged user can write (pytest's tmp_path is 0700 under root's tree)."""
    path = Path(tempfile.mkdtemp(prefix=f"{tmp_path.name}-", dir="/tmp"))
    path.chmod(0o777)
    return path


def unprivileged_prefix() -> list[str]:
    if os.geteuid() != 0:
        return []
    return ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", "--"]


def run_unprivileged(
    argv: Sequence[str], env: dict[str, str] | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    """`degeneration-exporter ARGV` as `nobody` (when root), HOME=/nonexistent as nobody's is."""
    base = {k: v for k, v in os.environ.items() if not k.startswith("DEGENERATION_")}
    base.pop("XDG_STATE_HOME", None)
    base["HOME"] = "/nonexistent" if os.geteuid() == 0 else base.get("HOME", "/nonexistent")
    base.update(env or {})
    command = [*unprivileged_prefix(), sys.executable, "-m", "degeneration_exporter", *argv]
    return subprocess.run(command, capture_output=True, text=True, env=base, timeout=timeout, cwd="/")
