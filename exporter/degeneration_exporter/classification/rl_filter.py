"""Batch helpers for an RL experience filter, in Trinity-RFT's operator shape.

Why this shape: Trinity-RFT's `ExperienceOperator.process(exps) -> (kept_exps, metrics)` (see
trinity/buffer/operators/experience_operator.py and filters/reward_filter.py, whose metrics are
`{"filtered_count": n}`) is what RL frameworks call once per explore step; `RepetitionFilter`
has exactly that method, so it drops looping rollouts before they reach the trainer and returns
numbers a trainer logs per step. It reads experiences as they come, without importing any
framework: a plain string, a `Record`, a mapping, or any object with Trinity's `Experience`
attributes (`response_text`, `tokens` including the prompt, `prompt_length`, `action_mask`;
tensors are read through `.tolist()`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, TypeVar

from ..record import Record, parse_finish_reason
from .classify import Classifier, default_classifier
from .result import Classification, FlagKind

__all__ = ["RepetitionFilter", "as_record", "batch_metrics"]

E = TypeVar("E")


def _ints(value: Any) -> list[int] | None:
    """Token ids or a mask from a list, a tuple, a tensor or an array (`.tolist()`), else None."""
    if value is None:
        return None
    if hasattr(value, "tolist"):
        value = value.tolist()
    return [int(v) for v in value]


def as_record(experience: object) -> Record:
    """One experience as a `Record`: a string is the response text; a mapping or an object is read
    by Trinity's field names (`response_text`, `tokens`, `prompt_length`, `action_mask`) with
    `text`/`token_ids`/`reasoning`/`finish_reason` accepted too. Raises TypeError when there is
    neither text nor token ids to judge."""
    if isinstance(experience, Record):
        return experience
    if isinstance(experience, str):
        return Record(text=experience)

    def field(*names: str) -> Any:
        for name in names:
            value = (
                experience.get(name) if isinstance(experience, Mapping) else getattr(experience, name, None)
            )
            if value is not None:
                return value
        return None

    text = field("response_text", "text")
    token_ids = _ints(field("tokens", "token_ids"))
    if text is None and token_ids is None:
        raise TypeError(
            f"{type(experience).__name__}: no response_text/text and no tokens/token_ids to judge"
        )
    return Record(
        text=str(text or ""),
        reasoning=str(field("reasoning") or ""),
        finish_reason=parse_finish_reason(field("finish_reason")),
        token_ids=token_ids,
        prompt_length=int(field("prompt_length") or 0),
        action_mask=_ints(field("action_mask")),
    )


def batch_metrics(results: Sequence[Classification], dropped: int = 0) -> dict[str, float]:
    """Per-step numbers for a trainer's log: counts and fractions per flag, loop score mean and max.

    `filtered_count` (Trinity's key) is how many experiences the caller dropped."""
    n = len(results)
    metrics: dict[str, float] = {"filtered_count": float(dropped), "num_samples": float(n)}
    for kind in FlagKind:
        count = sum(kind in r.flags for r in results)
        metrics[f"{kind.value}_count"] = float(count)
        metrics[f"{kind.value}_frac"] = count / n if n else 0.0
    scores = [r.repetition_score for r in results]
    metrics["repetition_score/mean"] = sum(scores) / n if n else 0.0
    metrics["repetition_score/max"] = max(scores, default=0.0)
    return metrics


class RepetitionFilter:
    """Drops experiences flagged with any of `drop` (default: `repetition`); keeps order and objects.

    `process(exps) -> (kept, metrics)` as a Trinity-RFT `ExperienceOperator`; `classify_all(exps)`
    gives the verdicts alone. Experiences it cannot read (no text and no token ids) are kept and
    counted in `unreadable_count` rather than failing the whole step.
    """

    def __init__(
        self, classifier: Classifier | None = None, *, drop: Iterable[FlagKind | str] = (FlagKind.REPETITION,)
    ) -> None:
        self.classifier = classifier or default_classifier()
        self.drop = frozenset(FlagKind(k) for k in drop)
        if not self.drop:
            raise ValueError("drop must name at least one flag kind")

    def classify_all(self, experiences: Iterable[object]) -> list[Classification]:
        """The verdict for each experience, in order."""
        return [self.classifier.classify(as_record(e)) for e in experiences]

    def process(self, exps: Sequence[E]) -> tuple[list[E], dict[str, float]]:
        """Trinity's operator call: the experiences to keep, and the step's metrics."""
        kept: list[E] = []
        results: list[Classification] = []
        unreadable = 0
        for exp in exps:
            try:
                record = as_record(exp)
            except TypeError:
                unreadable += 1
                kept.append(exp)
                continue
            result = self.classifier.classify(record)
            results.append(result)
            if not (result.flags & self.drop):
                kept.append(exp)
        metrics = batch_metrics(results, dropped=len(exps) - len(kept))
        metrics["unreadable_count"] = float(unreadable)
        return kept, metrics

    def close(self) -> None:
        """Trinity calls `close()` on operators; there is nothing to release."""
