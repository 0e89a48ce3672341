"""Every YAML config example in the user docs is a valid config (docs stay true)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from degeneration_exporter.config import load_settings

DOCS = Path(__file__).resolve().parents[1] / "docs"
PAGES = ["classification.md", "detectors.md", "running.md", "otlp.md"]


def _blocks() -> list[tuple[str, str]]:
    found = []
    for page in PAGES:
        text = (DOCS / page).read_text(encoding="utf-8")
        for i, block in enumerate(re.findall(r"```yaml\n(.*?)```", text, re.S)):
            if re.match(r"\s*(classify|detectors|sources|sinks|state|web):", block):
                found.append((f"{page}#{i}", block))
    return found


BLOCKS = _blocks()


def test_the_classification_page_has_a_config_example() -> None:
    assert any(name.startswith("classification.md") for name, _ in BLOCKS)


@pytest.mark.parametrize(("name", "block"), BLOCKS, ids=[n for n, _ in BLOCKS])
def test_yaml_example_is_a_valid_config(tmp_path: Path, name: str, block: str) -> None:
    # A token file the example names is a secret the user mounts: here it exists and holds a token
    # (config validation reads it, so check-config refuses an empty or missing one).
    for secret in re.findall(r"bearer_token_file:\s*(\S+)", block):
        stand_in = tmp_path / Path(secret).name
        stand_in.write_text("example-token\n", encoding="utf-8")
        block = block.replace(secret, str(stand_in))
    path = tmp_path / "config.yaml"
    path.write_text(block, encoding="utf-8")
    load_settings(path)
