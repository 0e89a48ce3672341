"""The landing page at `/`: what is being tailed, how much was read and flagged, and links.

Why: the first thing a newcomer opens is the port in a browser (node_exporter's landing page);
it should answer "is it reading my files, and what does it flag?" without PromQL: models, the
last record's time, flagged percentages, read errors, a warning for an include pattern that
matches nothing, and links to the flagged samples (/samples). Response text is never shown here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from urllib.parse import quote

from ..sinks.sample_html import SAMPLE_TABLE_HEAD, esc, format_time, page, sample_row
from ..sinks.samples import StoredSample

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
    models: Sequence[str] = ()
    last_record_timestamp: float = 0.0
    read_errors: int = 0
    unmatched: Sequence[str] = ()
    """Include patterns that match no file right now."""


@dataclass(frozen=True, slots=True)
class FlaggedSample:
    """Deprecated: the pipeline's old recent-flagged entry, kept only until pipeline.py stops
    importing it (the landing page now lists `StoredSample`s from the samples store)."""

    source: str
    origin: str
    line_no: int
    kinds: Sequence[str]
    evidence: str | None = None


@dataclass(frozen=True, slots=True)
class LandingView:
    version: str
    sources: Sequence[SourceView]
    recent: Sequence[StoredSample] = field(default_factory=tuple)
    samples_enabled: bool = True


def _percentages(src: SourceView) -> str:
    if not src.responses:
        return "—"
    parts = [f"{kind} {n / src.responses:.1%}" for kind, n in sorted(src.flagged.items()) if n]
    return ", ".join(parts) or "none"


def render_landing(view: LandingView) -> bytes:
    """The page as UTF-8 HTML; every dynamic value is escaped."""
    links = "<a href='/metrics'>Metrics</a> · <a href='/healthz'>Health</a>"
    if view.samples_enabled:
        links = (
            "<a href='/samples'>Flagged samples</a> · " + links + " · <a href='/api/samples'>Samples JSON</a>"
        )
    parts = [
        f"<h1>degeneration-exporter {esc(view.version)}</h1>",
        f"<p>{links}</p>",
    ]
    for src in view.sources:
        for pattern in src.unmatched:
            parts.append(
                f"<p class='warn'>Source <b>{esc(src.name)}</b>: include pattern <code>{esc(pattern)}</code> "
                "matches no file.</p>"
            )
    parts.append(
        "<h2>Sources</h2><table><tr><th>source</th><th>type / format</th><th>models</th>"
        "<th>read</th><th>responses</th><th>flagged</th><th>flagged %</th>"
        "<th>rejected</th><th>read errors</th><th>last record</th><th>lag</th></tr>"
    )
    for src in view.sources:
        last = format_time(src.last_record_timestamp) if src.last_record_timestamp else "never"
        flagged = _pairs(src.flagged)
        if view.samples_enabled and src.responses:
            flagged = f"<a href='/samples?source={esc(quote(src.name))}'>{esc(flagged)}</a>"
        else:
            flagged = esc(flagged)
        parts.append(
            f"<tr><td>{esc(src.name)}</td><td>{esc(src.type)}<br>{esc(src.format)}</td>"
            f"<td>{'<br>'.join(esc(m) for m in src.models) or '—'}</td>"
            f"<td>{src.lines_read} lines<br>{esc(_size(src.bytes_read))}</td>"
            f"<td>{src.responses}</td><td>{flagged}</td><td>{esc(_percentages(src))}</td>"
            f"<td>{esc(_pairs(src.rejected))}</td><td>{src.read_errors}</td><td>{esc(last)}</td>"
            f"<td>{esc(_size(src.lag_bytes))}</td></tr>"
        )
    parts.append("</table>")
    for src in view.sources:
        if src.files:
            parts.append(f"<h3>Files of {esc(src.name)}</h3><ul>")
            parts.extend(f"<li><code>{esc(path)}</code></li>" for path in src.files)
            parts.append("</ul>")
    if view.recent:
        parts.append("<h2>Recently flagged</h2>")
        parts.append(SAMPLE_TABLE_HEAD)
        parts.extend(sample_row(s, f"/samples/{s.id}") for s in view.recent)
        parts.append("</table><p><a href='/samples'>All flagged samples</a></p>")
    return page("degeneration-exporter", parts)


def _size(n: int) -> str:
    """Bytes for people: 999 B, 1.0 kB, 12.3 MB (decimal units)."""
    size, unit = float(n), "B"
    for bigger in ("kB", "MB", "GB", "TB"):
        if size < 1000:
            break
        size, unit = size / 1000, bigger
    return f"{n} B" if unit == "B" else f"{size:.1f} {unit}"


def _pairs(counts: Mapping[str, int]) -> str:
    return ", ".join(f"{key}={value}" for key, value in sorted(counts.items()) if value) or "0"
