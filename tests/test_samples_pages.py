"""/samples, /samples/<id>, /api/samples, the landing page and /metrics negotiation of a real daemon."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import bcrypt
import httpx
import yaml

from tests.daemon_harness import DaemonProcess, total, wait_for
from tests.log_lines import CLEAN, LEAK, LOOP, chat_line

SECRET = "my password is hunter2"


def _config(tmp_path: Path, **web: Any) -> Path:
    config = tmp_path / "config.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "sources": [
                    {
                        "name": "chat",
                        "type": "file_tail",
                        "include": [f"{tmp_path}/logs/*.jsonl", f"{tmp_path}/typo/*.jsnol"],
                        "format": "openai_chat",
                        "positions_file": str(tmp_path / "p.json"),
                        "poll_interval": "PT0.1S",
                        "glob_interval": "PT0.2S",
                    }
                ],
                "web": web,
            }
        )
    )
    return config


def _write(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir(exist_ok=True)
    lines = [
        chat_line(CLEAN, n=0),
        chat_line(LOOP + SECRET, "length", n=1),
        chat_line(LEAK + SECRET, n=2),
        chat_line(LOOP, model="other-model", n=3),
    ]
    (logs / "a.jsonl").write_bytes(b"".join(lines))


def test_pages_show_the_evidence_without_text_and_filter(tmp_path: Path) -> None:
    _write(tmp_path)
    with DaemonProcess(["--config", str(_config(tmp_path))], tmp_path / "daemon.log") as daemon:
        daemon.wait_for_total("degeneration_responses_total", 4)
        client, url = daemon.client, daemon.url
        listing = client.get(f"{url}/samples")
        assert listing.status_code == 200
        assert "script-src" not in listing.headers["content-security-policy"]
        assert listing.headers["content-security-policy"].startswith("default-src 'none'")
        api = client.get(f"{url}/api/samples").json()
        assert api["retain_text"] is False
        samples = api["samples"]
        assert len(samples) == 3 and all("text" not in s for s in samples)
        assert SECRET not in listing.text and SECRET not in str(samples)
        # newest first (record ids come with branch `formats`' identity fields; unit tests cover them)
        assert [s["model"] for s in samples] == ["other-model", "Qwen/Qwen3-8B", "Qwen/Qwen3-8B"]
        leak = samples[1]
        assert leak["kinds"] == ["template_leak"] and leak["leaks"] == {"<|im_end|>": 1}
        assert leak["leak_marks"] == [
            {"start": LEAK.index("<"), "end": LEAK.index("A"), "token": "<|im_end|>"}
        ]
        looping = samples[2]
        assert looping["kinds"] == ["repetition", "ceiling", "ceiling_while_repeating"]
        assert looping["loop"]["onset"] == LOOP.index("Wait") and looping["model"] == "Qwen/Qwen3-8B"

        only = client.get(f"{url}/api/samples", params={"kind": "repetition", "model": "other-model"}).json()
        assert [s["id"] for s in only["samples"]] == [samples[0]["id"]]
        filtered = client.get(f"{url}/samples", params={"kind": "template_leak"}).text
        assert leak["id"] in filtered and looping["id"] not in filtered

        detail = client.get(f"{url}/samples/{looping['id']}")
        assert detail.status_code == 200 and "default-src 'none'" in detail.headers["content-security-policy"]
        assert "hit the ceiling" in detail.text and SECRET not in detail.text
        assert client.get(f"{url}/samples/0123456789abcdef").status_code == 404
        assert client.get(f"{url}/samples/a/b").status_code == 404

        landing = client.get(f"{url}/").text
        assert "href='/samples'" in landing and "Qwen/Qwen3-8B" in landing and "other-model" in landing
        assert "repetition 50.0%" in landing and "template_leak 25.0%" in landing
        assert (
            "typo/*.jsnol</code> matches no file" in landing and "logs/*.jsonl</code> matches" not in landing
        )
        assert looping["id"] in landing and SECRET not in landing


def test_metrics_speak_openmetrics_with_exemplars_and_gzip_only_when_asked(tmp_path: Path) -> None:
    _write(tmp_path)
    with DaemonProcess(["--config", str(_config(tmp_path))], tmp_path / "daemon.log") as daemon:
        daemon.wait_for_total("degeneration_responses_total", 4)
        plain = daemon.client.get(f"{daemon.url}/metrics", headers={"Accept-Encoding": "identity"})
        assert plain.headers["content-type"] == "text/plain; version=0.0.4; charset=utf-8"
        assert "content-encoding" not in plain.headers and "sample_id" not in plain.text
        ids = {s["id"] for s in daemon.client.get(f"{daemon.url}/api/samples").json()["samples"]}
        accept = "application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5"
        om = daemon.client.get(f"{daemon.url}/metrics", headers={"Accept": accept, "Accept-Encoding": "gzip"})
        assert om.headers["content-type"].startswith("application/openmetrics-text; version=1.0.0")
        assert om.headers["content-encoding"] == "gzip"  # httpx decoded it for .text
        exemplars = {
            line.split('sample_id="')[1].split('"')[0]
            for line in om.text.splitlines()
            if "sample_id=" in line
        }
        assert exemplars and exemplars <= ids
        assert om.text.endswith("# EOF\n")

        def held() -> bool:
            return total(daemon.scrape(), "degeneration_responses_flagged_total", kind="repetition") == 2

        wait_for(held, 10, "flagged counters")


def test_samples_pages_sit_behind_the_web_config_basic_auth(tmp_path: Path) -> None:
    _write(tmp_path)
    hashed = bcrypt.hashpw(b"s3cret", bcrypt.gensalt(rounds=4)).decode()
    web = tmp_path / "web.yml"
    web.write_text(f"basic_auth_users: {{prom: '{hashed}'}}\n")
    args = ["--config", str(_config(tmp_path)), "--web-config", str(web)]
    with DaemonProcess(args, tmp_path / "daemon.log", auth=("prom", "s3cret")) as daemon:
        daemon.wait_for_total("degeneration_responses_total", 4)
        [first, *_] = daemon.client.get(f"{daemon.url}/api/samples").json()["samples"]
        for path in ("/samples", f"/samples/{first['id']}", "/api/samples"):
            assert httpx.get(f"{daemon.url}{path}").status_code == 401, path
            assert httpx.get(f"{daemon.url}{path}", auth=("prom", "nope")).status_code == 401, path
            assert daemon.client.get(f"{daemon.url}{path}").status_code == 200, path
