"""The whole default classifier on adversarial replies of about 1 MB, next to Relax's scan.

Why: a daemon classifies whatever a log line holds, so one reply must never cost time quadratic in
its length. Rows whose words change every few words hold a repeat at every multiple of the row; the
screen once grew each across the whole region (100 kB took about 10 s). These inputs pin that and the
other shapes a long degenerate reply takes: template-token characters in bulk, paragraphs with a
share of their words changed, random words, numbers. Each is one reply: CPU seconds of one
`Classifier().classify` and of `scan_repetition` (Relax's window scan) on the same text, in this
process.

Run: `.venv/bin/python bench/bench_adversarial.py [--chars 1000000] [--seed 3]`; the table goes into
docs/benchmarks.md, section "Default verdict cost".
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable, Sequence

from degeneration_exporter.classification.classify import Classifier
from degeneration_exporter.detectors.compression.upstream import scan_repetition
from degeneration_exporter.record import FinishReason, Record

WORDS = [f"{a}{b}" for a in ("riv", "ston", "lant", "copp", "mead") for b in ("er", "el", "ing")]
PARAGRAPH = (
    "the quick brown fox jumps over the lazy dog and then it runs far away into the deep dark forest "
    "where nobody can find it "
) * 2


def _fill(chars: int, piece: Callable[[int], str]) -> str:
    parts: list[str] = []
    size = i = 0
    while size < chars:
        parts.append(piece(i))
        size += len(parts[-1])
        i += 1
    return "".join(parts)


def cases(chars: int, rng: random.Random) -> dict[str, str]:
    """Each adversarial shape at about `chars` characters."""

    def dense_slots(i: int) -> str:
        a, b, c = (rng.choice(WORDS) for _ in range(3))
        return f"Pick the {a} first, then the brass {b} fitting, then tighten the {c} bolt on row {i}. "

    def near_paragraph(_: int) -> str:
        return " ".join(rng.choice(WORDS) if rng.random() < 0.15 else w for w in PARAGRAPH.split()) + "\n\n"

    return {
        "rows with a word slot every few words": _fill(chars, dense_slots),
        "`<|` repeated": "<|" * (chars // 2),
        "`<|im_en ` repeated": "<|im_en " * (chars // 8),
        "paragraphs, 15% of words changed": _fill(chars, near_paragraph),
        "random words": _fill(chars, lambda _: rng.choice(WORDS) + " "),
        "numbers": _fill(chars, lambda _: f"{rng.randint(0, 10**6)} "),
    }


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--chars", type=int, default=1_000_000, help="characters per reply")
    ap.add_argument("--seed", type=int, default=3)
    args = ap.parse_args(argv)
    classifier = Classifier()
    print("| reply | chars | kinds | default classifier CPU s | Relax scan CPU s |")
    print("|---|---:|---|---:|---:|")
    for name, text in cases(args.chars, random.Random(args.seed)).items():
        start = time.process_time()
        result = classifier.classify(Record(text=text, finish_reason=FinishReason.LENGTH))
        ours = time.process_time() - start
        start = time.process_time()
        scan_repetition(text)
        relax = time.process_time() - start
        kinds = ", ".join(sorted(k.value for k in result.flags))
        print(f"| {name} | {len(text):,} | {kinds} | {ours:.3f} | {relax:.3f} |")


if __name__ == "__main__":
    main()
