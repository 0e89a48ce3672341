"""Every `degeneration_*` metric name the docs mention exists in the catalogue.

Why: a renamed metric left in a page sends a user to a query that returns nothing
(docs/classification.md once named `degeneration_response_repetition_score`).
"""

from __future__ import annotations

import re
from pathlib import Path

from degeneration_exporter.catalog import METRICS

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", ROOT / "examples" / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
_NAME = re.compile(r"(?<![:\w])degeneration_[a-z0-9_]+")
_SERIES_SUFFIX = re.compile(r"_(bucket|sum|count|created)$")


def _known(name: str, catalogue: set[str]) -> bool:
    """A catalogue name, one of its histogram series, or a grep prefix (`degeneration_responses`)."""
    if name == "degeneration_exporter":  # the package, not a metric
        return True
    if name in catalogue or _SERIES_SUFFIX.sub("", name) in catalogue:
        return True
    return any(full.startswith(name + "_") for full in catalogue)


def test_every_metric_name_in_the_docs_is_in_the_catalogue() -> None:
    catalogue = set(METRICS)
    unknown = [
        f"{page.relative_to(ROOT)}:{number}: {name}"
        for page in PAGES
        for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1)
        for name in _NAME.findall(line)
        if not _known(name, catalogue)
    ]
    assert unknown == []
