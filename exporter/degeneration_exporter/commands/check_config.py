"""`degeneration-exporter check-config`: validate the merged settings before deploying them.

Why: like `promtail -check-syntax` / `promtool check config`, a bad key or value should fail in CI
or an init container, naming the dotted field, not at 3 a.m. in the daemon. Reads the same layers
as `run` (YAML, `DEGENERATION_*` env, defaults) and the web config file if one is set, and checks
what `run` checks on the machine: bearer token files hold a token, the positions files' directories
can be created and written. What it cannot know is a port being busy when `run` starts.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import yaml

from ..config import check_state_paths, load_settings
from ..daemon import build_classifier
from ..errors import ConfigError
from ..web.toolkit_config import load_web_config
from .config_reference import render_reference

HELP = "Validate the config (YAML + env + defaults); print the merged result with --print-effective."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--config",
        type=Path,
        metavar="FILE",
        help="YAML config (default: /etc/degeneration-exporter/config.yaml when it exists).",
    )
    parser.add_argument(
        "--print-effective",
        action="store_true",
        help="Print the merged settings, defaults included, as YAML.",
    )
    parser.add_argument(
        "--print-reference",
        action="store_true",
        help="Print the reference of every option as Markdown (docs/configuration.md embeds it) and exit.",
    )


def main(args: argparse.Namespace) -> int:
    if args.print_reference:
        sys.stdout.write(render_reference())
        return 0
    try:
        settings = load_settings(args.config)
        build_classifier(settings)  # what `run` refuses beyond the models (classify.detector_params)
        check_state_paths(settings)  # positions files `run` could not create or lock
        if settings.web.config_file is not None:
            load_web_config(settings.web.config_file)
    except ConfigError as exc:
        print(f"degeneration-exporter check-config: error: {exc}", file=sys.stderr)
        return 2
    if args.print_effective:
        effective = settings.model_dump(mode="json")
        sys.stdout.write(yaml.safe_dump(effective, sort_keys=False, allow_unicode=True))
    else:
        print(f"config OK: {len(settings.sources)} source(s)", file=sys.stderr)
    return 0
