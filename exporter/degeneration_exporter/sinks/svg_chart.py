"""Static inline SVG bar charts for the HTML report.

Why plain SVG built here: the report is one self-contained file that opens without network or
script, and a bar chart is a few rectangles; a charting library would add a dependency (and
pygal's own output references a CDN script for its tooltips). Every bar carries a <title> so a
hover shows the exact value without JavaScript. Labels are escaped like every other value.
"""

from __future__ import annotations

from collections.abc import Sequence

from .sample_html import esc

__all__ = ["bar_chart"]

_W, _H, _PAD_L, _PAD_B, _PAD_T = 760, 220, 46, 42, 22
_MAX_BARS = 400


def _thin(labels: Sequence[str], values: Sequence[float]) -> tuple[list[str], list[float], int]:
    """At most `_MAX_BARS` bars: consecutive bars are averaged into one (their count is returned)."""
    n = len(values)
    group = max(1, -(-n // _MAX_BARS))
    if group == 1:
        return list(labels), list(values), 1
    out_l, out_v = [], []
    for i in range(0, n, group):
        chunk = values[i : i + group]
        out_l.append(f"{labels[i]}–{labels[min(i + group, n) - 1]}")
        out_v.append(sum(chunk) / len(chunk))
    return out_l, out_v, group


def bar_chart(
    title: str,
    labels: Sequence[str],
    values: Sequence[float],
    *,
    y_max: float | None = None,
    percent: bool = False,
    x_label: str = "",
) -> str:
    """A vertical bar chart as an <svg> element; `percent` formats values (0..1) as percentages."""
    if not values:
        return f"<p class='muted'>{esc(title)}: no data.</p>"
    labels, values, group = _thin(labels, values)
    top = y_max if y_max is not None else max(max(values), 1e-12)
    plot_w, plot_h = _W - _PAD_L - 10, _H - _PAD_B - _PAD_T
    step = plot_w / len(values)
    bar_w = max(step * 0.8, 0.5)

    def fmt(v: float) -> str:
        return f"{v:.1%}" if percent else (f"{v:.0f}" if float(v).is_integer() else f"{v:.3g}")

    parts = [
        f"<figure><svg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 {_W} {_H}' width='100%' "
        f"style='max-width:{_W}px' role='img' aria-label='{esc(title)}'>",
        f"<text x='{_PAD_L}' y='14' font-size='13' font-weight='bold'>{esc(title)}</text>",
        f"<line x1='{_PAD_L}' y1='{_PAD_T}' x2='{_PAD_L}' y2='{_PAD_T + plot_h}' stroke='#888'/>",
        f"<line x1='{_PAD_L}' y1='{_PAD_T + plot_h}' x2='{_W - 10}' y2='{_PAD_T + plot_h}' stroke='#888'/>",
    ]
    for frac in (0.0, 0.5, 1.0):
        y = _PAD_T + plot_h * (1 - frac)
        parts.append(
            f"<text x='{_PAD_L - 4}' y='{y + 4:.1f}' font-size='10' text-anchor='end'>"
            f"{fmt(top * frac)}</text>"
        )
    label_every = max(1, len(values) // 12)
    for i, (label, value) in enumerate(zip(labels, values, strict=True)):
        h = plot_h * min(value / top, 1.0) if top > 0 else 0.0
        x = _PAD_L + i * step + (step - bar_w) / 2
        parts.append(
            f"<rect class='chart-bar' x='{x:.2f}' y='{_PAD_T + plot_h - h:.2f}' width='{bar_w:.2f}' "
            f"height='{h:.2f}' "
            f"fill='#e08a1e' data-label='{esc(label)}' data-value='{value!r}'>"
            f"<title>{esc(label)}: {fmt(value)}</title></rect>"
        )
        if i % label_every == 0:
            short = label if len(label) <= 14 else label[:13] + "…"
            parts.append(
                f"<text x='{x + bar_w / 2:.1f}' y='{_PAD_T + plot_h + 14}' font-size='10' "
                f"text-anchor='middle'>{esc(short)}</text>"
            )
    note = f" (each bar averages {group})" if group > 1 else ""
    parts.append(
        f"<text x='{_PAD_L + plot_w / 2:.0f}' y='{_H - 6}' font-size='11' text-anchor='middle'>"
        f"{esc(x_label)}{esc(note)}</text></svg></figure>"
    )
    return "".join(parts)
