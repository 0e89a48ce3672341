"""`scan_piece`: one piece of a dump through the shared `LinePipeline`, into samples and a `Tally`.

Why a plain function of picklable arguments: the same code runs in this process (`--workers 1`), in
a worker process, or as a Ray task where the data is, so every engine gives the same report. Line
numbers count from the piece's first line; `PieceResult.shifted` makes them file line numbers once
the lines of the pieces before are known. A read error ends the piece with `error` set; the records
read before it are kept and counted (a truncated gzip still being copied).

Why samples travel back as `SampleRow` tuples (line, JSON, where the line number is in it, verdict):
serialising here spreads that work over the workers, and bytes pickle in a fraction of the time a
`Classification` takes, which the parent, merging for every worker, would otherwise pay per sample.
"""

from __future__ import annotations

import gzip
from collections.abc import Iterable
from dataclasses import dataclass, field, fields, replace
from itertools import chain
from typing import Any, TypeAlias

from ..classification.classify import Classifier, ClassifierConfig
from ..classification.result import Classification
from ..errors import RejectReason
from ..formats.custom import CustomFormatOptions
from ..pipeline import LinePipeline, PathLabels
from ..sinks.json_report import dump_split, shift_line
from ..sources.base import Line
from ..sources.dump_file import LineCount, SkippedLine, iter_file_lines
from ..sources.file_tail.reader import DEFAULT_MAX_LINE_BYTES
from .plan import Piece
from .tally import FileTally, Tally

__all__ = ["PieceResult", "SampleRow", "ScanJob", "scan_piece"]

SampleRow: TypeAlias = tuple[int | None, bytes, int, Classification | None]
"""One listed sample: its line (None: a stream that never finished), its JSON (`dump_split`; empty
unless `ScanJob.sample_json`), the line number's offset in that JSON, and the verdict itself (flagged
samples only, with `ScanJob.verdicts`)."""


@dataclass(frozen=True, slots=True)
class ScanJob:
    """Everything a worker needs besides the piece (picklable; the classifier is rebuilt from it)."""

    classifier: ClassifierConfig
    format_name: str | None = None
    custom_fields: CustomFormatOptions | None = None
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES
    only_hits: bool = False
    labels: PathLabels = field(default_factory=PathLabels)
    keep_text: bool = False
    """Ship each flagged verdict's text back (an HTML report shows it); the table never needs it."""
    sample_json: bool = True
    """Serialise each listed sample (a JSON report or `--samples-out` writes it)."""
    verdicts: bool = False
    """Ship each flagged sample's `Classification` back (the table and HTML reports read them)."""


@dataclass(slots=True)
class PieceResult:
    """What a piece gave: the samples the report lists, aggregates, how many lines it had, how many of
    its samples were flagged, any error."""

    piece: Piece
    samples: list[SampleRow]
    tally: Tally
    lines: int
    flagged: int = 0
    error: str | None = None

    @property
    def file(self) -> FileTally:
        return self.tally.file(self.piece.path)

    def shifted(self, lines_before: int) -> PieceResult:
        """The same result with line numbers counted from the start of the file."""
        if not lines_before:
            return self
        samples: list[SampleRow] = [
            (line, data, at, verdict)
            if line is None
            else (
                line + lines_before,
                shift_line(data, at, line, lines_before),
                at,
                None if verdict is None else replace(verdict, line=line + lines_before),
            )
            for line, data, at, verdict in self.samples
        ]
        for entry in self.file.malformed:
            entry["line"] += lines_before
        return PieceResult(self.piece, samples, self.tally, self.lines, self.flagged, self.error)


_CLASSIFIERS: dict[str, Classifier] = {}
_BLANK_TEXT: dict[str, Any] = {
    n: "" for n in ("text", "reasoning") if n in {f.name for f in fields(Classification)}
}
"""The channels a Classification references (when it has them): dropped before results travel back."""
_set = object.__setattr__
"""Blanks those channels on the result itself. Why not `dataclasses.replace`: it copies all of a
Classification's fields through its frozen `__init__` (~15 µs, for every flagged sample of a table
or HTML report), and the result is the pipeline's fresh object: once tallied and serialised here,
it is only shipped back."""


def _classifier(config: ClassifierConfig) -> Classifier:
    """One classifier per config per process (a worker serves many pieces)."""
    key = config.model_dump_json()
    found = _CLASSIFIERS.get(key)
    if found is None:
        found = _CLASSIFIERS[key] = Classifier(config)
    return found


def scan_piece(job: ScanJob, piece: Piece) -> PieceResult:
    """Classify every line of `piece`; never raises for bad data or a read error (both are reported)."""
    tally = Tally()
    file = tally.file(piece.path)
    samples: list[SampleRow] = []
    flagged = 0

    def reject(reason: RejectReason, line: Line | SkippedLine, exc: BaseException) -> None:
        file.add_malformed(line.line_no, reason, str(exc))

    format_name = piece.format_name or job.format_name
    pipeline = LinePipeline(
        _classifier(job.classifier),
        format_name,
        reject,
        custom_fields=job.custom_fields if format_name == "custom" else None,
        labels=job.labels,
        await_usage=True,  # one-shot: close() at the end releases a stream still waiting
    )
    count = LineCount()
    error: str | None = None

    blank = _BLANK_TEXT if not job.keep_text else {}
    only_hits, sample_json, verdicts = job.only_hits, job.sample_json, job.verdicts
    add, append = tally.add, samples.append

    def keep(results: Iterable[Classification]) -> None:
        nonlocal flagged
        for result in results:
            add(result)
            flags = result.flags
            if flags:
                flagged += 1
            elif only_hits:
                continue
            data, at = dump_split(result) if sample_json else (b"", -1)
            verdict = None
            if verdicts and flags:
                verdict = result
                for name, value in blank.items():  # in place: the pipeline's own fresh result (as `_stamp`)
                    _set(result, name, value)
            append((result.line, data, at, verdict))

    try:
        lines = iter_file_lines(piece.path, job.max_line_bytes, start=piece.start, end=piece.end, count=count)
        keep(chain.from_iterable(map(pipeline.process, lines)))  # one call a piece: the line loop runs in C
    except Exception as exc:  # the read failed: what was read before stays counted
        error = _read_error(exc)
    keep(pipeline.close())
    file.format_name = pipeline.format_names[0] if pipeline.format_names else None
    return PieceResult(piece, samples, tally, count.lines, flagged, error)


def _read_error(exc: BaseException) -> str:
    if isinstance(exc, gzip.BadGzipFile):
        return f"not a gzip file: {exc}"
    if isinstance(exc, EOFError):
        return f"truncated: {exc}"
    text: Any = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
    return f"read failed: {text}"
