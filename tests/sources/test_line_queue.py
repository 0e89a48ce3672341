"""`LineQueue`: the bounded hand-off shared by the file tail reader and the HTTP push handlers."""

from __future__ import annotations

import threading

from degeneration_exporter.sources.base import Line, SourceStats
from degeneration_exporter.sources.line_queue import LineQueue


def lines(count: int) -> list[Line]:
    return [Line(b"{}", "http", number) for number in range(1, count + 1)]


def test_batch_gives_up_at_its_own_timeout_while_another_batch_waits_for_room() -> None:
    queue = LineQueue(2, SourceStats())
    assert queue.put_all(lines(2), timeout=0)  # full from here on
    waiting = threading.Thread(target=queue.put_all, args=(lines(1), 20.0), daemon=True)
    waiting.start()
    try:
        # The waiting batch holds the batch lock; a second batch with no time to wait must answer
        # False at once, not queue behind the first one's 20 s.
        while not queue._batch_lock.locked():
            waiting.join(0.01)
        assert queue.put_all(lines(1), timeout=0) is False
        assert waiting.is_alive()
    finally:
        queue.close()
        waiting.join()


def test_batch_goes_in_whole_once_room_is_made() -> None:
    queue = LineQueue(2, SourceStats())
    assert queue.put_all(lines(2), timeout=0)
    assert queue.put_all(lines(1), timeout=0) is False
    taken = queue.lines()
    assert next(taken).line_no == 1
    assert queue.put_all(lines(1), timeout=0)
    assert [next(taken).line_no for _ in range(2)] == [2, 1]
    assert queue.put_all(lines(3), timeout=0) is False  # more than max_lines: never fits
