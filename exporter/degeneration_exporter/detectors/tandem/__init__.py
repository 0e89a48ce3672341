"""The default repetition verdict (`tandem_repeat`): a written definition of a loop, checked at C speed.

**What a loop is** (docs/detectors/tandem_repeat.md has the full text, with examples). A text loops
when some *unit* is written again and again, back to back:

- the unit is any string of one character or more, in any script, that is not whitespace alone;
- copies may differ in *number slots* (every run of digits counts as the same: counters, dates,
  amounts) and in *name slots* (a differing stretch of at most `max_slot_chars`, of any length, at
  most `max_slot_fraction` of the material, with 60 characters agreeing exactly between slots);
- a *cycle* of a few distinct units in the same order is one longer unit;
- a *counting run* (`17, 18, 19, ...`, `1 2 3 ...`) is a loop of a number and its separator;
- *near copies* (runs of 4 words agreeing, a word or two changed between) running into the end;
- it may be anywhere in the text, after any amount of clean text, and the ceiling may cut it anywhere.

**Minimum evidence** (each family's default in `TandemRepeatParams`, lengths in code points):

| family | needs |
|---|---|
| `repeat`: copies equal (numbers folded) | ≥ 3 copies and ≥ 60 characters after the first copy |
| `slotted`: copies differing in name slots | ≥ 6 copies, ≥ 60 characters, slots ≤ 15% |
| `cut_off`: a long unit running into the end | a copy ≥ 40 characters, ≥ 60 (and ≥ 30% of a copy) repeated |
| `symbols`: a unit without letters, same every copy | ≥ 3 copies covering ≥ 200 characters |
| `counting`: numbers stepping by a constant | ≥ 30 numbers, a copy ≤ 8 characters |
| `near_copies`: 4-word runs agreeing, to the end | ≥ 30 echoed words, a copy ≥ 40 characters |

**Exemptions**, each with its reason: whitespace padding (layout, never content); a divider or rule
shorter than 200 characters (layout); tables, lists and code whose rows differ in content, including
rows of numbers that do not count (`2 x 3 = 6`: a unit whose numbers change needs 2 letters and a
quarter of its characters in letters, else it is data, not a loop); a phrase quoted twice and a
refrain (two copies, or copies with other text between, are writing, not a loop); a short stutter
(under 60 repeated characters); near copies that give way to new text (a restatement, a template
list).

The verdict reports the earliest loop: onset (start of its first copy), period, copies, the family.
"""

from __future__ import annotations

from .detector import DETECTOR, TandemRepeat, detect_tandem_repeat
from .params import TandemRepeatParams

__all__ = ["DETECTOR", "TandemRepeat", "TandemRepeatParams", "detect_tandem_repeat"]
