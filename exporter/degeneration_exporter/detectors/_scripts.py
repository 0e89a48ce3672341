"""Character classes for scripts written without spaces between words (one definition for all detectors).

Why: a whitespace split makes a whole Chinese or Thai paragraph one "word", so word-based rules go
blind on those scripts (the osaurus CJK gap, detectors.md §5.2). Detectors that count words treat each
character of these scripts as a word of its own; one such character is about one model token.
Regex class bodies (no brackets), for use inside `[...]`.
"""

from __future__ import annotations

__all__ = ["HANGUL", "NO_SPACE_SCRIPTS"]

NO_SPACE_SCRIPTS = (
    "\u0e00-\u0eff"  # Thai, Lao
    "\u1000-\u109f"  # Myanmar
    "\u1780-\u17ff"  # Khmer
    "\u2e80-\u2fff"  # CJK radicals, Kangxi radicals, ideographic description characters
    "\u3001-\u9fff"  # CJK symbols and punctuation, kana, bopomofo, CJK ideographs (U+3000, the ideographic
    #                  space, stays whitespace)
    "\uf900-\ufaff"  # CJK compatibility ideographs
    "\uff01-\uffef"  # Halfwidth and fullwidth forms
    "\U00020000-\U0003ffff"  # CJK extensions B and later
)
"""Scripts whose words are not separated by spaces: each character counts as a word."""

HANGUL = "\uac00-\ud7af"
"""Hangul syllables: Korean separates words with spaces, but a syllable block is a natural repeat unit."""
