"""Model-based test: random write/fragment/rotate/truncate/restart/read sequences against a model.

As Vector's `file_watcher` experiment: the `FileTailer` is driven on real files with a clock the test
moves, and after every read the lines it produced must equal what the model says a writer made
readable. Every line is unique and names its file generation, so order is checked per generation.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections import Counter
from datetime import timedelta
from pathlib import Path

from degeneration_exporter.sources.base import Line, SourceStats
from degeneration_exporter.sources.file_tail.ledger import CommitLedger
from degeneration_exporter.sources.file_tail.positions import load_positions, save_positions
from degeneration_exporter.sources.file_tail.tailer import FileTailer
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, precondition, rule

from .tailing import fast_config

ROTATE_WAIT = 0.3


class TailModel(RuleBasedStateMachine):
    """Writer actions on `logs/app.jsonl` and the lines a correct tailer must yield for them."""

    def __init__(self) -> None:
        super().__init__()
        self.root = Path(tempfile.mkdtemp(prefix="tail-model-"))
        (self.root / "logs").mkdir()
        self.log = self.root / "logs" / "app.jsonl"
        self.log.touch()
        self.config = fast_config(self.root, "logs/app.jsonl", rotate_wait=timedelta(seconds=ROTATE_WAIT))
        self.now = 1000.0
        self.seen: list[Line] = []
        self.expected: Counter[tuple[bytes, bool]] = Counter()
        self.order: dict[int, list[bytes]] = {}
        self.generation = 0
        self.counter = 0
        self.fragment = b""  # unterminated bytes at the end of the current file
        # fragments of rotated files: due as partial lines at the first read that waits rotate_wait
        # after the read that noticed the rotation
        self.draining: list[tuple[bytes, bool]] = []
        self.opened = False  # the current generation was seen by a read (else a rotation could hide it)
        self.caught_up = True  # nothing was written since the last read
        self.at_next_read: list[bytes] = []
        self.rotated_unread = False  # a rotated-away file still had unread bytes (lost on restart)
        self.ledger = CommitLedger(None)
        self.stats = SourceStats()
        self.tailer = self._new_tailer()

    def _new_tailer(self) -> FileTailer:
        clock = lambda: self.now  # noqa: E731 - one clock for both, moved by `read`
        return FileTailer(self.config, self.ledger, self.stats, self._take, clock=clock, wall_clock=clock)

    def _take(self, line: Line) -> None:
        self.seen.append(line)
        assert line.position is not None
        self.ledger.commit(line.position.key, line.position.offset)

    def _next_text(self) -> bytes:
        self.counter += 1
        return b'{"g":%d,"n":%d,"pad":"%s"}' % (self.generation, self.counter, b"x" * (self.counter % 7))

    def _expect(self, data: bytes, *, partial: bool = False) -> None:
        self.expected[(data, partial)] += 1
        self.order.setdefault(self.generation, []).append(data)

    def _append(self, data: bytes) -> None:
        self.caught_up = False
        with open(self.log, "ab") as fh:
            fh.write(data)

    @rule(count=st.integers(1, 5))
    def write_lines(self, count: int) -> None:
        for _ in range(count):
            text = self._next_text()
            self._append(text + b"\n")
            self._expect(self.fragment + text)
            self.fragment = b""

    @rule()
    def write_fragment(self) -> None:
        piece = b"frag%d" % self.counter
        self.counter += 1
        self._append(piece)
        self.fragment += piece

    def _rotated(self) -> None:
        self.rotated_unread |= not self.caught_up
        if self.fragment:
            self.draining.append((self.fragment, False))
        self.fragment = b""
        self.generation += 1
        self.opened = False

    @precondition(lambda self: self.opened)
    @rule()
    def rotate_by_rename(self) -> None:
        os.rename(self.log, self.log.with_name(f"app.jsonl.{self.generation}"))
        self._rotated()
        self.log.touch()

    @precondition(lambda self: self.opened)
    @rule(count=st.integers(0, 3))
    def rotate_by_atomic_replace(self, count: int) -> None:
        self._rotated()
        tmp = self.log.with_name("app.jsonl.tmp")
        texts = [self._next_text() for _ in range(count)]
        tmp.write_bytes(b"".join(t + b"\n" for t in texts))
        os.replace(tmp, self.log)
        self.caught_up = not texts
        for text in texts:
            self._expect(text)

    @precondition(lambda self: self.opened and self.caught_up)
    @rule()
    def truncate(self) -> None:
        # copytruncate when the reader is caught up loses nothing (otherwise the unread tail is the
        # documented loss window); a fragment already read comes out partial when the cut is noticed
        if self.fragment:
            self.at_next_read.append(self.fragment)
        self.fragment = b""
        self.generation += 1
        os.truncate(self.log, 0)

    @rule(wait=st.booleans())
    def read(self, wait: bool) -> None:
        self.now += ROTATE_WAIT + 0.01 if wait else 0.0
        self.tailer.discover()
        while self.tailer.poll():
            pass
        self.opened = True
        self.caught_up = True
        self.rotated_unread = False
        due = [fragment for fragment, noticed in self.draining if noticed and wait] + self.at_next_read
        for fragment in due:
            self.expected[(fragment, True)] += 1
        self.at_next_read = []
        self.draining = [(fragment, True) for fragment, noticed in self.draining if not (noticed and wait)]
        self.check()

    @precondition(lambda self: not (self.draining or self.at_next_read or self.rotated_unread))
    @rule()
    def restart(self) -> None:
        self.tailer.close()
        positions = self.root / "positions.json"
        save_positions(positions, self.ledger.snapshot(self.now, 1e9))
        self.ledger = CommitLedger(load_positions(positions))
        self.tailer = self._new_tailer()
        self.opened = False  # a new process holds no descriptor until its first read

    def check(self) -> None:
        got = Counter((line.data, line.partial) for line in self.seen)
        assert got == self.expected, f"extra {got - self.expected}, missing {self.expected - got}"
        complete = [line.data for line in self.seen if not line.partial]
        for generation, lines in self.order.items():
            mine = [data for data in complete if data.endswith(b"}") and b'"g":%d,' % generation in data]
            assert mine == [d for d in lines if d.endswith(b"}")], f"order of generation {generation}"

    def teardown(self) -> None:
        self.tailer.close()
        shutil.rmtree(self.root, ignore_errors=True)


TailModel.TestCase.settings = settings(max_examples=150, stateful_step_count=30, deadline=None)
test_tailer_matches_model = TailModel.TestCase
