"""`scan --engine ray` against a real Ray cluster started on loopback by the test (tooling.md §8).

The head runs as `ray start --head --block` in a process of ours, with a fixed CPU count, its own
port and temp dir; its Ray workers are separate processes. Stopping that process (SIGTERM, by its
pid) stops everything it started. The reports must be byte-identical to a local run, also when a
worker is killed mid-task (Ray retries the task; a result counts only once returned).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.daemon_harness import free_port
from tests.test_scan import CLEAN, LOOP

ray = pytest.importorskip("ray")  # scripts/install-ray.sh installs it for the test command
RAY = Path(sys.executable).with_name("ray")


def _children(root: int) -> set[int]:
    """Every live descendant of `root` (from /proc), so the test only ever touches its own cluster."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            parents[int(entry)] = int(stat.rsplit(")", 1)[1].split()[1])
    found: set[int] = set()
    frontier = {root}
    while frontier:
        frontier = {pid for pid, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def _title(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0].decode(errors="replace")
    except OSError:
        return ""


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, int]]:
    temp = tmp_path_factory.mktemp("ray")
    port = free_port()
    log = (temp / "head.log").open("wb")
    head = subprocess.Popen(
        [
            str(RAY),
            "start",
            "--head",
            "--block",
            "--num-cpus",
            "2",
            "--node-ip-address",
            "127.0.0.1",
            "--port",
            str(port),
            "--include-dashboard",
            "false",
            "--disable-usage-stats",
            "--temp-dir",
            str(temp / "t"),
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    address = f"127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while b"block forever" not in (temp / "head.log").read_bytes():
            assert head.poll() is None, (temp / "head.log").read_text()
            assert time.monotonic() < deadline, "ray head did not start"
            time.sleep(0.5)
        yield address, head.pid
    finally:
        head.send_signal(signal.SIGTERM)  # `ray start --block` stops what it started (our `ray stop`)
        try:
            head.wait(timeout=60)
        except subprocess.TimeoutExpired:
            head.kill()
            head.wait()
        log.close()


def _dump(path: Path, rows: int) -> Path:
    with path.open("w") as fh:
        for i in range(rows):
            text = LOOP if i % 3 == 0 else f"{CLEAN} {i}"
            fh.write(json.dumps({"index": i, "response": text, "status": "truncated"}) + "\n")
    return path


def _scan(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "degeneration_exporter", "scan", *args],
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_ray_report_is_identical_to_a_local_run(cluster: tuple[str, int], tmp_path: Path) -> None:
    address, _ = cluster
    dump = _dump(tmp_path / "d.jsonl", 3000)
    local, remote = tmp_path / "local.json", tmp_path / "ray.json"
    flags = ["--chunk-bytes", "200000", "--only-hits"]
    assert _scan(str(dump), "-o", str(local), "--workers", "1", *flags).returncode == 0
    proc = _scan(str(dump), "-o", str(remote), "--engine", "ray", "--address", address, *flags)
    assert proc.returncode == 0, proc.stderr
    assert remote.read_bytes() == local.read_bytes()
    assert json.loads(remote.read_text())["num_samples"] == 3000


def test_a_worker_killed_mid_run_is_retried_and_nothing_counted_twice(
    cluster: tuple[str, int], tmp_path: Path
) -> None:
    address, head = cluster
    dump = _dump(tmp_path / "d.jsonl", 12000)
    local, remote = tmp_path / "local.json", tmp_path / "ray.json"
    flags = ["--chunk-bytes", "400000", "--only-hits"]
    assert _scan(str(dump), "-o", str(local), "--workers", "1", *flags).returncode == 0
    command = ["scan", str(dump), "-o", str(remote), "--engine", "ray", "--address", address, *flags]
    scan = subprocess.Popen(
        [sys.executable, "-m", "degeneration_exporter", *command],
        stderr=subprocess.PIPE,
        text=True,
    )
    killed = None
    deadline = time.monotonic() + 120
    while killed is None and scan.poll() is None and time.monotonic() < deadline:
        busy = [pid for pid in _children(head) if _title(pid).startswith("ray::scan_piece")]
        if busy:
            killed = busy[0]
            os.kill(killed, signal.SIGKILL)  # a worker of our own cluster, mid-task
        time.sleep(0.05)
    _, stderr = scan.communicate(timeout=600)
    assert killed is not None, "no task was seen running"
    assert scan.returncode == 0, stderr
    assert remote.read_bytes() == local.read_bytes()
    assert json.loads(remote.read_text())["num_samples"] == 12000
