"""Field paths into decoded JSON: lookup by dot path, typed getters that name the path when they fail.

Why one place: every format reads nested fields (`response.body.choices.0.message.content`), and a
missing one must become `MissingField(path)` with the full JSON path, so bad lines are counted by a
reason and the message says exactly which field was absent (style.md §8).

Paths are dot-separated; a part made of digits (optionally `-`-prefixed) indexes a list:
`choices.0.message.content`, `messages.-1.content`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any, Final, TypeGuard

from ..errors import MissingField

__all__ = [
    "ABSENT",
    "MAX_RUN_CHARS",
    "compile_path",
    "int_or_none",
    "is_int_list",
    "join",
    "lookup",
    "optional_int",
    "optional_int_list",
    "optional_run",
    "optional_str",
    "require_list",
    "require_mapping",
    "require_str",
]

MAX_RUN_CHARS: Final = 64
"""Longest accepted `run` value: it becomes a (capped) label, so it must be short."""


class _Absent:
    """The value of a path that does not exist (distinct from a JSON null)."""

    def __repr__(self) -> str:
        return "ABSENT"


ABSENT: Final = _Absent()

PathPart = str | int


@lru_cache(maxsize=1024)
def compile_path(path: str) -> tuple[PathPart, ...]:
    """Split a dot path once; digit parts become list indices."""
    parts: list[PathPart] = []
    for part in path.split("."):
        digits = part[1:] if part.startswith("-") else part
        parts.append(int(part) if digits.isdigit() else part)
    return tuple(parts)


def join(prefix: str, path: str) -> str:
    """`prefix.path`, or `path` when there is no prefix (for error messages and nested lookups)."""
    return f"{prefix}.{path}" if prefix else path


def lookup(obj: Any, path: str) -> Any:
    """The value at `path`, or `ABSENT` when any step is missing or of the wrong container type."""
    if type(obj) is dict and "." not in path and not path[-1:].isdigit():
        return obj.get(path, ABSENT)  # a top-level named key of a decoded line: most lookups
    parts = compile_path(path)
    if len(parts) == 1 and type(obj) is dict:  # a top-level digit key, as its int's text
        return obj.get(str(parts[0]), ABSENT)
    for part in parts:
        if isinstance(part, int) and isinstance(obj, list):
            if not -len(obj) <= part < len(obj):
                return ABSENT
            obj = obj[part]
        elif isinstance(obj, Mapping):
            obj = obj.get(str(part), ABSENT)  # a digit part is also a key: {"0": ...}
            if obj is ABSENT:
                return ABSENT
        else:
            return ABSENT
    return obj


def require_str(obj: Any, path: str, *, where: str = "") -> str:
    """The string at `path`; `MissingField(where.path)` when absent or not a string."""
    value = lookup(obj, path)
    if not isinstance(value, str):
        raise MissingField(join(where, path))
    return value


def require_mapping(obj: Any, path: str, *, where: str = "") -> Mapping[str, Any]:
    """The JSON object at `path`; `MissingField` when absent or not an object."""
    value = lookup(obj, path)
    if not isinstance(value, Mapping):
        raise MissingField(join(where, path))
    return value


def require_list(obj: Any, path: str, *, where: str = "") -> list[Any]:
    """The JSON array at `path`; `MissingField` when absent or not an array."""
    value = lookup(obj, path)
    if not isinstance(value, list):
        raise MissingField(join(where, path))
    return value


def optional_str(obj: Any, path: str) -> str | None:
    """The string at `path`, or None when absent, null or another type (optional fields never reject)."""
    value = lookup(obj, path)
    return value if isinstance(value, str) else None


def optional_int(obj: Any, path: str) -> int | None:
    """The integer at `path` (not a bool), or None."""
    return int_or_none(lookup(obj, path))


def int_or_none(value: object) -> int | None:
    """`value` if it is an integer (not a bool), else None: `optional_int` on a value already read."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def is_int_list(value: object) -> TypeGuard[list[int]]:
    """A JSON array of integers only (bools rejected): token ids, masks."""
    # map(type) and set run in C: about twice as fast as all(isinstance(...)) on 8k-token lists;
    # `type(v) is int` also rejects bools.
    return isinstance(value, list) and (not value or set(map(type, value)) == {int})


def optional_int_list(obj: Any, path: str) -> Sequence[int] | None:
    """The list of integers at `path` (token ids, masks), or None when absent or not all integers."""
    value = lookup(obj, path)
    return value if is_int_list(value) else None


def optional_run(obj: Any, path: str) -> str | None:
    """A run name: a string (or integer) of at most `MAX_RUN_CHARS`; longer values reject the record.

    Why reject rather than cut: a run is a label; a long value means the path points at the wrong
    field (a prompt, an id), which the user should see as a counted `missing_field` naming it.
    """
    value = lookup(obj, path)
    if value is ABSENT or value is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if not isinstance(value, str) or len(value) > MAX_RUN_CHARS:
        raise MissingField(path, f"field {path!r} is not a run name (a string of <= {MAX_RUN_CHARS} chars)")
    return value
