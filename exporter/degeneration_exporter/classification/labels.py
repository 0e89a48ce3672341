"""Bounded label values: a cap per label, overflow folded into `__other__` and counted, idle expiry.

Why: `model_name` and `run` come from the data, so a misbehaving writer could otherwise mint a new
series per record and take a Prometheus server down (ecosystem.md §2.2, style.md §11). Each label
keeps at most `cap` distinct values per source; later values fold into one overflow value and
`degeneration_label_overflow_total{source, label}` counts how often. Runs and model names also
expire after a TTL of idleness, so finished RL runs and retired checkpoints (a model name per RL
checkpoint is common) stop occupying slots (ecosystem.md §7.1, §7.7 item 4). The clock is injected so
tests drive expiry without sleeping. No metrics library is imported here: sinks read the counts.
"""

from __future__ import annotations

import re
import threading
import time
from collections import Counter
from collections.abc import Callable, Collection
from datetime import timedelta

from pydantic import BaseModel, Field

__all__ = [
    "OVERFLOW_VALUE",
    "UNKNOWN_VALUE",
    "BoundedLabel",
    "LabelLimits",
    "leak_token_label",
    "sanitize_label_value",
]

OVERFLOW_VALUE = "__other__"
UNKNOWN_VALUE = "unknown"

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]+")
_SPACES = re.compile(r"\s+")
_MANGLED = re.compile(r"[\x00-\x1f\x7f-\x9f]|[^\S ]")
"""One character `sanitize_label_value` drops (control) or collapses (whitespace but the space)."""


class LabelLimits(BaseModel, frozen=True, extra="forbid"):
    """How many distinct values each data-derived label may take, per source."""

    max_model_names: int = Field(
        50, ge=1, description="Distinct model_name values per source; later ones fold into __other__."
    )
    model_name_ttl: timedelta | None = Field(
        timedelta(hours=24),
        description="A model_name with no record for this long is forgotten, its series removed and its "
        "slot freed (null: never); long enough to outlast a quiet night.",
    )
    max_runs: int = Field(
        20, ge=1, description="Distinct run values per source kept at once (rollout gauges)."
    )
    run_ttl: timedelta = Field(
        timedelta(hours=1),
        description="A run with no record for this long is forgotten and its series removed.",
    )
    max_detectors: int = Field(32, ge=1, description="Distinct detector values per source.")
    max_leak_tokens: int = Field(
        32, ge=1, description="Distinct leaked-token values per source when no token list is configured."
    )
    max_value_length: int = Field(
        128, ge=8, description="Longer label values are cut to this many characters."
    )


def sanitize_label_value(raw: object, max_length: int = 128) -> str:
    """A printable, single-line, length-capped label value; empty or missing becomes `unknown`.

    Control characters are dropped and whitespace runs collapse to one space (one C-speed regex
    pass each), so a value never breaks an exposition line or a dashboard legend.
    """
    if raw is None:
        return UNKNOWN_VALUE
    text = raw if isinstance(raw, str) else str(raw)
    text = _CONTROL.sub("", _SPACES.sub(" ", text)).strip()
    if not text:
        return UNKNOWN_VALUE
    return text[:max_length]


def leak_token_label(token: str) -> str:
    r"""The `token` label value of a leaked token: the token with the characters
    `sanitize_label_value` would drop or collapse (controls, whitespace but the space) escaped as
    Python writes them, so the `stripped_roles` token newline-user-newline is the printable
    `\nuser\n` (backslash, n) in legends, alert texts and PromQL (`token="\\nuser\\n"`).

    Why: sanitising alone made that token `user`, a bare word that no longer says a template turn
    leaked (and did not match a configured token list, so it folded into `other`). Every token that
    sanitising left intact (every family but `stripped_roles`) keeps its value; the value is still
    cut to `max_value_length` like any label.
    """
    if _MANGLED.search(token) is None:
        return token
    return _MANGLED.sub(lambda found: repr(found[0])[1:-1], token)


class BoundedLabel:
    """Distinct values of one label, per source, capped; optionally expired when idle.

    `bound(source, raw)` returns the value to use as the label: the sanitised raw value while the
    source has room (or the value is already known), else `overflow_value`, counting the fold.
    With `allowed`, only those values are kept and every other value folds (the leak-token list).
    With `ttl`, `expire()` forgets values idle for longer and returns them so the caller can remove
    their series. Thread-safe: the pipeline binds while the scrape thread reads counts.
    """

    def __init__(
        self,
        name: str,
        cap: int,
        *,
        ttl: timedelta | None = None,
        allowed: Collection[str] | None = None,
        overflow_value: str = OVERFLOW_VALUE,
        max_length: int = 128,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.name = name
        self.cap = cap
        self.overflow_value = overflow_value
        self._ttl = ttl.total_seconds() if ttl is not None else None
        self._allowed = frozenset(allowed) if allowed is not None else None
        self._max_length = max_length
        self._clock = clock
        self._last_seen: dict[tuple[str, str], float] = {}
        self._per_source: Counter[str] = Counter()
        self._overflows: Counter[str] = Counter()
        self._next_expiry = float("inf")
        self._lock = threading.Lock()

    def bound(self, source: str, raw: object) -> str:
        """The label value to use for `raw` under `source` (see class docstring)."""
        value = sanitize_label_value(raw, self._max_length)
        key = (source, value)
        with self._lock:
            if key in self._last_seen:
                self._touch(key)
                return value
            allowed = self._allowed is None or value in self._allowed
            if not allowed or self._per_source[source] >= self.cap:
                self._overflows[source] += 1
                return self.overflow_value
            self._per_source[source] += 1
            self._touch(key)
            return value

    def _touch(self, key: tuple[str, str]) -> None:
        if self._ttl is None:
            self._last_seen[key] = 0.0
            return
        now = self._clock()
        self._last_seen[key] = now
        self._next_expiry = min(self._next_expiry, now + self._ttl)

    def expire(self) -> list[tuple[str, str]]:
        """Forget values idle for longer than the TTL; return the `(source, value)` pairs dropped.

        Cheap when nothing is due: it compares the clock with the earliest possible deadline.
        """
        if self._ttl is None:
            return []
        now = self._clock()
        with self._lock:
            if now < self._next_expiry:
                return []
            cutoff = now - self._ttl
            dropped = [key for key, seen in self._last_seen.items() if seen <= cutoff]
            for key in dropped:
                del self._last_seen[key]
                self._per_source[key[0]] -= 1
            remaining = self._last_seen.values()
            self._next_expiry = min(remaining, default=float("inf")) + self._ttl
            return dropped

    def overflow_counts(self) -> dict[str, int]:
        """Folded values so far, by source (a monotonic count: `label_overflow_total`)."""
        with self._lock:
            return dict(self._overflows)

    def values(self, source: str) -> list[str]:
        """The values currently kept for `source`, in first-seen order."""
        with self._lock:
            return [value for (src, value) in self._last_seen if src == source]
