"""The samples pages and the HTML report in a real headless Chromium (Debian chromium + chromium-driver).

Driven with selenium through /usr/bin/chromedriver (scripts/install-chromium.sh); the flags are the
ones this machine needs (shared/spec/tooling.md §6): no sandbox as root, no GPU, no background
networking. Screenshots go to test-artifacts/screenshots/ (gitignored) for a human to look at.
On CI (CI=true) a missing browser fails the test instead of skipping it.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
import yaml
from degeneration_exporter.classification.classify import Classifier
from degeneration_exporter.record import Record
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By

from tests.daemon_harness import DaemonProcess
from tests.log_lines import CLEAN, LEAK, LOOP, chat_line
from tests.test_scan import run_scan

ROOT = Path(__file__).resolve().parents[2]
SHOTS = ROOT / "test-artifacts" / "screenshots"
HOSTILE = (
    '<script>window.__pwned = 1</script></textarea></pre><img src=x onerror="window.__pwned = 2">'
    " مرحبا بالعالم \u202eevil\u202c 你好，世界 😀👍🏽 "
)
HOSTILE_LOOP = HOSTILE + "Wait, let me check that again. 再检查一次。 " * 30 + "<|im_end|>"
BIG_LOOP = "Intro. " + "I will verify the result once more. " * 29_000  # about 1 MB
CHROME_FLAGS = (
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--window-size=1280,1400",
)


def _binaries() -> tuple[str, str]:
    chromium = shutil.which("chromium") or "/usr/bin/chromium"
    driver = shutil.which("chromedriver") or "/usr/bin/chromedriver"
    if not (Path(chromium).exists() and Path(driver).exists()):
        message = "chromium/chromedriver not installed (bash scripts/install-chromium.sh)"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(message)
        pytest.skip(message)
    return chromium, driver


@pytest.fixture
def browser(tmp_path: Path) -> Iterator[webdriver.Chrome]:
    chromium, driver_path = _binaries()
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in (*CHROME_FLAGS, f"--user-data-dir={tmp_path / 'chrome-profile'}"):
        options.add_argument(flag)
    driver = webdriver.Chrome(options=options, service=Service(executable_path=driver_path))
    driver.set_page_load_timeout(60)
    try:
        yield driver
    finally:
        driver.quit()


def _shot(driver: webdriver.Chrome, name: str) -> Path:
    SHOTS.mkdir(parents=True, exist_ok=True)
    path = SHOTS / name
    driver.save_screenshot(str(path))
    return path


def _spans(driver: webdriver.Chrome, pre_index: int = -1) -> list[dict[str, Any]]:
    """Every highlighted span of the page's last (or given) response block, read in the browser."""
    script = (
        "const pres = document.querySelectorAll('pre.response');"
        "const pre = pres[arguments[0] < 0 ? pres.length - 1 : arguments[0]];"
        "return Array.from(pre.querySelectorAll('span[data-start]')).map(s => ({"
        "cls: s.className, start: +s.dataset.start, end: +s.dataset.end, text: s.textContent}));"
    )
    spans: list[dict[str, Any]] = driver.execute_script(script, pre_index)
    return spans


def _assert_spans_match(spans: list[dict[str, Any]], text: str, loop: dict[str, Any] | None) -> None:
    assert spans, "no highlighted spans"
    assert "".join(s["text"] for s in spans) == text  # nothing lost, nothing added, no markup leaked in
    for span in spans:
        assert text[span["start"] : span["end"]] == span["text"], span
    if loop is not None:
        first = next(s for s in spans if "copy-first" in s["cls"].split())
        assert (first["start"], first["end"]) == (loop["onset"], loop["onset"] + loop["period"])
        copies = [s["start"] for s in spans if "copy" in s["cls"].split()]
        assert copies[:3] == [loop["onset"] + k * loop["period"] for k in (1, 2, 3)]
        assert all("after" in s["cls"].split() for s in spans if s["start"] >= loop["onset"])


def _no_script_ran(driver: webdriver.Chrome) -> None:
    assert driver.execute_script("return window.__pwned === undefined && document.scripts.length === 0")
    assert driver.find_elements(By.TAG_NAME, "img") == []
    assert driver.find_elements(By.TAG_NAME, "textarea") == []


def test_samples_pages_highlight_the_reported_offsets_and_never_run_response_script(
    tmp_path: Path, browser: webdriver.Chrome
) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    source = {
        "name": "chat",
        "type": "file_tail",
        "include": [f"{logs}/*.jsonl"],
        "format": "openai_chat",
        "positions_file": str(tmp_path / "p.json"),
        "poll_interval": "PT0.1S",
    }
    web = {"retain_text": True, "sample_text_chars": 2_000_000}
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump({"sources": [source], "web": web}))
    lines = [
        chat_line(CLEAN, n=0),
        chat_line(HOSTILE_LOOP, "length", n=1),
        chat_line(LEAK, model="Qwen/Qwen3-32B", n=2),
        chat_line(BIG_LOOP, "length", n=3),
        chat_line(LOOP, model="Qwen/Qwen3-32B", n=4),
    ]
    (logs / "a.jsonl").write_bytes(b"".join(lines))
    with DaemonProcess(["--config", str(config)], tmp_path / "daemon.log") as daemon:
        daemon.wait_for_total("degeneration_responses_total", 5, timeout=60)
        held = daemon.client.get(f"{daemon.url}/api/samples").json()["samples"]
        by_text = {s["text"]: s for s in held}

        hostile = by_text[HOSTILE_LOOP]
        browser.get(f"{daemon.url}/samples/{hostile['id']}")
        _no_script_ran(browser)
        _assert_spans_match(_spans(browser), HOSTILE_LOOP, hostile["loop"])
        leak_spans = [(s["start"], s["end"]) for s in _spans(browser) if "leak" in s["cls"].split()]
        assert leak_spans == [(m["start"], m["end"]) for m in hostile["leak_marks"]]
        assert "ceiling-mark" in browser.page_source
        _shot(browser, "sample-hostile.png")

        big = by_text[BIG_LOOP]
        started = time.monotonic()
        browser.get(f"{daemon.url}/samples/{big['id']}")
        spans = _spans(browser)
        elapsed = time.monotonic() - started
        assert elapsed < 30, f"1 MB reply took {elapsed:.1f} s to load"
        _assert_spans_match(spans, BIG_LOOP, big["loop"])
        assert len(spans) <= 305  # copies beyond the first 300 are one span
        _shot(browser, "sample-1mb.png")

        browser.get(f"{daemon.url}/samples?kind=repetition")
        rows = browser.find_elements(By.CSS_SELECTOR, "table.samples tr")
        assert len(rows) == 1 + 3  # header + three looping replies
        _no_script_ran(browser)
        _shot(browser, "samples-list.png")
        browser.get(f"{daemon.url}/samples/{hostile['id']}")
        browser.execute_script("document.querySelector('pre.response').scrollIntoView()")
        _shot(browser, "samples-detail.png")
        browser.get(f"{daemon.url}/")
        assert (
            browser.find_element(By.LINK_TEXT, "Flagged samples").get_attribute("href")
            == f"{daemon.url}/samples"
        )
        _shot(browser, "landing.png")


def test_html_report_renders_safely_with_the_same_highlighting(
    tmp_path: Path, browser: webdriver.Chrome
) -> None:
    dump = tmp_path / "rollouts.jsonl"
    texts = [CLEAN, HOSTILE_LOOP, LEAK, LOOP]
    rows = [
        orjson.dumps({"response": texts[n % 4], "step": n // 8, "finish_reason": "stop"}) for n in range(64)
    ]
    dump.write_bytes(b"\n".join(rows) + b"\n")
    out = tmp_path / "report.html"
    done = run_scan(str(dump), "--format", "html", "-o", str(out))
    assert done.returncode == 0, done.stderr
    browser.get(out.as_uri())
    _no_script_ran(browser)
    bars = browser.find_elements(By.CSS_SELECTOR, "rect.chart-bar")
    assert bars and all(float(b.get_attribute("height") or 0) >= 0 for b in bars)
    blocks = browser.find_elements(By.CSS_SELECTOR, "pre.response")
    hostile_index = next(i for i, b in enumerate(blocks) if "window.__pwned" in b.text)
    spans = _spans(browser, hostile_index)
    loop = Classifier().classify(Record(text=HOSTILE_LOOP)).loop  # what the JSON report states
    assert loop is not None
    _assert_spans_match(spans, HOSTILE_LOOP, loop.to_dict())
    _shot(browser, "report-top.png")
    browser.execute_script("arguments[0].scrollIntoView()", blocks[hostile_index])
    _shot(browser, "report-sample.png")
