"""JSON report: the offline diagnosis document `scan` writes, shaped like Relax's `diagnose_repetition`.

Why Relax's shape: RL users already read `num_samples`, `num_repetitive_samples`, `repetition_frac`
and per-file `samples` with identity fields; we add `kinds`, per-kind counts and per-detector details.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..classification.result import Classification, FlagKind

__all__ = ["FileReport", "JsonReport"]


def _frac(part: int, whole: int) -> float:
    return part / whole if whole else 0.0


@dataclass(slots=True)
class FileReport:
    """Counts and samples of one input file."""

    path: str
    num_samples: int = 0
    flagged: dict[str, int] = field(default_factory=lambda: {k.value: 0 for k in FlagKind})
    malformed: list[dict[str, Any]] = field(default_factory=list)
    samples: list[dict[str, Any]] = field(default_factory=list)
    rollout_id: object = None

    def add(self, result: Classification, *, keep: bool) -> None:
        self.num_samples += 1
        for kind in result.flags:
            self.flagged[kind.value] += 1
        if self.rollout_id is None:
            self.rollout_id = result.identity.get("rollout_id")
        if keep:
            self.samples.append(result.to_dict())

    def to_dict(self) -> dict[str, Any]:
        rep = self.flagged[FlagKind.REPETITION.value]
        return {
            "path": self.path,
            "rollout_id": self.rollout_id,
            "num_samples": self.num_samples,
            "num_repetitive_samples": rep,
            "repetition_frac": _frac(rep, self.num_samples),
            "num_flagged": dict(self.flagged),
            "num_malformed": len(self.malformed),
            "malformed": self.malformed,
            "samples": self.samples,
        }


@dataclass(slots=True)
class JsonReport:
    """The whole report: totals over files, then one entry per file.

    `only_hits` drops samples with no flag from the lists; the counts still cover every sample.
    """

    config: dict[str, Any]
    only_hits: bool = False
    files: list[FileReport] = field(default_factory=list)

    def open_file(self, path: str) -> FileReport:
        report = FileReport(path)
        self.files.append(report)
        return report

    def emit(self, file: FileReport, result: Classification) -> None:
        file.add(result, keep=bool(result.flags) or not self.only_hits)

    def to_dict(self) -> dict[str, Any]:
        total = sum(f.num_samples for f in self.files)
        flagged = {k.value: sum(f.flagged[k.value] for f in self.files) for k in FlagKind}
        rep = flagged[FlagKind.REPETITION.value]
        return {
            "config": self.config,
            "num_samples": total,
            "num_repetitive_samples": rep,
            "repetition_frac": _frac(rep, total),
            "num_flagged": flagged,
            "flagged_frac": {k: _frac(v, total) for k, v in flagged.items()},
            "num_malformed": sum(len(f.malformed) for f in self.files),
            "files": [f.to_dict() for f in self.files],
        }
