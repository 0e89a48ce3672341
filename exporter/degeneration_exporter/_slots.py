"""`slots_builder`: a positional constructor for the frozen slots dataclasses built once per record.

Why its own module at the package root: sources (`Line`), formats (`Record`), detectors (`Finding`,
`Repeat`) and the classifier (`Classification`) all build one or more such objects per record, and
the layers may not import each other (tests/test_layers.py); one builder serves them all.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import fields
from typing import Any, TypeVar

__all__ = ["slots_builder"]

D = TypeVar("D")


def slots_builder(cls: type[D]) -> Callable[..., D]:
    """A constructor of the frozen slots dataclass `cls` taking every field positionally, in order.

    Why: a frozen dataclass's `__init__` sets each field through `object.__setattr__` (about 0.13 µs
    a field on Python 3.11); the hot paths build one `Classification` (18 fields), `Finding` (13) or
    `LoopSpan` (8) per record. The builder fills a plain twin class with the same slots (a slot store
    is one bytecode, ~15 ns) and then makes the object a `cls` (`__class__` assignment, which Python
    allows between classes of one layout): a `Classification` in ~0.26 µs instead of ~0.75 µs with
    each slot's descriptor called, ~2.5 µs through `__init__`. A class whose layout the twin cannot
    copy (inherited slots, mangled names) gets the descriptor calls. The object is the same as
    `cls(...)` builds (no `__post_init__`, no validation: none of these classes has any). Generated
    once per class, as `dataclasses` generates `__init__`."""
    spec = fields(cls)  # type: ignore[arg-type]
    if not all(f.init for f in spec) or hasattr(cls, "__post_init__"):
        raise TypeError(f"slots_builder: {cls.__name__} has a field outside __init__ or a __post_init__")
    names = [f.name for f in spec]
    args = ", ".join(names)
    twin = type(f"_{cls.__name__}Twin", (), {"__slots__": tuple(names)})
    scope: dict[str, Any] = {"_new": object.__new__, "_cls": cls, "_twin": twin}
    body = "".join(f"    o.{n} = {n}\n" for n in names)
    exec(f"def build({args}):\n    o = _new(_twin)\n{body}    o.__class__ = _cls\n    return o\n", scope)
    build: Callable[..., D] = scope["build"]
    try:
        build(*names)
    except TypeError:  # not the twin's layout: set each slot through its descriptor instead
        body = "".join(f"    _set_{n}(o, {n})\n" for n in names)
        scope.update({f"_set_{n}": getattr(cls, n).__set__ for n in names})
        exec(f"def build({args}):\n    o = _new(_cls)\n{body}    return o\n", scope)
        build = scope["build"]
    return build
