"""JSON report writers for `scan`: one JSON document written incrementally, and one line per sample.

Why this layout: the report must stay one valid JSON document while samples stream to disk as they
are produced (memory flat in the number of records). So the document opens with `samples` (one
compact object per line, each with its `path`, `line` and the record's identity, as Relax's diagnose
report lists them), and the aggregates follow once known: `config`, Relax's `num_samples`,
`num_repetitive_samples`, `repetition_frac`, per-kind counts, `files`, `runs`, `steps`, `failed_files`.

Samples are serialised where they are classified (a worker process, a Ray task) with `dump_split`,
which also says where the line number sits, so the parent only rewrites that number (`shift_line`)
once it knows how many lines the file's earlier pieces had.
"""

from __future__ import annotations

from typing import IO, Any

import orjson

from ..classification.result import Classification
from .report_writer import ListedSample

__all__ = ["JsonReportWriter", "JsonlSamplesWriter", "dump_sample", "dump_split", "shift_line"]

_OPTIONS = orjson.OPT_SERIALIZE_NUMPY | orjson.OPT_NON_STR_KEYS
_STR_KEYS = orjson.OPT_SERIALIZE_NUMPY
"""`_OPTIONS` for a sample whose keys are all strings (nearly every one): `OPT_NON_STR_KEYS` only adds
how other keys are written, and checking for them took a third of a short sample's `dumps`."""


def _fallback(value: object) -> object:
    """Identity values of unusual types (a `.pt` dump's tensors) are reported as text."""
    return str(value)


def dump_sample(sample: Classification) -> bytes:
    """One sample as compact JSON (no newline)."""
    as_dict = sample.to_dict(finding=_finding_json)
    try:
        return orjson.dumps(as_dict, default=_fallback, option=_STR_KEYS)
    except orjson.JSONEncodeError:  # a key that is not a string (in a detector's details): as it was
        return orjson.dumps(as_dict, default=_fallback, option=_OPTIONS)


_FINDINGS: dict[int, tuple[Any, orjson.Fragment]] = {}
"""Serialised findings seen at least twice, by object (the entry holds the finding, so its id is not
reused while it is kept)."""
_SEEN: dict[int, Any] = {}
"""Findings seen once, by object: a second sighting moves one to `_FINDINGS`."""
_MAX_KEPT = 256


def _finding_json(finding: Any) -> object:
    """`finding.to_dict()` (a `Finding`; sinks do not import detectors), or its serialised form for a
    finding shared by many verdicts: the classifier hands one frozen Finding to every clean reply's
    leak check (half of all findings on the bench's short replies), serialised once per process. A
    finding seen once costs two dict lookups; the caches are cleared when full (a fragment is about
    1.4 KB: kept for every finding, 1,024 of them were 10 MiB over two workers)."""
    key = id(finding)
    hit = _FINDINGS.get(key)
    if hit is not None and hit[0] is finding:
        return hit[1]
    as_dict = finding.to_dict()
    if _SEEN.get(key) is not finding:
        if len(_SEEN) >= _MAX_KEPT:
            _SEEN.clear()
        _SEEN[key] = finding
        return as_dict
    if len(_FINDINGS) >= _MAX_KEPT:
        _FINDINGS.clear()
    fragment = orjson.Fragment(orjson.dumps(as_dict, default=_fallback, option=_OPTIONS))
    _FINDINGS[key] = (finding, fragment)
    return fragment


_LINE_AT = len(b'{"path":') + len(b',"line":')
_LINE_AT_PATH: dict[str, int] = {}
"""`_LINE_AT` plus the JSON length of a path, per path string (a piece's samples share one path)."""


def dump_split(sample: Classification) -> tuple[bytes, int]:
    """`dump_sample(sample)` and the offset of its line number in it, for `shift_line`; -1 when the
    record's own identity has a `line` field, which then stands there (`Classification.to_dict`).

    The JSON is copied into a bytes of its own size before it is kept: orjson writes into a larger
    buffer and shrinks it in place, and thousands of those kept (a piece's samples) left the C heap
    so fragmented that each dump cost ~2-4 µs more in malloc; the copy costs ~0.1 µs and lets the
    next dump reuse the buffer just freed."""
    data = bytes(memoryview(dump_sample(sample)))  # its own allocation (above)
    identity = sample.identity
    if "line" in identity:
        return data, -1
    path = identity.get("path", sample.path)
    if type(path) is str:
        at = _LINE_AT_PATH.get(path)
        if at is None:
            if len(_LINE_AT_PATH) >= 1024:
                _LINE_AT_PATH.clear()
            at = _LINE_AT_PATH[path] = _LINE_AT + len(orjson.dumps(path))
        return data, at
    return data, _LINE_AT + len(orjson.dumps(path, default=_fallback, option=_OPTIONS))


def shift_line(data: bytes, at: int, line: int | None, shift: int) -> bytes:
    """`data` from `dump_split` (line number `line` at offset `at`) with the line `shift` lines later."""
    if at < 0 or line is None or not shift:
        return data
    return b"%s%d%s" % (data[:at], line + shift, data[at + len(str(line)) :])


class JsonReportWriter:
    """`{"samples": [...one per line...], <aggregates>}` written to `out` as it goes."""

    def __init__(self, out: IO[bytes]) -> None:
        self._out = out
        self._count = 0
        out.write(b'{\n  "samples": [')

    def add_sample(self, sample: ListedSample) -> None:
        self._out.write(b",\n    " if self._count else b"\n    ")
        self._out.write(sample.json)
        self._count += 1

    def finish(self, summary: dict[str, Any]) -> None:
        self._out.write(b"\n  ]" if self._count else b"]")
        for key, value in summary.items():
            text = orjson.dumps(value, default=_fallback, option=_OPTIONS | orjson.OPT_INDENT_2)
            self._out.write(b",\n  " + orjson.dumps(key) + b": " + text.replace(b"\n", b"\n  "))
        self._out.write(b"\n}\n")
        self._out.flush()


class JsonlSamplesWriter:
    """`--samples-out FILE.jsonl`: one compact JSON object per sample and line; no aggregates."""

    def __init__(self, out: IO[bytes]) -> None:
        self._out = out

    def add_sample(self, sample: ListedSample) -> None:
        self._out.write(sample.json + b"\n")

    def finish(self, summary: dict[str, Any]) -> None:
        self._out.flush()
