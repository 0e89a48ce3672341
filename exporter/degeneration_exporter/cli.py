"""Command line: one sub-command per verb, each implemented in `commands/<verb>.py`.

Why a table of modules: a verb is added by one module and one line here, and `--help` is built
from the modules' own `add_arguments`, so flags and docs cannot drift apart.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from typing import Protocol, cast

from . import __version__

__all__ = ["build_parser", "main"]

# verb -> module under degeneration_exporter.commands (each has HELP, add_arguments, main)
COMMANDS: dict[str, str] = {
    "scan": "scan",
    "metrics": "metrics",
    "run": "run",
    "check-config": "check_config",
    "positions": "positions",
    "render": "render",
}


class _Command(Protocol):
    HELP: str

    def add_arguments(self, parser: argparse.ArgumentParser) -> None: ...

    def main(self, args: argparse.Namespace) -> int: ...


def _load(module: str) -> _Command:
    return cast(_Command, importlib.import_module(f"degeneration_exporter.commands.{module}"))


def build_parser() -> argparse.ArgumentParser:
    """The full parser, with every verb's flags."""
    parser = argparse.ArgumentParser(
        prog="degeneration-exporter",
        description="Classify LLM responses for repetition loops, template-token leaks and ceiling "
        "hits; export Prometheus metrics and OTLP, or scan dumps offline.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for verb, module in COMMANDS.items():
        command = _load(module)
        verb_parser = sub.add_parser(verb, help=command.HELP, description=command.HELP)
        command.add_arguments(verb_parser)
        verb_parser.set_defaults(_command=module)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the console script; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    return _load(args._command).main(args)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
