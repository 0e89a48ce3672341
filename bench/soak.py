"""Daemon soak: the real daemon tails files written at a steady rate; CPU, RSS and scrape latency
are sampled over time (docs/benchmarks.md, "Daemon soak").

Goals: RSS flat and under 150 MB; a /metrics scrape under 50 ms; the daemon keeps up (every
written response counted by the end). The writer appends whole lines every 100 ms to a generation
log and starts a new rollout-step file every 30 s (as verl/Relax do), with a fixed mix of clean,
looping, leaking and ceiling-hit responses of 300-3,000 characters.

    .venv/bin/python bench/soak.py                      # 1,000 responses/s for 5 minutes
    .venv/bin/python bench/soak.py --duration 60 --out soak.json
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.daemon_harness import DaemonProcess, parse_samples, total
from tests.log_lines import chat_line, rollout_line

WORDS = (
    "the",
    "model",
    "checks",
    "each",
    "step",
    "of",
    "proof",
    "and",
    "then",
    "writes",
    "final",
    "answer",
    "with",
    "care",
    "while",
    "keeping",
    "track",
    "units",
    "signs",
    "order",
    "operations",
)
MIX = (("clean", 0.90), ("loop", 0.05), ("leak", 0.03), ("ceiling", 0.02))
_CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
_PAGE = os.sysconf("SC_PAGE_SIZE")


def _text(kind: str, rng: random.Random) -> tuple[str, str]:
    words = [rng.choice(WORDS) for _ in range(rng.randint(50, 500))]
    prose = " ".join(f"{w}{rng.randint(0, 999)}" if i % 7 == 0 else w for i, w in enumerate(words))
    if kind == "loop":
        return prose[:400] + " " + "Wait, let me verify this step again. " * rng.randint(20, 60), "length"
    if kind == "leak":
        return prose + "<|im_end|>", "stop"
    return prose, "length" if kind == "ceiling" else "stop"


def _pool(size: int, seed: int) -> list[tuple[bytes, bytes]]:
    """Pre-rendered (generation line, rollout line) pairs, so writing costs no generation time."""
    rng = random.Random(seed)
    kinds = [k for k, share in MIX for _ in range(round(share * size))]
    pool = []
    for i, kind in enumerate(kinds):
        text, finish = _text(kind, rng)
        status = "truncated" if finish == "length" else "completed"
        pool.append((chat_line(text, finish, "Qwen/Qwen3-8B", i), rollout_line(text, status, 0, i)))
    rng.shuffle(pool)
    return pool


class Writer(threading.Thread):
    """Appends `rate` responses per second: 80% to gen.jsonl, 20% to the current step file."""

    def __init__(self, logs: Path, rate: int, duration: float, pool: list[tuple[bytes, bytes]]) -> None:
        super().__init__(daemon=True)
        self.logs, self.rate, self.duration, self.pool = logs, rate, duration, pool
        self.written = 0
        self.behind_s = 0.0

    def run(self) -> None:
        start = time.monotonic()
        tick, i = 0, 0
        per_tick = self.rate / 10
        gen = (self.logs / "gen" / "gen.jsonl").open("ab")
        while (elapsed := time.monotonic() - start) < self.duration:
            step = int(elapsed // 30)
            due = int((tick + 1) * per_tick) - int(tick * per_tick)
            gen_lines: list[bytes] = []
            roll_lines: list[bytes] = []
            for _ in range(due):
                pair = self.pool[i % len(self.pool)]
                (roll_lines if i % 5 == 4 else gen_lines).append(pair[i % 5 == 4])
                i += 1
            gen.write(b"".join(gen_lines))
            gen.flush()
            with (self.logs / "rollout" / f"{step}.jsonl").open("ab") as rollout:
                rollout.write(b"".join(roll_lines))
            self.written += due
            tick += 1
            sleep = start + tick / 10 - time.monotonic()
            if sleep > 0:
                time.sleep(sleep)
            else:
                self.behind_s = max(self.behind_s, -sleep)
        gen.close()


def _proc_sample(pid: int) -> tuple[float, int]:
    """(CPU seconds user+system, RSS bytes) of `pid` from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    cpu = (int(fields[11]) + int(fields[12])) / _CLOCK_TICKS
    rss = int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * _PAGE
    return cpu, rss


Series = list[dict[str, float]]


def soak(duration: float, rate: int, interval: float, workdir: Path) -> tuple[dict[str, object], Series]:
    logs = workdir / "logs"
    (logs / "gen").mkdir(parents=True)
    (logs / "rollout").mkdir()
    config = workdir / "config.yaml"
    config.write_text(
        json.dumps(
            {
                "sources": [
                    {
                        "name": "gen",
                        "include": [f"{logs}/gen/*.jsonl"],
                        "format": "openai_chat",
                        "start_at": "beginning",
                        "positions_file": str(workdir / "pos-gen.json"),
                    },
                    {
                        "name": "grpo",
                        "include": [f"{logs}/rollout/*.jsonl"],
                        "format": "relax_rollout",
                        "start_at": "beginning",
                        "positions_file": str(workdir / "pos-grpo.json"),
                    },
                ]
            }
        )
    )
    daemon = DaemonProcess(["--config", str(config), "--log-level", "WARNING"], workdir / "daemon.log")
    writer = Writer(logs, rate, duration, _pool(2000, 7))
    series: Series = []
    # One client for the whole run (as Prometheus keeps its connection): httpx.get() would build a
    # client and an SSL context per call, ~20 ms that are the bench's, not the daemon's.
    client = httpx.Client(timeout=10)
    try:
        cpu0, _ = _proc_sample(daemon.process.pid)
        t0 = time.monotonic()
        writer.start()
        last_cpu, last_t = cpu0, t0
        while writer.is_alive():
            time.sleep(interval)
            started = time.perf_counter()
            text = client.get(f"{daemon.url}/metrics").text
            scrape_ms = (time.perf_counter() - started) * 1000
            cpu, rss = _proc_sample(daemon.process.pid)
            now = time.monotonic()
            counted = total(parse_samples(text), "degeneration_responses_total")
            series.append(
                {
                    "t": round(now - t0, 1),
                    "rss_mb": round(rss / 2**20, 1),
                    "cpu_pct": round(100 * (cpu - last_cpu) / (now - last_t), 1),
                    "scrape_ms": round(scrape_ms, 2),
                    "written": writer.written,
                    "counted": counted,
                    "scrape_bytes": len(text),
                }
            )
            last_cpu, last_t = cpu, now
        writer.join()
        caught_up_at = time.monotonic()
        final = daemon.wait_for_total("degeneration_responses_total", writer.written, timeout=120)
        catch_up_s = time.monotonic() - caught_up_at
        rejected = total(final, "degeneration_lines_rejected_total")
    finally:
        client.close()
        daemon.stop()
    rss_series = [s["rss_mb"] for s in series]
    scrapes = sorted(s["scrape_ms"] for s in series)
    steady = series[len(series) // 5 :]  # skip the first fifth (imports, first allocations)
    summary = {
        "duration_s": duration,
        "rate_per_s": rate,
        "written": writer.written,
        "rejected": rejected,
        "writer_max_behind_s": round(writer.behind_s, 3),
        "catch_up_after_writer_s": round(catch_up_s, 2),
        "rss_mb": {
            "first": rss_series[0],
            "after_first_fifth": steady[0]["rss_mb"],
            "last": rss_series[-1],
            "max": max(rss_series),
        },
        "cpu_pct_mean": round(statistics.fmean(s["cpu_pct"] for s in steady), 1),
        "scrape_ms": {
            "p50": scrapes[len(scrapes) // 2],
            "p99": scrapes[min(len(scrapes) - 1, int(len(scrapes) * 0.99))],
            "max": scrapes[-1],
        },
    }
    return summary, series


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=float, default=300.0, help="seconds of writing (default 300)")
    parser.add_argument("--rate", type=int, default=1000, help="responses per second (default 1000)")
    parser.add_argument("--interval", type=float, default=5.0, help="seconds between samples (default 5)")
    parser.add_argument("--out", type=Path, help="write the full result (with the time series) as JSON")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="degeneration-soak-") as tmp:
        summary, series = soak(args.duration, args.rate, args.interval, Path(tmp))
    if args.out:
        args.out.write_text(json.dumps({**summary, "series": series}, indent=1))
    print(json.dumps(summary, indent=1))
    print("t_s  rss_mb  cpu_pct  scrape_ms  written  counted")
    for s in series:
        print(
            f"{s['t']:>5} {s['rss_mb']:>7} {s['cpu_pct']:>8} {s['scrape_ms']:>10} {s['written']:>8} "
            f"{s['counted']:>8.0f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
