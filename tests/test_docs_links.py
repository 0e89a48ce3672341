"""Links and path mentions between README and the docs pages resolve.

Why: a user follows README.md into docs/ and from page to page; a renamed page, heading or test file
left in a link is a dead end. Checked: relative Markdown links (file and `#anchor`, GitHub's heading
slugs), that README links every top-level docs page, and repository paths named in the text
(`docs/tailing.md`, `tests/sources/...py`) exist.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = sorted(
    {
        ROOT / "README.md",
        ROOT / "examples" / "README.md",
        *(ROOT / "docs").rglob("*.md"),
        *(ROOT / "helm").rglob("*.md"),
    }
)
_FENCE = re.compile(r"^```.*?^```", re.M | re.S)
_LINK = re.compile(r"\]\(([^)\s]+)\)")
_HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*$", re.M)
_MENTION = re.compile(r"(?<![\w/.-])((?:docs|examples|tests|bench|scripts|dashboards|helm)/[\w./-]+)")


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    return {_slug(h) for h in _HEADING.findall(_FENCE.sub("", page.read_text(encoding="utf-8")))}


def _rel(page: Path) -> str:
    return str(page.relative_to(ROOT))


@pytest.mark.parametrize("page", PAGES, ids=_rel)
def test_relative_links_resolve(page: Path) -> None:
    dead = []
    for link in _LINK.findall(_FENCE.sub("", page.read_text(encoding="utf-8"))):
        if re.match(r"[a-z][a-z0-9+.-]*:", link):  # http:, https:, mailto:
            continue
        path, _, anchor = link.partition("#")
        target = (page.parent / path).resolve() if path else page
        if not target.exists():
            dead.append(link)
        elif anchor and target.suffix == ".md" and anchor not in _anchors(target):
            dead.append(f"{link} (no such heading)")
    assert dead == []


@pytest.mark.parametrize("page", PAGES, ids=_rel)
def test_paths_named_in_the_text_exist(page: Path) -> None:
    missing = []
    for mention in _MENTION.findall(page.read_text(encoding="utf-8")):
        path = mention.rstrip(".,;:")
        if not ((ROOT / path).exists() or (page.parent / path).exists()):
            missing.append(path)
    assert missing == []


def test_readme_links_every_docs_page() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    linked = {(ROOT / link.partition("#")[0]).resolve() for link in _LINK.findall(readme)}
    unlinked = [_rel(page) for page in sorted((ROOT / "docs").glob("*.md")) if page.resolve() not in linked]
    assert unlinked == []


def test_slug_follows_github() -> None:
    assert _slug("7a. Replay on demand: `positions show | forget | reset`") == (
        "7a-replay-on-demand-positions-show--forget--reset"
    )
    assert _slug("openai_chat") == "openai_chat"
