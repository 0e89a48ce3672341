"""Run the real daemon (`python -m degeneration_exporter run ...`) as a subprocess and scrape it.

Shared by tests/test_daemon.py, tests/e2e/ and bench/soak.py: free ports on 127.0.0.1, start and
wait for /healthz, parse /metrics with prometheus_client's own parser, stop with a signal.
"""

from __future__ import annotations

import os
import signal
import socket
import ssl
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TypeVar

import httpx
import orjson
from prometheus_client.parser import text_string_to_metric_families

T = TypeVar("T")

Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


def free_port() -> int:
    """A port nobody listens on right now (bound and released on 127.0.0.1)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_for(check: Callable[[], T | None], timeout: float, what: str, interval: float = 0.1) -> T:
    """Poll `check` until it returns something other than None/False; fail after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        result = check()
        if result is not None and result is not False:
            return result
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(interval)


def one_source_config(folder: Path, source: Mapping[str, object], **top_level: object) -> Path:
    """`folder/config.yaml` with the one source `source` and the config's other top-level keys."""
    config = folder / "config.yaml"
    config.write_bytes(orjson.dumps({"sources": [dict(source)], **top_level}))
    return config


def chunks_config(folder: Path, source: Mapping[str, object], **top_level: object) -> Path:
    """`folder/config.yaml`: one source `chunks` tailing `folder/*.jsonl` as `openai_chunk` with
    quick polls, plus `source`'s options and the config's other top-level keys (sinks)."""
    chunks = {
        "name": "chunks",
        "include": [f"{folder}/*.jsonl"],
        "format": "openai_chunk",
        "positions_file": str(folder / "p.json"),
        "poll_interval": "PT0.1S",
        "glob_interval": "PT0.2S",
        **source,
    }
    return one_source_config(folder, chunks, **top_level)


def parse_samples(text: str) -> Samples:
    """Exposition text -> {(sample name, labels): value}."""
    out: Samples = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            out[(sample.name, frozenset(sample.labels.items()))] = sample.value
    return out


def total(samples: Samples, name: str, **labels: str) -> float:
    """Sum of `name` over series whose labels include `labels`."""
    want = set(labels.items())
    return sum(v for (n, lbls), v in samples.items() if n == name and want <= lbls)


class DaemonProcess:
    """`degeneration-exporter run ARGS --listen 127.0.0.1:PORT` in a subprocess, stderr to a file.

    Use as a context manager so a failing test still stops it; `stop()` is idempotent.
    """

    def __init__(
        self,
        args: Sequence[str],
        log_file: Path,
        port: int | None = None,
        env: Mapping[str, str] | None = None,
        *,
        stdin_pipe: bool = False,
        tls: ssl.SSLContext | None = None,
        auth: tuple[str, str] | None = None,
        command_prefix: Sequence[str] = (),
    ) -> None:
        """`command_prefix`: run the daemon under it, e.g. `prlimit --nofile=512:512 --`."""
        self.port = port or free_port()
        self.scheme = "https" if tls is not None else "http"
        self.client = httpx.Client(verify=tls if tls is not None else True, auth=auth, timeout=10)
        self.log_file = log_file
        command = [
            *command_prefix,
            sys.executable,
            "-m",
            "degeneration_exporter",
            "run",
            *args,
            "--listen",
            f"127.0.0.1:{self.port}",
        ]
        full_env = {k: v for k, v in os.environ.items() if not k.startswith("DEGENERATION_")}
        full_env.update(env or {})
        self._log = log_file.open("ab")
        self.process = subprocess.Popen(
            command,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            env=full_env,
            stdin=subprocess.PIPE if stdin_pipe else subprocess.DEVNULL,
        )
        try:
            wait_for(self._healthy, 30, f"daemon /healthz on port {self.port} (log: {log_file})")
        except BaseException:
            self.stop(signal.SIGKILL)
            raise

    def __enter__(self) -> DaemonProcess:
        return self

    def __exit__(self, *_exc: object) -> None:
        """Never leave a daemon behind, whatever the test did."""
        self.stop()

    @property
    def url(self) -> str:
        return f"{self.scheme}://127.0.0.1:{self.port}"

    def _healthy(self) -> bool:
        if self.process.poll() is not None:
            raise AssertionError(f"daemon exited with {self.process.returncode}: {self.log_text()}")
        try:
            return self.client.get(f"{self.url}/healthz", timeout=2).status_code == 200
        except httpx.HTTPError:
            return False

    def scrape(self) -> Samples:
        response = self.client.get(f"{self.url}/metrics")
        response.raise_for_status()
        return parse_samples(response.text)

    def wait_for_total(self, name: str, expected: float, timeout: float = 30, **labels: str) -> Samples:
        """Scrape until the summed series reaches `expected` exactly; fail if it overshoots."""

        def reached() -> Samples | None:
            samples = self.scrape()
            value = total(samples, name, **labels)
            assert value <= expected, f"{name}{labels} = {value} > {expected}"
            return samples if value == expected else None

        return wait_for(reached, timeout, f"{name}{labels} == {expected}")

    def stop(self, sig: signal.Signals = signal.SIGTERM, timeout: float = 30) -> int:
        """Send `sig`, wait for exit, return the exit code."""
        if self.process.poll() is None:
            self.process.send_signal(sig)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
                raise AssertionError(f"daemon did not stop on {sig.name}: {self.log_text()}") from None
        if not self._log.closed:
            self._log.close()
        self.client.close()
        return self.process.returncode

    def log_text(self) -> str:
        if not self._log.closed:
            self._log.flush()
        return self.log_file.read_text(errors="replace")[-4000:]
