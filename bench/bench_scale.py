"""One dump, three ways to scan it: one process, every local core, a Ray cluster (docs/scale.md).

Why: docs/scale.md says when to use `scan --workers` and when `scan --engine ray`; these are its
figures. The same file of short replies is scanned by the real command with `--workers 1`, with the
default workers (every core available) and with `--engine ray` against a cluster this script starts
on loopback (`ray start --head --block`, stopped by its pid afterwards). Wall clock includes start-up
(for Ray: connecting the driver, not starting the cluster). Reports are checked byte-identical.

Run: `.venv/bin/python bench/bench_scale.py [--replies 20000]` (needs the `ray` extra).
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_scan import scan_command, write_short


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _timed(command: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--replies", type=int, default=20_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        dump = tmp / "short.jsonl"
        mb = write_short(dump, args.replies)
        rows = ["| how | wall s | replies/s | vs one process |", "|---|---:|---:|---:|"]
        one = _timed(scan_command(dump, tmp / "one.json", "--workers", "1"))
        rows.append(f"| `--workers 1` | {one:.1f} | {args.replies / one:,.0f} | 1.00x |")
        cores = len(os.sched_getaffinity(0))
        every = _timed(scan_command(dump, tmp / "all.json"))
        rate = args.replies / every
        rows.append(f"| default (`--workers {cores}`) | {every:.1f} | {rate:,.0f} | {one / every:.2f}x |")
        port = _free_port()
        ray = Path(sys.executable).with_name("ray")
        log = (tmp / "head.log").open("wb")
        head_args = ["--head", "--block", "--num-cpus", str(cores), "--node-ip-address", "127.0.0.1"]
        head_args += ["--port", str(port), "--include-dashboard", "false", "--disable-usage-stats"]
        head = subprocess.Popen(
            [str(ray), "start", *head_args, "--temp-dir", str(tmp / "ray")],
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        try:
            while b"block forever" not in (tmp / "head.log").read_bytes():
                time.sleep(0.5)
            address = f"127.0.0.1:{port}"
            remote = _timed(scan_command(dump, tmp / "ray.json", "--engine", "ray", "--address", address))
            rate = args.replies / remote
            rows.append(
                f"| `--engine ray` ({cores}-CPU cluster) | {remote:.1f} | {rate:,.0f} | {one / remote:.2f}x |"
            )
        finally:
            head.send_signal(signal.SIGTERM)
            head.wait(timeout=60)
            log.close()
        same = (
            (tmp / "one.json").read_bytes()
            == (tmp / "all.json").read_bytes()
            == (tmp / "ray.json").read_bytes()
        )
        print(f"{args.replies:,} short replies, {mb:.0f} MB; reports byte-identical: {same}\n")
        print("\n".join(rows))


if __name__ == "__main__":
    main()
