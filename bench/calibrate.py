"""Measure the default repetition verdict and every published detector against the hand labels.

Why: the default verdict is a product claim ("beats every published detector"), so the numbers in
docs/detectors.md must be reproducible by one command:

    .venv/bin/python bench/calibrate.py [--shared PATH] [--quiet] [--onsets] [--default-only] [--thresholds]

Each data set is split in two fixed parts by a hash of the text's id (`part_of`): thresholds are
chosen on the fitting part, and the check part is the held-back figure; both are printed apart.
For each data set and part it prints recall and precision (loop vs clean; borderline left out), the
fraction of true positives whose onset is within 2% of the text length of the labelled onset, the
flag rate per decoding method (GPT-2: over all texts of each method file, labelled or not) or per category
(SmolLM2), and then the default verdict's misses and false positives with a short reason. `--onsets`
also lists every loop the default verdict dates outside the tolerance: labelled and found onset, the
period, and the text around both, to read the causes. `--thresholds` prints, for each main
threshold of the default verdict, the nearest fitting-part texts whose verdict flips when the
threshold moves below or above its default (and what that does: a loop caught or missed, a clean text
flagged or cleared).
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from degeneration_exporter.classification.classify import DEFAULT_REPETITION_DETECTORS
from degeneration_exporter.detectors import DETECTORS
from degeneration_exporter.detectors.base import DetectorInput, Finding

REPO_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_SHARED = REPO_ROOT.parent / "shared"
GPT2_METHODS = ("greedy", "beam", "topk", "nucleus", "typical", "contrastive", "human")
PUBLISHED = ("compression", "ngram_ratio", "tail_period", "stream_ngram", "char_run")
ONSET_TOLERANCE = 0.02
PARTS = ("fit", "check")


def part_of(sample_id: str) -> str:
    """The fixed split: a text is in the fitting part when the first byte of sha256(id) is even.

    Thresholds are chosen on the fitting part only; the check part is the held-back figure."""
    return PARTS[hashlib.sha256(sample_id.encode()).digest()[0] & 1]


CONTEXT_CHARS = 120


@dataclass(frozen=True, slots=True)
class Sample:
    """One text with what the detectors may see and its group (decoding method or category)."""

    id: str
    group: str
    text: str
    token_ids: Sequence[int] | None = None


@dataclass(frozen=True, slots=True)
class Label:
    label: str
    onset: int | None
    note: str


Verdict = Callable[[Sample], Finding | None]
"""Returns the first flagged finding (it carries the onset), or None when the text is not flagged."""


def _read_jsonl(path: Path) -> Iterable[dict[str, Any]]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                yield json.loads(line)


def load_labels(folder: Path) -> dict[str, Label]:
    rows = _read_jsonl(folder / "labels.jsonl")
    return {r["id"]: Label(r["label"], r["onset"], r.get("note", "")) for r in rows}


def load_gpt2(shared: Path) -> tuple[list[Sample], dict[str, Label]]:
    folder = shared / "data" / "gpt2-large-webtext-dev"
    samples = [
        Sample(r["id"], m, r["text"]) for m in GPT2_METHODS for r in _read_jsonl(folder / f"{m}.jsonl.gz")
    ]
    return samples, load_labels(folder)


def load_smollm2(shared: Path) -> tuple[list[Sample], dict[str, Label]]:
    folder = shared / "data" / "smollm2-long-dev"
    samples = [
        Sample(r["id"], r["category"], r["text"], r["token_ids"])
        for r in _read_jsonl(folder / "outputs.jsonl.gz")
    ]
    return samples, load_labels(folder)


def detector_verdict(names: Sequence[str], *, token_ids: bool = False) -> Verdict:
    """The OR of `names` with default params, on the text (or on token ids when asked and present)."""
    specs = [(DETECTORS[n], DETECTORS[n].params_model()) for n in names]

    def verdict(sample: Sample) -> Finding | None:
        inp = DetectorInput(sample.text, token_ids=sample.token_ids if token_ids else None)
        for spec, params in specs:
            finding = spec.detect(inp, params)
            if finding.flagged:
                return finding
        return None

    return verdict


@dataclass(frozen=True, slots=True)
class Score:
    tp: int
    fp: int
    fn: int
    onset_ok: int
    onset_known: int
    flag_rate: Mapping[str, tuple[int, int]]
    misses: tuple[str, ...]
    false_positives: tuple[tuple[str, str], ...]
    late_or_early: tuple[tuple[Sample, int, Finding], ...]  # (sample, labelled onset, finding)

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 0.0

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 1.0

    @property
    def onset_accuracy(self) -> float | None:
        return self.onset_ok / self.onset_known if self.onset_known else None


def score(samples: Sequence[Sample], labels: Mapping[str, Label], verdict: Verdict) -> Score:
    tp = fp = fn = onset_ok = onset_known = 0
    flagged_per_group: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    misses: list[str] = []
    fps: list[tuple[str, str]] = []
    off: list[tuple[Sample, int, Finding]] = []
    for s in samples:
        finding = verdict(s)
        flagged_per_group[s.group][1] += 1
        if finding is not None:
            flagged_per_group[s.group][0] += 1
        label = labels.get(s.id)
        if label is None or label.label == "borderline":
            continue
        if label.label == "loop" and finding is None:
            fn += 1
            misses.append(s.id)
        elif label.label == "loop" and finding is not None:
            tp += 1
            if finding.onset is not None and label.onset is not None:
                onset_known += 1
                if abs(finding.onset - label.onset) <= ONSET_TOLERANCE * max(1, len(s.text)):
                    onset_ok += 1
                else:
                    off.append((s, label.onset, finding))
        elif finding is not None:
            fp += 1
            fps.append((s.id, finding.evidence or finding.detector))
    rates = {g: (v[0], v[1]) for g, v in flagged_per_group.items()}
    return Score(tp, fp, fn, onset_ok, onset_known, rates, tuple(misses), tuple(fps), tuple(off))


def _fmt_rate(counts: tuple[int, int]) -> str:
    return f"{counts[0] / counts[1]:.3f}" if counts[1] else "-"


def _around(text: str, at: int) -> str:
    return repr(text[max(0, at - CONTEXT_CHARS // 2) : at]) + " | " + repr(text[at : at + CONTEXT_CHARS])


def print_onsets(score_: Score) -> None:
    """Each loop dated outside the tolerance: labelled vs found onset, period, text around both."""
    for sample, labelled, f in score_.late_or_early:
        found = f.onset or 0
        print(
            f"ONSET {sample.id}: labelled {labelled}, found {found} ({found - labelled:+d} chars, "
            f"period {f.period}, text {len(sample.text)})"
        )
        print(f"  labelled: {_around(sample.text, labelled)}")
        print(f"  found:    {_around(sample.text, found)}")


def report(
    name: str,
    samples: Sequence[Sample],
    labels: Mapping[str, Label],
    verdicts: Mapping[str, Verdict],
    groups: Sequence[str],
    quiet: bool,
    onsets: bool = False,
) -> dict[str, Score]:
    scores: dict[str, Score] = {}
    for part in PARTS:
        in_part = [s for s in samples if part_of(s.id) == part]
        part_scores = {row: score(in_part, labels, v) for row, v in verdicts.items()}
        scores.update({f"{row} [{part}]": sc for row, sc in part_scores.items()})
        print(f"\n## {name}: {part} part ({len(in_part)} texts)\n")
        print("| detector | recall | precision | onset within 2% | " + " | ".join(groups) + " |")
        print("|---|---|---|---|" + "---|" * len(groups))
        for row, s in part_scores.items():
            onset = f"{s.onset_accuracy:.3f}" if s.onset_accuracy is not None else "-"
            rates = " | ".join(_fmt_rate(s.flag_rate.get(g, (0, 0))) for g in groups)
            recall = f"{s.recall:.3f} ({s.tp}/{s.tp + s.fn})"
            print(f"| {row} | {recall} | {s.precision:.3f} ({s.fp} FP) | {onset} | {rates} |")
        if not quiet:
            default = part_scores["default"]
            for sid in default.misses:
                print(f"MISS {sid}: {labels[sid].note}")
            for sid, why in default.false_positives:
                print(f"FALSE POSITIVE {sid}: {why}")
        if onsets:
            print_onsets(part_scores["default"])
    return scores


# The thresholds `--thresholds` moves, each over values below and above its default (nearest first).
THRESHOLDS: dict[str, tuple[Sequence[float], Sequence[float]]] = {
    "min_copies": ((2.75, 2.5, 2.25, 2.0), (3.25, 3.5, 4.0, 5.0)),
    "min_repeated_chars": ((50, 40, 30, 20), (70, 80, 100, 120)),
    "min_copies_slotted": ((5.0, 4.0, 3.0), (7.0, 8.0, 10.0)),
    "min_tail_unit_chars": ((30, 20, 10), (50, 60, 80)),
    "min_tail_fraction": ((0.2, 0.1, 0.0), (0.4, 0.5, 0.7)),
    "min_symbol_chars": ((150, 100, 50), (250, 300, 400)),
    "min_counting_terms": ((20, 15, 10), (40, 60, 100)),
    "min_slot_letter_share": ((0.2, 0.1, 0.0), (0.35, 0.5, 0.75)),
    "max_slot_fraction": ((0.1, 0.05, 0.0), (0.2, 0.3, 0.5)),
    "min_near_copy_words": ((25, 20, 15), (35, 40, 50)),
    "max_near_copy_gap_words": ((1, 0), (3, 4)),
    "min_near_copy_unit_chars": ((30, 20), (50, 60, 80)),
}


def print_thresholds(name: str, samples: Sequence[Sample], labels: Mapping[str, Label]) -> None:
    """For each threshold, the nearest fitting-part texts whose verdict flips when it moves either way."""
    spec = DETECTORS[DEFAULT_REPETITION_DETECTORS[0]]
    labelled = [
        s
        for s in samples
        if part_of(s.id) == "fit" and labels.get(s.id, Label("", None, "")).label in ("loop", "clean")
    ]

    def verdicts(overrides: Mapping[str, float]) -> dict[str, bool]:
        params = spec.params_model.model_validate(overrides)
        return {s.id: spec.detect(DetectorInput(s.text), params).flagged for s in labelled}

    base = verdicts({})
    print(f"\n## {name}: nearest fitting-part texts on either side of each threshold\n")
    print("| threshold | default | below: value, text (label, effect) | above: value, text (label, effect) |")
    print("|---|---|---|---|")
    defaults = spec.params_model()
    for param, sides in THRESHOLDS.items():
        cells = []
        for values in sides:
            cell = "none within " + (f"{values[-1]}" if values else "-")
            for value in values:
                flipped = [sid for sid, v in verdicts({param: value}).items() if v != base[sid]]
                if flipped:
                    shown = []
                    for sid in flipped[:3]:
                        label = labels[sid].label
                        effect = (
                            "caught"
                            if base[sid] is False and label == "loop"
                            else (
                                "false positive"
                                if label == "clean" and not base[sid]
                                else "missed"
                                if label == "loop"
                                else "cleared"
                            )
                        )
                        shown.append(f"`{sid}` ({label}, {effect})")
                    more = f" +{len(flipped) - 3}" if len(flipped) > 3 else ""
                    cell = f"{value}: " + ", ".join(shown) + more
                    break
            cells.append(cell)
        print(f"| `{param}` | {getattr(defaults, param)} | {cells[0]} | {cells[1]} |")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared", type=Path, default=DEFAULT_SHARED, help="the shared material folder")
    parser.add_argument("--quiet", action="store_true", help="tables only, no miss/false-positive list")
    parser.add_argument(
        "--onsets",
        action="store_true",
        help="list the default verdict's onsets outside the tolerance, with the text around them",
    )
    parser.add_argument("--default-only", action="store_true", help="measure the default verdict alone")
    parser.add_argument(
        "--thresholds",
        action="store_true",
        help="for each threshold, the nearest fitting-part texts whose verdict flips on either side",
    )
    args = parser.parse_args(argv)
    available = [] if args.default_only else [n for n in PUBLISHED if n in DETECTORS]
    common: dict[str, Verdict] = {"default": detector_verdict(DEFAULT_REPETITION_DETECTORS)}
    common.update({n: detector_verdict([n]) for n in available})
    if available:
        common["published, all together"] = detector_verdict(available)
    print(f"default verdict = OR of {list(DEFAULT_REPETITION_DETECTORS)}")

    samples, labels = load_gpt2(args.shared)
    if args.thresholds:
        print_thresholds("GPT-2-large WebText", samples, labels)
        smol_samples, smol_labels = load_smollm2(args.shared)
        print_thresholds("SmolLM2-135M long replies", smol_samples, smol_labels)
        return
    report(
        "GPT-2-large WebText (flag rate per decoding method, all 400 texts each)",
        samples,
        labels,
        common,
        GPT2_METHODS,
        args.quiet,
        args.onsets,
    )

    samples, labels = load_smollm2(args.shared)
    smol = dict(common)
    if "ngram_ratio" in available:
        smol["ngram_ratio on token ids"] = detector_verdict(["ngram_ratio"], token_ids=True)
    categories = sorted({s.group for s in samples})
    report(
        "SmolLM2-135M long replies (flag rate per category, all replies)",
        samples,
        labels,
        smol,
        categories,
        args.quiet,
        args.onsets,
    )


if __name__ == "__main__":
    main()
