"""The boards link flagged series to /samples and ask for exemplars; the links open the right samples."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path
from typing import Any

import httpx
from degeneration_exporter.classification.classify import Classifier
from degeneration_exporter.record import Record
from degeneration_exporter.sinks.samples import SampleStore
from degeneration_exporter.web import WebServer
from degeneration_exporter.web.samples_page import SamplesPages

from tests.log_lines import LEAK, LOOP

GENERATED = Path(__file__).resolve().parents[1] / "dashboards" / "generated"


def _board(name: str) -> dict[str, Any]:
    board: dict[str, Any] = json.loads((GENERATED / f"{name}.json").read_text())
    return board


def _panels(board: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {p["title"]: p for p in board["panels"] if p.get("type") != "row"}


def test_flagged_fraction_panels_have_exemplars_and_a_samples_link() -> None:
    board = _board("overview")
    variables = {v["name"]: v for v in board["templating"]["list"]}
    assert variables["exporter_url"]["type"] == "textbox"
    panels = _panels(board)
    for title in ("Repetition-loop fraction", "Template-leak fraction", "Ceiling-hit fraction"):
        panel = panels[title]
        assert all(t.get("exemplar") is True for t in panel["targets"]), title
        [link] = panel["fieldConfig"]["defaults"]["links"]
        assert link["url"].startswith("${exporter_url}/samples?kind=") and link["targetBlank"] is True
    assert all(t.get("exemplar") for t in panels["Loop onset position"]["targets"])
    assert not any(t.get("exemplar") for t in panels["Responses per second"]["targets"])
    rollouts = _panels(_board("rollouts"))
    [link] = rollouts["Repetition fraction per step"]["fieldConfig"]["defaults"]["links"]
    assert "run=${__field.labels.run}" in link["url"]


def test_the_data_link_opens_the_samples_of_that_series() -> None:
    classifier = Classifier()
    store = SampleStore(10)
    for n, (text, model) in enumerate([(LOOP, "qwen3-8b"), (LOOP + " x", "llama-3"), (LEAK, "qwen3-8b")]):
        result = dataclasses.replace(classifier.classify(Record(text=text, model=model)), line=n)
        store.emit("vllm-prod", result)
    server = WebServer(("127.0.0.1", 0), SamplesPages(store).routes())
    server.start()
    try:
        host, port = server.address
        [link] = _panels(_board("overview"))["Repetition-loop fraction"]["fieldConfig"]["defaults"]["links"]
        labels = {"model_name": "qwen3-8b", "source": "vllm-prod"}
        url = link["url"].replace("${exporter_url}", f"http://{host}:{port}")
        url = re.sub(r"\$\{__field\.labels\.(\w+)\}", lambda m: labels[m.group(1)], url)
        page = httpx.get(url)
        assert page.status_code == 200
        expected = {s.id for s in store.recent() if s.model == "qwen3-8b" and "repetition" in s.kinds}
        shown = set(re.findall(r"href='/samples/([0-9a-f]{16})'", page.text))
        assert shown == expected and len(expected) == 1
    finally:
        server.stop()
