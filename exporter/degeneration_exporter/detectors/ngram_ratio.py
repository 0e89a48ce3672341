"""Duplicate n-gram ratio (spec name `trinity_ngram`, Trinity-RFT `repetition_filter`; module `ngram_ratio`).

Why: a looping response reuses the same few n-grams, so `1 - |distinct n-grams| / |n-grams|` climbs
towards 1 while diverse text stays near 0. Exact semantics: detectors.md §2.2 (generated tokens after
`prompt_length`, `action_mask` zeros removed and the rest joined, empty and short responses kept and
counted, strict `> max_repeat_ratio`, ValueError on bad arguments) and §2.3 (batch metrics).
Known gap: one global ratio has no locality, so a loop after a long diverse prefix is kept (§5.2).

Text mode (ours; Trinity scores token ids only): when no token ids are known, the same ratio runs
over words. A word is a whitespace-delimited run, except that each character of a script written
without spaces (Han, kana, Bopomofo, CJK and fullwidth punctuation, Thai, Lao, Khmer, Myanmar) is a
word of its own. Why: a whitespace split would make a whole Chinese or Japanese paragraph one word,
so a phrase loop there would be invisible (the osaurus CJK gap, §5.2); one such character is about
one BPE token, so n-grams of these "words" sit on the same scale as Trinity's token n-grams.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Hashable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import compress
from typing import Any, Literal

from pydantic import BaseModel, Field

from ._scripts import NO_SPACE_SCRIPTS
from .base import DetectorInput, Finding, snippet

__all__ = [
    "NgramRatio",
    "NgramRatioParams",
    "NgramVerdict",
    "detect_ngram_ratio",
    "filter_experiences",
    "generated_tokens",
    "repeat_ratio",
    "score_response",
    "text_words",
]

Skip = Literal["empty", "short"]

_WORD = re.compile(rf"[{NO_SPACE_SCRIPTS}]|[^\s{NO_SPACE_SCRIPTS}]+")
_BOUNDARY = re.compile(rf"[\s{NO_SPACE_SCRIPTS}]")
COUNT_EVERY_CHARS = 128


def text_words(text: str) -> list[str]:
    """Words for text mode: whitespace runs split words; each no-space-script character is a word."""
    return _WORD.findall(text)


def generated_tokens(
    token_ids: Sequence[int], prompt_length: int = 0, action_mask: Sequence[int] | None = None
) -> list[int]:
    """The model's own tokens: drop the prompt, then the positions the response mask zeroes (§2.2 step 1).

    The mask is aligned with the response part; kept tokens are joined in order, so an n-gram may
    straddle a removed observation. Response tokens beyond the end of a short mask count as masked.
    """
    response = list(token_ids[max(prompt_length, 0) :])
    if action_mask is None:
        return response
    return list(compress(response, action_mask))


def _ngrams(units: Sequence[Hashable], ngram_size: int) -> Iterator[tuple[Hashable, ...]]:
    """Contiguous n-grams as tuples, built by one C-level zip of shifted slices."""
    return zip(*[units[i:] for i in range(ngram_size)], strict=False)


def repeat_ratio(units: Sequence[Hashable], ngram_size: int = 4) -> float:
    """`1 - distinct/total` over contiguous n-grams; 0.0 when there is none (§2.2 step 4)."""
    total = len(units) - ngram_size + 1
    if total <= 0:
        return 0.0
    distinct = len(set(_ngrams(units, ngram_size)))
    return 1.0 - distinct / total


class NgramRatioParams(BaseModel, frozen=True, extra="forbid"):
    """Trinity's operator arguments, with its defaults (issue #620); bounds as assumed in §2.2 step 6."""

    ngram_size: int = Field(4, ge=1, strict=True, description="n, the n-gram length, in tokens (or words).")
    max_repeat_ratio: float = Field(
        0.5,
        ge=0.0,
        le=1.0,
        allow_inf_nan=False,
        description="Dropped when the duplicate n-gram ratio is strictly above "
        "this; 1.0 disables the filter.",
    )
    min_response_tokens: int = Field(
        32,
        ge=0,
        strict=True,
        description="Responses with fewer generated tokens (or words) are kept unscored, in tokens.",
    )


@dataclass(frozen=True, slots=True)
class NgramVerdict:
    """One response's decision: dropped (flagged) or kept, and why."""

    dropped: bool
    ratio: float | None
    skipped: Skip | None
    generated_tokens: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "verdict": self.dropped,
            "kept": not self.dropped,
            "ratio": self.ratio,
            "skipped": self.skipped,
            "generated_tokens": self.generated_tokens,
        }


def _decide(count: int, ratio: float, params: NgramRatioParams) -> NgramVerdict:
    if count == 0:
        return NgramVerdict(False, None, "empty", 0)
    if count < params.min_response_tokens:
        return NgramVerdict(False, None, "short", count)
    return NgramVerdict(ratio > params.max_repeat_ratio, ratio, None, count)


def score_response(units: Sequence[Hashable], params: NgramRatioParams) -> NgramVerdict:
    """The filter decision for one response's generated units (§2.2 steps 2-5)."""
    count = len(units)
    ratio = repeat_ratio(units, params.ngram_size) if count >= max(params.min_response_tokens, 1) else 0.0
    return _decide(count, ratio, params)


def filter_experiences(
    experiences: Iterable[DetectorInput], params: NgramRatioParams
) -> tuple[list[int], dict[str, int | float]]:
    """Trinity's `process`: indices kept and the batch metrics (§2.3); ratio stats only if any was scored."""
    kept: list[int] = []
    ratios: list[float] = []
    metrics: dict[str, int | float] = {
        "filtered_count": 0,
        "skipped_empty_count": 0,
        "skipped_short_count": 0,
    }
    for index, exp in enumerate(experiences):
        ids = generated_tokens(exp.token_ids or (), exp.prompt_length, exp.action_mask)
        verdict = score_response(ids, params)
        if verdict.skipped is not None:
            metrics[f"skipped_{verdict.skipped}_count"] += 1
        elif verdict.ratio is not None:
            ratios.append(verdict.ratio)
        if verdict.dropped:
            metrics["filtered_count"] += 1
        else:
            kept.append(index)
    if ratios:
        metrics["repeat_ratio/mean"] = sum(ratios) / len(ratios)
        metrics["repeat_ratio/max"] = max(ratios)
    return kept, metrics


def _finding(
    verdict: NgramVerdict,
    counts: Counter[tuple[Hashable, ...]],
    unit_kind: str,
    params: NgramRatioParams,
) -> Finding:
    details = verdict.to_dict()
    details.update(unit_kind=unit_kind, ngram_size=params.ngram_size)
    unit = None
    if verdict.dropped and counts:
        gram, seen = counts.most_common(1)[0]
        unit = snippet(" ".join(map(str, gram)))
        details["top_ngram_count"] = seen
    return Finding(
        detector="ngram_ratio",
        kind="repetition",
        flagged=verdict.dropped,
        score=verdict.ratio,
        unit=unit,
        details=details,
    )


def detect_ngram_ratio(inp: DetectorInput, params: NgramRatioParams) -> Finding:
    """Batch form: token ids when `inp.token_ids` is known (Trinity exactly), else words of `inp.text`."""
    if inp.token_ids is not None:
        units: Sequence[Hashable] = generated_tokens(inp.token_ids, inp.prompt_length, inp.action_mask)
        unit_kind = "token_ids"
    else:
        units = text_words(inp.text)
        unit_kind = "words"
    verdict = score_response(units, params)
    counts = Counter(_ngrams(units, params.ngram_size)) if verdict.dropped else Counter()
    return _finding(verdict, counts, unit_kind, params)


class NgramRatio:
    """Incremental text mode: `finish()` equals the batch finding on the concatenated deltas.

    Words are cut only up to the last whitespace or no-space-script character of a delta, so a word
    split across deltas is counted once, whole; complete text is counted in batches of at least
    `COUNT_EVERY_CHARS` code points, which keeps the per-delta cost low for token-sized deltas. The
    n-gram counts are exact, hence they grow with the number of distinct n-grams seen (a global ratio
    needs all of them); per delta the cost is O(delta). `feed` fires the first time the response
    counted so far would be dropped (the final verdict can differ: diverse text after a loop lowers
    the ratio).
    """

    def __init__(self, params: NgramRatioParams | None = None) -> None:
        self._params = params or NgramRatioParams()
        self._carry: list[str] = []
        self._ready: list[str] = []
        self._ready_chars = 0
        self._tail: list[str] = []
        self._counts: Counter[tuple[Hashable, ...]] = Counter()
        self._words = 0
        self._total = 0
        self._fired = False

    def feed(self, delta: str) -> Finding | None:
        """Take one delta; return a finding the first time the response so far would be dropped."""
        if not delta:
            return None
        boundary = _BOUNDARY.search(delta[::-1])
        if boundary is None:
            self._carry.append(delta)
            return None
        cut = len(delta) - boundary.start()
        self._ready.extend(self._carry)
        self._ready.append(delta[:cut])
        self._ready_chars += sum(map(len, self._carry)) + cut
        self._carry = [delta[cut:]] if cut < len(delta) else []
        if self._ready_chars < COUNT_EVERY_CHARS:
            return None
        self._count_ready()
        if not self._fired:
            verdict = self._verdict()
            if verdict.dropped:
                self._fired = True
                return _finding(verdict, self._counts, "words", self._params)
        return None

    def finish(self) -> Finding:
        """The verdict for everything fed."""
        self._ready.extend(self._carry)
        self._carry = []
        self._count_ready()
        verdict = self._verdict()
        return _finding(verdict, self._counts if verdict.dropped else Counter(), "words", self._params)

    def _count_ready(self) -> None:
        words = text_words("".join(self._ready))
        self._ready.clear()
        self._ready_chars = 0
        if not words:
            return
        n = self._params.ngram_size
        self._words += len(words)
        seq = self._tail + words
        if len(seq) >= n:
            self._counts.update(_ngrams(seq, n))
            self._total += len(seq) - n + 1
        self._tail = seq[-(n - 1) :] if n > 1 else []

    def _verdict(self) -> NgramVerdict:
        ratio = 1.0 - len(self._counts) / self._total if self._total > 0 else 0.0
        return _decide(self._words, ratio, self._params)
