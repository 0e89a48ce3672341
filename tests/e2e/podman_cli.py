"""Debian's podman, set up by scripts/install-podman.sh, for tests/e2e/test_container.py.

Why podman: no Docker engine runs here, but podman builds and runs OCI images as root with the
settings in the containers.conf the script writes (shared/spec/tooling.md §7). The script also
imports a base image made with mmdebstrap, since no registry image can be pulled; its name is in
$DEGENERATION_CI_CACHE/base-image. A missing setup fails on CI (CI=true) and skips elsewhere; a
kernel that refuses the namespaces a container needs skips everywhere, with the kernel's words.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.helm_cli import fail_on_ci_else_skip

CACHE = Path(os.environ.get("DEGENERATION_CI_CACHE", "/var/cache/degeneration-exporter-ci"))
SETUP_HINT = "run scripts/install-podman.sh (scripts/test.sh does)"
CONTAINERFILE = Path(__file__).resolve().parents[2] / "Containerfile"


def containerfile_user() -> str:
    """The `USER uid:gid` of the Containerfile's final stage, which the chart must run as too."""
    users = [line.split()[1] for line in CONTAINERFILE.read_text().splitlines() if line.startswith("USER ")]
    assert users, f"no USER in {CONTAINERFILE}"
    return users[-1]


def namespaces_refused() -> str | None:
    """Why this kernel cannot run containers at all, or None when it can.

    Asks for the namespaces podman creates for a `--network host` container; a sandbox that
    forbids them answers at once (EPERM), which is the one reason to skip the container tests.
    """
    unshare = shutil.which("unshare")
    if unshare is None:
        return "util-linux unshare missing: cannot probe for namespaces"
    args = [unshare, "--mount", "--pid", "--ipc", "--uts", "--fork", "true"]
    if os.geteuid() != 0:
        args[1:1] = ["--user", "--map-root-user"]
    result = subprocess.run(args, capture_output=True, text=True, timeout=30, check=False)
    if result.returncode != 0:
        return f"this machine cannot run containers: {' '.join(args)}: {result.stderr.strip()}"
    return None


@dataclass(frozen=True)
class Podman:
    """The podman binary with the sandbox's containers.conf."""

    binary: str
    conf: Path

    @classmethod
    def from_setup(cls) -> Podman:
        """The podman that scripts/install-podman.sh installed; skips/fails as the module says."""
        refused = namespaces_refused()  # first: then the setup script stopped early on purpose
        if refused is not None:
            pytest.skip(refused)
        binary = shutil.which("podman")
        conf = CACHE / "containers.conf"
        if binary is None or shutil.which("runc") is None:
            fail_on_ci_else_skip(f"podman or runc not installed: {SETUP_HINT}")
        if not conf.is_file():
            fail_on_ci_else_skip(f"{conf} missing: {SETUP_HINT}")
        assert binary is not None
        return cls(binary, conf)

    def run(
        self, *args: str, timeout: float = 120, check: bool = True, input_text: str | None = None
    ) -> subprocess.CompletedProcess[str]:
        """`podman ARGS`; with `check`, a non-zero exit fails the test with podman's stderr."""
        env = {**os.environ, "CONTAINERS_CONF": str(self.conf)}
        result = subprocess.run(
            [self.binary, *args],
            capture_output=True,
            text=True,
            env=env,
            timeout=timeout,
            check=False,
            input=input_text,
        )
        if check:
            assert result.returncode == 0, f"podman {' '.join(args)}: rc {result.returncode}\n{result.stderr}"
        return result

    def base_image(self) -> str:
        """The mmdebstrap base image the setup script imported."""
        name_file = CACHE / "base-image"
        if not name_file.is_file():
            fail_on_ci_else_skip(f"{name_file} missing: {SETUP_HINT}")
        name = name_file.read_text().strip()
        if self.run("image", "exists", name, check=False).returncode != 0:
            fail_on_ci_else_skip(f"base image {name} not in podman's storage: {SETUP_HINT}")
        return name

    def inspect(self, kind: str, name: str) -> dict[str, Any]:
        """`podman KIND inspect NAME` as a dict (kind: image, container, volume)."""
        [found] = json.loads(self.run(kind, "inspect", name).stdout)
        assert isinstance(found, dict)
        return found
