"""Human-readable tables: the scan report (`scan --format table`), and `align` for any rows of cells.

Why a writer: flagged samples arrive one at a time while the scan runs; their rows are spooled to a
temporary file (bounded memory, `--limit 0` lists every hit) and printed after the per-file counts.
"""

from __future__ import annotations

import tempfile
from typing import IO, Any

from ..classification.result import Classification, FlagKind
from ..sinks.report_writer import ListedSample

__all__ = ["DEFAULT_LIMIT", "TableWriter", "align", "sample_row"]

_KINDS = [k.value for k in FlagKind]
DEFAULT_LIMIT = 20
_IDENTITY_KEYS = (
    "id",
    "custom_id",
    "request_id",
    "rid",
    "rollout_id",
    "index",
    "sample_index",
    "group_index",
    "step",
    "uid",
    "choice_index",
)


def sample_row(sample: Classification) -> str:
    """`path:line id=.. [kinds] loop onset (unit) leaks`: one flagged sample, findable in its file."""
    where = f"{sample.path or '-'}:{sample.line if sample.line is not None else '?'}"
    ident = " ".join(f"{k}={sample.identity[k]}" for k in _IDENTITY_KEYS if k in sample.identity)
    parts = [where, ident] if ident else [where]
    parts.append(f"[{', '.join(sample.kinds)}]")
    loop = sample.loop
    if loop is not None:
        tokens = f", {loop.tokens_after_onset} tokens after" if loop.tokens_after_onset is not None else ""
        parts.append(
            f"loop@{loop.channel} char {loop.onset} ({loop.onset_fraction:.0%}){tokens}"
            f" period={loop.period} unit={loop.unit!r}"
        )
    if sample.leaks:
        onset = next((f.onset for f in sample.findings if f.kind == "template_leak" and f.flagged), None)
        first = f" first at char {onset}" if onset is not None else ""
        parts.append("leaks " + ", ".join(f"{tok!r}x{n}" for tok, n in sample.leaks.items()) + first)
    return " ".join(parts)


class TableWriter:
    """Per-file counts and totals, then the flagged samples (the first `limit`; 0 lists all)."""

    def __init__(self, out: IO[bytes], *, limit: int = DEFAULT_LIMIT) -> None:
        self._out = out
        self._limit = limit
        self._rows: IO[bytes] = tempfile.SpooledTemporaryFile(max_size=4 * 1024 * 1024)  # noqa: SIM115
        self._listed = 0
        self._flagged = 0

    def add_sample(self, sample: ListedSample) -> None:
        verdict = sample.verdict
        if verdict is None or not verdict.flags:
            return
        self._flagged += 1
        if self._limit == 0 or self._listed < self._limit:
            self._rows.write(("  " + sample_row(verdict) + "\n").encode("utf-8", "replace"))
            self._listed += 1

    def finish(self, summary: dict[str, Any]) -> None:
        self._out.write(render_counts(summary).encode("utf-8"))
        if self._flagged:
            shown = "all" if self._listed == self._flagged else f"first {self._listed}"
            self._out.write(
                f"\nflagged samples ({shown} of {self._flagged}; path:line, offsets in characters of "
                "the channel):\n".encode()
            )
            self._rows.seek(0)
            while block := self._rows.read(1024 * 1024):
                self._out.write(block)
        for failed in summary.get("failed_files", []):
            self._out.write(f"FAILED {failed['path']}: {failed['reason']}\n".encode())
        self._rows.close()
        self._out.flush()


def render_counts(summary: dict[str, Any]) -> str:
    """Per-file counts and fractions, and the totals."""
    head = ["file", "samples", *_KINDS, "malformed"]
    rows = [head, *(_count_row(f["path"], f) for f in summary["files"]), _count_row("TOTAL", summary)]
    return "\n".join(align(rows)) + "\n"


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
