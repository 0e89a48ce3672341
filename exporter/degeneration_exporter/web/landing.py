"""The landing page at `/`: what is being tailed, how much was read and flagged, and links.

Why: the first thing a newcomer opens is the port in a browser (node_exporter's landing page);
it should answer "is it reading my files?" without PromQL. Response text is never shown unless
`web.landing_show_text` is set: logs may hold user prompts and completions (docs/security.md).
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

__all__ = ["FlaggedSample", "LandingView", "SourceView", "render_landing"]


@dataclass(frozen=True, slots=True)
class SourceView:
    """One configured source as the page shows it (copied out under the stats lock)."""

    name: str
    type: str
    format: str
    files: Sequence[str]
    lines_read: int
    bytes_read: int
    rejected: Mapping[str, int]
    responses: int
    flagged: Mapping[str, int]
    lag_bytes: int


@dataclass(frozen=True, slots=True)
class FlaggedSample:
    """A recently flagged response: where it is and why; `evidence` is text, shown only on opt-in."""

    source: str
    origin: str
    line_no: int
    kinds: Sequence[str]
    evidence: str | None = None


@dataclass(frozen=True, slots=True)
class LandingView:
    version: str
    sources: Sequence[SourceView]
    recent: Sequence[FlaggedSample] = field(default_factory=tuple)
    show_text: bool = False


def render_landing(view: LandingView) -> bytes:
    """The page as UTF-8 HTML; every dynamic value is escaped."""
    esc = html.escape
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'><title>degeneration-exporter</title>",
        "<style>body{font-family:sans-serif;margin:2em}td,th{padding:2px 10px;text-align:left}"
        "th{border-bottom:1px solid #999}</style></head><body>",
        f"<h1>degeneration-exporter {esc(view.version)}</h1>",
        "<p><a href='/metrics'>Metrics</a> · <a href='/healthz'>Health</a></p>",
        "<h2>Sources</h2><table><tr><th>source</th><th>type</th><th>format</th>"
        "<th>files</th><th>lines</th><th>bytes</th><th>responses</th><th>flagged</th><th>rejected</th>"
        "<th>lag bytes</th></tr>",
    ]
    for src in view.sources:
        parts.append(
            f"<tr><td>{esc(src.name)}</td><td>{esc(src.type)}</td><td>{esc(src.format)}</td>"
            f"<td>{len(src.files)}</td><td>{src.lines_read}</td><td>{src.bytes_read}</td>"
            f"<td>{src.responses}</td><td>{esc(_pairs(src.flagged))}</td><td>{esc(_pairs(src.rejected))}</td>"
            f"<td>{src.lag_bytes}</td></tr>"
        )
    parts.append("</table>")
    for src in view.sources:
        if src.files:
            parts.append(f"<h3>Files of {esc(src.name)}</h3><ul>")
            parts.extend(f"<li><code>{esc(path)}</code></li>" for path in src.files)
            parts.append("</ul>")
    if view.recent:
        parts.append("<h2>Recently flagged</h2><table><tr><th>source</th><th>where</th><th>kinds</th>")
        parts.append("<th>evidence</th></tr>" if view.show_text else "</tr>")
        for sample in view.recent:
            row = (
                f"<tr><td>{esc(sample.source)}</td><td><code>{esc(sample.origin)}:{sample.line_no}</code></td>"
                f"<td>{esc(', '.join(sample.kinds))}</td>"
            )
            if view.show_text:
                row += f"<td><code>{esc(sample.evidence or '')}</code></td>"
            parts.append(row + "</tr>")
        parts.append("</table>")
        if not view.show_text:
            parts.append(
                "<p>Response text is hidden; set <code>web.landing_show_text: true</code> to show it.</p>"
            )
    parts.append("</body></html>")
    return "".join(parts).encode("utf-8")


def _pairs(counts: Mapping[str, int]) -> str:
    return ", ".join(f"{key}={value}" for key, value in sorted(counts.items()) if value) or "0"
