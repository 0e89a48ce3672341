"""Rewrite the generated reference in docs/configuration.md from the settings models.

Run after changing any config model (a source, sink, detector params, web): the part between the
GENERATED markers becomes `degeneration-exporter check-config --print-reference`, which
tests/test_config.py compares against.

    .venv/bin/python scripts/regen_config_reference.py
"""

from __future__ import annotations

from pathlib import Path

from degeneration_exporter.commands.config_reference import render_reference

DOCS = Path(__file__).resolve().parents[1] / "docs" / "configuration.md"
BEGIN, END = "<!-- BEGIN GENERATED: check-config --print-reference -->\n", "<!-- END GENERATED -->"


def main() -> None:
    text = DOCS.read_text(encoding="utf-8")
    start, end = text.index(BEGIN) + len(BEGIN), text.index(END)
    DOCS.write_text(text[:start] + render_reference() + text[end:], encoding="utf-8")


if __name__ == "__main__":
    main()
