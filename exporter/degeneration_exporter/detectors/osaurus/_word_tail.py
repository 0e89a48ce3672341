"""osaurus' word tail and back-to-back n-gram rule, kept incrementally (detectors.md §4.2 step 4-5).

Why incremental: osaurus appends each delta to a 4096-character tail, re-splits the whole tail on
whitespace and rescans every (n, start) pair on every delta. The verdict only changes through the
words a delta completes (and the trailing partial word), so this keeps the tail as a list of
complete words plus the partial one, and per n-gram size the start of the trailing run of
"word j equals word j-n" matches. A delta costs O(words it adds), not O(tail): a streamed delta asks
per new word whether it occurs among the 12 before it (one C-level `in`), a large one compares all
its words per size with `bytes(map(operator.eq, ...))` and a compiled regex.

Equivalence with the published scan (pinned by tests/detectors/test_stream_ngram.py against a naive
re-implementation): `(n, s)` fires iff words s .. s+n*R-1 satisfy word[i] == word[i+n], i.e. a run of
n*(R-1) matches starting at s. Windows entirely inside words seen by an earlier call were checked then
(and did not fire, or the detector latched), so only runs reaching the newly changed words can fire;
the smallest n wins, then the run that starts leftmost. Trimming reproduces osaurus exactly: keep the
last `tail_chars` code points, then drop through the first whitespace when the suffix has one.
"""

from __future__ import annotations

import operator
import re
from bisect import bisect_left, bisect_right
from dataclasses import dataclass
from itertools import accumulate

from ._swift_text import WORDS_AND_SPACES

__all__ = ["NgramLoop", "WordTail"]

_COMPACT_WORDS = 2048
BULK_WORDS = 24
"""Deltas adding more complete words than this take the vectorised scan; fewer, the per-word one."""


@dataclass(frozen=True, slots=True)
class NgramLoop:
    """One firing of the rule: `occurrences` back-to-back copies of the `n`-word unit `words`."""

    n: int
    occurrences: int
    words: tuple[str, ...]
    start: int  # absolute code-point offset of the first copy's first word
    period: int  # code points from the first copy's start to the second copy's start
    end: int  # absolute offset just past the last copy's last word

    @property
    def fragment(self) -> str:
        """The unit as osaurus prints it: its words joined by single spaces."""
        return " ".join(self.words)


class WordTail:
    """The published tail (None = unbounded, the gauntlet's whole text) with the n-gram rule."""

    __slots__ = (
        "_base",
        "_bulk_words",
        "_end",
        "_first",
        "_limit",
        "_live",
        "_max_n",
        "_min_n",
        "_partial_len",
        "_partial_pieces",
        "_partial_start",
        "_repeats",
        "_run_pattern",
        "_starts",
        "_tail_start",
        "_words",
    )

    def __init__(
        self, min_n: int, max_n: int, repeats: int, tail_chars: int | None, bulk_words: int = BULK_WORDS
    ) -> None:
        if not 1 <= min_n <= max_n or repeats < 2 or (tail_chars is not None and tail_chars < 1):
            raise ValueError("need 1 <= min_n <= max_n, repeats >= 2 and tail_chars >= 1")
        self._min_n, self._max_n, self._repeats, self._limit = min_n, max_n, repeats, tail_chars
        self._bulk_words = bulk_words
        self._run_pattern = {
            n: re.compile(b"\x01{" + str(n * (repeats - 1)).encode() + b",}") for n in range(min_n, max_n + 1)
        }
        self._words: list[str] = []  # complete words (each followed by whitespace)
        self._starts: list[int] = []  # absolute start offset of each complete word
        self._base = 0  # absolute word index of _words[0]
        self._first = 0  # absolute word index of the first complete word still in the tail
        # The trailing word not yet followed by whitespace, as the tail holds it, kept as pieces and
        # joined only when compared: a long run without whitespace must not be re-copied per delta.
        self._partial_pieces: list[str] = []
        self._partial_len = 0
        self._partial_start = 0
        self._end = 0  # absolute offset just past everything pushed
        self._tail_start = 0
        # Sizes n whose trailing run of word[j] == word[j-n] (over complete words) is not empty, mapped to
        # the first j of that run: the run's copies start at word j - n.
        self._live: dict[int, int] = {}

    @property
    def tail_chars(self) -> int:
        """Code points the published tail holds now (what osaurus keeps between calls)."""
        return self._end - self._tail_start

    def push(self, delta: str) -> NgramLoop | None:
        """Append one delta and apply the rule; trim only when nothing fired (osaurus order)."""
        if not delta:
            return None
        old_complete = self._base + len(self._words)
        self._append_words(delta)
        loop = self._scan(old_complete)
        if loop is None and self._limit is not None and self._end - self._tail_start > self._limit:
            self._trim(self._end - self._limit)
        return loop

    def _append_words(self, delta: str) -> None:
        # Split keeping the whitespace runs: [word, space, word, ..., word], first and last maybe "".
        # Offsets come from one C-level accumulate, so a large delta costs no Python loop per word.
        parts = WORDS_AND_SPACES.split(delta)
        offsets = list(accumulate(map(len, parts), initial=self._end))
        head, last = parts[0], parts[-1]
        self._end = offsets[-1]
        if len(parts) == 1:  # no whitespace: the delta only extends the partial word
            if not self._partial_len:
                self._partial_start = offsets[0]
            self._partial_pieces.append(head)
            self._partial_len += len(head)
            return
        words, starts = self._words, self._starts
        if self._partial_len or head:
            starts.append(self._partial_start if self._partial_len else offsets[0])
            words.append(self._partial() + head)
        words.extend(parts[2:-1:2])
        starts.extend(offsets[2:-2:2])
        self._partial_pieces = [last] if last else []
        self._partial_len, self._partial_start = len(last), offsets[-2]

    def _partial(self) -> str:
        pieces = self._partial_pieces
        if len(pieces) > 1:
            pieces[:] = ["".join(pieces)]
        return pieces[0] if pieces else ""

    def _scan(self, old_complete: int) -> NgramLoop | None:
        if self._base + len(self._words) - old_complete > self._bulk_words:
            return self._scan_bulk(old_complete)
        return self._scan_words(old_complete)

    def _scan_words(self, old_complete: int) -> NgramLoop | None:
        """Few new words (a streamed delta): for each, the sizes n at which it repeats word j - n."""
        words, base, first = self._words, self._base, self._first
        min_n, max_n, needed = self._min_n, self._max_n, self._repeats - 1
        complete = base + len(words)
        live = self._live
        fired: dict[int, int] = {}  # n -> start of the first run reaching n * (R - 1) matches
        for j in range(old_complete, complete + (1 if self._partial_len else 0)):
            lo = max(first, j - max_n)
            recent = words[lo - base : j - min_n + 1 - base]
            if j < complete:
                word = words[j - base]
            elif recent and self._partial_len <= max(map(len, recent)):
                word = self._partial()
            else:
                continue  # a partial word longer than every recent word equals none of them
            if word not in recent:
                if j < complete:
                    live = {}
                continue
            grown: dict[int, int] = {}
            for n in range(min_n, max_n + 1):
                if j - n < first:
                    break
                if words[j - n - base] == word:
                    since = max(live.get(n, j), first + n)
                    grown[n] = since
                    if j - since + 1 >= n * needed and n not in fired:
                        fired[n] = since - n
            if j < complete:
                live = grown  # the partial word may still change: it is tested, never committed
        self._live = live
        if not fired:
            return None
        n = min(fired)
        return self._loop(n, fired[n], self._matched_from(fired[n], n))

    def _matched_from(self, start: int, n: int) -> int:
        """How many consecutive i from `start` have word[i] == word[i+n] (the copies' extent)."""
        last = self._base + len(self._words) - (0 if self._partial_len else 1)
        i = start
        while i + n <= last and self._token(i)[0] == self._token(i + n)[0]:
            i += 1
        return i - start

    def _scan_bulk(self, old_complete: int) -> NgramLoop | None:
        """Many new words (batch, large deltas): per n, one C-level comparison and one regex search."""
        complete = self._base + len(self._words)
        first = self._first
        lo = max(first, old_complete - self._max_n)
        window = self._words[lo - self._base :]
        if self._partial_len:
            window.append(self._partial())
        eq = operator.eq
        live = self._live
        for n in range(self._min_n, self._max_n + 1):
            i0 = max(old_complete - n, first)
            since = live.get(n)
            run_from = i0 if since is None else max(since - n, first)
            prior = i0 - run_from
            matches = bytes(map(eq, window[i0 - lo :], window[i0 - lo + n :]))
            needed = n * (self._repeats - 1)
            lead = len(matches) - len(matches.lstrip(b"\x01"))
            if prior and prior + lead >= needed:
                return self._loop(n, run_from, prior + lead)
            found = self._run_pattern[n].search(matches)
            if found:
                return self._loop(n, i0 + found.start(), found.end() - found.start())
            settled = matches[: max(0, complete - n - i0)]
            if settled:
                trailing = len(settled) - len(settled.rstrip(b"\x01"))
                if trailing == len(settled):
                    live[n] = run_from + n
                elif trailing:
                    live[n] = complete - trailing
                else:
                    live.pop(n, None)
        return None

    def _token(self, index: int) -> tuple[str, int]:
        complete = self._base + len(self._words)
        if index < complete:
            return self._words[index - self._base], self._starts[index - self._base]
        return self._partial(), self._partial_start

    def _loop(self, n: int, start_index: int, matched: int) -> NgramLoop:
        copies = 1 + matched // n
        words = tuple(self._token(start_index + j)[0] for j in range(n))
        _, start = self._token(start_index)
        _, second = self._token(start_index + n)
        last_word, last_start = self._token(start_index + copies * n - 1)
        return NgramLoop(n, copies, words, start, second - start, last_start + len(last_word))

    def _trim(self, cut: int) -> None:
        words, starts, base = self._words, self._starts, self._base
        local_first = self._first - base
        i = bisect_right(starts, cut, local_first, len(starts)) - 1
        if i >= local_first and starts[i] + len(words[i]) > cut:
            new_start = starts[i] + len(words[i]) + 1  # drop through the whitespace ending that word
        elif self._partial_len and self._partial_start <= cut:
            new_start = cut  # no whitespace left in the suffix: keep it whole, the word cut short
            self._partial_pieces = [self._partial()[cut - self._partial_start :]]
            self._partial_len -= cut - self._partial_start
            self._partial_start = cut
        else:
            new_start = cut + 1  # the suffix starts on whitespace: drop that one character
        self._tail_start = new_start
        local = bisect_left(starts, new_start, local_first, len(starts))
        self._first = base + local
        if local > _COMPACT_WORDS:
            del words[:local], starts[:local]
            self._base += local
