"""degeneration-exporter: classify LLM responses for loops, template leaks and ceiling hits."""

from __future__ import annotations

__version__ = "0.1.0"
