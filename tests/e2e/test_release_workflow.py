"""The release workflow (.github/workflows/release.yml), checked here since it can only run on GitHub.

actionlint (scripts/install-actionlint.sh) checks its syntax, expressions, action inputs and, through
shellcheck, its shell steps; its version-agreement step runs here for real; and the image it pushes
is the one the chart's values name.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.e2e.helm_cli import CHART, require_tool

REPO = Path(__file__).resolve().parents[2]
WORKFLOW = REPO / ".github" / "workflows" / "release.yml"
ACTIONLINT = REPO / ".venv" / "bin" / "actionlint"


def _workflow() -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load(WORKFLOW.read_text())
    return loaded


def _actionlint(path: Path) -> subprocess.CompletedProcess[str]:
    binary = require_tool(ACTIONLINT, "scripts/install-actionlint.sh")
    if shutil.which("shellcheck") is None:
        require_tool(Path("/usr/bin/shellcheck"), "scripts/install-actionlint.sh")
    return subprocess.run(
        [str(binary), "-no-color", str(path)], capture_output=True, text=True, timeout=60, check=False
    )


def test_actionlint_passes_on_the_release_workflow() -> None:
    result = _actionlint(WORKFLOW)
    assert result.returncode == 0, result.stdout + result.stderr


def test_actionlint_catches_a_broken_expression_and_an_unquoted_variable(tmp_path: Path) -> None:
    """The check above can fail: a typo in a context name and a shellcheck finding are both reported."""
    broken = WORKFLOW.read_text()
    for good, bad in [
        ("${{ needs.version.outputs.version }}", "${{ need.version.outputs.version }}"),
        ('grep -Fx "degeneration-exporter $VERSION"', "grep -Fx degeneration-exporter\\ $VERSION"),
    ]:
        assert good in broken
        broken = broken.replace(good, bad, 1)
    target = tmp_path / ".github" / "workflows" / "release.yml"
    target.parent.mkdir(parents=True)
    target.write_text(broken)
    result = _actionlint(target)
    assert result.returncode == 1
    assert 'undefined variable "need"' in result.stdout, result.stdout
    assert "SC2086" in result.stdout, result.stdout


def _version_step() -> str:
    [step] = [step for step in _workflow()["jobs"]["version"]["steps"] if step.get("id") == "version"]
    script: str = step["run"]
    return script


def _run_version_step(tag: str, tmp_path: Path) -> tuple[subprocess.CompletedProcess[str], dict[str, str]]:
    output = tmp_path / "github_output"
    output.write_text("")
    env = {
        **os.environ,
        "GITHUB_REF_NAME": tag,
        "GITHUB_OUTPUT": str(output),
        "CHART_DIR": _workflow()["env"]["CHART_DIR"],
    }
    result = subprocess.run(
        ["bash", "-e", "-c", _version_step()],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    outputs = dict(line.split("=", 1) for line in output.read_text().splitlines() if "=" in line)
    return result, outputs


def test_the_version_step_accepts_the_packages_tag_and_refuses_another(tmp_path: Path) -> None:
    version = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]
    chart = yaml.safe_load((CHART / "Chart.yaml").read_text())
    result, outputs = _run_version_step(f"v{version}", tmp_path)
    assert result.returncode == 0, result.stderr
    assert outputs == {"version": version, "chart_version": str(chart["version"])}

    wrong, outputs = _run_version_step("v99.0.0", tmp_path)
    assert wrong.returncode == 1 and outputs == {}
    assert f"pyproject version {version}" in wrong.stdout


def test_the_workflow_pushes_the_image_the_chart_names() -> None:
    image = yaml.safe_load((CHART / "values.yaml").read_text())["image"]
    env = _workflow()["env"]
    assert env["IMAGE"] == f"{image['registry']}/{image['repository']}"
    assert env["CHART_DIR"] == str(CHART.relative_to(REPO))
    pushes = [
        step["with"]
        for step in _workflow()["jobs"]["image"]["steps"]
        if str(step.get("uses", "")).startswith("docker/build-push-action") and step["with"].get("push")
    ]
    [push] = pushes
    assert push["file"] == "Containerfile" and (REPO / push["file"]).is_file()
    assert set(push["platforms"].split(",")) >= {"linux/amd64", "linux/arm64"}
    assert "${{ env.IMAGE }}:${{ env.VERSION }}" in push["tags"].splitlines()


@pytest.mark.parametrize("job", ["python", "image", "chart", "release"])
def test_every_publishing_job_waits_for_the_version_check(job: str) -> None:
    needs = _workflow()["jobs"][job]["needs"]
    assert "version" in ([needs] if isinstance(needs, str) else needs)
