"""`Tally`: the aggregates of a scan (totals, per file, per run and step) and their merge.

Why mergeable: pieces are classified in other processes (or Ray tasks) and merged in input order; a
tally holds only counts and the first `MAX_MALFORMED_LISTED` malformed lines per file, so memory stays
flat in the number of records.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from ..classification.result import Classification, FlagKind

__all__ = ["MAX_MALFORMED_LISTED", "FileTally", "GroupTally", "Tally", "frac"]

MAX_MALFORMED_LISTED = 1000
"""Malformed lines listed per file in the report; the rest are counted (`num_malformed`)."""

_KINDS = tuple(k.value for k in FlagKind)
_VALUE = {k: k.value for k in FlagKind}
"""Each kind's value by a dict lookup: `FlagKind.value` is a property, slow once per sample."""
_REPETITION = FlagKind.REPETITION.value
_FLAG_VALUES: dict[frozenset[FlagKind], tuple[str, ...]] = {}
"""The kind values of each set of flags (at most 16 sets), so a sample's three groups share one walk."""


def _flag_values(flags: frozenset[FlagKind]) -> tuple[str, ...]:
    values = _FLAG_VALUES.get(flags)
    if values is None:
        values = _FLAG_VALUES[flags] = tuple(_VALUE[kind] for kind in flags)
    return values


def frac(part: int, whole: int) -> float:
    return part / whole if whole else 0.0


@dataclass(slots=True)
class GroupTally:
    """Samples and flags of one group (a file, a run, a (run, step))."""

    num_samples: int = 0
    flagged: Counter[str] = field(default_factory=Counter)

    def count(self, values: tuple[str, ...]) -> None:
        """One more sample, flagged with the kinds `values`."""
        self.num_samples += 1
        if values:
            flagged = self.flagged
            for value in values:
                flagged[value] += 1

    def merge(self, other: GroupTally) -> None:
        self.num_samples += other.num_samples
        self.flagged.update(other.flagged)

    def counts(self) -> dict[str, Any]:
        flagged = {k: self.flagged.get(k, 0) for k in _KINDS}
        return {
            "num_samples": self.num_samples,
            "num_repetitive_samples": flagged[_REPETITION],
            "repetition_frac": frac(flagged[_REPETITION], self.num_samples),
            "num_flagged": flagged,
        }


@dataclass(slots=True)
class FileTally:
    """One input file: its counts, where its first malformed lines are, its Relax `rollout_id`."""

    path: str
    group: GroupTally = field(default_factory=GroupTally)
    num_malformed: int = 0
    malformed: list[dict[str, Any]] = field(default_factory=list)
    rollout_id: object = None
    format_name: str | None = None

    def add_malformed(self, line: int, reason: str, message: str) -> None:
        self.num_malformed += 1
        if len(self.malformed) < MAX_MALFORMED_LISTED:
            self.malformed.append({"line": line, "reason": reason, "message": message})

    def merge(self, other: FileTally) -> None:
        self.group.merge(other.group)
        self.num_malformed += other.num_malformed
        room = MAX_MALFORMED_LISTED - len(self.malformed)
        self.malformed += other.malformed[:room]
        if self.rollout_id is None:
            self.rollout_id = other.rollout_id
        self.format_name = self.format_name or other.format_name

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "format": self.format_name,
            "rollout_id": self.rollout_id,
            **self.group.counts(),
            "num_malformed": self.num_malformed,
            "malformed": self.malformed,
        }


@dataclass(slots=True)
class Tally:
    """Aggregates over any number of files; `add` per sample, `merge` per finished piece."""

    files: dict[str, FileTally] = field(default_factory=dict)
    runs: dict[str | None, GroupTally] = field(default_factory=dict)
    steps: dict[tuple[str | None, int], GroupTally] = field(default_factory=dict)

    def file(self, path: str) -> FileTally:
        found = self.files.get(path)
        if found is None:
            found = self.files[path] = FileTally(path)
        return found

    def add(self, result: Classification) -> None:
        path = result.path or "-"
        file = self.files.get(path)
        if file is None:
            file = self.file(path)
        if file.rollout_id is None:
            file.rollout_id = result.identity.get("rollout_id")
        run_name = result.run
        run = self.runs.get(run_name)
        if run is None:
            run = self.runs[run_name] = GroupTally()
        groups: tuple[GroupTally, ...] = (file.group, run)
        if result.step is not None:
            key = (run_name, result.step)
            step = self.steps.get(key)
            if step is None:
                step = self.steps[key] = GroupTally()
            groups = (file.group, run, step)
        values = _flag_values(result.flags)
        for group in groups:
            group.count(values)

    def merge(self, other: Tally) -> None:
        for path, file in other.files.items():
            self.file(path).merge(file)
        for run, group in other.runs.items():
            self.runs.setdefault(run, GroupTally()).merge(group)
        for key, group in other.steps.items():
            self.steps.setdefault(key, GroupTally()).merge(group)

    def summary(self, config: dict[str, Any], failed: list[dict[str, str]]) -> dict[str, Any]:
        """The report's aggregates: today's keys, then `runs`, `steps` and `failed_files`."""
        total = GroupTally()
        for file in self.files.values():
            total.merge(file.group)
        counts = total.counts()
        return {
            "config": config,
            **counts,
            "flagged_frac": {k: frac(v, total.num_samples) for k, v in counts["num_flagged"].items()},
            "num_malformed": sum(f.num_malformed for f in self.files.values()),
            "files": [f.to_dict() for f in self.files.values()],
            "runs": [
                {"run": run, **self._short(group)}
                for run, group in sorted(self.runs.items(), key=lambda kv: kv[0] or "")
            ],
            "steps": [
                {"run": run, "step": step, **self._short(group)}
                for (run, step), group in sorted(
                    self.steps.items(), key=lambda kv: (kv[0][0] or "", kv[0][1])
                )
            ],
            "failed_files": failed,
        }

    @staticmethod
    def _short(group: GroupTally) -> dict[str, Any]:
        counts = group.counts()
        return {
            "num_samples": counts["num_samples"],
            "num_flagged": counts["num_flagged"],
            "repetition_frac": counts["repetition_frac"],
        }
