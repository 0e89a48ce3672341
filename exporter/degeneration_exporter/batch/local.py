"""Run pieces here (`--workers 1`) or in a pool of worker processes, yielding results in input order.

Why ordered with a bounded window: the report must be byte-identical to a one-process run, and only
`2 * workers` pieces' results may wait in memory at once, however many pieces there are. stdin (`-`)
cannot be handed to another process, so its piece always runs here, in its turn.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor

from .piece import PieceResult, ScanJob, scan_piece
from .plan import Piece

__all__ = ["available_cores", "run_local"]


def available_cores() -> int:
    """Cores this process may run on (its affinity mask, as in containers and under taskset)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def run_local(job: ScanJob, pieces: Sequence[Piece], workers: int) -> Iterator[PieceResult]:
    """Every piece's result, in the order of `pieces`."""
    if workers <= 1 or len(pieces) <= 1:
        for piece in pieces:
            yield scan_piece(job, piece)
        return
    with ProcessPoolExecutor(max_workers=min(workers, len(pieces))) as pool:
        window: deque[Future[PieceResult] | Piece] = deque()
        todo = iter(pieces)
        limit = 2 * workers

        def submit() -> bool:
            piece = next(todo, None)
            if piece is None:
                return False
            window.append(piece if piece.path == "-" else pool.submit(scan_piece, job, piece))
            return True

        while len(window) < limit and submit():
            pass
        while window:
            head = window.popleft()
            yield scan_piece(job, head) if isinstance(head, Piece) else head.result()
            submit()
