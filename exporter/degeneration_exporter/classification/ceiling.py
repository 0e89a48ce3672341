"""Ceiling hits: the reply stopped because it ran into `max_tokens`.

Why its own module: a ceiling hit is a classification rule over the record, not a text detector. It
is a fact the server reports (`finish_reason: length`, slime/Relax `status: truncated`, which formats
map to `FinishReason.LENGTH`), or one we can derive when both the output token count and the limit
are known. It stays separate from a repetition cut: vLLM's own repetition stop reports
`finish_reason: repetition`, which is not a ceiling hit (utopia's reviewer asked for exactly this
separation).
"""

from __future__ import annotations

from ..record import FinishReason

__all__ = ["is_ceiling_hit"]

_LENGTH = FinishReason.LENGTH  # read once: an enum member read is ~70 ns on Python 3.11, per record


def is_ceiling_hit(finish_reason: FinishReason, output_tokens: int | None, max_tokens: int | None) -> bool:
    """True when the server says `length`, or when output tokens reached a known positive `max_tokens`."""
    if finish_reason is _LENGTH:
        return True
    return output_tokens is not None and max_tokens is not None and 0 < max_tokens <= output_tokens
