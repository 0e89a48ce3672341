"""Per-run, per-step fractions: the `rollout/repetition_frac` view of slime, Relax and friends.

Why its own module: RL trainers plot one number per step (slime `rollout/repetition_frac`,
`rollout/truncated_ratio`; verl `response_length/clip_ratio`; ecosystem.md §6), and alerts on a step
need the step to be finished. A step of a `(source, run)` is complete when a record with a higher
step appears for that run, when no record of that run has arrived for `idle_timeout`, or on
`flush()` (ecosystem.md §7.5 item 10: the idle timeout stands in for "the file for step N is
closed", which a tailer cannot see; without it the last step of a run, or a step followed by a long
training phase, would never show while the daemon runs).

A record of the step that was completed by idleness or `flush()` reopens it: it is added to the
same totals (never counted twice), and the step is published again with the full totals when it
completes again. Records of an older step than the latest one are ignored here (they are still
counted by the response metrics). Both sinks read `completed()` at scrape or export time, after
`complete_idle()`; runs are forgotten through `forget()` when their label expires, which removes
their series. The clock is injected so tests drive the timeout without sleeping.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta

from ..classification.result import FlagKind

__all__ = [
    "DEFAULT_STEP_IDLE_TIMEOUT",
    "STEP_IDLE_TIMEOUT_HELP",
    "RolloutSteps",
    "StepSummary",
    "check_step_idle_timeout",
    "effective_step_idle_timeout",
]

DEFAULT_STEP_IDLE_TIMEOUT = timedelta(minutes=2)
STEP_IDLE_TIMEOUT_HELP = (
    "A rollout step with no new record of its run for this long is complete and its per-step gauges "
    "are published (null: only a higher step or shutdown completes a step); a later record of that "
    "step reopens it and the step is republished with the updated totals."
)


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


class _Step:
    """The latest step of one run: its totals, when it last got a record, whether it is published."""

    __slots__ = ("done", "last_record", "repetition", "responses", "step", "template_leak", "truncated")

    def __init__(self, step: int) -> None:
        self.step = step
        self.responses = 0
        self.repetition = 0
        self.truncated = 0
        self.template_leak = 0
        self.last_record = 0.0
        self.done = False

    def add(self, flags: frozenset[FlagKind], now: float) -> None:
        self.responses += 1
        self.repetition += FlagKind.REPETITION in flags
        self.truncated += FlagKind.CEILING in flags
        self.template_leak += FlagKind.TEMPLATE_LEAK in flags
        self.last_record = now
        self.done = False

    def summary(self) -> StepSummary:
        return StepSummary(self.step, self.responses, self.repetition, self.truncated, self.template_leak)


class RolloutSteps:
    """Latest and last-completed step per `(source, run)`; thread-safe (emit vs scrape).

    `idle_timeout` None: only a higher step or `flush()` completes a step.
    """

    def __init__(
        self,
        idle_timeout: timedelta | None = DEFAULT_STEP_IDLE_TIMEOUT,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._timeout = idle_timeout.total_seconds() if idle_timeout is not None else None
        self._clock = clock
        self._latest: dict[tuple[str, str], _Step] = {}
        self._completed: dict[tuple[str, str], StepSummary] = {}
        self._next_due = math.inf  # no open step can be idle before this instant
        self._lock = threading.Lock()

    def observe(self, source: str, run: str, step: int, flags: frozenset[FlagKind]) -> None:
        """Count one response of `step`; a higher step completes the latest one, idle steps complete first."""
        key = (source, run)
        now = self._clock()
        with self._lock:
            self._complete_idle(now)
            latest = self._latest.get(key)
            if latest is None or step > latest.step:
                if latest is not None:
                    self._completed[key] = latest.summary()
                latest = self._latest[key] = _Step(step)
            elif step < latest.step:
                return
            latest.add(flags, now)
            if self._timeout is not None:
                self._next_due = min(self._next_due, now + self._timeout)

    def complete_idle(self) -> None:
        """Complete every open step whose run had no record for `idle_timeout` (cheap when none is due)."""
        now = self._clock()
        with self._lock:
            self._complete_idle(now)

    def _complete_idle(self, now: float) -> None:
        if self._timeout is None or now < self._next_due:
            return
        cutoff = now - self._timeout
        next_due = math.inf
        for key, latest in self._latest.items():
            if latest.done:
                continue
            if latest.last_record <= cutoff:
                latest.done = True
                self._completed[key] = latest.summary()
            else:
                next_due = min(next_due, latest.last_record + self._timeout)
        self._next_due = next_due

    def flush(self) -> None:
        """Complete every open step (end of input, shutdown); a later record of it reopens it."""
        with self._lock:
            for key, latest in self._latest.items():
                if not latest.done:
                    latest.done = True
                    self._completed[key] = latest.summary()

    def forget(self, source: str, run: str) -> None:
        """Drop a run entirely (its label expired)."""
        with self._lock:
            self._latest.pop((source, run), None)
            self._completed.pop((source, run), None)

    def completed(self) -> dict[tuple[str, str], StepSummary]:
        """Last completed step per `(source, run)`, a snapshot."""
        with self._lock:
            return dict(self._completed)


def check_step_idle_timeout(idle_timeout: timedelta | None, run_ttl: timedelta, *, explicit: bool) -> None:
    """Raise ValueError unless `idle_timeout` is positive and, when set by the user, shorter than `run_ttl`.

    Why: a run is forgotten (its series removed) after `run_ttl` without records, so a step idle
    timeout at least that long would drop the run before its last step could ever show. The
    default is not rejected (a config valid before the timeout existed stays valid); it is
    shortened instead by `effective_step_idle_timeout`.
    """
    if idle_timeout is None:
        return
    if idle_timeout <= timedelta(0):
        raise ValueError("step_idle_timeout must be positive (or null to disable it)")
    if explicit and idle_timeout >= run_ttl:
        raise ValueError(
            f"step_idle_timeout ({idle_timeout}) must be shorter than limits.run_ttl ({run_ttl}), "
            "else a run is forgotten before its last step is published"
        )


def effective_step_idle_timeout(idle_timeout: timedelta | None, run_ttl: timedelta) -> timedelta | None:
    """`idle_timeout`, or half of `run_ttl` when it is not shorter (so the last step shows for a while)."""
    if idle_timeout is None or idle_timeout < run_ttl:
        return idle_timeout
    return run_ttl / 2
