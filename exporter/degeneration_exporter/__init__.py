"""degeneration-exporter: classify LLM responses for loops, template leaks and ceiling hits.

The stable public API is re-exported here; implementation modules move freely behind it
(`tests/test_public_api.py` checks `__all__` is exactly this sorted list).
"""

from __future__ import annotations

__version__ = "0.1.0"

from .classification.classify import Classifier, ClassifierConfig, ResponseStream, classify
from .classification.result import Classification, FlagKind, LoopSpan
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

__all__ = [
    "DETECTORS",
    "FORMATS",
    "Classification",
    "Classifier",
    "ClassifierConfig",
    "ConfigError",
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
    "LoopSpan",
    "MissingField",
    "PartialLine",
    "PositionsInUse",
    "Record",
    "RecordError",
    "ResponseStream",
    "Settings",
    "SinkError",
    "SourceError",
    "UnknownFormat",
    "__version__",
    "classify",
    "detect_format",
]
