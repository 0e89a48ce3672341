"""`degeneration-exporter positions show|forget PATH...|reset`: inspect and edit a positions file.

Why: replay on demand (ecosystem.md §7.4, §7.7 item 2; mtail#834 "how do I re-read from the
beginning?"). `forget` drops the checkpoints of some files and `reset` all of them, so the next
`run` reads those files again from byte 0. A daemon rewrites its positions file every
`sync_interval`, so editing under a running one would be undone: the edits take the file's lock
and exit 2 while a daemon holds it (stop it first). `show` only reads (the daemon's writes are
atomic renames, so it never sees half a file). Exit codes: 0 done, 1 a PATH named no entry or the
file is missing or unreadable, 2 the file is in use or the flags are wrong.
"""

from __future__ import annotations

import argparse
import sys
from datetime import UTC, datetime
from pathlib import Path

import orjson

from ..config import FileTailSourceConfig, load_settings
from ..errors import ConfigError, PositionsInUse, SourceError
from ..sources.file_tail.positions import (
    PositionEntry,
    current_size,
    forget_positions,
    load_positions,
    reset_positions,
)
from ._table import align

HELP = "Show or edit a file_tail positions file: show, forget PATH... (re-read those), reset (re-read all)."

DEFAULT_SOURCE = "files"
_PROG = "degeneration-exporter positions"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--positions-file",
        type=Path,
        metavar="FILE",
        help="The positions file (default: the one source --source uses under --config).",
    )
    common.add_argument(
        "--config",
        type=Path,
        metavar="FILE",
        help="YAML config to find the positions file of --source in (state.directory, "
        "sources[].positions_file).",
    )
    common.add_argument(
        "--source",
        default=DEFAULT_SOURCE,
        metavar="NAME",
        help=f"file_tail source whose positions file to use (default {DEFAULT_SOURCE!r}, "
        "the name `run PATHS` gives).",
    )
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    show = actions.add_parser(
        "show", parents=[common], help="Print each tracked file: path, identity, offset, size now, lag."
    )
    show.add_argument("--format", choices=("table", "json"), default="table", help="Output (default table).")
    forget = actions.add_parser(
        "forget",
        parents=[common],
        help="Drop the entries of PATHs: the next run "
        "reads them from byte 0. Refused while a daemon uses the file.",
    )
    forget.add_argument(
        "paths",
        nargs="+",
        metavar="PATH",
        help="A path as stored, or a file now at that path (same device and inode).",
    )
    actions.add_parser(
        "reset",
        parents=[common],
        help="Drop every entry: the next run reads every file "
        "from byte 0, whatever start_at says. Refused while a daemon uses the file.",
    )


def resolve_positions_file(args: argparse.Namespace) -> Path:
    """`--positions-file`, else the positions file source `--source` uses under `--config`/env."""
    if args.positions_file is not None:
        return Path(args.positions_file)
    settings = load_settings(args.config)
    tails = [s for s in settings.sources if isinstance(s, FileTailSourceConfig) and s.name == args.source]
    if tails and tails[0].positions_file is not None:
        return tails[0].positions_file
    return settings.state.positions_file_for(args.source)


def main(args: argparse.Namespace) -> int:
    try:
        path = resolve_positions_file(args)
    except ConfigError as exc:
        return _fail(f"error: {exc}", 2)
    try:
        if args.action == "show":
            return _show(path, args.format)
        if args.action == "forget":
            return _forget(path, args.paths)
        removed = reset_positions(path)
        print(
            f"{path}: removed all {len(removed)} entries; the next run reads every file from byte 0",
            file=sys.stderr,
        )
        return 0
    except PositionsInUse as exc:
        return _fail(f"error: {exc}", 2)
    except SourceError as exc:
        return _fail(f"error: {exc}", 1)


def _fail(message: str, status: int) -> int:
    print(f"{_PROG}: {message}", file=sys.stderr)
    return status


def _forget(path: Path, targets: list[str]) -> int:
    removed, unmatched = forget_positions(path, targets)
    for entry in removed:
        print(f"forgot {entry.path} ({entry.file_id}) at offset {entry.offset}", file=sys.stderr)
    for target in unmatched:
        print(f"{_PROG}: no entry for {target} in {path}", file=sys.stderr)
    return 1 if unmatched else 0


def _show(path: Path, output: str) -> int:
    stored = load_positions(path)
    if stored is None:
        return _fail(f"no positions file at {path}", 1)
    rows = [_row(entry) for entry in sorted(stored.values(), key=lambda e: e.path)]
    if output == "json":
        doc = {"positions_file": str(path), "files": rows}
        sys.stdout.write(orjson.dumps(doc, option=orjson.OPT_INDENT_2).decode() + "\n")
    else:
        sys.stdout.write(_table(rows))
    return 0


def _row(entry: PositionEntry) -> dict[str, object]:
    """One tracked file; `size` is None when the path no longer names this (device, inode)."""
    size = current_size(entry)
    compressed = entry.path.endswith(".gz")
    if entry.complete:
        lag: int | None = 0
    elif size is None or compressed:  # a .gz offset counts decompressed bytes: no lag in file bytes
        lag = None
    else:
        lag = max(0, size - entry.offset)
    return {
        "path": entry.path,
        "dev": entry.file_id.dev,
        "ino": entry.file_id.ino,
        "offset": entry.offset,
        "size": size,
        "lag_bytes": lag,
        "complete": entry.complete,
        "updated": datetime.fromtimestamp(entry.updated, UTC).isoformat(timespec="seconds"),
    }


def _table(rows: list[dict[str, object]]) -> str:
    head = ["path", "identity", "offset", "size", "lag", "updated"]
    cells = [head]
    for row in rows:
        size, lag = row["size"], row["lag_bytes"]
        cells.append(
            [
                str(row["path"]),
                f"{row['dev']}:{row['ino']}",
                str(row["offset"]),
                "gone" if size is None else str(size),
                "-" if lag is None else str(lag),
                str(row["updated"]),
            ]
        )
    return "\n".join(align(cells)) + f"\n{len(rows)} file(s)\n"
