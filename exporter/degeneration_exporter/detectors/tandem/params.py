"""The verdict's parameters: the minimum evidence of each loop family and the screen's geometry.

Why these defaults (docs/detectors/tandem_repeat.md, "Minimum evidence"): they follow from the
definition and from what a false alarm costs (a clean reply counted as a loop moves a fleet-wide rate
and can drop a good RL sample), never from one dev text. Each is a round number a reader can check by
counting; bench/calibrate.py shows the nearest dev texts on either side of each.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

__all__ = ["TandemRepeatParams"]


class TandemRepeatParams(BaseModel, frozen=True, extra="forbid"):
    """Minimum evidence per loop family; lengths are code points of the number-folded text."""

    min_copies: float = Field(
        3.0, gt=1.0, description="Copies (the first included) a back-to-back repeat needs anywhere in a text."
    )
    min_repeated_chars: int = Field(
        60,
        ge=1,
        description="Characters of repeated material (the region after its first copy) a back-to-back "
        "repeat needs: about 12 English words, so `very very very` or a short stutter is not a loop.",
    )
    min_tail_unit_chars: int = Field(
        40,
        ge=1,
        description="Length of one copy (about 8 words) that may be flagged with fewer copies when the "
        "repeat runs to the end of the text (cut off by the ceiling while repeating).",
    )
    min_tail_repeated_chars: int = Field(
        60, ge=1, description="Repeated characters such a cut-off repeat needs after its first copy."
    )
    min_tail_fraction: float = Field(
        0.3, ge=0.0, description="... and, as a fraction of one copy, at least this much repeated."
    )
    min_symbol_chars: int = Field(
        200,
        ge=1,
        description="Characters a repeat of a unit without letters (punctuation, symbols, emoji, rules) "
        "must cover: a divider or a markdown rule up to this long is layout, not a loop.",
    )
    min_counting_terms: int = Field(
        30,
        ge=2,
        description="Numbers a counting run (`17, 18, 19, ...`; numbers stepping by a constant, a separator "
        "of a few symbols between) needs: a short enumeration asked for is not a loop.",
    )
    max_counting_unit_chars: int = Field(
        8, ge=2, description="Longest copy of a counting run's unit (one number and its separator)."
    )
    min_slot_letters: int = Field(
        2,
        ge=0,
        description="Letters a copy must hold when numbers change from copy to copy and the run does not "
        "count: rows of a table or a times table (`2 x 3 = 6`) differ in content.",
    )
    min_slot_letter_share: float = Field(
        0.25,
        ge=0.0,
        le=1.0,
        description="... and the share of letters among a copy's other characters (numbers folded): a "
        "row of figures with a label (`1 6500 4.0 11/1/2014 The`) is data.",
    )
    max_slot_chars: int = Field(
        12, ge=0, description="Longest name slot (a differing stretch of any length) bridged in a repeat."
    )
    max_slot_fraction: float = Field(
        0.15, ge=0.0, le=1.0, description="Largest share of the repeated material that name slots may take."
    )
    min_copies_slotted: float = Field(
        6.0,
        gt=1.0,
        description="Copies a repeat needs when its copies differ in name slots: code and lists whose rows "
        "change one argument or name legitimately run to a handful of rows.",
    )
    min_near_copy_words: int = Field(
        30,
        ge=0,
        description="Words (tokens of two letters or more) a near-copy repeat must echo from one copy back: "
        "about 160 characters of English; two parallel sentences or a quoted phrase echo fewer. 0 turns the "
        "near-copy family off (it costs a few microseconds per reply).",
    )
    max_near_copy_gap_words: int = Field(
        2,
        ge=0,
        description="Unechoed tokens allowed between echoed runs of a near-copy repeat: a slot of a word or "
        "two; a refrain's verses or a list's differing items are longer gaps.",
    )
    min_near_copy_unit_chars: int = Field(
        40,
        ge=1,
        description="Shortest copy of a near-copy repeat (about 8 words, as a cut-off unit): shorter units "
        "whose words change are list items and table rows.",
    )
    max_period_bytes: int = Field(
        2048,
        ge=2,
        description="Longest unit looked for, in UTF-8 bytes (about 400 English words; 680 CJK characters).",
    )
    short_period_bytes: int = Field(
        1024,
        ge=2,
        description="Screening geometry, not a rule: periods up to this are looked for with the least "
        "evidence; longer ones are found from their larger evidence (at least 2 copies more, or a cut-off "
        "copy at the end), which keeps each look-up short.",
    )
    max_text_chars: int = Field(
        65_536,
        ge=0,
        le=64 * 1024 * 1024,
        description="Streaming: characters of a stream kept for the final verdict, so an open stream costs "
        "a bounded amount of memory (1,024 open streams x 64 Ki characters at most); past them, live checks "
        "still see every delta, and a loop they saw stays in the verdict.",
    )
    check_chars: int = Field(
        4096, ge=256, description="Streaming: a live check runs each time this many characters arrived."
    )
