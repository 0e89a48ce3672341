"""osaurus' character-run state machine (detectors.md §4.2 step 3), shared by `char_run` and `stream_ngram`.

Why a compiled regex and `str.lstrip`/`rstrip`: only three parts of a delta matter to the rule, the
head that may extend the carried run, runs wholly inside the delta (they can fire only without a
growth gate, since one delta grows a run once), and the trailing run carried to the next delta.
Each is found at C speed instead of walking every character as upstream does.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ._swift_text import WHITESPACE, WHITESPACE_RUN, is_letter_or_number, is_whitespace

__all__ = ["RunHit", "RunProfile", "RunTracker", "run_evidence"]


@dataclass(frozen=True, slots=True)
class RunProfile:
    """One published threshold set for the run rule."""

    alnum_threshold: int  # run length that fires for a letter or number
    other_threshold: int  # run length that fires for any other non-whitespace character
    whitespace_counts: bool  # False: whitespace resets the run and is skipped (hardened)
    growth_gate: int  # distinct deltas that must have extended the run (1 = no gate)
    names_deltas: bool  # evidence ends "across <growth> deltas" (hardened wording)
    full_length: bool  # evidence reports the whole run seen in the delta, not the length at firing


@dataclass(frozen=True, slots=True)
class RunHit:
    """A run that fired: `char` repeated `length` times, extended by `growth` deltas, from `start`."""

    char: str
    length: int
    growth: int
    start: int  # absolute code-point offset in the stream


class RunTracker:
    """The run state machine over a stream of deltas; `push` returns the first hit (callers latch)."""

    __slots__ = ("_char", "_end", "_growth", "_length", "_pattern", "_profile", "_run_start")

    def __init__(self, profile: RunProfile) -> None:
        self._profile = profile
        shortest = min(profile.alnum_threshold, profile.other_threshold)
        unit = "(.)" if profile.whitespace_counts else f"([^{re.escape(WHITESPACE)}])"
        self._pattern = re.compile(unit + r"\1{" + str(shortest - 1) + ",}", re.S)
        self._char = ""
        self._length = 0
        self._growth = 0
        self._run_start = 0
        self._end = 0

    def _threshold(self, char: str) -> int:
        profile = self._profile
        return profile.alnum_threshold if is_letter_or_number(char) else profile.other_threshold

    def push(self, delta: str) -> RunHit | None:
        """Walk one delta (§4.2 step 3); returns a hit as soon as the rule fires, possibly mid-delta."""
        if not delta:
            return None
        profile, size, base = self._profile, len(delta), self._end
        self._end += size
        pos = 0
        first = delta[0]
        if not profile.whitespace_counts and is_whitespace(first):
            self._char, self._length, self._growth = "", 0, 0
            pos = WHITESPACE_RUN.match(delta).end()  # type: ignore[union-attr]
            if pos == size:
                return None
        elif first == self._char:
            head = size - len(delta.lstrip(first))
            self._growth += 1
            total = self._length + head
            threshold = self._threshold(first)
            if self._growth >= profile.growth_gate and total >= threshold:
                length = total if profile.full_length else max(threshold, self._length + 1)
                return RunHit(first, length, self._growth, self._run_start)
            self._length = total
            if head == size:
                return None
            pos = head
        if profile.growth_gate <= 1:
            hit = self._search(delta, pos, base)
            if hit is not None:
                return hit
        last = delta[-1]
        if not profile.whitespace_counts and is_whitespace(last):
            self._char, self._length, self._growth = "", 0, 0
            return None
        tail = min(size - len(delta.rstrip(last)), size - pos)
        self._char, self._length, self._growth, self._run_start = last, tail, 1, base + size - tail
        return None

    def _search(self, delta: str, pos: int, base: int) -> RunHit | None:
        """Runs that start inside this delta; they fire here only without a growth gate."""
        match = self._pattern.search(delta, pos)
        while match is not None:
            char = match.group(1)
            length = match.end() - match.start()
            threshold = self._threshold(char)
            if length >= threshold:
                reported = length if self._profile.full_length else threshold
                return RunHit(char, reported, 1, base + match.start())
            match = self._pattern.search(delta, match.end())
        return None


def run_evidence(hit: RunHit, profile: RunProfile) -> str:
    """The published evidence string (hardened names the delta count, v1 and gauntlet do not)."""
    text = f'character "{hit.char}" repeated {hit.length}x consecutively'
    return f"{text} across {hit.growth} deltas" if profile.names_deltas else text
