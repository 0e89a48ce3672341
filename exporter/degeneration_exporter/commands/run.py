"""`degeneration-exporter run`: the daemon — tail, classify, serve /metrics until SIGTERM/SIGINT.

Why flags on top of the config file: `run PATHS` with no config at all must work for a first look
(one file_tail source over PATHS, every default), and Kubernetes users override one value without
templating YAML. Flags beat env, env beats YAML (config.py). Stop is graceful: readers stop, the
pipeline finishes its line, positions are written, then the web server closes. `--dry-run` (like
Promtail's) classifies and serves metrics but never writes positions (docs/tailing.md §7).
"""

from __future__ import annotations

import argparse
import atexit
import logging
import shutil
import signal
import sys
import tempfile
import threading
from importlib import resources
from pathlib import Path
from types import FrameType
from typing import Any

from ..config import FileTailSourceConfig, Settings, check_state_paths, load_settings
from ..daemon import Daemon
from ..errors import ConfigError
from ..sources.file_tail.descriptors import raise_soft_limit
from ._example_replay import DEFAULT_RATE, ExampleReplay

HELP = "Run the daemon: tail PATHS (or the config's sources), classify, serve /metrics."

CLI_SOURCE_NAME = "files"
EXAMPLE_SOURCE_NAME = "example"
STDIN_SOURCE_NAME = "stdin"
_SWITCH_INTERVAL_S = 0.0005


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "paths",
        nargs="*",
        metavar="PATH_OR_GLOB",
        help="Files or globs to tail as one file_tail source named 'files', and/or - for JSONL on stdin "
        "(source 'stdin'); replaces the config's sources.",
    )
    parser.add_argument(
        "--config",
        type=Path,
        metavar="FILE",
        help="YAML config (default: /etc/degeneration-exporter/config.yaml when it exists).",
    )
    parser.add_argument(
        "--listen", metavar="HOST:PORT", help="Address of /metrics (sinks.prometheus.listen)."
    )
    parser.add_argument(
        "--positions-file",
        type=Path,
        metavar="PATH",
        help="Positions file of the file_tail source (needs exactly one file_tail source).",
    )
    parser.add_argument(
        "--format-in",
        metavar="NAME",
        help="Input format of every source (docs/formats.md); default: detected.",
    )
    parser.add_argument(
        "--web-config",
        type=Path,
        metavar="FILE",
        help="exporter-toolkit web config: TLS and basic auth (web.config_file).",
    )
    parser.add_argument(
        "--example",
        action="store_true",
        help="Also tail the bundled example logs: read whole, then replayed with fresh ids and advancing "
        "rollout steps (no positions kept).",
    )
    parser.add_argument(
        "--example-rate",
        type=float,
        default=DEFAULT_RATE,
        metavar="PER_S",
        help=f"Lines per second replayed into each example log (default {DEFAULT_RATE:g}; 0: read once).",
    )
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="Classify and serve metrics, but never write (or lock) positions files: "
        "tails resume from them and a later real run still reads the same lines.",
    )
    parser.add_argument(
        "--log-level",
        default="INFO",
        choices=("DEBUG", "INFO", "WARNING", "ERROR"),
        help="Log level on stderr (default INFO).",
    )


def example_paths() -> list[str]:
    """The packaged example logs (examples/README.md), valid after a plain `pip install .`."""
    folder = resources.files("degeneration_exporter") / "examples"
    return sorted(str(entry) for entry in folder.iterdir() if entry.name.endswith(".jsonl"))


def example_replay(rate: float) -> ExampleReplay:
    """The examples copied into a temp dir removed at exit (with the tail's positions): read whole
    on every run, then replayed there at `rate` once `start()`ed (commands/_example_replay.py)."""
    if rate < 0:
        raise ConfigError("--example-rate must be >= 0", field="--example-rate")
    folder = Path(tempfile.mkdtemp(prefix="degeneration-example-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    return ExampleReplay([Path(path) for path in example_paths()], folder, rate)


def settings_from_args(args: argparse.Namespace, replay: ExampleReplay | None = None) -> Settings:
    """Merge flags over env, YAML and defaults; ConfigError names the field or flag.

    With `--example`, the example source tails `replay`'s folder (a not yet started one is made
    when none is given)."""
    overrides: dict[str, Any] = {}
    if args.listen:
        overrides["sinks"] = {"prometheus": {"listen": args.listen}}
    if args.web_config:
        overrides["web"] = {"config_file": args.web_config}
    cli_sources: list[dict[str, Any]] = []
    files = [path for path in args.paths if path != "-"]
    if files:
        cli_sources.append({"type": "file_tail", "name": CLI_SOURCE_NAME, "include": files})
    if "-" in args.paths:
        cli_sources.append({"type": "stdin", "name": STDIN_SOURCE_NAME})
    if args.example:
        replay = replay or example_replay(args.example_rate)
        cli_sources.append(
            {
                "type": "file_tail",
                "name": EXAMPLE_SOURCE_NAME,
                "include": replay.paths,
                "start_at": "beginning",
                "positions_file": replay.folder / "positions.json",
            }
        )
    if cli_sources:
        overrides["sources"] = cli_sources
    settings = load_settings(args.config, overrides)
    return _apply_source_flags(settings, args.format_in, args.positions_file)


def _apply_source_flags(settings: Settings, format_in: str | None, positions_file: Path | None) -> Settings:
    sources = list(settings.sources)
    if format_in is not None:
        sources = [_revalidate(src, {"format": format_in}, "--format-in") for src in sources]
    if positions_file is not None:
        tails = [
            i
            for i, src in enumerate(sources)
            if isinstance(src, FileTailSourceConfig) and src.name != EXAMPLE_SOURCE_NAME
        ]
        if len(tails) != 1:
            raise ConfigError(
                f"--positions-file needs exactly one file_tail source, found {len(tails)}; "
                "set sources[].positions_file or state.directory instead",
                field="--positions-file",
            )
        index = tails[0]
        sources[index] = _revalidate(sources[index], {"positions_file": positions_file}, "--positions-file")
    return settings.model_copy(update={"sources": sources})


def _revalidate(source: Any, update: dict[str, Any], flag: str) -> Any:
    try:
        return type(source).model_validate({**source.model_dump(), **update})
    except ValueError as exc:
        raise ConfigError(f"{flag}: {exc}", field=flag) from exc


def main(args: argparse.Namespace) -> int:
    logging.basicConfig(
        level=args.log_level, stream=sys.stderr, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    soft, hard = raise_soft_limit()  # before any tail sizes its descriptor budget (docs/tailing.md)
    logging.getLogger(__name__).debug("RLIMIT_NOFILE soft %d hard %d", soft, hard)
    try:
        replay = example_replay(args.example_rate) if args.example else None
        settings = settings_from_args(args, replay)
        if not settings.sources:
            raise ConfigError("no sources: give PATHS, --example, or sources: in --config", field="sources")
        if not args.dry_run:  # a dry run writes no positions
            check_state_paths(settings)
        daemon = Daemon(settings, dry_run=args.dry_run)
    except ConfigError as exc:
        print(f"degeneration-exporter run: error: {exc}", file=sys.stderr)
        return 2
    # Scrapes share the GIL with the classifier threads; every socket call in a scrape gives the GIL up
    # and waits up to one switch interval to get it back. At 1,000 responses/s the default 5 ms gave
    # scrapes of p50 25 ms / max 48 ms, 0.5 ms gives p50 9 ms / max 20 ms (docs/benchmarks.md, Daemon soak).
    sys.setswitchinterval(_SWITCH_INTERVAL_S)
    stop = threading.Event()

    def request_stop(signum: int, _frame: FrameType | None) -> None:
        logging.getLogger(__name__).info("signal %s: stopping", signal.Signals(signum).name)
        stop.set()

    signal.signal(signal.SIGTERM, request_stop)
    signal.signal(signal.SIGINT, request_stop)
    daemon.start()
    if replay is not None:
        replay.start()
    formats = {src.name: src.format for src in settings.sources}
    dry = "; dry run: positions are not written" if args.dry_run else ""
    print(
        f"degeneration-exporter: serving http{'s' if daemon.tls else ''}://{daemon.address_text}/; "
        f"sources {formats}{dry}",
        file=sys.stderr,
    )
    stop.wait()
    if replay is not None:
        replay.stop()
    daemon.stop()
    return 0
