"""`scan --format html`: one self-contained, script-free file; bounded size whatever the input size."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import orjson
from degeneration_exporter.classification.classify import Classifier
from degeneration_exporter.record import Record
from degeneration_exporter.sinks.html_report import HtmlReportWriter
from degeneration_exporter.sinks.report_writer import ListedSample

from tests.log_lines import CLEAN, LEAK, LOOP
from tests.test_scan import run_scan

HOSTILE = "<script>alert(1)</script></textarea><img src=x onerror=alert(2)>"


def _dump(path: Path) -> None:
    rows = []
    for n in range(40):
        text = [CLEAN, LOOP + HOSTILE, LEAK][n % 3]
        rows.append(orjson.dumps({"response": text, "step": n // 10, "finish_reason": "stop"}))
    path.write_bytes(b"\n".join(rows) + b"\n")


def _no_fetches(html: str) -> None:
    """Nothing the browser would load: no script, no external src/href, no CSS url(), no @import."""
    assert "<script" not in html.lower()
    assert not re.search(r"""(src|href)\s*=\s*['"]?(https?:|//)""", html, re.IGNORECASE)
    assert "url(" not in html and "@import" not in html


def test_scan_writes_one_self_contained_page(tmp_path: Path) -> None:
    dump = tmp_path / "rollouts.jsonl"
    _dump(dump)
    out = tmp_path / "report.html"
    done = run_scan(str(dump), "--format", "html", "-o", str(out))
    assert done.returncode == 0, done.stderr
    html = out.read_text(encoding="utf-8")
    _no_fetches(html)
    assert "Content-Security-Policy" in html and "default-src 'none'" in html
    assert "Repetition fraction per file" in html and "Loop onset" in html and "Budget burnt" in html
    assert "Repetition fraction per rollout step" in html and html.count("<svg") >= 4
    assert html.count("<svg") >= 3
    assert "&lt;script&gt;alert(1)&lt;/script&gt;&lt;/textarea&gt;" in html
    assert "Flagged samples (" in html and "class='after copy-first'" in html and "class='lead leak'" in html


def test_a_million_records_make_a_small_report(tmp_path: Path) -> None:
    looping = Classifier().classify(Record(text=LOOP * 20))
    out = tmp_path / "big.html"
    writer = HtmlReportWriter(out)
    for n in range(1_000_000):
        verdict = dataclasses.replace(looping, path="/d/x.jsonl", line=n + 1) if n % 10 == 0 else looping
        writer.add_sample(ListedSample(b"", verdict))
    files = [{"path": f"/d/{i}.jsonl", "num_samples": 1000, "repetition_frac": i / 1000} for i in range(1000)]
    steps = [
        {"run": "r", "step": s, "num_samples": 200, "repetition_frac": (s % 50) / 50} for s in range(5000)
    ]
    writer.finish(
        {"num_samples": 1_000_000, "num_repetitive_samples": 1_000_000, "files": files, "steps": steps}
    )
    size = out.stat().st_size
    assert size < 3_000_000, size
    html = out.read_text(encoding="utf-8")
    assert "The first 100 of 1000000 are shown" in html
    assert "each bar averages" in html  # 5000 steps thinned to at most 400 bars
    assert html.count("class='chart-bar'") <= 400 + 400 + 10 + 24
    _no_fetches(html)
