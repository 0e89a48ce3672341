"""Naive re-implementation of osaurus' published StreamDegenerationDetector, straight from detectors.md §4.2.

Test and bench code only: it re-splits its whole tail on every delta and rescans every (n, start)
pair, exactly as upstream does, so the incremental classes can be compared against it on random
word streams and chunkings. Deliberately written character by character and without sharing any
algorithmic code with the package (only the definition of Swift whitespace).
"""

from __future__ import annotations

from dataclasses import dataclass

from degeneration_exporter.detectors.osaurus._swift_text import WHITESPACE

_WS = frozenset(WHITESPACE)


@dataclass(frozen=True)
class ReferenceHit:
    kind: str  # "ngram" or "char_run"
    evidence: str
    start: int  # absolute code-point offset of the loop's first word / the run's first character
    n: int = 0
    occurrences: int = 0
    run_length: int = 0


def _is_alnum(char: str) -> bool:
    return char.isalpha() or char.isnumeric()


def _words_with_offsets(text: str) -> list[tuple[str, int]]:
    words: list[tuple[str, int]] = []
    current: list[str] = []
    start = 0
    for i, char in enumerate(text):
        if char in _WS:
            if current:
                words.append(("".join(current), start))
                current = []
        else:
            if not current:
                start = i
            current.append(char)
    if current:
        words.append(("".join(current), start))
    return words


class ReferenceOsaurus:
    """observe(delta) -> ReferenceHit | None, latching; `runs` None disables the run rule."""

    def __init__(
        self,
        min_n: int,
        max_n: int,
        repeats: int,
        tail_chars: int | None,
        runs: tuple[int, int, bool, int, bool] | None = None,
    ) -> None:
        # runs = (alnum threshold, other threshold, whitespace counts, growth gate, names deltas)
        self.min_n, self.max_n, self.repeats = min_n, max_n, repeats
        self.tail_chars, self.runs = tail_chars, runs
        self.tail = ""
        self.tail_base = 0  # absolute offset of tail[0]
        self.seen = 0
        self.triggered = False
        self.run_char: str | None = None
        self.run_len = 0
        self.run_growth = 0
        self.run_start = 0
        self.max_tail = 0

    def observe(self, delta: str) -> ReferenceHit | None:
        if self.triggered or not delta:
            return None
        offset = self.seen
        self.seen += len(delta)
        if self.runs is not None:
            hit = self._runs(delta, offset)
            if hit is not None:
                self.triggered = True
                return hit
        self.tail += delta
        words = _words_with_offsets(self.tail)
        count = len(words)
        for n in range(self.min_n, self.max_n + 1):
            if count < n * self.repeats:
                break
            for s in range(count - n * self.repeats + 1):
                block = [w for w, _ in words[s : s + n]]
                copies = 1
                while s + (copies + 1) * n <= count:
                    if [w for w, _ in words[s + copies * n : s + (copies + 1) * n]] != block:
                        break
                    copies += 1
                if copies >= self.repeats:
                    self.triggered = True
                    fragment = " ".join(block)
                    if len(fragment) > 80:
                        fragment = fragment[:80] + "…"
                    evidence = f'{n}-token n-gram "{fragment}" repeated {copies}x consecutively'
                    start = self.tail_base + words[s][1]
                    return ReferenceHit("ngram", evidence, start, n=n, occurrences=copies)
        if self.tail_chars is not None and len(self.tail) > self.tail_chars:
            cut = len(self.tail) - self.tail_chars
            suffix = self.tail[cut:]
            self.tail_base += cut
            for i, char in enumerate(suffix):
                if char in _WS:
                    suffix = suffix[i + 1 :]
                    self.tail_base += i + 1
                    break
            self.tail = suffix
        self.max_tail = max(self.max_tail, len(self.tail))
        return None

    def _runs(self, delta: str, offset: int) -> ReferenceHit | None:
        assert self.runs is not None
        alnum, other, ws_counts, gate, names = self.runs
        touched = False
        for i, char in enumerate(delta):
            if not ws_counts and char in _WS:
                self.run_char, self.run_len, self.run_growth = None, 0, 0
                touched = False
                continue
            if char == self.run_char:
                self.run_len += 1
            else:
                self.run_char, self.run_len, self.run_growth, self.run_start = char, 1, 0, offset + i
                touched = False
            if not touched:
                self.run_growth += 1
                touched = True
            threshold = alnum if _is_alnum(char) else other
            if self.run_growth >= gate and self.run_len >= threshold:
                evidence = f'character "{char}" repeated {self.run_len}x consecutively'
                if names:
                    evidence += f" across {self.run_growth} deltas"
                return ReferenceHit("char_run", evidence, self.run_start, run_length=self.run_len)
        return None
