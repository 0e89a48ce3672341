"""docs/tailing.md lists every option of the three source models (keep docs true)."""

from __future__ import annotations

from pathlib import Path

import pytest
from degeneration_exporter.sources.file_tail import FileTailConfig
from degeneration_exporter.sources.http_push import HttpPushConfig
from degeneration_exporter.sources.stdin import StdinConfig
from pydantic import BaseModel

DOC = Path(__file__).resolve().parents[2] / "docs" / "tailing.md"


@pytest.mark.parametrize("model", [FileTailConfig, StdinConfig, HttpPushConfig], ids=lambda m: m.__name__)
def test_every_option_is_documented(model: type[BaseModel]) -> None:
    text = DOC.read_text()
    section = text[text.index(f"`{model.__name__}`") :]
    missing = [name for name in model.model_fields if f"| `{name}` |" not in section]
    assert missing == []
