"""The format contract: `ParseFn`, `SniffFn` and `FormatSpec`, the registry entry of one input format.

Why a contract: the pipeline, `scan` and detection treat every format alike, so a new format is one
module plus one registry line in `formats/__init__.py` (style.md §3). A format only normalises:
it maps one vocabulary onto `Record` (or `Delta` for streamed chunks) and never classifies.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from ..record import Delta, Record

__all__ = ["FormatSpec", "ParseFn", "SniffFn"]

ParseFn = Callable[[Mapping[str, Any]], Iterator[Record | Delta]]
"""Decoded line -> zero or more Records/Deltas; raises `MissingField(path)` when required fields are bad.

Zero items is a valid answer for lines that carry no response (a vLLM `Received request` line, an
SGLang `request.received` event, a Relax reward trace): they are neither responses nor errors.
"""

SniffFn = Callable[[Mapping[str, Any]], bool]
"""Does this decoded line look like the format? Cheap key checks only; never raises."""


@dataclass(frozen=True, slots=True)
class FormatSpec:
    """Registry entry: the format's one name, its parser, its sniff and how its lines are decoded.

    `sniff` is None for formats never auto-detected (`custom`). `fallback` formats (`generic`) are
    picked only when no specific format matches. `text_lines` formats (`vllm_log`) accept lines
    that are not JSON objects: such a line is passed as `{"message": <line>}`. `joining` formats
    join facts logged on several lines (vLLM's request line, its DEBUG token-id line): the factory
    makes one stateful `ParseFn` per reader (`LineParser`), while `parse` stays the one-line form.
    """

    name: str
    parse: ParseFn
    sniff: SniffFn | None
    summary: str
    text_lines: bool = False
    fallback: bool = False
    joining: Callable[[], ParseFn] | None = None
