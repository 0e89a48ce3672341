"""Per-run, per-step fractions: the `rollout/repetition_frac` view of slime, Relax and friends.

Why its own module: RL trainers plot one number per step (slime `rollout/repetition_frac`,
`rollout/truncated_ratio`; verl `response_length/clip_ratio`; ecosystem.md §6), and alerts on a step
need the step to be finished. A step is complete when a record with a higher step appears for the
same `(source, run)`, or on `flush()` (ecosystem.md §7.5 item 10). Records of an older step than
the open one arrive late and are ignored here (they are still counted by the response metrics).
Both sinks read `completed()` at scrape or export time; runs are forgotten through `forget()`
when their label expires, which removes their series.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from ..classification.result import FlagKind

__all__ = ["RolloutSteps", "StepSummary"]


@dataclass(frozen=True, slots=True)
class StepSummary:
    """Counts of one completed step of one run; fractions are over `responses` (never zero)."""

    step: int
    responses: int
    repetition: int
    truncated: int
    template_leak: int

    @property
    def repetition_frac(self) -> float:
        return self.repetition / self.responses

    @property
    def truncated_frac(self) -> float:
        return self.truncated / self.responses

    @property
    def template_leak_frac(self) -> float:
        return self.template_leak / self.responses


class _OpenStep:
    __slots__ = ("repetition", "responses", "step", "template_leak", "truncated")

    def __init__(self, step: int) -> None:
        self.step = step
        self.responses = 0
        self.repetition = 0
        self.truncated = 0
        self.template_leak = 0

    def add(self, flags: frozenset[FlagKind]) -> None:
        self.responses += 1
        self.repetition += FlagKind.REPETITION in flags
        self.truncated += FlagKind.CEILING in flags
        self.template_leak += FlagKind.TEMPLATE_LEAK in flags

    def summary(self) -> StepSummary:
        return StepSummary(self.step, self.responses, self.repetition, self.truncated, self.template_leak)


class RolloutSteps:
    """Open and last-completed step per `(source, run)`; thread-safe (emit vs scrape)."""

    def __init__(self) -> None:
        self._open: dict[tuple[str, str], _OpenStep] = {}
        self._completed: dict[tuple[str, str], StepSummary] = {}
        self._lock = threading.Lock()

    def observe(self, source: str, run: str, step: int, flags: frozenset[FlagKind]) -> None:
        """Count one response of `step`; a higher step completes the open one."""
        key = (source, run)
        with self._lock:
            current = self._open.get(key)
            if current is None or step > current.step:
                if current is not None:
                    self._completed[key] = current.summary()
                current = self._open[key] = _OpenStep(step)
            elif step < current.step:
                return
            current.add(flags)

    def flush(self) -> None:
        """Complete every open step (end of input, shutdown)."""
        with self._lock:
            for key, current in self._open.items():
                self._completed[key] = current.summary()
            self._open.clear()

    def forget(self, source: str, run: str) -> None:
        """Drop a run entirely (its label expired)."""
        with self._lock:
            self._open.pop((source, run), None)
            self._completed.pop((source, run), None)

    def completed(self) -> dict[tuple[str, str], StepSummary]:
        """Last completed step per `(source, run)`, a snapshot."""
        with self._lock:
            return dict(self._completed)
