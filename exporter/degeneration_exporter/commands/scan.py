"""`degeneration-exporter scan FILE|DIR...`: offline diagnosis of dumps (.jsonl, .jsonl.gz, .json, .pt).

Why: RL engineers diagnose a finished run from its rollout dumps, as Relax's `diagnose_repetition`
does; `scan` does that for all three failure kinds with the same line pipeline as the daemon, on all
cores (or a Ray cluster), in memory flat in the number of records. Parameters are validated before
any file is read (exit 2); a bad line is counted and listed as path:line; a file that cannot be read
is listed under `failed_files` and the others are scanned (exit 1).
Heavy modules are imported in `main`, so `--help` stays fast.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..batch.piece import PieceResult, ScanJob
    from ..batch.plan import Failure
    from ..classification.classify import ClassifierConfig
    from ..sinks.report_writer import ReportWriter

HELP = "Classify every response in dumps (files or directories; .jsonl, .jsonl.gz, .json, .pt, -) and report."

_RELAX_FLAGS = ("window_size", "stride", "threshold")
"""Relax's CLI flags, each the `compression` parameter of the same name."""
_DEFAULT_LIMIT = 20
_MAX_PRINTED = 10
"""Malformed lines printed per file on stderr; all are counted and the first 1,000 listed in the report."""
_FORMAT_FAILURES = frozenset({"unknown_format", "missing_field", "invalid_json", "encoding"})

EXIT_OK, EXIT_INPUT_FAILED, EXIT_BAD_PARAMETERS = 0, 1, 2


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.epilog = (
        "Exit status: 0 every input read, 1 some input failed (see failed_files), 2 bad parameters."
    )
    parser.add_argument(
        "files",
        nargs="+",
        metavar="FILE",
        help="Dumps or directories (walked for *.jsonl, *.jsonl.gz, *.json, *.pt); .gz is decompressed; "
        "- is stdin.",
    )
    out = parser.add_argument_group("report")
    out.add_argument(
        "-o",
        "--output",
        metavar="OUT",
        help="Write the report here (refuses to overwrite an input). Default: stdout.",
    )
    out.add_argument(
        "--format",
        choices=("json", "table", "html"),
        default=None,
        help="Report format: json (default with -o), table (default without -o) or html (needs -o).",
    )
    out.add_argument(
        "--samples-out",
        metavar="FILE.jsonl",
        default=None,
        help="Also write one JSON line per listed sample here, as they are produced.",
    )
    out.add_argument(
        "--only-hits",
        action="store_true",
        help="List only flagged samples in the report; counts still cover all samples.",
    )
    out.add_argument(
        "--limit",
        type=int,
        default=_DEFAULT_LIMIT,
        metavar="N",
        help=f"Table: list the first N flagged samples (default {_DEFAULT_LIMIT}; 0 lists all).",
    )
    out.add_argument("-q", "--quiet", action="store_true", help="No progress bar (shown only on a terminal).")
    inp = parser.add_argument_group("input")
    inp.add_argument(
        "--format-in",
        default=None,
        metavar="NAME",
        help="Input format name (see docs/formats.md); default: detected per file from its first records.",
    )
    inp.add_argument(
        "--config",
        metavar="FILE",
        default=None,
        help="A `run` config file: its detectors, classify and source options (format, fields, run, "
        "model_name, ...) apply; flags override it.",
    )
    inp.add_argument(
        "--source",
        metavar="NAME",
        default=None,
        help="With --config: the source whose options apply (default: the only one).",
    )
    inp.add_argument("--run", default=None, help="The run of every sample that names none itself.")
    inp.add_argument("--model-name", default=None, help="The model of every sample that names none itself.")
    inp.add_argument(
        "--run-from-path",
        default=None,
        metavar="REGEX",
        help="Take the run from each path by a named group, e.g. '/runs/(?P<run>[^/]+)/'.",
    )
    inp.add_argument(
        "--model-from-path",
        default=None,
        metavar="REGEX",
        help="Take the model from each path by a named group (?P<model>...).",
    )
    inp.add_argument(
        "--max-line-bytes",
        type=int,
        default=None,
        help="Longer lines are skipped in bounded memory and reported as too_long (default 16 MiB).",
    )
    det = parser.add_argument_group("detectors")
    det.add_argument(
        "--detectors",
        default=None,
        metavar="A,B",
        help="Repetition detectors making up the verdict (default: the documented default set).",
    )
    det.add_argument(
        "--report-detectors",
        default=None,
        metavar="A,B|all|none",
        help="Extra repetition detectors run for their details only (default: none, the fast verdict).",
    )
    det.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="DETECTOR.PARAM=VALUE",
        help="Override a detector parameter, e.g. --set compression.threshold=8 (repeatable).",
    )
    det.add_argument(
        "--window-size",
        type=int,
        default=None,
        help="Relax compat: compression window in code points (same as --set compression.window_size=N).",
    )
    det.add_argument(
        "--stride", type=int, default=None, help="Relax compat: compression stride in code points."
    )
    det.add_argument(
        "--threshold", type=float, default=None, help="Relax compat: compression ratio threshold."
    )
    det.add_argument("--no-template-leak", action="store_true", help="Do not scan for template-token leaks.")
    run = parser.add_argument_group("execution")
    run.add_argument(
        "--workers",
        type=int,
        default=None,
        metavar="N",
        help="Processes classifying in parallel (default: the cores available). The report does not "
        "depend on it.",
    )
    run.add_argument(
        "--chunk-bytes",
        type=int,
        default=None,
        metavar="N",
        help="Plain files larger than this are split at line boundaries into pieces (default 2 MiB).",
    )
    run.add_argument(
        "--engine",
        choices=("local", "ray"),
        default="local",
        help="local processes (default) or tasks on a Ray cluster (needs the `ray` extra).",
    )
    run.add_argument(
        "--address",
        default=None,
        help="Ray cluster address for --engine ray (default: RAY_ADDRESS, a running local cluster, "
        "or a new one).",
    )


def main(args: argparse.Namespace) -> int:
    from ..errors import ConfigError

    try:
        job = build_job(args)
        _check_outputs(args)
        workers = _workers(args)
        chunk_bytes = _positive(args.chunk_bytes, "--chunk-bytes")
    except ConfigError as exc:
        print(f"degeneration-exporter scan: error: {exc}", file=sys.stderr)
        return EXIT_BAD_PARAMETERS
    from ..batch.plan import DEFAULT_CHUNK_BYTES, expand_inputs, plan_pieces

    files, failed = expand_inputs(args.files)
    pieces = plan_pieces(
        files,
        chunk_bytes=chunk_bytes or DEFAULT_CHUNK_BYTES,
        format_name=job.format_name,
        custom_fields=job.custom_fields,
        max_line_bytes=job.max_line_bytes,
    )
    try:
        writers, closers = _writers(args)
    except (ConfigError, OSError) as exc:
        print(f"degeneration-exporter scan: error: {exc}", file=sys.stderr)
        return EXIT_BAD_PARAMETERS
    try:
        if args.engine == "ray":
            from ..batch.ray_engine import run_ray

            results = run_ray(job, pieces, args.address)
        else:
            from ..batch.local import run_local

            results = run_local(job, pieces, workers)
        merger = _Merger(writers, failed)
        from ..batch.progress import Progress

        progress = Progress(sum(p.size for p in pieces), enabled=Progress.wanted(args.quiet))
        try:
            for result in results:
                merger.take(result)
                progress.advance(result.piece.size, result.file.group.num_samples, result.flagged)
        finally:
            progress.close()
        summary = merger.finish(_report_config(job.classifier))
    except ConfigError as exc:
        print(f"degeneration-exporter scan: error: {exc}", file=sys.stderr)
        return EXIT_BAD_PARAMETERS
    finally:
        for close in closers:
            close()
    return EXIT_INPUT_FAILED if summary["failed_files"] else EXIT_OK


class _Merger:
    """Takes piece results in input order: line numbers made file-relative, samples to every writer,
    aggregates merged; when a file ends, its malformed lines are printed (at most `_MAX_PRINTED`) or,
    if it held no record at all, ONE error says so and the file is listed as failed."""

    def __init__(self, writers: list[ReportWriter], failed: list[Failure]) -> None:
        from ..batch.tally import Tally

        self._writers = writers
        self._tally = Tally()
        self._failed = [f.to_dict() for f in failed]
        for f in failed:
            print(f"{f.path}: failed: {f.reason}", file=sys.stderr)
        self._path: str | None = None
        self._lines_before = 0
        self._error: str | None = None

    def take(self, result: PieceResult) -> None:
        from ..sinks.report_writer import ListedSample

        path = result.piece.path
        if path != self._path:
            self._end_file()
            self._path, self._lines_before, self._error = path, 0, None
        result = result.shifted(self._lines_before)
        self._lines_before += result.lines
        writers = self._writers
        for _line, data, _at, verdict in result.samples:
            sample = ListedSample(data, verdict)
            for writer in writers:
                writer.add_sample(sample)
        self._tally.merge(result.tally)
        if result.error is not None and self._error is None:
            self._error = result.error

    def _end_file(self) -> None:
        if self._path is None:
            return
        file = self._tally.file(self._path)
        if self._error is not None:
            self._fail(
                self._path, f"{self._error} (after line {self._lines_before}; the records before kept)"
            )
        if file.group.num_samples == 0 and file.num_malformed and self._error is None:
            reasons = {m["reason"] for m in file.malformed}
            if reasons <= _FORMAT_FAILURES:
                first = file.malformed[0]
                fmt = f"format {file.format_name!r}" if file.format_name else "format not detected"
                self._fail(
                    self._path,
                    f"no record read ({fmt}): {file.num_malformed} lines malformed, first at line "
                    f"{first['line']}: {first['reason']}: {first['message']}",
                )
                return
        for entry in file.malformed[:_MAX_PRINTED]:
            print(f"{self._path}:{entry['line']}: {entry['reason']}: {entry['message']}", file=sys.stderr)
        if file.num_malformed > _MAX_PRINTED:
            more = file.num_malformed - _MAX_PRINTED
            print(f"{self._path}: {more} more malformed lines (listed in the report)", file=sys.stderr)

    def _fail(self, path: str, reason: str) -> None:
        self._failed.append({"path": path, "reason": reason})
        print(f"{path}: failed: {reason}", file=sys.stderr)

    def finish(self, config: dict[str, Any]) -> dict[str, Any]:
        self._end_file()
        summary = self._tally.summary(config, self._failed)
        for writer in self._writers:
            writer.finish(summary)
        return summary


# -- parameters -------------------------------------------------------------------------------------


def _names(value: str | None, default: tuple[str, ...]) -> tuple[str, ...]:
    from ..detectors import DETECTORS

    if value is None:
        return default
    if value == "all":
        return tuple(n for n, s in DETECTORS.items() if s.kind == "repetition")
    if value in ("", "none"):
        return ()
    return tuple(n.strip() for n in value.split(",") if n.strip())


def _param_overrides(args: argparse.Namespace) -> dict[str, dict[str, Any]]:
    import orjson

    from ..errors import ConfigError

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


def build_job(args: argparse.Namespace) -> ScanJob:
    """Validate every parameter (flags over `--config`) up front; raises ConfigError naming it."""
    from ..batch.piece import ScanJob
    from ..classification.classify import Classifier, ClassifierConfig
    from ..errors import ConfigError
    from ..pipeline import PathLabels
    from ..pipeline_options import PipelineOptions
    from ..sources.file_tail.reader import DEFAULT_MAX_LINE_BYTES

    base = ClassifierConfig()
    params: dict[str, dict[str, Any]] = {}
    options: dict[str, Any] = {}
    if args.config is not None:
        base, params, options = _from_config(args.config, args.source)
    elif args.source is not None:
        raise ConfigError("--source applies only with --config", field="--source")
    for name, value in _param_overrides(args).items():
        params[name] = {**params.get(name, {}), **value}
    verdict = _names(args.detectors, base.repetition_detectors)
    report = tuple(n for n in _names(args.report_detectors, base.report_detectors) if n not in verdict)
    try:
        config = ClassifierConfig(
            repetition_detectors=verdict,
            report_detectors=report,
            template_leak=base.template_leak and not args.no_template_leak,
            scan_reasoning=base.scan_reasoning,
            detector_params=params,
        )
    except ValueError as exc:
        raise ConfigError(str(exc), field="--detectors/--set") from exc
    Classifier(config)  # parameter values are checked by building it (ConfigError names the detector)
    flags = {
        "format": args.format_in,
        "run": args.run,
        "model_name": args.model_name,
        "run_from_path": args.run_from_path,
        "model_from_path": args.model_from_path,
    }
    options.update({k: v for k, v in flags.items() if v is not None})
    if args.format_in is not None and args.format_in != "custom":
        options.pop("fields", None)
    from pydantic import ValidationError

    try:
        pipeline = PipelineOptions.model_validate(options)
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(p) for p in error["loc"]) or "options"
        flag = {"format": "--format-in"}.get(where, f"--{where.replace('_', '-')}")
        raise ConfigError(f"{flag}: {error['msg']}", field=flag) from exc
    if pipeline.format == "custom" and pipeline.fields is None:
        raise ConfigError("--format-in custom needs the field paths: give them with --config", field="fields")
    max_line_bytes = args.max_line_bytes if args.max_line_bytes is not None else DEFAULT_MAX_LINE_BYTES
    if max_line_bytes <= 0:
        raise ConfigError("--max-line-bytes must be positive", field="--max-line-bytes")
    if args.limit < 0:
        raise ConfigError("--limit must be 0 (all) or positive", field="--limit")
    fmt = _report_format(args)
    return ScanJob(
        classifier=config,
        format_name=None if pipeline.format == "auto" else pipeline.format,
        custom_fields=pipeline.fields,
        max_line_bytes=max_line_bytes,
        only_hits=args.only_hits,
        keep_text=fmt == "html",
        sample_json=fmt == "json" or bool(args.samples_out),
        verdicts=fmt in ("table", "html"),
        labels=PathLabels(
            pipeline.run, pipeline.model_name, pipeline.run_from_path, pipeline.model_from_path
        ),
    )


def _from_config(
    path: str, source_name: str | None
) -> tuple[ClassifierConfig, dict[str, dict[str, Any]], dict[str, Any]]:
    """A `run` config's classify section, detector params, and one source's pipeline options."""
    from pathlib import Path

    from ..config import load_settings
    from ..errors import ConfigError
    from ..pipeline_options import PipelineOptions

    settings = load_settings(Path(path))
    if settings.classify.detector_params:
        raise ConfigError(
            "set detector parameters under detectors.<name>, not classify.detector_params",
            field="classify.detector_params",
        )
    options: dict[str, Any] = {}
    sources = list(settings.sources)
    if source_name is not None:
        chosen = [s for s in sources if s.name == source_name]
        if not chosen:
            names = ", ".join(s.name for s in sources) or "none"
            raise ConfigError(
                f"--source {source_name!r} is not in {path} (sources: {names})", field="--source"
            )
        sources = chosen
    if len(sources) > 1:
        raise ConfigError(f"{path} has several sources: name one with --source", field="--source")
    if sources:
        fields = set(PipelineOptions.model_fields)
        options = {k: v for k, v in sources[0].model_dump(exclude_unset=True).items() if k in fields}
        if "fields" in options:
            options["fields"] = getattr(sources[0], "fields")  # noqa: B009 - the model, not its dump
    params = {name: dict(value) for name, value in settings.detectors.model_dump().items()}
    return settings.classify, params, options


def _positive(value: int | None, flag: str) -> int | None:
    from ..errors import ConfigError

    if value is not None and value <= 0:
        raise ConfigError(f"{flag} must be positive", field=flag)
    return value


def _workers(args: argparse.Namespace) -> int:
    from ..batch.local import available_cores
    from ..errors import ConfigError

    if args.address is not None and args.engine != "ray":
        raise ConfigError("--address applies only with --engine ray", field="--address")
    if args.engine == "ray":
        import importlib.util

        if importlib.util.find_spec("ray") is None:
            raise ConfigError(
                "--engine ray needs ray: pip install 'degeneration-exporter[ray]'", field="--engine"
            )
    if args.workers is None:
        return available_cores()
    if args.workers <= 0:
        raise ConfigError("--workers must be positive", field="--workers")
    return int(args.workers)


def _check_outputs(args: argparse.Namespace) -> None:
    from pathlib import Path

    from ..errors import ConfigError

    if args.format == "html" and not args.output:
        raise ConfigError("--format html needs -o FILE", field="--format")
    inputs = {Path(n).resolve() for n in args.files if n != "-"}
    for flag, name in (("-o", args.output), ("--samples-out", args.samples_out)):
        if name and Path(name).resolve() in inputs:
            raise ConfigError(f"{flag} {name!r} is one of the inputs; refusing to overwrite it", field=flag)


def _report_config(classifier: ClassifierConfig) -> dict[str, Any]:
    config: dict[str, Any] = classifier.model_dump(mode="json")
    config.update({"offset_unit": "characters", "interval_convention": "half-open [start, end)"})
    return config


def _report_format(args: argparse.Namespace) -> str:
    return str(args.format or ("json" if args.output else "table"))


def _writers(args: argparse.Namespace) -> tuple[list[ReportWriter], list[Any]]:
    """The report writer (-o or stdout) and the --samples-out writer, with what closes their files."""
    from pathlib import Path

    from ..sinks.json_report import JsonlSamplesWriter, JsonReportWriter
    from ._table import TableWriter

    fmt = _report_format(args)
    writers: list[ReportWriter] = []
    closers: list[Any] = []
    if fmt == "html":
        from ..sinks.html_report import HtmlReportWriter  # imported only for this format (fast start)

        html: ReportWriter = HtmlReportWriter(Path(args.output))
        writers.append(html)
    else:
        out = open(args.output, "wb") if args.output else sys.stdout.buffer  # noqa: SIM115
        if args.output:
            closers.append(out.close)
        writers.append(TableWriter(out, limit=args.limit) if fmt == "table" else JsonReportWriter(out))
    if args.samples_out:
        samples = open(args.samples_out, "wb")  # noqa: SIM115
        closers.append(samples.close)
        writers.append(JsonlSamplesWriter(samples))
    return writers, closers
