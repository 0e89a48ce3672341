"""degeneration-exporter: classify LLM responses for loops, template leaks and ceiling hits.

The stable public API is re-exported here (docs/python-api.md); implementation modules move freely
behind it (`tests/test_public_api.py` checks `__all__` is exactly this sorted list). Names are
imported on first use (PEP 562), so `import degeneration_exporter` and `--version` stay cheap.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from importlib import import_module
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:  # what type checkers and IDEs see; at run time `__getattr__` imports on demand
    from .classification.classify import Classifier, ClassifierConfig, ResponseStream, classify
    from .classification.guard import Decision, LoopGuard
    from .classification.result import Classification, FlagKind, LoopSpan
    from .classification.rl_filter import RepetitionFilter, batch_metrics
    from .config import Settings
    from .detectors import DETECTORS
    from .detectors.base import DetectorInput, DetectorSpec, Finding
    from .errors import (
        ConfigError,
        DegenerationError,
        EncodingError,
        InvalidJson,
        LineTooLong,
        MissingField,
        PartialLine,
        PositionsInUse,
        RecordError,
        SinkError,
        SourceError,
        UnknownFormat,
    )
    from .formats import FORMATS, detect_format
    from .record import Delta, FinishReason, Record

# public name -> the module (relative to this package) that defines it
_HOMES: dict[str, str] = {
    "Classifier": ".classification.classify",
    "ClassifierConfig": ".classification.classify",
    "ResponseStream": ".classification.classify",
    "classify": ".classification.classify",
    "Decision": ".classification.guard",
    "LoopGuard": ".classification.guard",
    "Classification": ".classification.result",
    "FlagKind": ".classification.result",
    "LoopSpan": ".classification.result",
    "RepetitionFilter": ".classification.rl_filter",
    "batch_metrics": ".classification.rl_filter",
    "Settings": ".config",
    "DETECTORS": ".detectors",
    "DetectorInput": ".detectors.base",
    "DetectorSpec": ".detectors.base",
    "Finding": ".detectors.base",
    **dict.fromkeys(
        (
            "ConfigError",
            "DegenerationError",
            "EncodingError",
            "InvalidJson",
            "LineTooLong",
            "MissingField",
            "PartialLine",
            "PositionsInUse",
            "RecordError",
            "SinkError",
            "SourceError",
            "UnknownFormat",
        ),
        ".errors",
    ),
    "FORMATS": ".formats",
    "detect_format": ".formats",
    "Delta": ".record",
    "FinishReason": ".record",
    "Record": ".record",
}

__all__ = [
    "DETECTORS",
    "FORMATS",
    "Classification",
    "Classifier",
    "ClassifierConfig",
    "ConfigError",
    "Decision",
    "DegenerationError",
    "Delta",
    "DetectorInput",
    "DetectorSpec",
    "EncodingError",
    "Finding",
    "FinishReason",
    "FlagKind",
    "InvalidJson",
    "LineTooLong",
    "LoopGuard",
    "LoopSpan",
    "MissingField",
    "PartialLine",
    "PositionsInUse",
    "Record",
    "RecordError",
    "RepetitionFilter",
    "ResponseStream",
    "Settings",
    "SinkError",
    "SourceError",
    "UnknownFormat",
    "__version__",
    "batch_metrics",
    "classify",
    "detect_format",
]


def _lazy_getattr(package: str, homes: Mapping[str, str]) -> Callable[[str], Any]:
    """The PEP 562 `__getattr__` of `package`: a name in `homes` (name -> module relative to
    `package`) is imported from its module on first access, then kept in the package. Here and in
    `sources/file_tail` (so `scan` splits lines with its `reader` without loading the tailer); it
    lives in this module because importing the package must load no other module of it."""
    namespace = sys.modules[package].__dict__

    def __getattr__(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(import_module(home, package), name)
        namespace[name] = value
        return value

    return __getattr__


__getattr__ = _lazy_getattr(__name__, _HOMES)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
