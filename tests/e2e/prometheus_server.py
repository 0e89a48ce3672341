"""A real Prometheus server (Debian's /usr/bin/prometheus) on 127.0.0.1 for end-to-end tests.

Recipe from tooling.md §1: foreground process, its own config and storage dir, 1 s scrapes; the
first scrape shows up after about 6 s (the discovery manager's 5 s throttle), so callers poll.
On CI (CI=true) a missing binary fails the test instead of skipping it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.daemon_harness import free_port, wait_for


def prometheus_binary() -> str:
    """Path of the prometheus binary; fails on CI when absent, else skips."""
    debian = Path("/usr/bin/prometheus")
    found = shutil.which("prometheus") or (str(debian) if debian.exists() else None)
    if found is None:
        message = "prometheus not installed (apt-get install --no-install-recommends prometheus)"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(message)
        pytest.skip(message)
    return found


class PrometheusServer:
    """Scrapes `target` (host:port) every second; query with `query(expr, at=None)`; `flags` are
    extra command-line flags (e.g. `--enable-feature=exemplar-storage`)."""

    def __init__(self, workdir: Path, target: str, flags: Sequence[str] = ()) -> None:
        workdir.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        config = workdir / "prometheus.yml"
        config.write_text(
            "global: {scrape_interval: 1s, evaluation_interval: 1s}\n"
            "scrape_configs:\n"
            "  - job_name: degeneration\n"
            f"    static_configs: [{{targets: ['{target}']}}]\n"
        )
        self.log_file = workdir / "prometheus.log"
        self._log = self.log_file.open("wb")
        self.process = subprocess.Popen(
            [
                prometheus_binary(),
                f"--config.file={config}",
                f"--storage.tsdb.path={workdir / 'data'}",
                f"--web.listen-address=127.0.0.1:{self.port}",
                *flags,
            ],
            stdout=self._log,
            stderr=subprocess.STDOUT,
        )
        wait_for(self._ready, 30, f"prometheus ready (log: {self.log_file})")

    def _ready(self) -> bool:
        if self.process.poll() is not None:
            raise AssertionError(f"prometheus exited: {self.log_file.read_text()[-3000:]}")
        try:
            return httpx.get(f"http://127.0.0.1:{self.port}/-/ready", timeout=2).status_code == 200
        except httpx.HTTPError:
            return False

    def query(self, expr: str, at: float | None = None) -> list[dict[str, Any]]:
        """Instant query result vector (`[{metric: {...}, value: [ts, "v"]}]`)."""
        params: dict[str, str] = {"query": expr}
        if at is not None:
            params["time"] = f"{at:.3f}"
        response = httpx.get(f"http://127.0.0.1:{self.port}/api/v1/query", params=params, timeout=10)
        body = response.json()
        assert body["status"] == "success", body
        result: list[dict[str, Any]] = body["data"]["result"]
        return result

    def by_labels(self, expr: str, *labels: str, at: float | None = None) -> dict[tuple[str, ...], float]:
        """The query's vector as {(label values...): value}."""
        return {
            tuple(row["metric"].get(k, "") for k in labels): float(row["value"][1])
            for row in self.query(expr, at)
        }

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._log.close()
