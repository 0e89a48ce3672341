"""End to end: `scan` over a JSONL file of long texts vs the published Relax window scan alone.

Why: the default verdict must be better than any single published detector and cost no more than
one (issue: detection core, benchmark goals). This times the whole `scan` path in one process:
reading the file, decoding JSON, format detection, the default classifier (tandem_repeat +
template_leak + ceiling) and the JSON report, against Relax's window scan alone over the same texts
already in memory (the baseline does no I/O, so the ratio is conservative). Peak memory is
tracemalloc's peak for each path.

Run: `.venv/bin/python bench/bench_scan.py [--texts 8] [--chars 300000] [--repeat 5]`.
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import tempfile
import time
import tracemalloc
import zlib
from collections.abc import Callable
from pathlib import Path

from degeneration_exporter.classification.classify import Classifier
from degeneration_exporter.commands.scan import scan_file
from degeneration_exporter.formats.lines import LineParser
from degeneration_exporter.sinks.json_report import JsonReport

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data" / "gpt2-large-webtext-dev"


def published_relax_scan(
    text: str, window: int = 10_000, stride: int = 5_000, threshold: float = 10.0
) -> bool:
    """Relax PR #333 written plainly: every window sliced, encoded and compressed at level 9."""
    n = len(text)
    if n == 0:
        return False
    last = max(0, n - window)
    starts = list(range(0, last + 1, stride))
    if last % stride:
        starts.append(last)
    hit = False
    for s in starts:
        raw = text[s : s + window].encode("utf-8")
        if len(raw) / len(zlib.compress(raw, 9)) > threshold:
            hit = True
    return hit


def clean_texts(count: int, chars: int, seed: int = 7) -> list[str]:
    """Long clean texts: real human and sampled continuations shuffled together (no loops)."""
    pool: list[str] = []
    for method in ("human", "nucleus", "contrastive", "typical", "topk"):
        with gzip.open(SHARED / f"{method}.jsonl.gz", "rt", encoding="utf-8") as fh:
            pool += [json.loads(line)["text"] for line in fh]
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        parts: list[str] = []
        size = 0
        while size < chars:
            t = rng.choice(pool)
            parts.append(t)
            size += len(t) + 2
        out.append("\n\n".join(parts)[:chars])
    return out


def looping_texts(count: int, chars: int) -> list[str]:
    base = clean_texts(count, chars // 2, seed=11)
    unit = "The answer is not clear, so we need to check the numbers again. "
    return [b + unit * ((chars - len(b)) // len(unit) + 1) for b in base]


def best_of(repeat: int, fn: Callable[[], object]) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def peak_mib(fn: Callable[[], object]) -> float:
    tracemalloc.start()
    fn()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak / 2**20


def run_case(name: str, texts: list[str], repeat: int, out: list[str]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "dump.jsonl"
        with path.open("w", encoding="utf-8") as fh:
            for i, t in enumerate(texts):
                fh.write(json.dumps({"index": i, "response": t, "status": "completed"}) + "\n")
        mb = sum(len(t.encode("utf-8")) for t in texts) / 1e6
        classifier = Classifier()

        def scan() -> JsonReport:
            report = JsonReport(config={})
            scan_file(str(path), LineParser(None), classifier, report)
            return report

        def relax() -> list[bool]:
            return [published_relax_scan(t) for t in texts]

        flagged = scan().to_dict()["num_repetitive_samples"]
        relax_flags = sum(relax())
        t_scan = best_of(repeat, scan)
        t_relax = best_of(repeat, relax)
        m_scan, m_relax = peak_mib(scan), peak_mib(relax)
        per_text = max(len(t) for t in texts)
        out.append(
            f"| {name} | {len(texts)} x {per_text:,} | {mb / t_relax:.1f} | {mb / t_scan:.1f} | "
            f"{t_relax / t_scan:.2f}x | {m_relax:.2f} | {m_scan:.2f} | {relax_flags}/{len(texts)} | "
            f"{flagged}/{len(texts)} |"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--texts", type=int, default=8)
    parser.add_argument("--chars", type=int, default=300_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    rows = [
        "| input | texts x chars | Relax scan alone MB/s | scan end to end MB/s | speed ratio | "
        "Relax peak MiB | scan peak MiB | Relax flagged | default flagged |",
        "|---|---|---:|---:|---:|---:|---:|---|---|",
    ]
    run_case("long clean", clean_texts(args.texts, args.chars), args.repeat, rows)
    run_case("long looping", looping_texts(args.texts, args.chars), args.repeat, rows)
    print("\n".join(rows))
    print(f"\n(best of {args.repeat} runs each; one core; zlib {zlib.ZLIB_RUNTIME_VERSION})")


if __name__ == "__main__":
    main()
