"""`scan` end to end against a Relax-style diagnose pass, and its peak memory as records grow.

Why: `scan` is what RL teams run over rollout dumps instead of Relax's offline diagnosis (issue
"`scan` at scale"). Two measurements, each in one run of this script:

- speed: the real command (`degeneration-exporter scan FILE -o report.json`, its defaults: every
  available core, the default verdict, start-up included, its bytecode cached as an installed
  package has it: `SCAN_ENV`) against a Relax-style diagnose pass in this process (read the
  JSONL, `json.loads` each line, the published window scan with intervals from
  `detectors/compression/_window_scan.py` at Relax's defaults, write a JSON report with every
  sample's intervals), on one file of short replies and one of long ones; the ratio is wall-clock
  Relax / scan. The CPU seconds of both (scan's summed over its process tree) say what the ratio
  would be on idle cores when the machine is shared: wall clock on a loaded 2-core machine is not.
- memory: peak resident memory of the whole `scan` process tree (parent and worker processes, summed,
  sampled from /proc every 20 ms) for files of N short replies; flat in N is the goal (<= 300 MB).
- overhead: CPU microseconds per record that `scan` spends outside the classifier, in this process
  (best of 3, `process_time`): the worker's side (`scan_piece` with the classifier's own results
  replayed in order, so reading, parsing, the pipeline, the aggregates and the listed samples remain;
  then pickling the piece's result as a worker process does) and the parent's (unpickling, merging,
  writing the JSON report), with the classifier's own cost on the same records for scale.

Short replies are WebText continuations (human and sampled, ~900 characters), one in seven looping.
Run: `.venv/bin/python bench/bench_scan.py [--short 60000] [--long 200] [--memory 60000,1000000]
[--memory-flags '--detectors char_run']`.
"""

from __future__ import annotations

import argparse
import gzip
import io
import json
import os
import pickle
import random
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from degeneration_exporter.batch import piece as piece_module
from degeneration_exporter.batch.piece import ScanJob, scan_piece
from degeneration_exporter.batch.plan import DEFAULT_CHUNK_BYTES, expand_inputs, plan_pieces
from degeneration_exporter.classification.classify import Classifier, ClassifierConfig
from degeneration_exporter.classification.result import Classification
from degeneration_exporter.commands import scan as scan_command_module
from degeneration_exporter.detectors.compression._window_scan import (
    DEFAULT_STRIDE,
    DEFAULT_THRESHOLD,
    DEFAULT_WINDOW_SIZE,
    scan_windows,
    window_bounds,
)
from degeneration_exporter.formats.lines import LineParser
from degeneration_exporter.record import Record
from degeneration_exporter.sinks.json_report import JsonReportWriter

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data" / "gpt2-large-webtext-dev"
LOOP_UNIT = "The answer is not clear, so we need to check the numbers again. "


def _pool() -> list[str]:
    texts: list[str] = []
    for method in ("human", "nucleus", "typical", "topk", "greedy"):
        with gzip.open(SHARED / f"{method}.jsonl.gz", "rt", encoding="utf-8") as fh:
            texts += [json.loads(line)["text"] for line in fh]
    return texts


def write_short(path: Path, count: int, seed: int = 7) -> float:
    """`count` short replies as Relax rollout records; returns the file's size in MB."""
    rng = random.Random(seed)
    pool = _pool()
    with path.open("w", encoding="utf-8") as fh:
        for i in range(count):
            text = rng.choice(pool)
            if i % 7 == 0:
                text = text[:300] + LOOP_UNIT * 10
            status = "truncated" if i % 7 == 0 else "completed"
            row = {"rollout_id": i // 1000, "sample_index": i, "response": text, "status": status}
            fh.write(json.dumps(row) + "\n")
    return path.stat().st_size / 1e6


def write_long(path: Path, count: int, chars: int = 100_000, seed: int = 11) -> float:
    """`count` long replies (clean WebText joined; every other one ends in a loop); size in MB."""
    rng = random.Random(seed)
    pool = _pool()
    with path.open("w", encoding="utf-8") as fh:
        for i in range(count):
            parts, size = [], 0
            while size < chars:
                parts.append(rng.choice(pool))
                size += len(parts[-1]) + 2
            text = "\n\n".join(parts)[:chars]
            if i % 2:
                text = text[: chars // 2] + LOOP_UNIT * (chars // 2 // len(LOOP_UNIT))
            row = {"rollout_id": 0, "sample_index": i, "response": text, "status": "completed"}
            fh.write(json.dumps(row) + "\n")
    return path.stat().st_size / 1e6


def relax_diagnose(path: Path, out: Path) -> int:
    """Relax's offline diagnosis, as its entry point does it: json per line, window scan, one report."""
    samples = []
    repetitive = 0
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            if not line.strip():
                continue
            record = json.loads(line)
            text = record.get("response", "")
            bounds = window_bounds(len(text), DEFAULT_WINDOW_SIZE, DEFAULT_STRIDE)
            report = scan_windows(text, bounds, DEFAULT_THRESHOLD, False, None).report(len(text)).to_dict()
            repetitive += report["has_repetition"]
            samples.append({"sample_index": record.get("sample_index"), **report})
    with out.open("w", encoding="utf-8") as fh:
        json.dump({"num_samples": len(samples), "num_repetitive_samples": repetitive, "samples": samples}, fh)
    return repetitive


def scan_command(path: Path, out: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "degeneration_exporter", "scan", str(path), "-o", str(out), "-q", *extra]


SCAN_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
"""The command's environment: bytecode cached, as an installed package has it (pip compiles it). With
PYTHONDONTWRITEBYTECODE=1 and a source tree never compiled, every start compiles the package's
modules again (about 0.13 s of a 0.3 s start on a 2-core VM), which no installed `scan` pays."""


def warm_up(tmp: Path) -> None:
    """One `scan` of a one-line file, so the package's bytecode is cached before anything is timed."""
    path = tmp / "warm.jsonl"
    path.write_text(json.dumps({"rollout_id": 0, "sample_index": 0, "response": "ok"}) + "\n")
    subprocess.run(scan_command(path, tmp / "warm.json"), env=SCAN_ENV, check=True, stdout=subprocess.DEVNULL)


def _tree_rss(root: int) -> int:
    """Resident bytes of `root` and all its descendants, from /proc."""
    parents: dict[int, int] = {}
    rss: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parents[int(entry)] = int(stat[1])
        rss[int(entry)] = int(stat[21]) * os.sysconf("SC_PAGE_SIZE")
    tree, frontier = {root}, {root}
    while frontier:
        frontier = {pid for pid, parent in parents.items() if parent in frontier} - tree
        tree |= frontier
    return sum(rss.get(pid, 0) for pid in tree)


def run_measured(command: list[str]) -> tuple[float, int, float]:
    """Wall-clock seconds, peak summed RSS and CPU seconds (user + system) of the process tree."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=SCAN_ENV)
    peak = 0
    while proc.poll() is None:
        peak = max(peak, _tree_rss(proc.pid))
        time.sleep(0.02)
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)  # the workers, joined by scan, count too
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    stderr = proc.stderr.read().decode() if proc.stderr else ""
    if proc.returncode != 0:
        raise SystemExit(f"scan failed ({proc.returncode}): {stderr}")
    return elapsed, peak, cpu


def speed(tmp: Path, name: str, path: Path, mb: float, rows: list[str]) -> None:
    t0, c0 = time.perf_counter(), time.process_time()
    relax_flags = relax_diagnose(path, tmp / "relax.json")
    t_relax, c_relax = time.perf_counter() - t0, time.process_time() - c0
    t_scan, peak, c_scan = run_measured(scan_command(path, tmp / "scan.json"))
    report = json.loads((tmp / "scan.json").read_text())
    rows.append(
        f"| {name} | {report['num_samples']:,} | {mb:.1f} | {t_relax:.2f} | {t_scan:.2f} | "
        f"{t_relax / t_scan:.2f}x | {c_relax:.2f} | {c_scan:.2f} | {peak / 2**20:.0f} | {relax_flags} | "
        f"{report['num_repetitive_samples']} |"
    )


class _Replay(Classifier):
    """The classifier's own results for one file, handed back in order: what `scan` costs besides them."""

    def __init__(self, config: ClassifierConfig, results: list[Classification]) -> None:
        super().__init__(config)
        self._results = results
        self._next = iter(results)

    def rewind(self) -> None:
        self._next = iter(self._results)

    def classify(self, record: Record) -> Classification:
        return next(self._next)


def _best(run: Callable[[], object], repeat: int = 3) -> float:
    """Least CPU seconds of `repeat` calls (the machine is shared: the least is the least disturbed)."""
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        run()
        best = min(best, time.process_time() - start)
    return best


def overhead(name: str, path: Path, rows: list[str]) -> None:
    """Per-record CPU outside the classifier, worker side and parent side (module docstring)."""
    job = ScanJob(ClassifierConfig())
    files, _ = expand_inputs([str(path)])
    pieces = plan_pieces(
        files,
        chunk_bytes=DEFAULT_CHUNK_BYTES,
        format_name=None,
        custom_fields=None,
        max_line_bytes=job.max_line_bytes,
    )
    parser = LineParser(None)
    records = [r for line in path.read_bytes().splitlines() for r in parser.parse(line)]
    classifier = Classifier(job.classifier)
    results: list[Classification] = []
    t_classify = _best(lambda: results.__setitem__(slice(None), [classifier.classify(r) for r in records]))
    replay = _Replay(job.classifier, results)
    piece_module._CLASSIFIERS[job.classifier.model_dump_json()] = replay  # scan_piece's per-process cache
    done: list[object] = []

    def worker() -> None:
        replay.rewind()
        done[:] = [scan_piece(job, p) for p in pieces]

    try:
        t_worker = _best(worker)
    finally:
        piece_module._CLASSIFIERS.clear()
    blobs: list[bytes] = []
    t_pickle = _best(lambda: blobs.__setitem__(slice(None), [pickle.dumps(r) for r in done]))

    def parent() -> None:
        merger = scan_command_module._Merger([JsonReportWriter(io.BytesIO())], [])
        for blob in blobs:
            merger.take(pickle.loads(blob))
        merger.finish({})

    t_parent = _best(parent)
    n = len(records)
    per = [t * 1e6 / n for t in (t_worker, t_pickle, t_parent, t_worker + t_pickle + t_parent, t_classify)]
    rows.append(
        f"| {name} | {n:,} | {sum(map(len, blobs)) / n:,.0f} | " + " | ".join(f"{v:,.1f}" for v in per) + " |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--short", type=int, default=60_000, help="short replies for the speed run")
    parser.add_argument("--long", type=int, default=200, help="long replies (100k chars) for the speed run")
    parser.add_argument("--memory", default="60000,1000000", help="record counts for the memory run")
    parser.add_argument(
        "--memory-flags",
        default="",
        help="extra scan flags for the memory run, e.g. '--detectors char_run' to make 1,000,000 replies "
        "quick "
        "(memory does not depend on the detectors' speed)",
    )
    parser.add_argument("--skip-speed", action="store_true")
    parser.add_argument("--skip-overhead", action="store_true", help="skip the per-record overhead run")
    args = parser.parse_args()
    cores = len(os.sched_getaffinity(0))
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        warm_up(tmp)
        short, long = tmp / "short.jsonl", tmp / "long.jsonl"
        if not (args.skip_speed and args.skip_overhead):
            short_mb, long_mb = write_short(short, args.short), write_long(long, args.long)
        if not args.skip_speed:
            rows = [
                "| input | replies | MB | Relax-style diagnose s | scan (defaults) s | speed ratio | "
                "Relax CPU s | scan CPU s (process tree) | scan peak MiB | Relax flagged | scan flagged |",
                "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
            ]
            speed(tmp, "short replies", short, short_mb, rows)
            speed(tmp, "long replies", long, long_mb, rows)
            print("\n".join(rows))
            print(f"\n({cores} cores available; scan wall clock includes start-up)\n")
        if not args.skip_overhead:  # on its own too: `--skip-speed` alone gives this table
            rows = [
                "| input | records | pickled B/record | worker µs | worker pickling µs | parent µs | "
                "outside the classifier µs | classifier µs |",
                "|---|---:|---:|---:|---:|---:|---:|---:|",
            ]
            overhead("short replies", short, rows)
            overhead("long replies", long, rows)
            print("\n".join(rows) + "\n")
        rows = [
            "| replies | MB | scan s | peak RSS MiB (process tree) | report MB |",
            "|---:|---:|---:|---:|---:|",
        ]
        for count in (int(c) for c in args.memory.split(",") if c):
            path = tmp / f"mem{count}.jsonl"
            mb = write_short(path, count)
            out = tmp / "mem.json"
            elapsed, peak, _cpu = run_measured(scan_command(path, out, *args.memory_flags.split()))
            report_mb = out.stat().st_size / 1e6
            rows.append(f"| {count:,} | {mb:.0f} | {elapsed:.0f} | {peak / 2**20:.0f} | {report_mb:.0f} |")
            path.unlink()
        print("\n".join(rows))


if __name__ == "__main__":
    main()
