"""`HtmlReportWriter`: `scan --format html -o report.html`, one self-contained file.

Why this shape: it implements the scan report-writer protocol (`add_sample` for every kept sample in
input order, `finish(summary)` once), so it streams like the JSON writer and its memory is bounded
whatever the input size: distributions are fixed bins, and only the first `max_samples` flagged
samples are kept (text capped at `text_chars` per channel), so a report over a million records
stays a few hundred kilobytes. No network: styles inline, charts inline SVG (sinks/svg_chart.py),
no script, and a Content-Security-Policy meta tag; flagged samples use the same highlighting as the
daemon's /samples/<id> page (sinks/sample_html.py).
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TextIO

from .report_writer import ListedSample
from .sample_html import SAMPLE_TABLE_HEAD, esc, kind_badges, page, render_sample, sample_row
from .samples import StoredSample, stored_sample
from .svg_chart import bar_chart

__all__ = ["DEFAULT_MAX_SAMPLES", "DEFAULT_TEXT_CHARS", "HtmlReportWriter"]

DEFAULT_MAX_SAMPLES = 100
DEFAULT_TEXT_CHARS = 16384
_ONSET_BINS = 10
_AFTER_BINS = 24  # log2 bins of characters after onset: 1, 2, 4, ... 2**23


def _frac(part: float, whole: float) -> float:
    return part / whole if whole else 0.0


class HtmlReportWriter:
    """Writes the report to `out` (a path, or an open text stream) at `finish`."""

    def __init__(
        self,
        out: str | Path | TextIO,
        *,
        max_samples: int = DEFAULT_MAX_SAMPLES,
        text_chars: int = DEFAULT_TEXT_CHARS,
        title: str = "degeneration-exporter scan report",
    ) -> None:
        self._out = out
        self._max_samples = max_samples
        self._text_chars = text_chars
        self._title = title
        self._samples: list[StoredSample] = []
        self._flagged_seen = 0
        self._onset_bins = [0] * _ONSET_BINS
        self._after_bins = [0] * _AFTER_BINS
        self._started = time.time()

    def add_sample(self, listed: ListedSample) -> None:
        """Tally the loop distributions; keep the first `max_samples` flagged samples."""
        sample = listed.verdict
        if sample is None or not sample.flags:
            return
        self._flagged_seen += 1
        loop = sample.loop
        if loop is not None:
            onset = min(max(loop.onset_fraction, 0.0), 1.0)
            self._onset_bins[min(int(onset * _ONSET_BINS), _ONSET_BINS - 1)] += 1
            after = max(loop.chars_after_onset, 1)
            self._after_bins[min(int(math.log2(after)), _AFTER_BINS - 1)] += 1
        if len(self._samples) < self._max_samples:
            source = sample.path or "scan"
            self._samples.append(stored_sample(source, sample, self._started, self._text_chars))

    def finish(self, summary: Mapping[str, Any]) -> None:
        """Render everything and write the file."""
        body = self.render(summary)
        if isinstance(self._out, str | Path):
            Path(self._out).write_bytes(body)
        else:
            self._out.write(body.decode("utf-8"))

    def render(self, summary: Mapping[str, Any]) -> bytes:
        parts = [f"<h1>{esc(self._title)}</h1>", *self._summary(summary)]
        parts.extend(self._charts(summary))
        parts.extend(self._sample_section())
        return page(self._title, parts, meta_csp=True)

    def _summary(self, summary: Mapping[str, Any]) -> list[str]:
        total = int(summary.get("num_samples", 0))
        flagged: Mapping[str, int] = summary.get("num_flagged", {})
        rows = [
            ("samples", f"{total}"),
            (
                "repetition",
                f"{summary.get('num_repetitive_samples', 0)} ({summary.get('repetition_frac', 0.0):.2%})",
            ),
        ]
        for kind, n in flagged.items():
            if kind != "repetition":
                rows.append((kind, f"{n} ({_frac(n, total):.2%})"))
        rows.append(("malformed lines", f"{summary.get('num_malformed', 0)}"))
        rows.append(("files", f"{len(summary.get('files', []))}"))
        parts = ["<h2>Summary</h2><table class='facts'>"]
        parts.extend(f"<tr><th>{esc(k)}</th><td>{esc(v)}</td></tr>" for k, v in rows)
        parts.append("</table>")
        failed = summary.get("failed_files", [])
        if failed:
            parts.append("<h3>Files that could not be read</h3><ul>")
            parts.extend(
                f"<li><code>{esc(f.get('path'))}</code>: {esc(f.get('reason'))}</li>" for f in failed
            )
            parts.append("</ul>")
        return parts

    def _charts(self, summary: Mapping[str, Any]) -> list[str]:
        files = list(summary.get("files", []))
        parts = ["<h2>Repetition</h2>"]
        if files:
            parts.append(
                bar_chart(
                    "Repetition fraction per file",
                    [Path(str(f.get("path", "?"))).name for f in files],
                    [float(f.get("repetition_frac", 0.0)) for f in files],
                    y_max=1.0,
                    percent=True,
                    x_label="file (input order)",
                )
            )
            parts.append("<table><tr><th>file</th><th>samples</th><th>repetition</th><th>flagged</th></tr>")
            for f in files[:200]:
                flagged = f.get("num_flagged", {})
                counts = (
                    ", ".join(f"{k}={v}" for k, v in flagged.items() if v)
                    if isinstance(flagged, dict)
                    else ""
                )
                parts.append(
                    f"<tr><td><code>{esc(f.get('path'))}</code></td><td>{esc(f.get('num_samples', 0))}</td>"
                    f"<td>{float(f.get('repetition_frac', 0.0)):.2%}</td><td>{esc(counts or '0')}</td></tr>"
                )
            parts.append("</table>")
            if len(files) > 200:
                parts.append(f"<p class='muted'>{len(files) - 200} more files in the JSON report.</p>")
        steps = sorted(
            summary.get("steps", []), key=lambda s: (str(s.get("run") or ""), int(s.get("step") or 0))
        )
        if steps:
            runs = {str(s.get("run")) for s in steps}
            one_run = len(runs) == 1

            def label(s: Mapping[str, Any]) -> str:
                return f"{s.get('step')}" if one_run else f"{s.get('run')}:{s.get('step')}"

            parts.append(
                bar_chart(
                    "Repetition fraction per rollout step",
                    [label(s) for s in steps],
                    [float(s.get("repetition_frac", 0.0)) for s in steps],
                    y_max=1.0,
                    percent=True,
                    x_label="step" if one_run else "run:step",
                )
            )
        parts.append("<h2>Loops</h2>")
        parts.append(
            bar_chart(
                "Loop onset (fraction of the reply before the loop began)",
                [f"{i / _ONSET_BINS:.0%}–{(i + 1) / _ONSET_BINS:.0%}" for i in range(_ONSET_BINS)],
                [float(n) for n in self._onset_bins],
                x_label="onset",
            )
        )
        last = max((i for i, n in enumerate(self._after_bins) if n), default=-1)
        parts.append(
            bar_chart(
                "Budget burnt after the onset (characters)",
                [f"≥{2**i}" for i in range(last + 1)],
                [float(n) for n in self._after_bins[: last + 1]],
                x_label="characters generated after the loop began (log2 bins)",
            )
        )
        return parts

    def _sample_section(self) -> list[str]:
        parts = [f"<h2>Flagged samples ({self._flagged_seen})</h2>"]
        if not self._samples:
            parts.append("<p class='muted'>No flagged samples.</p>")
            return parts
        if self._flagged_seen > len(self._samples):
            parts.append(
                f"<p class='muted'>The first {len(self._samples)} of {self._flagged_seen} are shown; "
                "the JSON report (<code>--format json</code>) lists all.</p>"
            )
        parts.append(SAMPLE_TABLE_HEAD)
        # anchors by position: the same reply twice in one dump has one id but two entries
        parts.extend(sample_row(s, f"#sample-{n}") for n, s in enumerate(self._samples, 1))
        parts.append("</table>")
        for n, s in enumerate(self._samples, 1):
            parts.append(
                f"<section id='sample-{n}' class='sample'><h3>Sample {n}: <code>{esc(s.id)}</code> "
                f"{kind_badges(s.kinds)}</h3>"
            )
            parts.extend(render_sample(s, f"the report keeps {self._text_chars} chars per sample"))
            parts.append("</section>")
        return parts
