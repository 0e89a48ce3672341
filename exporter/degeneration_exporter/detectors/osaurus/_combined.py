"""osaurus' combined `StreamDegenerationDetector`: runs, then n-grams, one latch (detectors.md §4.1-4.2).

Why one class: upstream checks character runs before word n-grams and stops after its first trigger.
`char_run` uses it with the run rule alone, `stream_ngram` with the n-gram rule (and, with
`char_runs: true`, both). Upstream feeds content and reasoning deltas in arrival order to one
instance; here, as for every detector, the classifier keeps one instance per channel (feed both
channels' deltas to one instance to reproduce the upstream wiring: offsets then count both).
Batch forms feed the text as one delta.
"""

from __future__ import annotations

from ..base import DetectorInput, Finding, snippet
from ._run_tracker import RunHit, RunProfile, RunTracker, run_evidence
from ._word_tail import NgramLoop, WordTail

__all__ = ["FRAGMENT_CHARS", "OsaurusStream", "ngram_evidence", "published_fragment"]

FRAGMENT_CHARS = 80


def published_fragment(loop: NgramLoop) -> str:
    """The unit as the evidence prints it: cut to 80 characters plus an ellipsis."""
    fragment = loop.fragment
    return fragment if len(fragment) <= FRAGMENT_CHARS else fragment[:FRAGMENT_CHARS] + "…"


def ngram_evidence(loop: NgramLoop) -> str:
    """The published n-gram evidence string."""
    return f'{loop.n}-token n-gram "{published_fragment(loop)}" repeated {loop.occurrences}x consecutively'


class OsaurusStream:
    """The published detector with either rule switched off (`runs` or `tail` None)."""

    def __init__(
        self, detector: str, profile_name: str, runs: RunProfile | None, tail: WordTail | None
    ) -> None:
        self._detector = detector
        self._profile_name = profile_name
        self._run_profile = runs
        self._runs = RunTracker(runs) if runs is not None else None
        self._tail = tail
        self._fed_chars = 0  # code points fed so far
        self._feeds = 0  # every feed call, empty deltas included (the vectors' delta index)
        self._fired: Finding | None = None

    @property
    def tail_chars(self) -> int:
        """Code points the published tail holds now (at most 4096 between deltas in stream profiles)."""
        return self._tail.tail_chars if self._tail is not None else 0

    def feed(self, delta: str) -> Finding | None:
        """One delta; the first firing returns its Finding, every later call returns None (latch)."""
        return self._push(delta)

    def finish(self) -> Finding:
        """The first firing, or an unflagged Finding."""
        if self._fired is not None:
            return self._fired
        return Finding(
            detector=self._detector, kind="repetition", flagged=False, details={"profile": self._profile_name}
        )

    def scan(self, inp: DetectorInput) -> Finding:
        """Batch form on a fresh instance: the content text as one delta."""
        self._push(inp.text)
        return self.finish()

    def _push(self, delta: str) -> Finding | None:
        self._feeds += 1
        if self._fired is not None or not delta:
            return None
        self._fed_chars += len(delta)
        if self._runs is not None:
            hit = self._runs.push(delta)
            if hit is not None:
                self._fired = self._run_finding(hit)
                return self._fired
        if self._tail is not None:
            loop = self._tail.push(delta)
            if loop is not None:
                self._fired = self._ngram_finding(loop)
                return self._fired
        return None

    def _run_finding(self, hit: RunHit) -> Finding:
        assert self._run_profile is not None
        return Finding(
            detector=self._detector,
            kind="repetition",
            flagged=True,
            score=float(hit.length),
            onset=hit.start,
            period=1,
            unit=hit.char,
            covered_chars=hit.length,
            evidence=run_evidence(hit, self._run_profile),
            coverage=min(1.0, hit.length / max(self._fed_chars, 1)),
            details={
                "rule": "char_run",
                "profile": self._profile_name,
                "char": hit.char,
                "run_length": hit.length,
                "growth_deltas": hit.growth,
                "delta_index": self._feeds - 1,
            },
        )

    def _ngram_finding(self, loop: NgramLoop) -> Finding:
        covered = loop.end - loop.start
        return Finding(
            detector=self._detector,
            kind="repetition",
            flagged=True,
            score=float(loop.occurrences),
            onset=loop.start,
            period=loop.period,
            unit=snippet(loop.fragment),
            covered_chars=covered,
            evidence=ngram_evidence(loop),
            coverage=min(1.0, covered / max(self._fed_chars, 1)),
            details={
                "rule": "ngram",
                "profile": self._profile_name,
                "n": loop.n,
                "fragment": loop.fragment,  # whole; the evidence cuts it to 80 characters
                "occurrences": loop.occurrences,
                "delta_index": self._feeds - 1,
            },
        )
