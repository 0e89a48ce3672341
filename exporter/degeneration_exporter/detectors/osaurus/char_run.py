"""osaurus' character-run rule (`osaurus_charrun` in the spec; module `char_run`), detectors.md §4.2 step 3.

Why: a model stuck emitting one character ("!!!!…", "eeee…") never forms a word loop, so osaurus
aborts when one character repeats past a threshold: 64 for letters and digits, 256 for anything else
in the hardened revision, where whitespace is exempt and breaks runs (table padding, blank lines) and
a run must have grown over at least 3 distinct deltas. That growth gate makes the published verdict
depend on how the server batches deltas (§5.2): `stream_hardened` keeps it, `stream_v1` and
`gauntlet` have none (64 for everything, whitespace counting), and `growth_deltas: 1` removes it
from the hardened thresholds. The batch form is the whole text as one delta, so under
`stream_hardened` it never fires (one delta gives growth 1): use `stream_v1`, `gauntlet` or
`growth_deltas: 1` for finished responses. Runs are found with a compiled regex per delta and state
(character, length, growth) carries across deltas (`_run_tracker.py`).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Literal

from pydantic import BaseModel, Field

from ..base import DetectorInput, Finding
from ._combined import OsaurusStream
from ._run_tracker import RunProfile

__all__ = ["PROFILES", "CharRun", "CharRunParams", "RunProfile", "detect_char_run"]

ProfileName = Literal["stream_hardened", "stream_v1", "gauntlet"]


PROFILES: dict[str, RunProfile] = {
    "stream_hardened": RunProfile(
        64, 256, whitespace_counts=False, growth_gate=3, names_deltas=True, full_length=False
    ),
    "stream_v1": RunProfile(
        64, 64, whitespace_counts=True, growth_gate=1, names_deltas=False, full_length=False
    ),
    "gauntlet": RunProfile(
        64, 64, whitespace_counts=True, growth_gate=1, names_deltas=False, full_length=True
    ),
}


class CharRunParams(BaseModel, frozen=True, extra="forbid"):
    """Config section `detectors.char_run`: a published profile, optionally with overridden numbers."""

    profile: ProfileName = Field(
        "stream_hardened",
        description="Published threshold set: stream_hardened (osaurus PR state), stream_v1 (initial #1922), "
        "or gauntlet (CLI batch detector).",
    )
    run_alnum: int | None = Field(
        None, ge=2, description="Override: run length, in characters, that fires for a letter or number."
    )
    run_other: int | None = Field(
        None, ge=2, description="Override: run length, in characters, that fires for any other character."
    )
    whitespace_counts: bool | None = Field(
        None, description="Override: whether whitespace forms runs (false: whitespace breaks runs)."
    )
    growth_deltas: int | None = Field(
        None,
        ge=1,
        description="Override: distinct deltas, a count, that must "
        "extend a run before it fires (1 = no gate).",
    )

    def run_profile(self) -> RunProfile:
        """The profile with any overrides applied."""
        overrides: dict[str, Any] = {
            "alnum_threshold": self.run_alnum,
            "other_threshold": self.run_other,
            "whitespace_counts": self.whitespace_counts,
            "growth_gate": self.growth_deltas,
        }
        return replace(PROFILES[self.profile], **{k: v for k, v in overrides.items() if v is not None})


class CharRun(OsaurusStream):
    """Incremental form: content and reasoning deltas in arrival order share one run state (§4.1)."""

    def __init__(self, params: CharRunParams) -> None:
        super().__init__("char_run", params.profile, params.run_profile(), None)


def detect_char_run(inp: DetectorInput, params: CharRunParams) -> Finding:
    """Batch form: the content text as one delta (under a growth gate above 1 this cannot fire)."""
    return CharRun(params).scan(inp)
