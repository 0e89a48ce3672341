"""Human-readable tables: a scan report (`scan --format table`), and `align` for any rows of cells."""

from __future__ import annotations

from typing import Any

from ..classification.result import FlagKind

_KINDS = [k.value for k in FlagKind]
_MAX_ROWS = 20


def render(report: dict[str, Any]) -> str:
    """Per-file counts and fractions, then the first flagged samples with where their loop starts."""
    head = ["file", "samples", *_KINDS, "malformed"]
    rows = [head, *(_count_row(f["path"], f) for f in report["files"]), _count_row("TOTAL", report)]
    lines = align(rows)
    flagged = [(f["path"], s) for f in report["files"] for s in f["samples"] if s["kinds"]]
    if flagged:
        lines += ["", f"flagged samples (first {min(len(flagged), _MAX_ROWS)} of {len(flagged)}):"]
        for path, s in flagged[:_MAX_ROWS]:
            ident = next((f"{k}={s[k]}" for k in ("index", "sample_index", "id", "request_id") if k in s), "")
            loop = s.get("loop")
            where = (
                f" onset={loop['onset']} ({loop['onset_fraction']:.0%}) unit={loop['unit']!r}" if loop else ""
            )
            leaks = f" leaks={s['leaks']}" if s["leaks"] else ""
            lines.append(f"  {path} {ident} [{', '.join(s['kinds'])}]{where}{leaks}")
    return "\n".join(lines) + "\n"


def align(rows: list[list[str]]) -> list[str]:
    """Rows of cells as lines, each column padded to its widest cell, two spaces apart."""
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]


def _count_row(label: str, counts: dict[str, Any]) -> list[str]:
    """One file's counts, or the totals: the report gives both the same keys."""
    total = counts["num_samples"]
    return [
        label,
        str(total),
        *(_cell(counts["num_flagged"][k], total) for k in _KINDS),
        str(counts["num_malformed"]),
    ]


def _cell(count: int, total: int) -> str:
    return f"{count} ({count / total:.1%})" if total else "0"
