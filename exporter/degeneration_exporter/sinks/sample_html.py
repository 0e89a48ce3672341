"""HTML for one flagged sample, shared by the daemon's /samples pages and `scan --format html`.

Why one module: the page and the report must highlight a loop the same way (lead-in, first copy,
each further copy, the part after the onset shaded, leaked tokens marked, the ceiling shown).
Why in sinks/ and not web/: the HTML report is a sink-side writer and sinks may not import web/
(tests/test_layers.py); web/ imports this.
Safety: every value from a response goes through `esc` (html.escape with quotes); pages carry a
Content-Security-Policy without any script source, so even a missed escape could not run script.
Offsets are code points of the channel's text, half-open; each highlighted span states them in
`data-start`/`data-end`, which the browser tests compare with the reported loop.
"""

from __future__ import annotations

import bisect
import html
import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from ..classification.labels import leak_token_label
from ..classification.result import LoopSpan
from .samples import LeakMark, StoredSample

__all__ = [
    "CSP",
    "MAX_MARKED_COPIES",
    "STYLE",
    "Segment",
    "esc",
    "format_time",
    "page",
    "render_sample",
    "sample_row",
    "segments",
]

CSP = (
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; "
    "form-action 'self'; frame-ancestors 'none'"
)
MAX_MARKED_COPIES = 300
"""Copies marked one by one; the rest of the loop is one span (a 1 MB loop stays a small page)."""

STYLE = (
    "body{font-family:system-ui,sans-serif;margin:1.5em auto;max-width:80em;padding:0 1em;color:#222}"
    "table{border-collapse:collapse}td,th{padding:3px 10px;text-align:left;vertical-align:top}"
    "th{border-bottom:1px solid #999}tr:nth-child(even) td{background:#f6f6f6}"
    "code{font-size:90%}.kind{display:inline-block;padding:0 6px;margin:1px;border-radius:3px;"
    "background:#eee;font-size:85%}.kind-repetition{background:#fde2b8}.kind-template_leak{background:#e5d4f7}"
    ".kind-ceiling,.kind-ceiling_while_repeating{background:#f7c9c9}"
    "pre.response{white-space:pre-wrap;overflow-wrap:anywhere;border:1px solid #ccc;padding:.8em;"
    "max-height:40em;overflow:auto;background:#fff;line-height:1.45}"
    "pre.response span{unicode-bidi:isolate}"
    ".lead{color:#333}.after{background:#fff1d6}.copy-first{background:#ffd27a;"
    "outline:1px solid #c98a00}.copy{border-left:3px solid #c0392b}"
    ".copy-more{background:#ffe4b0}.leak{background:#c9a7f2;outline:1px solid #6c3aa8}"
    ".ceiling-mark{background:#c0392b;color:#fff;padding:0 4px;border-radius:3px}"
    ".bar{display:flex;height:14px;border:1px solid #999;max-width:40em}.bar .b-lead{background:#cfe3f7}"
    ".bar .b-after{background:#f0a830}.muted{color:#666}.warn{background:#fff3cd;border:1px solid #e0c36a;"
    "padding:.5em}.legend span{margin-right:1em;padding:0 4px}"
    "table.samples td{white-space:nowrap}"
    "table.samples td.unit{white-space:normal;min-width:9em;max-width:18em;font-size:85%}"
    "table.samples td.kinds{white-space:normal;max-width:16em}"
)


def esc(value: object) -> str:
    """Escape for HTML text and quoted attributes."""
    return html.escape(str(value), quote=True)


def format_time(ts: float) -> str:
    """UTC, second precision: the same on every viewer's screen."""
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def page(title: str, body: Sequence[str], *, meta_csp: bool = False) -> bytes:
    """A complete UTF-8 page; `meta_csp` repeats the policy inside the file (the report has no server)."""
    head = [
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>",
        "<meta name='viewport' content='width=device-width, initial-scale=1'>",
        f"<meta http-equiv='Content-Security-Policy' content=\"{CSP}\">" if meta_csp else "",
        f"<title>{esc(title)}</title><style>{STYLE}</style></head><body>",
    ]
    return "".join([*head, *body, "</body></html>"]).encode("utf-8", "replace")


def kind_badges(kinds: Sequence[str]) -> str:
    return "".join(f"<span class='kind kind-{esc(k)}'>{esc(k)}</span>" for k in kinds)


@dataclass(frozen=True, slots=True)
class Segment:
    """A run of the channel's text with one set of highlight classes."""

    start: int
    end: int
    classes: tuple[str, ...]


def _loop_pieces(loop: LoopSpan | None, n: int) -> list[Segment]:
    """Lead-in, the first copy, each further copy (up to `MAX_MARKED_COPIES`), then the rest after onset."""
    if loop is None or loop.onset >= n:
        return [Segment(0, n, ("lead",))] if n else []
    onset = max(loop.onset, 0)
    pieces = [Segment(0, onset, ("lead",))] if onset else []
    period = loop.period or 0
    loop_end = min(n, onset + loop.covered_chars) if loop.covered_chars else n
    at, copy = onset, 0
    if period > 0:
        while at < loop_end and copy < MAX_MARKED_COPIES:
            end = min(at + period, loop_end)
            classes = ("after", "copy-first") if copy == 0 else ("after", "copy", f"copy-{copy + 1}")
            pieces.append(Segment(at, end, classes))
            at, copy = end, copy + 1
        if at < loop_end:
            pieces.append(Segment(at, loop_end, ("after", "copy-more")))
            at = loop_end
    if at < n:
        pieces.append(Segment(at, n, ("after",)))
    return pieces


def segments(n: int, loop: LoopSpan | None, leaks: Sequence[LeakMark] = ()) -> list[Segment]:
    """Split [0, n) into runs carrying the loop classes, with leaked tokens cut out as their own runs."""
    base = _loop_pieces(loop, n)
    marks = [m for m in leaks if m.start < m.end <= n]
    if not marks:
        return base
    cuts = sorted({0, n, *(s.start for s in base), *(m.start for m in marks), *(m.end for m in marks)})
    starts = [s.start for s in base]
    leak_starts = [m.start for m in marks]
    out: list[Segment] = []
    for a, b in itertools.pairwise(cuts):
        piece = base[bisect.bisect_right(starts, a) - 1]
        i = bisect.bisect_right(leak_starts, a) - 1
        classes = piece.classes
        if i >= 0 and marks[i].start <= a < marks[i].end:
            classes = (*classes, "leak")
        out.append(Segment(a, b, classes))
    return out


def highlighted(text: str, loop: LoopSpan | None, leaks: Sequence[LeakMark] = (), *, ceiling: bool) -> str:
    """`text` as a <pre> with every segment a span stating its offsets."""
    parts = ["<pre class='response' dir='auto'>"]
    for seg in segments(len(text), loop, leaks):
        title = ""
        if "leak" in seg.classes:
            title = " title='leaked template token'"
        elif "copy-first" in seg.classes:
            title = " title='first copy of the loop'"
        parts.append(
            f"<span class='{' '.join(seg.classes)}' data-start='{seg.start}' data-end='{seg.end}'{title}>"
            f"{esc(text[seg.start : seg.end])}</span>"
        )
    if ceiling:
        parts.append(
            "<span class='ceiling-mark' title='generation stopped at max_tokens'>⟂ max_tokens</span>"
        )
    parts.append("</pre>")
    return "".join(parts)


def _budget_bar(loop: LoopSpan) -> str:
    lead = max(0.0, min(1.0, loop.onset_fraction)) * 100
    return (
        f"<div class='bar' role='img' aria-label='lead-in {lead:.0f}%, after onset {100 - lead:.0f}%'>"
        f"<div class='b-lead' style='width:{lead:.2f}%'></div>"
        f"<div class='b-after' style='width:{100 - lead:.2f}%'></div></div>"
    )


def _facts(sample: StoredSample) -> list[tuple[str, str]]:
    rows: list[tuple[str, str]] = [
        ("kinds", kind_badges(sample.kinds)),
        ("source", esc(sample.source)),
        ("time", esc(format_time(sample.time))),
        ("model", esc(sample.model or "—")),
    ]
    if sample.run is not None or sample.step is not None:
        rows.append(("run / step", esc(_run_step(sample))))
    if sample.where:
        rows.append(("where", f"<code>{esc(sample.where)}</code>"))
    rows.extend((esc(k), f"<code>{esc(v)}</code>") for k, v in sample.identity.items())
    rows.append(("finish reason", esc(sample.finish_reason)))
    rows.append(
        (
            "length",
            f"{sample.text_chars} chars"
            + (f" + {sample.reasoning_chars} reasoning" if sample.reasoning_chars else ""),
        )
    )
    if sample.output_tokens is not None or sample.max_tokens is not None:
        hit = " · hit the ceiling" if "ceiling" in sample.kinds else ""
        tokens = f"{esc(sample.output_tokens or '—')} / {esc(sample.max_tokens or '—')}{hit}"
        rows.append(("output / max tokens", tokens))
    loop = sample.loop
    if loop is not None:
        share = 1.0 - loop.onset_fraction
        rows.append(("loop channel", esc(loop.channel)))
        rows.append(("loop onset", f"char {loop.onset} ({loop.onset_fraction:.0%} into the reply)"))
        rows.append(("period", esc(f"{loop.period} chars" if loop.period else "—")))
        rows.append(("unit", f"<code>{esc(loop.unit)}</code>" if loop.unit else "—"))
        rows.append(
            ("covered", esc(f"{loop.covered_chars} chars" if loop.covered_chars is not None else "—"))
        )
        after = f"{loop.chars_after_onset} chars ({share:.0%} of the reply)"
        if loop.tokens_after_onset is not None:
            after += f", {loop.tokens_after_onset} tokens"
        rows.append(("after onset", esc(after) + _budget_bar(loop)))
    if sample.leaks:
        # As the metrics label them: a stripped role turn (newline, role, newline) stays readable.
        counts = ", ".join(f"<code>{esc(leak_token_label(t))}</code> ×{n}" for t, n in sample.leaks.items())
        offsets = ", ".join(f"{m.start}–{m.end}" for m in sample.leak_marks[:20])
        more = " …" if len(sample.leak_marks) > 20 else ""
        rows.append(("leaked tokens", counts + f"<br><span class='muted'>at {offsets}{more}</span>"))
    return rows


def render_sample(sample: StoredSample, cap_setting: str = "web.sample_text_chars") -> list[str]:
    """The body of one sample: facts, then the highlighted text (when retained); `cap_setting` names
    what limits the kept text, for the "text cut" note."""
    parts = ["<table class='facts'>"]
    parts.extend(f"<tr><th>{k}</th><td>{v}</td></tr>" for k, v in _facts(sample))
    parts.append("</table>")
    ceiling = "ceiling" in sample.kinds
    if sample.text is None:
        parts.append(
            "<p class='muted'>Response text is not kept (set <code>web.retain_text: true</code> to keep it; "
            "it may hold user data). The evidence above is all that is stored.</p>"
        )
        return parts
    parts.append(
        "<p class='legend'><span class='lead'>lead-in</span><span class='copy-first'>first copy</span>"
        "<span class='copy'>further copy</span><span class='after'>after onset</span>"
        "<span class='leak'>leaked token</span></p>"
    )
    loop = sample.loop
    content_loop = loop if loop is not None and loop.channel == "content" else None
    if sample.reasoning:
        reasoning_loop = loop if loop is not None and loop.channel == "reasoning" else None
        parts.append("<h3>Reasoning</h3>")
        parts.append(highlighted(sample.reasoning, reasoning_loop, ceiling=False))
        if len(sample.reasoning) < sample.reasoning_chars:
            parts.append(
                f"<p class='muted'>Reasoning cut at {len(sample.reasoning)} of "
                f"{sample.reasoning_chars} chars.</p>"
            )
    parts.append("<h3>Response</h3>")
    parts.append(highlighted(sample.text, content_loop, sample.leak_marks, ceiling=ceiling))
    if len(sample.text) < sample.text_chars:
        parts.append(
            f"<p class='muted'>Text cut at {len(sample.text)} of {sample.text_chars} chars "
            f"(<code>{esc(cap_setting)}</code>).</p>"
        )
    return parts


def _short_time(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).strftime("%m-%d %H:%M:%S")


def _run_step(sample: StoredSample) -> str:
    if sample.run is None and sample.step is None:
        return "—"
    return f"{sample.run or '—'} / {sample.step if sample.step is not None else '—'}"


def sample_row(sample: StoredSample, href: str | None) -> str:
    """One table row of a sample list: link, time, source, model, run/step, where, kinds, loop."""
    loop = sample.loop
    onset = f"{loop.onset_fraction:.0%}" if loop else "—"
    after = f"{1 - loop.onset_fraction:.0%}" if loop else "—"
    unit = f"<code>{esc(loop.unit)}</code>" if loop and loop.unit else "—"
    link = f"<a href='{esc(href)}'>{esc(sample.id)}</a>" if href else f"<code>{esc(sample.id)}</code>"
    run = esc(_run_step(sample))
    return (
        f"<tr><td>{link}</td><td title='{esc(format_time(sample.time))}'>{esc(_short_time(sample.time))}</td>"
        f"<td>{esc(sample.source)}</td>"
        f"<td>{esc(sample.model or '—')}</td><td>{run}</td><td><code>{esc(sample.where or '—')}</code></td>"
        f"<td class='kinds'>{kind_badges(sample.kinds)}</td><td>{onset}</td><td>{after}</td>"
        f"<td class='unit'>{unit}</td></tr>"
    )


SAMPLE_TABLE_HEAD = (
    "<table class='samples'><tr><th>id</th><th>time (UTC)</th><th>source</th><th>model</th>"
    "<th>run / step</th><th>where</th><th>kinds</th><th>onset</th><th>after onset</th><th>unit</th></tr>"
)
