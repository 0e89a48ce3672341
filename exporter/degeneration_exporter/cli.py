"""Command line: one sub-command per verb, each implemented in `commands/<verb>.py`.

Why a table of modules: a verb is added by one module and one line here, and `--help` is built
from the modules' own `add_arguments`, so flags and docs cannot drift apart.
Why lazy: only the verb being run is imported; the others' one-line `HELP` is read from their
source (`_help_of`), so `--version`, `--help` and `VERB --help` never import what other verbs need.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Collection, Sequence
from pathlib import Path
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


def _help_of(module: str) -> str:
    """A verb's `HELP` constant, read from its source without importing it."""
    import ast
    import importlib.util

    spec = importlib.util.find_spec(f"degeneration_exporter.commands.{module}")
    if spec is None or spec.origin is None:  # pragma: no cover - the table names existing modules
        return _load(module).HELP
    for node in ast.parse(Path(spec.origin).read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "HELP" for t in node.targets
        ):
            return str(ast.literal_eval(node.value))
    return _load(module).HELP


def _verb_in(argv: Sequence[str]) -> str | None:
    """The verb of a command line (its first word that is not an option), if it names one."""
    first = next((arg for arg in argv if not arg.startswith("-")), None)
    return first if first in COMMANDS else None


def build_parser(verbs: Collection[str] | None = None, *, other_help: bool = True) -> argparse.ArgumentParser:
    """The parser; with `verbs`, only those verbs' flags are built (the others list their help, or,
    with `other_help` False, are only names: nothing would print their help)."""
    parser = argparse.ArgumentParser(
        prog="degeneration-exporter",
        description="Classify LLM responses for repetition loops, template-token leaks and ceiling "
        "hits; export Prometheus metrics and OTLP, or scan dumps offline.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for verb, module in COMMANDS.items():
        if verbs is None or verb in verbs:
            command = _load(module)
            verb_parser = sub.add_parser(verb, help=command.HELP, description=command.HELP)
            command.add_arguments(verb_parser)
        else:
            verb_parser = sub.add_parser(verb, help=_help_of(module) if other_help else None)
        verb_parser.set_defaults(_command=module)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the console script; returns the exit status."""
    from_command_line = argv is None
    argv = list(sys.argv[1:] if argv is None else argv)
    verb = _verb_in(argv)
    # The other verbs' help is printed only by the top-level --help (an option before the verb);
    # reading it costs every verb's source parsed, at every start (style.md §11: scan starts often).
    before = argv[: argv.index(verb)] if verb is not None else argv
    other_help = verb is None or any(arg.startswith("-") for arg in before)
    parser = build_parser(() if verb is None else (verb,), other_help=other_help)
    args = parser.parse_args(argv)
    status = _load(args._command).main(args)
    if from_command_line and args._command == "scan":
        # The process ends next, and its finalisation would walk every object the scan's modules
        # made (a collection per phase, about 40 ms of a 0.3 s scan on a 2-core VM). Frozen objects
        # are skipped; the OS takes the memory back. Not when called with argv (a test's process
        # goes on). The report and samples files are closed already; stdio is flushed regardless.
        import gc

        gc.freeze()
    return status


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
