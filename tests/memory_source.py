"""`ListSource`: a finite in-memory Source (the contract's smallest implementation), for pipeline tests."""

from __future__ import annotations

from collections.abc import Iterator

from degeneration_exporter.sources.base import Line, Position, SourceStats


class ListSource:
    """Yields `lines` as `mem.jsonl` lines 1..N, each with a position; records what was committed."""

    def __init__(self, lines: list[bytes]) -> None:
        self.name = "mem"
        self.stats = SourceStats()
        self.committed: list[Position] = []
        self._lines = [Line(data, "mem.jsonl", i + 1, Position("k", i + 1)) for i, data in enumerate(lines)]

    def lines(self) -> Iterator[Line]:
        yield from self._lines

    def commit(self, position: Position) -> None:
        self.committed.append(position)

    def close(self) -> None:
        pass
