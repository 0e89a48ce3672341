"""Swift `Character` classes that the osaurus detectors use, approximated on code points.

Why: osaurus splits words with `Character.isWhitespace` and picks its run threshold with
`isLetter`/`isNumber` (detectors.md §4.2). Python's `str.split()` and `str.isspace()` also treat
U+001C..U+001F as whitespace, which Swift does not, so the whitespace class is spelled out here from
the Unicode `White_Space` property. Letters use `str.isalpha()` (general category L*), numbers
`str.isnumeric()`; Swift's `isLetter` is the wider `Alphabetic` property, which adds some combining
vowel signs (a documented divergence: docs/detectors/char_run.md). We count code points, not grapheme
clusters, which the spec states is identical for every shipped vector.
"""

from __future__ import annotations

import re

__all__ = ["WHITESPACE", "WHITESPACE_RUN", "WORDS_AND_SPACES", "is_letter_or_number", "is_whitespace"]

WHITESPACE = (
    "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000"
)
"""Every code point with the Unicode White_Space property (what Swift's `isWhitespace` tests)."""

_CLASS = re.escape(WHITESPACE)
WHITESPACE_RUN = re.compile(f"[{_CLASS}]+")
WORDS_AND_SPACES = re.compile(f"([{_CLASS}]+)")
"""`split` with it gives [word, whitespace, word, ..., word]: the words and every separator kept."""
_WHITESPACE_SET = frozenset(WHITESPACE)


def is_whitespace(char: str) -> bool:
    """Swift `Character.isWhitespace` for a single code point."""
    return char in _WHITESPACE_SET


def is_letter_or_number(char: str) -> bool:
    """Swift `isLetter || isNumber` for a single code point (see module docstring for the approximation)."""
    return char.isalpha() or char.isnumeric()
