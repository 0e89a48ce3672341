"""Hypothesis strategy shared by the streaming-detector tests: any split of a text into deltas."""

from __future__ import annotations

from itertools import pairwise

from hypothesis import strategies as st


@st.composite
def chunkings(draw: st.DrawFn, text: str, max_cuts: int = 40) -> list[str]:
    """Split `text` at random points (repeated points give empty deltas, which detectors must skip)."""
    cuts = sorted(draw(st.lists(st.integers(0, len(text)), max_size=max_cuts)))
    return [text[a:b] for a, b in pairwise([0, *cuts, len(text)])]
