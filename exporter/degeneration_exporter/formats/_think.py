"""`split_think`: raw model text -> (content, reasoning) at the `<think>...</think>` markers.

Why here: servers that log the raw generation (SGLang `out.text`) and trainers that decode it
(TRL completions) keep a reasoning model's thinking inline. The reasoning channel is scanned for
loops but never for leaks, and the markers are not text. Templates that open `<think>` in the
prompt (Qwen3, DeepSeek-R1) leave only the closing `</think>` in the reply.
"""

from __future__ import annotations

from typing import Final

__all__ = ["split_think"]

_OPEN: Final = "<think>"
_CLOSE: Final = "</think>"


def split_think(text: str) -> tuple[str, str]:
    """(content, reasoning). A reply that opens `<think>` and never closes it is all reasoning
    (cut while thinking); text without markers is all content."""
    close = text.find(_CLOSE)
    stripped = text.lstrip()
    if close == -1:
        if stripped.startswith(_OPEN):
            return "", stripped[len(_OPEN) :].strip()
        return text, ""
    head = text[:close].lstrip()
    if head.startswith(_OPEN):
        head = head[len(_OPEN) :]
    return text[close + len(_CLOSE) :].lstrip("\n"), head.strip()
