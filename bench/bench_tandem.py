"""Default verdict throughput and memory: `tandem_repeat` next to the published Relax window scan.

Why: the default repetition verdict must cost no more than the published Relax scan alone on long
clean text (every 10k-character window compressed at zlib level 9, stride 5k), in the same process.
Inputs are hundreds of kB: clean prose (the hand-labelled clean texts of both dev sets, repeated at a
distance far beyond any loop period), a whole-sentence loop, counter rows, and a loop that starts
after 450 kB of clean prose. Timings are the best of `--repeat` runs; memory is tracemalloc's peak.

Run: `.venv/bin/python bench/bench_tandem.py [--size 500000] [--repeat 3] [--shared PATH]`; copy the
tables into docs/benchmarks.md, section "Default verdict".
"""

from __future__ import annotations

import argparse
import gzip
import json
import time
import tracemalloc
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from bench_detectors import per_delta_us
from degeneration_exporter.classification.classify import DEFAULT_REPETITION_DETECTORS
from degeneration_exporter.detectors import DETECTORS
from degeneration_exporter.detectors.base import DetectorInput
from degeneration_exporter.detectors.tandem import (
    TandemRepeat,
    TandemRepeatParams,
    detect_tandem_repeat,
)

DEFAULT_SHARED = Path(__file__).resolve().parents[2] / "shared"
DELTA_CHARS = 16


def _jsonl(path: Path) -> Iterator[dict[str, Any]]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as fh:
        yield from (json.loads(line) for line in fh if line.strip())


def clean_prose(shared: Path, size: int) -> str:
    """Every text labelled clean in both dev sets, joined, repeated to `size` characters."""
    texts: list[str] = []
    for folder, files in (
        ("gpt2-large-webtext-dev", ["human", "nucleus", "greedy", "beam", "topk", "typical", "contrastive"]),
        ("smollm2-long-dev", ["outputs"]),
    ):
        base = shared / "data" / folder
        clean = {r["id"] for r in _jsonl(base / "labels.jsonl") if r["label"] == "clean"}
        for name in files:
            texts.extend(r["text"] for r in _jsonl(base / f"{name}.jsonl.gz") if r["id"] in clean)
    text = "\n\n".join(texts)
    while len(text) < size:
        text += "\n\n" + text
    return text[:size]


def inputs(shared: Path, size: int) -> dict[str, str]:
    clean = clean_prose(shared, size)
    sentence = "She had been watching them for twelve years. "
    rows = "".join(f"{i}. Buy a gift wrap for the party\n" for i in range(1, size // 20))
    return {
        "clean": clean,
        "sentence loop": (sentence * (size // len(sentence) + 1))[:size],
        "counter rows": rows[:size],
        "late loop": clean[: size - 50_000] + (sentence * (50_000 // len(sentence) + 1))[:50_000],
    }


def relax_scan(text: str, window: int = 10_000, stride: int = 5_000, threshold: float = 10.0) -> bool:
    """The published Relax window scan (detectors.md §1.2), written plainly: every window sliced,
    encoded and compressed at level 9 (no memo of repeated windows), no early exit."""
    n = len(text)
    last = max(0, n - window)
    starts = list(range(0, last + 1, stride)) if n else []
    if n and last % stride:
        starts.append(last)
    hit = False
    for s in starts:
        raw = text[s : s + window].encode("utf-8")
        hit = len(raw) / len(zlib.compress(raw, 9)) > threshold or hit
    return hit


def default_verdict(text: str) -> bool:
    """The default repetition verdict end to end: every configured detector through the registry."""
    inp = DetectorInput(text)
    found = False
    for name in DEFAULT_REPETITION_DETECTORS:
        spec = DETECTORS[name]
        found = spec.detect(inp, spec.params_model()).flagged or found
    return found


def tandem_stream(text: str) -> bool:
    live = TandemRepeat(TandemRepeatParams())
    for i in range(0, len(text), DELTA_CHARS):
        live.feed(text[i : i + DELTA_CHARS])
    return live.finish().flagged


FORMS: dict[str, Callable[[str], bool]] = {
    "published Relax window scan": relax_scan,
    "default verdict (batch)": default_verdict,
    "tandem_repeat batch": lambda t: detect_tandem_repeat(DetectorInput(t), TandemRepeatParams()).flagged,
    "tandem_repeat incremental, 16-char deltas": tandem_stream,
}


def best_seconds(fn: Callable[[str], bool], text: str, repeat: int) -> tuple[float, bool]:
    best, verdict = float("inf"), False
    for _ in range(repeat):
        start = time.perf_counter()
        verdict = fn(text)
        best = min(best, time.perf_counter() - start)
    return best, verdict


def peak_mib(fn: Callable[[str], bool], text: str) -> float:
    tracemalloc.start()
    try:
        fn(text)
        return tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--size", type=int, default=500_000, help="input size in characters")
    ap.add_argument("--repeat", type=int, default=3, help="timing runs per cell (best is kept)")
    ap.add_argument("--shared", type=Path, default=DEFAULT_SHARED, help="the shared material folder")
    args = ap.parse_args()
    texts = inputs(args.shared, args.size)
    print(
        f"zlib {zlib.ZLIB_RUNTIME_VERSION}; default verdict = {list(DEFAULT_REPETITION_DETECTORS)}; "
        f"inputs of {args.size:,} code points\n"
    )
    print("| input | form | MB/s | vs Relax scan | peak MiB | flagged |")
    print("|---|---|---:|---:|---:|---|")
    for name, text in texts.items():
        mb = len(text.encode("utf-8")) / 1e6
        base_s = 0.0
        for form, fn in FORMS.items():
            secs, verdict = best_seconds(fn, text, args.repeat)
            base_s = base_s or secs
            print(
                f"| {name} | {form} | {mb / secs:,.1f} | {base_s / secs:.2f}x | {peak_mib(fn, text):.2f} | "
                f"{'yes' if verdict else 'no'} |"
            )
    clean = texts["clean"] + texts["clean"][:40_000]

    def fresh() -> TandemRepeat:
        return TandemRepeat(TandemRepeatParams())

    early = min(per_delta_us(fresh, clean[:10_000], clean[10_000:40_000]) for _ in range(3))
    late = min(
        per_delta_us(fresh, clean[: args.size], clean[args.size : args.size + 30_000]) for _ in range(3)
    )
    print("\n| incremental form | µs per 16-char delta after 10 kB | after 500 kB | ratio |")
    print("|---|---:|---:|---:|")
    print(f"| tandem_repeat | {early:.2f} | {late:.2f} | {late / early:.2f} |")


if __name__ == "__main__":
    main()
