"""The image, built from the repository's Containerfile and run with podman, as a user would run it.

The build differs from a user's only in its two build arguments: BASE is a Debian image made with
mmdebstrap (no registry image can be pulled here) and PIP_ARGS installs from a wheelhouse built on
the host with --no-index (the build cannot reach the package registry). The image is built once per
session and removed at the end; scripts/install-podman.sh caches the slow base image between runs.

The run is `podman run IMAGE run '/logs/*.jsonl'` with no state flag: the logs are mounted
read-only, the state volume at /var/lib/degeneration-exporter, the root filesystem read-only, the
host network on 127.0.0.1. /metrics must count what the package counts on the host, the process
must run as 65534, SIGTERM must stop it within 10 s with positions written into the volume, and
a second container on the same volume resumes from them. The chart's rendered DaemonSet pod runs
in the image too, init container first (tests/e2e/pod_in_podman.py).
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import shutil
import subprocess
import sys
import time
import tomllib
import uuid
from collections.abc import Iterator
from pathlib import Path

import degeneration_exporter
import httpx
import pytest
import yaml

from tests.daemon_harness import DaemonProcess, Samples, free_port, parse_samples, total, wait_for
from tests.e2e.helm_cli import TOOLS, Helm, require_tool, workload
from tests.e2e.pod_in_podman import run_init_containers, start_container
from tests.e2e.podman_cli import CACHE, CONTAINERFILE, Podman, containerfile_user

REPO = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())
PROJECT = PYPROJECT["project"]
STATE_DIR = "/var/lib/degeneration-exporter"
EXAMPLE = Path(degeneration_exporter.__file__).parent / "examples" / "generation_log.jsonl"
EXAMPLE_RESPONSES = 21  # examples/README.md: the generation log holds 21 responses
COMPARED = (
    "degeneration_responses_total",
    "degeneration_responses_flagged_total",
    "degeneration_detections_total",
    "degeneration_template_leak_tokens_total",
)


def _hadolint(containerfile: Path) -> subprocess.CompletedProcess[str]:
    binary = require_tool(REPO / ".venv" / "bin" / "hadolint", "scripts/install-actionlint.sh")
    command = [str(binary), "--no-color", str(containerfile)]
    return subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)


def test_the_containerfile_passes_hadolint() -> None:
    """docker buildx builds the release from it: the Dockerfile linter must find nothing."""
    result = _hadolint(CONTAINERFILE)
    assert result.returncode == 0, result.stdout + result.stderr


def test_hadolint_catches_a_root_user(tmp_path: Path) -> None:
    """The check above can fail: a final stage that ends as root is reported (DL3002)."""
    broken = tmp_path / "Containerfile"
    broken.write_text(CONTAINERFILE.read_text().replace("USER 65534:65534", "USER root"))
    result = _hadolint(broken)
    assert result.returncode == 1 and "DL3002" in result.stdout, result.stdout


@pytest.fixture(scope="module")
def podman() -> Podman:
    return Podman.from_setup()


# What `pip install '/src[otlp]'` needs besides the sources: the dependencies and the build backend.
REQUIREMENTS = [
    *PROJECT["dependencies"],
    *PROJECT["optional-dependencies"]["otlp"],
    *PYPROJECT["build-system"]["requires"],
]


def _wheelhouse_key() -> str:
    """What decides the wheelhouse: the requirements, and the Python and machine that build them."""
    recipe = [REQUIREMENTS, list(sys.version_info[:2]), platform.machine()]
    return hashlib.sha256(json.dumps(recipe).encode()).hexdigest()[:12]


def _wheelhouse(scratch: Path) -> Path:
    """REQUIREMENTS as wheels, built by the host's pip (which reaches the index; the build does not).

    The project itself is not among them: the build makes its wheel from the copied sources, as a
    user's build does. So the wheelhouse is cached beside the base image in CACHE/wheels-KEY and
    rebuilt only when a requirement changes; where CACHE is not writable it is built in `scratch`.
    """
    cached = CACHE / f"wheels-{_wheelhouse_key()}"
    if cached.is_dir():
        return cached
    writable = os.access(CACHE, os.W_OK)
    folder = CACHE / f".{cached.name}-{uuid.uuid4().hex[:8]}" if writable else scratch / "wheels"
    command = [sys.executable, "-m", "pip", "wheel", "-q", "--disable-pip-version-check", "-w", str(folder)]
    result = subprocess.run(
        [*command, *REQUIREMENTS], capture_output=True, text=True, timeout=300, check=False
    )
    if result.returncode != 0:
        shutil.rmtree(folder, ignore_errors=True)
    assert result.returncode == 0, result.stderr
    if not writable:
        return folder
    try:
        folder.rename(cached)
    except OSError:  # another session cached the same wheelhouse first
        shutil.rmtree(folder)
    for stale in CACHE.glob("wheels-*"):
        if stale != cached:
            shutil.rmtree(stale, ignore_errors=True)
    return cached


@pytest.fixture(scope="module")
def image(podman: Podman, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The image built from ./Containerfile with the mmdebstrap base and the host's wheels."""
    base = podman.base_image()
    base_python = podman.run(
        "run", "--rm", "--network", "none", base, "python3", "-c", "import sys; print(*sys.version_info[:2])"
    ).stdout.split()
    host_python = [str(part) for part in sys.version_info[:2]]
    assert base_python == host_python, (
        f"the wheelhouse is built by the host's Python {'.'.join(host_python)} but {base} has "
        f"{'.'.join(base_python)}: run the tests with a matching Python"
    )
    wheels = _wheelhouse(tmp_path_factory.mktemp("wheels"))
    tag = f"localhost/degeneration-exporter:test-{uuid.uuid4().hex[:8]}"
    podman.run(
        "build",
        "--network",
        "none",  # the build reaches no registry: everything comes from BASE and the wheelhouse
        "--layers=false",  # no intermediate images left behind
        "--build-arg",
        f"BASE={base}",
        "--build-arg",
        "PIP_ARGS=--no-index --find-links /wheels",
        "--volume",
        f"{wheels}:/wheels:ro",
        "--file",
        str(CONTAINERFILE),
        "--tag",
        tag,
        str(REPO),
        timeout=480,
    )
    try:
        yield tag
    finally:
        podman.run("rmi", "--force", tag, check=False)


@pytest.fixture
def state_volume(podman: Podman) -> Iterator[str]:
    name = f"degeneration-state-{uuid.uuid4().hex[:8]}"
    podman.run("volume", "create", name)
    try:
        yield name
    finally:
        podman.run("volume", "rm", "--force", name, check=False)


def test_image_config_follows_the_package(podman: Podman, image: str) -> None:
    config = podman.inspect("image", image)["Config"]
    assert config["User"] == containerfile_user() == "65534:65534"
    assert config["Entrypoint"] == ["degeneration-exporter"]
    assert "10142/tcp" in config["ExposedPorts"]
    assert STATE_DIR in config["Volumes"]
    labels = config["Labels"]
    assert labels["org.opencontainers.image.version"] == PROJECT["version"]
    license_ = PROJECT["license"]  # a table ({text = ...}) or, in newer metadata, an SPDX string
    assert labels["org.opencontainers.image.licenses"] == (
        license_ if isinstance(license_, str) else license_["text"]
    )
    assert labels["org.opencontainers.image.source"].startswith("https://")


def test_the_image_env_puts_state_in_the_volume(podman: Podman, image: str) -> None:
    """No flag and no config: the effective state.directory is the volume (the image's XDG_STATE_HOME)."""
    result = podman.run("run", "--rm", "--read-only", image, "check-config", "--print-effective")
    assert yaml.safe_load(result.stdout)["state"]["directory"] == STATE_DIR
    # a config's own state.directory still wins over the image's default
    override = podman.run(
        "run",
        "--rm",
        "--env",
        "DEGENERATION_STATE__DIRECTORY=/elsewhere",
        image,
        "check-config",
        "--print-effective",
    )
    assert yaml.safe_load(override.stdout)["state"]["directory"] == "/elsewhere"


def test_the_final_stage_holds_the_venv_and_nothing_of_the_build(podman: Podman, image: str) -> None:
    probe = (
        "import os, degeneration_exporter as d; "
        "print(d.__file__); print(*[p for p in ('/src', '/wheels', '/state') if os.path.exists(p)])"
    )
    lines = podman.run("run", "--rm", "--entrypoint", "python3", image, "-c", probe).stdout.splitlines()
    assert lines[0].startswith("/opt/degeneration-exporter/lib/")
    assert lines[1:] == [""], f"build leftovers in the final image: {lines[1:]}"


def test_the_default_command_prints_help(podman: Podman, image: str) -> None:
    result = podman.run("run", "--rm", "--read-only", image)
    assert "usage: degeneration-exporter" in result.stdout


def _scrape(url: str) -> Samples | None:
    try:
        response = httpx.get(f"{url}/metrics", timeout=5)
    except httpx.HTTPError:
        return None
    return parse_samples(response.text) if response.status_code == 200 else None


def _series(samples: Samples) -> Samples:
    return {key: value for key, value in samples.items() if key[0] in COMPARED}


def _wait_for_responses(url: str, expected: float) -> Samples:
    def reached() -> Samples | None:
        samples = _scrape(url)
        if samples is None:
            return None
        value = total(samples, "degeneration_responses_total")
        assert value <= expected, f"degeneration_responses_total = {value} > {expected}"
        return samples if value == expected else None

    return wait_for(reached, 60, f"degeneration_responses_total == {expected} at {url}")


def _host_counts(logs: Path, tmp_path: Path) -> Samples:
    """What the package counts over the same logs when run on the host (positions never written)."""
    with DaemonProcess([f"{logs}/*.jsonl", "--dry-run"], tmp_path / "host-daemon.log") as daemon:
        samples = daemon.wait_for_total("degeneration_responses_total", EXAMPLE_RESPONSES)
        assert daemon.stop() == 0
    return _series(samples)


def _logs_dir(tmp_path: Path) -> Path:
    """A log folder the image's user (65534) can read, as world-readable logs are on a node."""
    logs = tmp_path / "logs"
    logs.mkdir()
    target = logs / "generation_log.jsonl"
    target.write_bytes(EXAMPLE.read_bytes())
    logs.chmod(0o755)
    target.chmod(0o644)
    return logs


def _start(podman: Podman, image: str, name: str, volumes: list[str], *args: str) -> str:
    """`podman run IMAGE ARGS --listen 127.0.0.1:PORT` detached: read-only root, host network on loopback."""
    port = free_port()
    mounts = [arg for volume in volumes for arg in ("--volume", volume)]
    podman.run(
        "run", "--detach", "--name", name, "--network", "host", "--read-only", *mounts, image,
        *args, "--listen", f"127.0.0.1:{port}",
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    wait_for(lambda: _scrape(url) is not None or _exited(podman, name), 60, f"{name} serving {url}")
    assert not _exited(podman, name), podman.run("logs", name, check=False).stderr
    return url


def _start_tailing(podman: Podman, image: str, name: str, logs: Path, volume: str) -> str:
    """`podman run IMAGE run '/logs/*.jsonl'`: no state flag; logs read-only, the state volume mounted."""
    return _start(podman, image, name, [f"{logs}:/logs:ro", f"{volume}:{STATE_DIR}"], "run", "/logs/*.jsonl")


def _exited(podman: Podman, name: str) -> bool:
    status: str = podman.inspect("container", name)["State"]["Status"]
    return status == "exited"


def _stop_with_sigterm(podman: Podman, name: str) -> float:
    """SIGTERM to the container's main process; the seconds until it exited with status 0."""
    started = time.monotonic()
    podman.run("kill", "--signal", "TERM", name)
    podman.run("wait", name, timeout=30)
    elapsed = time.monotonic() - started
    state = podman.inspect("container", name)["State"]
    assert state["ExitCode"] == 0, podman.run("logs", name, check=False).stderr
    return elapsed


def _ids_of(pid: int) -> tuple[list[str], list[str]]:
    status = Path(f"/proc/{pid}/status").read_text().splitlines()
    [uids] = [line.split()[1:] for line in status if line.startswith("Uid:")]
    [gids] = [line.split()[1:] for line in status if line.startswith("Gid:")]
    return uids, gids


def _append_lines(target: Path, count: int) -> None:
    lines = EXAMPLE.read_bytes().splitlines(keepends=True)[:count]
    with target.open("ab") as handle:
        handle.write(b"".join(lines))


@pytest.fixture
def container_names(podman: Podman) -> Iterator[list[str]]:
    """Names of the containers a test starts; all are removed at the end, running or not, with the
    anonymous volume the image's VOLUME gives a container that mounts nothing there."""
    names: list[str] = []
    yield names
    for name in names:
        podman.run("rm", "--force", "--volumes", "--time", "0", name, check=False)  # and its anonymous volume


def test_the_image_tails_counts_and_stops_cleanly_with_positions_in_the_volume(
    podman: Podman, image: str, state_volume: str, container_names: list[str], tmp_path: Path
) -> None:
    logs = _logs_dir(tmp_path)
    log_file = logs / "generation_log.jsonl"
    expected = _host_counts(logs, tmp_path)

    first = f"degeneration-e2e-{uuid.uuid4().hex[:8]}"
    container_names.append(first)
    url = _start_tailing(podman, image, first, logs, state_volume)
    assert _series(_wait_for_responses(url, EXAMPLE_RESPONSES)) == expected

    info = podman.inspect("container", first)
    assert info["HostConfig"]["ReadonlyRootfs"] is True
    uids, gids = _ids_of(int(info["State"]["Pid"]))
    assert set(uids) == {"65534"} and set(gids) == {"65534"}, (uids, gids)
    write = podman.run("exec", first, "python3", "-c", "open('/opt/probe', 'w')", check=False)
    assert write.returncode != 0 and "Read-only file system" in write.stderr, write.stderr

    _append_lines(log_file, 5)  # the host writes; the container tails through its read-only mount
    _wait_for_responses(url, EXAMPLE_RESPONSES + 5)

    assert _stop_with_sigterm(podman, first) < 10
    mountpoint = Path(podman.inspect("volume", state_volume)["Mountpoint"])
    positions = json.loads((mountpoint / "positions-files.json").read_text())
    [entry] = positions["files"]
    assert entry["path"] == "/logs/generation_log.jsonl"
    assert entry["offset"] == log_file.stat().st_size
    assert os.stat(mountpoint / "positions-files.json").st_uid == 65534

    # A new container on the same volume resumes: only lines written since are counted.
    _append_lines(log_file, 3)
    second = f"degeneration-e2e-{uuid.uuid4().hex[:8]}"
    container_names.append(second)
    url = _start_tailing(podman, image, second, logs, state_volume)

    def caught_up() -> Samples | None:
        samples = _scrape(url)
        if samples is None or total(samples, "degeneration_lines_read_total") == 0:
            return None
        lag = total(samples, "degeneration_source_lag_bytes")
        queued = total(samples, "degeneration_queue_depth")
        return samples if lag == 0 and queued == 0 else None

    wait_for(caught_up, 60, f"{second} caught up with {log_file}")
    samples = _wait_for_responses(url, 3)
    assert total(samples, "degeneration_lines_read_total") == 3
    assert _stop_with_sigterm(podman, second) < 10


def test_run_example_works_on_a_read_only_root(
    podman: Podman, image: str, container_names: list[str]
) -> None:
    """The quick start in a container: the bundled examples read whole, then replayed live (their copies
    and positions in a temp dir, podman's /tmp tmpfs), so the count keeps growing past the files'."""
    name = f"degeneration-example-{uuid.uuid4().hex[:8]}"
    container_names.append(name)
    url = _start(podman, image, name, [], "run", "--example")
    whole = EXAMPLE_RESPONSES + 16  # examples/README.md: 21 + 16 rollout responses

    def replayed() -> Samples | None:
        samples = _scrape(url)
        return (
            samples
            if samples is not None and total(samples, "degeneration_responses_total") > whole
            else None
        )

    wait_for(replayed, 60, f"degeneration_responses_total > {whole} (live replay) at {url}")
    assert _stop_with_sigterm(podman, name) < 10


def test_the_rendered_daemonset_pod_runs_in_the_image(
    podman: Podman, image: str, container_names: list[str], tmp_path: Path
) -> None:
    """`helm template` output, run as a kubelet would: the chown init container, then the daemon.

    Only paths and the listen address are set through values (as a user would); everything else,
    user, read-only root, capabilities, mounts, env, command and probe, is the chart's default.
    """
    logs = _logs_dir(tmp_path)
    node_positions = tmp_path / "node" / "degeneration-exporter"
    port = free_port()
    overrides = tmp_path / "values.yaml"
    overrides.write_text(
        yaml.safe_dump(
            {
                "config": {
                    "sources": [{"name": "vllm", "include": [f"{logs}/*.jsonl"], "start_at": "beginning"}],
                    "sinks": {"prometheus": {"listen": f"127.0.0.1:{port}"}},
                },
                "hostPathMounts": [{"name": "logs", "hostPath": str(logs)}],
                "positions": {"hostPath": {"path": str(node_positions)}},
            }
        )
    )
    objects = Helm(require_tool(TOOLS / "bin" / "helm"), tmp_path / "helm").template([overrides])
    daemonset = workload(objects)
    assert daemonset["kind"] == "DaemonSet"
    pod = daemonset["spec"]["template"]["spec"]

    run_init_containers(podman, image, pod, objects, tmp_path / "pod")
    owner = node_positions.stat()
    assert f"{owner.st_uid}:{owner.st_gid}" == containerfile_user()

    [container] = pod["containers"]
    name = f"degeneration-pod-{uuid.uuid4().hex[:8]}"
    container_names.append(name)
    start_container(podman, image, name, container, pod, objects, tmp_path / "pod")
    url = f"http://127.0.0.1:{port}"
    [container_port] = container["ports"]
    probe = container["livenessProbe"]["httpGet"]
    assert probe["port"] == container_port["name"] and container_port["containerPort"] == port

    def probe_ok() -> bool:
        assert not _exited(podman, name), podman.run("logs", name, check=False).stderr
        try:
            return httpx.get(f"{url}{probe['path']}", timeout=2).status_code == 200
        except httpx.HTTPError:
            return False

    wait_for(probe_ok, 60, f"{name} answering its liveness probe")
    _wait_for_responses(url, EXAMPLE_RESPONSES)
    uids, _ = _ids_of(int(podman.inspect("container", name)["State"]["Pid"]))
    assert set(uids) == {str(pod["securityContext"]["runAsUser"])}

    assert _stop_with_sigterm(podman, name) < min(10, pod["terminationGracePeriodSeconds"])
    positions = node_positions / "positions-vllm.json"
    [entry] = json.loads(positions.read_text())["files"]
    assert entry["offset"] == (logs / "generation_log.jsonl").stat().st_size
    assert positions.stat().st_uid == pod["securityContext"]["runAsUser"]
