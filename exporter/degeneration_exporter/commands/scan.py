"""`degeneration-exporter scan FILE...`: offline diagnosis of JSONL dumps (and .jsonl.gz).

Why: RL engineers diagnose a finished run from its rollout dumps, as Relax's `diagnose_repetition`
does; `scan` does that for all three failure kinds with the same classifier as the daemon.
Parameters are validated before any file is read; malformed lines are reported as `path:line`
and counted, never fatal.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from ..classification.classify import Classifier, ClassifierConfig
from ..classification.result import Classification, FlagKind
from ..classification.streams import StreamAssembler
from ..detectors import DETECTORS
from ..errors import ConfigError, LineTooLong, RecordError
from ..formats.lines import LineParser
from ..record import Delta
from ..sinks.json_report import FileReport, JsonReport
from ..sources.dump_file import SkippedLine, iter_file_lines
from ..sources.file_tail.reader import DEFAULT_MAX_LINE_BYTES
from . import _table

HELP = "Classify every response in JSONL dumps (.jsonl, .jsonl.gz, - for stdin) and report."

_RELAX_FLAGS = ("window_size", "stride", "threshold")
"""Relax's CLI flags, each the `compression` parameter of the same name."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "files", nargs="+", metavar="FILE", help="JSONL dumps; .gz is decompressed; - is stdin."
    )
    parser.add_argument(
        "-o",
        "--output",
        metavar="OUT",
        help="Write the report here (refuses to overwrite an input). Default: stdout.",
    )
    parser.add_argument(
        "--format",
        choices=("json", "table", "html"),
        default=None,
        help="Report format: json (default with -o), table (default without -o), or html (one "
        "self-contained page with charts and the flagged samples highlighted; docs/samples.md).",
    )
    parser.add_argument(
        "--format-in",
        default=None,
        metavar="NAME",
        help="Input format name (see docs/formats.md); default: detected from the first records.",
    )
    parser.add_argument(
        "--only-hits",
        action="store_true",
        help="List only flagged samples in the report; counts still cover all samples.",
    )
    parser.add_argument(
        "--detectors",
        default=None,
        metavar="A,B",
        help="Repetition detectors making up the verdict (default: the documented default set).",
    )
    parser.add_argument(
        "--report-detectors",
        default="all",
        metavar="A,B|all|none",
        help="Extra repetition detectors run for their details only (default: all).",
    )
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="DETECTOR.PARAM=VALUE",
        help="Override a detector parameter, e.g. --set compression.threshold=8 (repeatable).",
    )
    parser.add_argument(
        "--window-size",
        type=int,
        default=None,
        help="Relax compat: compression window in code points (same as --set compression.window_size=N).",
    )
    parser.add_argument(
        "--stride", type=int, default=None, help="Relax compat: compression stride in code points."
    )
    parser.add_argument(
        "--threshold", type=float, default=None, help="Relax compat: compression ratio threshold."
    )
    parser.add_argument(
        "--no-template-leak", action="store_true", help="Do not scan for template-token leaks."
    )
    parser.add_argument(
        "--max-line-bytes",
        type=int,
        default=DEFAULT_MAX_LINE_BYTES,
        help="Longer lines are skipped in bounded memory and reported as too_long (default 16 MiB).",
    )


def _names(value: str | None, default: tuple[str, ...]) -> tuple[str, ...]:
    if value is None:
        return default
    if value == "all":
        return tuple(n for n, s in DETECTORS.items() if s.kind == "repetition")
    if value in ("", "none"):
        return ()
    return tuple(n.strip() for n in value.split(",") if n.strip())


def _param_overrides(args: argparse.Namespace) -> dict[str, dict[str, Any]]:
    overrides: dict[str, dict[str, Any]] = {}
    for item in args.set:
        key, sep, raw = item.partition("=")
        detector, dot, param = key.partition(".")
        if not sep or not dot or not detector or not param:
            raise ConfigError(f"--set {item!r}: expected DETECTOR.PARAM=VALUE", field="--set")
        try:
            value: Any = orjson.loads(raw)
        except orjson.JSONDecodeError:
            value = raw
        overrides.setdefault(detector, {})[param] = value
    for param in _RELAX_FLAGS:
        value = getattr(args, param)
        if value is not None:
            overrides.setdefault("compression", {})[param] = value
    return overrides


def build_classifier(args: argparse.Namespace) -> Classifier:
    """Validate every parameter up front; raises ConfigError naming the parameter."""
    base = ClassifierConfig()
    verdict = _names(args.detectors, base.repetition_detectors)
    report = tuple(n for n in _names(args.report_detectors, ()) if n not in verdict)
    try:
        config = ClassifierConfig(
            repetition_detectors=verdict,
            report_detectors=report,
            template_leak=not args.no_template_leak,
            detector_params=_param_overrides(args),
        )
    except ValueError as exc:
        raise ConfigError(str(exc), field="--detectors/--set") from exc
    return Classifier(config)


def _check_paths(args: argparse.Namespace) -> None:
    if args.max_line_bytes <= 0:
        raise ConfigError("--max-line-bytes must be positive", field="--max-line-bytes")
    for name in args.files:
        if name != "-" and not Path(name).is_file():
            raise ConfigError(f"input {name!r} does not exist or is not a file", field="FILE")
    if args.output:
        out = Path(args.output).resolve()
        for name in args.files:
            if name != "-" and Path(name).resolve() == out:
                raise ConfigError(
                    f"-o {args.output!r} is one of the inputs; refusing to overwrite it", field="-o"
                )


def scan_file(
    path: str,
    parser: LineParser,
    classifier: Classifier,
    report: JsonReport,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
) -> FileReport:
    """Classify every line of one dump into `report`; bad lines are recorded as path:line and skipped."""
    file_report = report.open_file(path)
    streams = StreamAssembler(classifier)  # streamed chunk logs: reassembled per request id
    for line in iter_file_lines(path, max_line_bytes):
        try:
            if isinstance(line, SkippedLine):  # streamed past in bounded memory: its size is not kept
                raise LineTooLong(None, max_line_bytes)
            items = parser.parse_items(line.data)
        except RecordError as exc:
            file_report.malformed.append({"line": line.line_no, "reason": exc.reason, "message": str(exc)})
            print(f"{path}:{line.line_no}: {exc.reason}: {exc}", file=sys.stderr)
            continue
        for item in items:
            if isinstance(item, Delta):
                for result in streams.feed(item):
                    report.emit(file_report, result)
            else:
                report.emit(file_report, classifier.classify(item))
    for result in streams.close():  # streams that never finished count as aborted
        report.emit(file_report, result)
    return file_report


@dataclass(slots=True)
class _HtmlTee(JsonReport):
    """Counts as the JSON report does (plus per-step counts) and hands every sample to the HTML writer."""

    writer: Any = None
    steps: dict[tuple[str | None, int], list[int]] = field(default_factory=dict)

    def emit(self, file: FileReport, result: Classification) -> None:
        JsonReport.emit(self, file, result)
        self.writer.add_sample(result)
        if result.step is not None:
            counts = self.steps.setdefault((result.run, result.step), [0, 0, 0])
            counts[0] += 1
            counts[1] += bool(result.flags)
            counts[2] += FlagKind.REPETITION in result.flags

    def step_rows(self) -> list[dict[str, Any]]:
        return [
            {"run": run, "step": step, "num_samples": n, "num_flagged": f, "repetition_frac": r / n}
            for (run, step), (n, f, r) in sorted(self.steps.items(), key=lambda kv: (str(kv[0][0]), kv[0][1]))
        ]


def main(args: argparse.Namespace) -> int:
    try:
        classifier = build_classifier(args)
        _check_paths(args)
        LineParser(args.format_in)  # validates the format name before any file is read
    except ConfigError as exc:
        print(f"degeneration-exporter scan: error: {exc}", file=sys.stderr)
        return 2
    config = classifier.config.model_dump(mode="json")
    config.update({"offset_unit": "characters", "interval_convention": "half-open [start, end)"})
    fmt = args.format or ("json" if args.output else "table")
    report = JsonReport(config=config, only_hits=args.only_hits)
    if fmt == "html":  # branch `scan` replaces this with its report-writer wiring
        from ..sinks.html_report import HtmlReportWriter

        report = _HtmlTee(config=config, only_hits=True, writer=HtmlReportWriter(args.output or sys.stdout))
    for path in args.files:  # each file may be in its own format: one parser (and detection) per file
        scan_file(path, LineParser(args.format_in), classifier, report, args.max_line_bytes)
    if isinstance(report, _HtmlTee):
        summary = report.to_dict()
        summary["files"] = [{k: v for k, v in f.items() if k != "samples"} for f in summary["files"]]
        summary["steps"] = report.step_rows()
        report.writer.finish(summary)
        return 0
    if fmt == "json":
        text = orjson.dumps(report.to_dict(), option=orjson.OPT_INDENT_2).decode() + "\n"
    else:
        text = _table.render(report.to_dict())
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return 0
