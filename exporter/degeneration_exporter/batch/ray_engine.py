"""`scan --engine ray`: the same pieces as Ray tasks on the cluster the user already has.

Why tasks over pieces rather than Ray Data: a piece is a file or a line-aligned byte range read where
it lives (shared storage), classified by the same `scan_piece` as a local run, and only its result
(aggregates and the samples the report lists: with `--only-hits` the flagged ones) comes back; results
are taken in input order with a bounded window, so the report is identical to a local run. A worker
that dies mid-task is retried by Ray (`max_retries`); a task's result counts only once it returned, so
a retried piece is never counted twice. The paths must be readable from every node.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Iterator, Sequence
from typing import Any

from ..errors import ConfigError
from .piece import PieceResult, ScanJob, scan_piece
from .plan import Piece

__all__ = ["TASK_RETRIES", "run_ray"]

TASK_RETRIES = 3
"""How many times Ray reruns a piece whose worker died (then the scan fails that piece)."""


def run_ray(job: ScanJob, pieces: Sequence[Piece], address: str | None) -> Iterator[PieceResult]:
    """Every piece's result, in the order of `pieces`, computed as Ray tasks."""
    try:
        import ray as ray_module
    except ImportError as exc:
        raise ConfigError(
            "--engine ray needs ray: pip install 'degeneration-exporter[ray]'", field="--engine"
        ) from exc
    ray: Any = ray_module  # ray's own annotations are partial
    started_here = not ray.is_initialized()
    if started_here:
        ray.init(
            address=address,
            log_to_driver=False,
            logging_level=logging.WARNING,
            configure_logging=True,
            include_dashboard=False,
        )
    try:
        remote: Any = ray.remote(max_retries=TASK_RETRIES)(scan_piece)
        cpus = int(ray.cluster_resources().get("CPU", 1))
        limit = max(2, 2 * cpus)
        window: deque[tuple[Piece, Any]] = deque()
        todo = iter(pieces)
        job_ref = ray.put(job)

        def submit() -> bool:
            piece = next(todo, None)
            if piece is None:
                return False
            ref = None if piece.path == "-" else remote.remote(job_ref, piece)
            window.append((piece, ref))
            return True

        while len(window) < limit and submit():
            pass
        while window:
            piece, ref = window.popleft()
            yield scan_piece(job, piece) if ref is None else _get(ray, ref, piece)
            submit()
    finally:
        if started_here:
            ray.shutdown()


def _get(ray: Any, ref: Any, piece: Piece) -> PieceResult:
    """The task's result; a piece Ray gave up on (retries exhausted) is a failed piece, not a crash."""
    try:
        result: PieceResult = ray.get(ref)
    except ray.exceptions.RayError as exc:
        from .tally import Tally

        tally = Tally()
        tally.file(piece.path)
        return PieceResult(piece, [], tally, 0, error=f"ray task failed: {type(exc).__name__}")
    return result
