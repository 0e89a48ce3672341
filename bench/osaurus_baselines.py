"""Baselines and the streaming table for the osaurus rows of bench_detectors.py.

`PublishedStreamDetector` is osaurus' StreamDegenerationDetector as detectors.md §4.2 words it: walk
each delta character by character for runs, append it to a 4096-character tail, re-split the whole
tail and rescan every (n, start) pair, trim. The split uses a compiled regex, so the baseline is a
fair Python port rather than a strawman. Verdicts are checked equal to ours before timing, and the
streaming table refuses to report a stream that fired (a latched detector costs nothing).
"""

from __future__ import annotations

import gzip
import hashlib
import json
import re
import time
from collections.abc import Callable
from pathlib import Path

from degeneration_exporter.detectors.base import Finding, IncrementalDetector
from degeneration_exporter.detectors.osaurus._swift_text import WHITESPACE
from degeneration_exporter.detectors.osaurus.stream_ngram import StreamNgram, StreamNgramParams

_WORD = re.compile(f"[^{re.escape(WHITESPACE)}]+")
_WS = frozenset(WHITESPACE)


class PublishedStreamDetector:
    """The hardened combined detector (runs, then n-grams 3-12 x 12, 4096-character tail), naively."""

    def __init__(
        self,
        min_n: int = 3,
        max_n: int = 12,
        repeats: int = 12,
        tail_chars: int | None = 4096,
        runs: bool = True,
    ) -> None:
        self.min_n, self.max_n, self.repeats = min_n, max_n, repeats
        self.tail_chars, self.runs = tail_chars, runs
        self.tail = ""
        self.fired: str | None = None
        self.run_char = ""
        self.run_len = 0
        self.run_growth = 0

    def feed(self, delta: str) -> Finding | None:
        if self.fired is not None or not delta:
            return None
        evidence = (self._runs(delta) if self.runs else None) or self._ngrams(delta)
        if evidence is None:
            return None
        self.fired = evidence
        return Finding(detector="published", kind="repetition", flagged=True, evidence=evidence)

    def finish(self) -> Finding:
        return Finding(
            detector="published", kind="repetition", flagged=self.fired is not None, evidence=self.fired
        )

    def _runs(self, delta: str) -> str | None:
        touched = False
        for char in delta:
            if char in _WS:
                self.run_char, self.run_len, self.run_growth, touched = "", 0, 0, False
                continue
            if char == self.run_char:
                self.run_len += 1
            else:
                self.run_char, self.run_len, self.run_growth, touched = char, 1, 0, False
            if not touched:
                self.run_growth, touched = self.run_growth + 1, True
            threshold = 64 if (char.isalpha() or char.isnumeric()) else 256
            if self.run_growth >= 3 and self.run_len >= threshold:
                return (
                    f'character "{char}" repeated {self.run_len}x consecutively '
                    f"across {self.run_growth} deltas"
                )
        return None

    def _ngrams(self, delta: str) -> str | None:
        self.tail += delta
        words = _WORD.findall(self.tail)
        count = len(words)
        for n in range(self.min_n, self.max_n + 1):
            if count < n * self.repeats:
                break
            for s in range(count - n * self.repeats + 1):
                block = words[s : s + n]
                copies = 1
                while s + (copies + 1) * n <= count:
                    if words[s + copies * n : s + (copies + 1) * n] != block:
                        break
                    copies += 1
                if copies >= self.repeats:
                    fragment = " ".join(block)
                    fragment = fragment if len(fragment) <= 80 else fragment[:80] + "…"
                    return f'{n}-token n-gram "{fragment}" repeated {copies}x consecutively'
        if self.tail_chars is not None and len(self.tail) > self.tail_chars:
            suffix = self.tail[-self.tail_chars :]
            first = next((i for i, c in enumerate(suffix) if c in _WS), None)
            self.tail = suffix if first is None else suffix[first + 1 :]
        return None


def published_batch(text: str) -> str | None:
    """The hardened n-gram rule on the whole text as one delta (what `detect_stream_ngram` computes)."""
    detector = PublishedStreamDetector(runs=False)
    detector.feed(text)
    return detector.fired


def published_char_walk(text: str, threshold: int = 64) -> int | None:
    """stream_v1's run rule as a per-character loop: the offset where a run first reaches 64."""
    char, length = "", 0
    for i, c in enumerate(text):
        length = length + 1 if c == char else 1
        char = c
        if length >= threshold:
            return i - threshold + 1
    return None


def published_leak_scan(text: str, tokens: tuple[str, ...]) -> dict[str, int]:
    """Every token counted with `str.count`, no prefilter: the plain way to get the same counts."""
    return {tok: n for tok in tokens if (n := text.count(tok))}


def loop_free_prose(size: int, data: Path) -> str:
    """WebText human references, repeated to `size`: real prose with no loop inside any 4096-char tail.

    (The GPT-2 nucleus samples contain a real "100% 100% ..." loop, which latches a stream detector
    and would make "cost after 500 kB" measure a detector that has stopped working.)
    """
    path = data / "human.jsonl.gz"
    text = ""
    if path.is_file():
        with gzip.open(path, "rt", encoding="utf-8") as fh:
            text = "\n\n".join(json.loads(line)["text"] for line in fh)
    if not text:
        text = " ".join(hashlib.sha256(str(i).encode()).hexdigest()[: 3 + i % 7] for i in range(size // 5))
    while len(text) < size:
        text += "\n\n" + text
    return text[:size]


def _per_delta_us(
    factory: Callable[[], IncrementalDetector], text: str, seen: int, span: int, delta_chars: int
) -> float:
    live = factory()
    for i in range(0, seen, 4_096):
        live.feed(text[i : min(i + 4_096, seen)])
    deltas = [text[i : i + delta_chars] for i in range(seen, seen + span, delta_chars)]
    start = time.perf_counter()
    for delta in deltas:
        live.feed(delta)
    elapsed = time.perf_counter() - start
    if live.finish().flagged:
        raise RuntimeError("the stream fired: the input is not loop-free, the timing would be meaningless")
    return elapsed / len(deltas) * 1e6


STREAMING: dict[str, tuple[Callable[[], IncrementalDetector], Callable[[], IncrementalDetector]]] = {
    "stream_ngram (char_runs: true = published combined)": (
        lambda: StreamNgram(StreamNgramParams(char_runs=True)),
        PublishedStreamDetector,
    ),
    "stream_ngram (n-grams only)": (
        lambda: StreamNgram(StreamNgramParams()),
        lambda: PublishedStreamDetector(runs=False),
    ),
}


def streaming_table(size: int, data: Path, delta_chars: int, repeat: int = 5) -> str:
    """Per-delta cost after 10 kB and after `size` characters already seen, ours next to the naive port."""
    text = loop_free_prose(size + 40_000, data)
    lines = [
        f"| streaming form | ours µs per {delta_chars}-char delta after 10 kB | after {size // 1000} kB | "
        "late/early | published naive after 10 kB | after "
        f"{size // 1000} kB | speed-up (late) |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for label, (ours, naive) in STREAMING.items():
        early = min(_per_delta_us(ours, text, 10_000, 30_000, delta_chars) for _ in range(repeat))
        late = min(_per_delta_us(ours, text, size, 30_000, delta_chars) for _ in range(repeat))
        naive_early = _per_delta_us(naive, text, 10_000, 8_000, delta_chars)
        naive_late = _per_delta_us(naive, text, size, 8_000, delta_chars)
        lines.append(
            f"| {label} | {early:.2f} | {late:.2f} | {late / early:.2f} | {naive_early:,.0f} | "
            f"{naive_late:,.0f} | {naive_late / late:,.0f}x |"
        )
    return "\n".join(lines)
