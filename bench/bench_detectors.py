"""Detector throughput (MB/s, one core) and peak memory, each next to a plain baseline in the same process.

Why: speed claims live here as ratios against a baseline measured in the same run, never as timing
asserts in tests (style.md §10). Each row names a detector form, an input and the straightforward
implementation it is compared with; verdicts are checked equal before anything is timed.
A second table gives the incremental forms' cost per delta after 10 kB and after 500 kB already
seen: amortised O(delta) means the two are about the same.

Run: `.venv/bin/python bench/bench_detectors.py [--size 500000] [--repeat 5]`; copy the tables into
docs/benchmarks.md. Rows are data (ROWS, INCREMENTAL): add a detector by adding rows.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import time
import tracemalloc
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from degeneration_exporter.detectors.base import DetectorInput, IncrementalDetector
from degeneration_exporter.detectors.compression.detector import (
    Compression,
    CompressionParams,
    detect_compression,
)
from degeneration_exporter.detectors.ngram_ratio import (
    NgramRatio,
    NgramRatioParams,
    detect_ngram_ratio,
    text_words,
)
from degeneration_exporter.detectors.osaurus.char_run import CharRun, CharRunParams, detect_char_run
from degeneration_exporter.detectors.osaurus.stream_ngram import StreamNgramParams, detect_stream_ngram
from degeneration_exporter.detectors.tail_period import (
    TailPeriod,
    TailPeriodParams,
    detect_tail_period,
)
from degeneration_exporter.detectors.template_leak import (
    TemplateLeak,
    TemplateLeakParams,
    detect_template_leak,
)
from osaurus_baselines import published_batch, published_char_walk, published_leak_scan, streaming_table

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.detectors.tail_period_reference import naive_repeats_at_tail

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "gpt2-large-webtext-dev"
DELTA_CHARS = 16  # about four tokens of English per streamed delta


# --- inputs -----------------------------------------------------------------------------------------


def clean_text(size: int, methods: tuple[str, ...] = ("human", "nucleus")) -> str:
    """Real prose: WebText human references and GPT-2 samples, concatenated and repeated up to `size`."""
    parts: list[str] = []
    for method in methods:
        path = DATA / f"{method}.jsonl.gz"
        if path.is_file():
            with gzip.open(path, "rt", encoding="utf-8") as fh:
                parts.extend(json.loads(line)["text"] for line in fh)
    text = "\n\n".join(parts)
    while len(text) < size:
        text += text
    return text[:size]


def _loop(unit: str, size: int) -> str:
    return (unit * (size // len(unit) + 1))[:size]


def sentence_loop(size: int) -> str:
    """A whole-sentence loop of period 36 (5000 mod 36 = 32: every ninth Relax window repeats exactly)."""
    return _loop("repeat this sentence over and over. ", size)


def row_loop(size: int) -> str:
    """A JSON-row loop of period 42 (5000 mod 42 = 2: 21 distinct windows, more than the memo holds)."""
    return _loop('{"s": "Alice", "p": "knows", "o": "Bob"},\n', size)


def numbered_rows(size: int) -> str:
    """Near-loop: JSON rows differing only by an id (utopia's known gap, and its costliest input)."""
    rows = "".join(f'{{"id": {i}, "name": "same value here"}},\n' for i in range(size // 30))
    return rows[:size]


INPUTS: dict[str, Callable[[int], str]] = {
    "clean": clean_text,
    "loop36": sentence_loop,
    "loop42": row_loop,
    "rows": numbered_rows,
}


# --- baselines: the published algorithms written plainly --------------------------------------------


def published_relax_scan(
    text: str, window: int = 10_000, stride: int = 5_000, threshold: float = 10.0
) -> tuple[list[tuple[int, int]], float | None]:
    """Relax PR #333 as specified: every window sliced, encoded and compressed independently."""
    n = len(text)
    starts: list[int] = []
    if n:
        last = max(0, n - window)
        starts = list(range(0, last + 1, stride))
        if last % stride:
            starts.append(last)
    hits: list[tuple[int, int]] = []
    best: float | None = None
    for s in starts:
        raw = text[s : s + window].encode("utf-8")
        ratio = len(raw) / len(zlib.compress(raw, 9))
        best = ratio if best is None else max(best, ratio)
        if ratio > threshold:
            hits.append((s, min(s + window, n)))
    return hits, best


def plain_ngram_ratio(text: str, n: int = 4) -> float:
    """Trinity's ratio with a list of n-gram tuples built in a Python loop."""
    words = text_words(text)
    grams = [tuple(words[i : i + n]) for i in range(len(words) - n + 1)]
    return 1.0 - len(set(grams)) / len(grams) if grams else 0.0


def naive_stream(text: str, cadence: int = 256) -> int | None:
    """A plain streaming guard: keep every byte, run the literal predicate at the upstream cadence."""
    buf = bytearray()
    last = 0
    for i in range(0, len(text), DELTA_CHARS):
        buf += text[i : i + DELTA_CHARS].encode("utf-8")
        if len(buf) - last >= cadence:
            last = len(buf)
            span = naive_repeats_at_tail(bytes(buf))
            if span is not None:
                return span
    return None


# --- our forms --------------------------------------------------------------------------------------


def feed_all(live: IncrementalDetector, text: str) -> Any:
    """Feed `text` in DELTA_CHARS deltas; the first firing (if any) and the final finding."""
    first = None
    for i in range(0, len(text), DELTA_CHARS):
        found = live.feed(text[i : i + DELTA_CHARS])
        if found is not None and first is None:
            first = found
    return first, live.finish()


def _relax_verdict(finding: Any) -> tuple[list[tuple[int, int]], float | None]:
    return [tuple(iv) for iv in finding.details["hit_intervals"]], finding.details["max_compression_ratio"]


def _first_span(found: Any) -> int | None:
    first, final = found
    hit = first if first is not None else final
    return hit.details["min_span_bytes"] if hit.flagged else None


@dataclass(frozen=True)
class Row:
    """One comparison: our form and a baseline on the same input, with how to compare their verdicts."""

    detector: str
    form: str
    inputs: tuple[str, ...]
    ours: Callable[[str], Any]
    baseline_name: str
    baseline: Callable[[str], Any]
    same: Callable[[Any, Any], bool]


ROWS: list[Row] = [
    Row(
        "compression",
        "batch (Relax)",
        ("clean", "loop36", "loop42"),
        lambda t: detect_compression(DetectorInput(t), CompressionParams()),
        "published window scan",
        published_relax_scan,
        lambda ours, base: _relax_verdict(ours) == base,
    ),
    Row(
        "compression",
        "incremental, 16-char deltas",
        ("clean", "loop36", "loop42"),
        lambda t: feed_all(Compression(CompressionParams()), t),
        "published window scan",
        published_relax_scan,
        lambda ours, base: _relax_verdict(ours[1]) == base,
    ),
    Row(
        "ngram_ratio",
        "batch (words)",
        ("clean", "loop36", "loop42"),
        lambda t: detect_ngram_ratio(DetectorInput(t), NgramRatioParams()),
        "n-gram list in a Python loop",
        plain_ngram_ratio,
        lambda ours, base: ours.details["generated_tokens"] < 32 or ours.score == base,
    ),
    Row(
        "ngram_ratio",
        "incremental, 16-char deltas",
        ("clean", "loop36", "loop42"),
        lambda t: feed_all(NgramRatio(NgramRatioParams()), t),
        "n-gram list in a Python loop",
        plain_ngram_ratio,
        lambda ours, base: ours[1].score == base,
    ),
    Row(
        "tail_period",
        "batch (final tail)",
        ("clean", "loop42", "rows"),
        lambda t: detect_tail_period(DetectorInput(t), TailPeriodParams()),
        "literal predicate",
        lambda t: naive_repeats_at_tail(t.encode("utf-8")),
        lambda ours, base: ours.details["min_span_bytes"] == base,
    ),
    Row(
        "tail_period",
        "stream, 256-byte cadence",
        ("clean", "rows"),
        lambda t: feed_all(TailPeriod(TailPeriodParams()), t),
        "literal predicate at the cadence",
        naive_stream,
        lambda ours, base: _first_span(ours) == base,
    ),
    Row(
        "tail_period",
        "stream, every delta",
        ("clean", "rows"),
        lambda t: feed_all(TailPeriod(TailPeriodParams(check="every_delta")), t),
        "literal predicate at the cadence",
        naive_stream,
        lambda ours, base: True,
    ),  # a different cadence: only the cost is compared
    Row(
        "stream_ngram",
        "batch (hardened, one delta)",
        ("clean", "loop36"),
        lambda t: detect_stream_ngram(DetectorInput(t), StreamNgramParams()),
        "published re-split scan",
        published_batch,
        lambda ours, base: ours.evidence == base,
    ),
    Row(
        "char_run",
        "batch (stream_v1, regex)",
        ("clean", "rows"),
        lambda t: detect_char_run(DetectorInput(t), CharRunParams(profile="stream_v1")),
        "per-character walk",
        published_char_walk,
        lambda ours, base: (ours.onset if ours.flagged else None) == base,
    ),
    Row(
        "template_leak",
        "batch (default families)",
        ("clean", "rows"),
        lambda t: detect_template_leak(DetectorInput(t), TemplateLeakParams()),
        "str.count per token",
        lambda t: published_leak_scan(t, TemplateLeakParams().tokens()),
        lambda ours, base: ours.leaks == base,
    ),
]

INCREMENTAL: dict[str, Callable[[], IncrementalDetector]] = {
    "compression": lambda: Compression(CompressionParams()),
    "ngram_ratio": lambda: NgramRatio(NgramRatioParams()),
    "tail_period (cadence)": lambda: TailPeriod(TailPeriodParams()),
    "tail_period (every delta)": lambda: TailPeriod(TailPeriodParams(check="every_delta")),
    "char_run (stream_hardened)": lambda: CharRun(CharRunParams()),
    "template_leak": lambda: TemplateLeak(TemplateLeakParams()),
}


# --- measurement ------------------------------------------------------------------------------------


def best_seconds(fns: tuple[Callable[[str], Any], ...], text: str, repeat: int) -> list[tuple[float, Any]]:
    """Best time of each function, runs interleaved so a busy machine slows all of them alike."""
    best = [float("inf")] * len(fns)
    results: list[Any] = [None] * len(fns)
    for _ in range(repeat):
        for i, fn in enumerate(fns):
            start = time.perf_counter()
            results[i] = fn(text)
            best[i] = min(best[i], time.perf_counter() - start)
    return list(zip(best, results, strict=True))


def peak_bytes(fn: Callable[[str], Any], text: str) -> int:
    tracemalloc.start()
    try:
        fn(text)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def per_delta_us(
    factory: Callable[[], IncrementalDetector],
    seen: str,
    probe: str,
    clock: Callable[[], float] = time.perf_counter,
) -> float:
    """Mean cost of one DELTA_CHARS feed of `probe`, after `seen` was fed (same probe at every depth);
    `clock`: `time.process_time` for CPU time on a shared machine."""
    live = factory()
    for i in range(0, len(seen), 4_096):
        live.feed(seen[i : i + 4_096])
    deltas = [probe[i : i + DELTA_CHARS] for i in range(0, len(probe), DELTA_CHARS)]
    start = clock()
    for d in deltas:
        live.feed(d)
    return (clock() - start) / len(deltas) * 1e6


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--size", type=int, default=500_000, help="input size in characters")
    ap.add_argument("--repeat", type=int, default=5, help="timing runs per cell (best is kept)")
    args = ap.parse_args()
    texts = {name: make(args.size) for name, make in INPUTS.items()}

    print(f"zlib {zlib.ZLIB_RUNTIME_VERSION}; inputs of {args.size:,} code points; deltas of {DELTA_CHARS}\n")
    print(
        "| detector | form | input | MB/s | baseline | baseline MB/s | speed ratio | peak MiB | "
        "baseline peak MiB | same verdict |"
    )
    print("|---|---|---|---:|---|---:|---:|---:|---:|---|")
    for row in ROWS:
        for name in row.inputs:
            text = texts[name]
            mb = len(text.encode("utf-8", "surrogatepass")) / 1e6
            (ours_s, ours), (base_s, base) = best_seconds((row.ours, row.baseline), text, args.repeat)
            ours_peak, base_peak = peak_bytes(row.ours, text), peak_bytes(row.baseline, text)
            print(
                f"| {row.detector} | {row.form} | {name} | {mb / ours_s:,.1f} | {row.baseline_name} | "
                f"{mb / base_s:,.1f} | {base_s / ours_s:.2f} | {ours_peak / 2**20:.2f} | "
                f"{base_peak / 2**20:.2f} | {'yes' if row.same(ours, base) else 'NO'} |"
            )

    clean = texts["clean"]
    probe = clean_text(50_000, ("topk",))  # other texts than the prefix: no n-gram already seen
    print(
        f"\n| incremental form | µs per {DELTA_CHARS}-char delta after 10 kB "
        f"| after {args.size // 1000} kB | ratio |"
    )
    print("|---|---:|---:|---:|")
    for label, factory in INCREMENTAL.items():
        early = late = float("inf")
        for _ in range(5):
            early = min(early, per_delta_us(factory, clean[:10_000], probe))
            late = min(late, per_delta_us(factory, clean, probe))
        print(f"| {label} | {early:.2f} | {late:.2f} | {late / early:.2f} |")
    print("\n" + streaming_table(args.size, DATA, DELTA_CHARS))  # osaurus rows: loop-free prose, naive port


if __name__ == "__main__":
    main()
