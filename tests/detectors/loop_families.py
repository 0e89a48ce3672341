"""Generators of the loop families and exemptions of the verdict's definition.

The definition is docs/detectors/tandem_repeat.md.

Why plain functions of a `random.Random`: the property tests draw them through hypothesis
(`st.randoms()`), and bench/families.py runs each many times to measure the catch and flag rates the
goals name. Each family returns a `Case`: the text, where its loop truly starts, and one copy's length.
Units, copy counts and cut points are random; each case meets the family's minimum evidence by the
definition's defaults, no more. Lead-ins are real clean prose from the dev corpora, 0 to 100,000
characters, made of whole texts.
"""

from __future__ import annotations

import gzip
import json
import random
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

SHARED = Path(__file__).resolve().parents[2].parent / "shared"

_WORDS = [
    "river",
    "stone",
    "lantern",
    "copper",
    "meadow",
    "signal",
    "harbor",
    "violet",
    "engine",
    "pocket",
    "ladder",
    "winter",
    "quartz",
    "saddle",
    "orbit",
    "canvas",
    "thunder",
    "pepper",
    "velvet",
    "bridge",
    "falcon",
    "marble",
    "garden",
    "cotton",
    "rocket",
    "silver",
    "timber",
    "castle",
    "island",
    "needle",
    "planet",
    "shadow",
]
_NAMES = ["Canada", "United States", "Australia", "Norway", "Chile", "Japan", "Kenya", "Peru", "India"]
_SLOT_NAMES = [n for n in _NAMES if len(n) <= 12]  # a name slot is at most `max_slot_chars` long
_CJK = "的福制人工智能生活方式美丽洲春夏秋冬四个季节花名称我们是一种新可以让更好地"
_EMOJI = "😀🎉🚀🌟🔥💡🍀🐍"
_SYMBOLS = "!?*#+=-~.:;|/\\<>^%&@"


@dataclass(frozen=True, slots=True)
class Case:
    text: str
    onset: int  # where the loop's first copy starts (None-free: exemptions use -1)
    period: int  # one copy's length in code points (0 for exemptions)


@cache
def clean_prose() -> tuple[str, ...]:
    """Texts hand-labelled clean in both dev sets (human continuations and clean replies)."""
    texts: list[str] = []
    for folder, files in (
        ("gpt2-large-webtext-dev", ["human", "nucleus", "topk", "typical", "contrastive", "greedy", "beam"]),
        ("smollm2-long-dev", ["outputs"]),
    ):
        base = SHARED / "data" / folder
        with open(base / "labels.jsonl", encoding="utf-8") as fh:
            clean = {json.loads(line)["id"] for line in fh if '"clean"' in line}
        for name in files:
            with gzip.open(base / f"{name}.jsonl.gz", "rt", encoding="utf-8") as fh:
                texts.extend(r["text"] for r in map(json.loads, fh) if r["id"] in clean)
    stripped = (t.strip() for t in texts)
    return tuple(t for t in stripped if t and not _is_loop(t) and not _is_loop(t + "\n\nThe end."))


def _is_loop(text: str) -> bool:
    """Labelled clean, but a loop by the definition (a 300-character rule, a table of repeated rows):
    such a text cannot serve as a clean lead-in (bench/calibrate.py lists them as false positives)."""
    from degeneration_exporter.detectors.base import DetectorInput
    from degeneration_exporter.detectors.tandem import TandemRepeatParams, detect_tandem_repeat

    return detect_tandem_repeat(DetectorInput(text), TandemRepeatParams()).flagged


def lead_in(rng: random.Random, max_chars: int = 100_000) -> str:
    """Real clean prose, 0 to about `max_chars` characters: whole distinct texts joined by blank lines."""
    want = rng.choice([0, rng.randint(1, 400), rng.randint(400, 5000), rng.randint(5000, max_chars)])
    if want == 0:
        return ""
    pool = clean_prose()
    start = rng.randrange(len(pool))
    parts: list[str] = []
    size = 0
    for i in range(len(pool)):
        text = pool[(start + i) % len(pool)]
        parts.append(text)
        size += len(text) + 2
        if size >= want:
            break
    return "\n\n".join(parts) + rng.choice(["\n\n", "\n", " "])  # whole texts: each was checked clean


def _words(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(n))


def random_unit(rng: random.Random) -> str:
    """A unit of any kind: punctuation with letters, markup, code, a JSON row, CJK, emoji, mixed prose."""
    kind = rng.randrange(7)
    if kind == 0:  # letters and punctuation or markup: `* A`, `6NAD+ + `
        return (
            rng.choice(["* ", "- ", "# ", "+ ", "**", "> "])
            + rng.choice("ABCXYZ")
            + rng.choice(["", " ", "+"])
        )
    if kind == 1:  # a code line
        name = rng.choice(_WORDS)
        return f"    {name}_{rng.choice(_WORDS)} = {name}.get('{rng.choice(_WORDS)}')\n"
    if kind == 2:  # a JSON row
        return f'{{"{rng.choice(_WORDS)}": "{_words(rng, 2)}", "ok": true}},\n'
    if kind == 3:  # CJK, no spaces
        return "".join(rng.choice(_CJK) for _ in range(rng.randint(2, 20)))
    if kind == 4:  # emoji with a word
        return rng.choice(_EMOJI) + " " + rng.choice(_WORDS) + rng.choice(["! ", " ", "\n"])
    if kind == 5:  # markup tags around words
        tag = rng.choice(["b", "li", "td", "span"])
        return f"<{tag}>{_words(rng, rng.randint(1, 3))}</{tag}>"
    sentence = _words(rng, rng.randint(1, 14)).capitalize()  # mixed prose
    return sentence + rng.choice([". ", "! ", ".\n", ", "])


def _enough_copies(unit_len: int, min_copies: float = 3.0, min_repeated: int = 60) -> int:
    """Whole copies that meet the evidence even after the ceiling cuts the last copy anywhere."""
    need = max(min_copies, 1 + -(-min_repeated // unit_len))
    return int(need) + 1


def _cut(rng: random.Random, body: str, unit_len: int) -> str:
    """The ceiling cuts the last copy anywhere."""
    return body[: len(body) - rng.randrange(unit_len)]


# --- families ----------------------------------------------------------------------------------


def exact_repeat(rng: random.Random) -> Case:
    unit = random_unit(rng)
    k = _enough_copies(len(unit)) + rng.randint(0, 30)
    lead = lead_in(rng)
    return Case(lead + _cut(rng, unit * k, len(unit)), len(lead), len(unit))


def symbol_run(rng: random.Random) -> Case:
    """A unit without letters (punctuation, symbols, emoji) covering at least 200 characters: `!!!!` x 500."""
    unit = "".join(rng.choice(_SYMBOLS + _EMOJI) for _ in range(rng.randint(1, 4)))
    k = -(-201 // len(unit)) + 1 + rng.randint(0, 300)
    lead = lead_in(rng)
    return Case(lead + _cut(rng, unit * k, len(unit)), len(lead), len(unit))


def number_slots(rng: random.Random) -> Case:
    """The same line with its number slots changing: `Number of people needed = X * 4 = Y`."""
    words = _words(rng, rng.randint(2, 6)).capitalize()
    factor = rng.randint(2, 9)
    a0 = rng.randint(1, 5000)
    lines = [f"{words} = {a} * {factor} = {a * factor}\n" for a in range(a0, a0 + 200)]
    period = len(lines[0])
    k = _enough_copies(period) + rng.randint(0, 20)
    lead = lead_in(rng)
    body = "".join(lines[:k])
    return Case(lead + body[: len(body) - rng.randrange(len(lines[k - 1]))], len(lead), period)


def numbered_cycle(rng: random.Random) -> Case:
    """A cycle of list items under a running counter: `1. Canada 2. United States 3. Australia ...`."""
    cycle = rng.sample(_NAMES, rng.randint(2, 4))
    if rng.random() < 0.5:
        cycle.append(cycle[0 if len(cycle) < 3 else 1])  # an item may recur inside the cycle
    sep = rng.choice([" ", "\n"])
    rows = rng.randint(3 * len(cycle) + 12, 80)
    body = "".join(f"{i}. {cycle[(i - 1) % len(cycle)]}{sep}" for i in range(1, rows + 1))
    lead = lead_in(rng)
    period = len("".join(f"0. {c}{sep}" for c in cycle))
    return Case(lead + _cut(rng, body, len(f"{rows}. {cycle[0]}")), len(lead), period)


def counting_run(rng: random.Random) -> Case:
    """`17, 18, 19, ..., 431` or `1 2 3 ... 190`: numbers stepping by a constant, after prose or after
    other numbers written the same way (the run starts where the constant step does)."""
    start = rng.choice([1, rng.randint(0, 500), rng.randint(1000, 50_000)])
    step = rng.choice([1, 1, 2, 3, 5, 10])
    sep = rng.choice([", ", " ", "\n", "; ", ","])
    count = rng.randint(30, 450)  # from the minimum evidence up
    body = sep.join(str(start + i * step) for i in range(count))
    lead = lead_in(rng)
    if rng.random() < 0.5:  # after other numbers in the same shape: figures, a score table, a year
        figures = [str(rng.randint(0, 3000)) for _ in range(rng.randint(1, 12))]
        lead += sep.join(figures) + sep
    return Case(lead + body, len(lead), len(str(start)) + len(sep))


def code_line_to_the_end(rng: random.Random) -> Case:
    """A code line repeated to the end after a few varying lines."""
    varying = "".join(f"    {w}_{i} = load('{w}', {i})\n" for i, w in enumerate(rng.sample(_WORDS, 5)))
    line = f"    result.append({rng.choice(_WORDS)}_{rng.choice(_WORDS)}(value))\n"
    k = _enough_copies(len(line)) + rng.randint(0, 40)
    head = lead_in(rng, 20_000) + "```python\ndef run(value):\n" + varying
    return Case(head + _cut(rng, line * k, len(line)), len(head), len(line))


def name_slots(rng: random.Random) -> Case:
    """Copies that differ in a short name slot: `... winner was Alice ...`, `... winner was Bob ...`."""
    fixed = _words(rng, rng.randint(12, 16)).capitalize() + " "  # >= 60 characters agree in every copy
    tail = " " + _words(rng, rng.randint(2, 5)) + ". "
    copies = [fixed + rng.choice(_SLOT_NAMES) + tail for _ in range(rng.randint(7, 14))]
    lead = lead_in(rng)
    return Case(lead + "".join(copies), len(lead), len(copies[0]))


def cut_off_block(rng: random.Random) -> Case:
    """A unit of 8 words or more written twice, the second copy cut by the ceiling."""
    unit = ". ".join(_words(rng, rng.randint(8, 14)).capitalize() for _ in range(rng.randint(1, 4))) + ". "
    least = max(60, int(0.3 * len(unit))) + 1
    repeated = rng.randint(least, max(least, len(unit)))
    lead = lead_in(rng)
    return Case(lead + unit + (unit * 3)[:repeated], len(lead), len(unit))


def _slot_positions(rng: random.Random, base: list[list[str]]) -> list[tuple[int, int, int]]:
    """(sentence, word, width) of the slots of a near-copy unit: a slot of 1 or 2 words every few
    words, runs of at least 4 unchanged words between slots, as the near-copy family asks."""
    slots = []
    for s, words in enumerate(base):
        i = rng.randint(4, 6)
        while i < len(words):
            width = rng.randint(1, 2)
            slots.append((s, i, width))
            i += width + rng.randint(4, 6)
    return slots


def _near_copy(rng: random.Random, base: list[list[str]], slots: list[tuple[int, int, int]], sep: str) -> str:
    """One copy of `base` (sentences of words) with new words in its slots, `sep` after it (the
    separator is part of the unit: it does not change from copy to copy)."""
    copy = [list(words) for words in base]
    for s, i, width in slots:
        for k in range(i, min(i + width, len(copy[s]))):
            copy[s][k] = rng.choice(_WORDS)
    return " ".join(" ".join(w).capitalize() + "." for w in copy) + sep


def _near_copy_unit(rng: random.Random, least_words: int) -> list[list[str]]:
    """Sentences of 8 to 16 words, at least `least_words` words in all."""
    base: list[list[str]] = []
    while sum(map(len, base)) < least_words:
        base.append(_words(rng, rng.randint(8, 16)).split())
    return base


def near_copies(rng: random.Random) -> Case:
    """A paragraph written again and again with a word or two changed every few words (more than
    name slots), running into the ceiling, which cuts the last copy anywhere after 45 words."""
    lead = lead_in(rng)
    base = _near_copy_unit(rng, rng.randint(8, 80))
    slots = _slot_positions(rng, base)
    sep = rng.choice([" ", "\n", "\n\n"])
    copies = [_near_copy(rng, base, slots, sep) for _ in range(rng.randint(2, 6))]
    while sum(len(c.split()) for c in copies[1:]) < 45 + len(copies[0].split()):
        copies.append(_near_copy(rng, base, slots, sep))
    words = "".join(copies[1:]).split(" ")
    keep = rng.randint(45, len(words))  # >= 30 words echoed with slots aside, >= 30% of a copy
    tail = " ".join(words[:keep])
    tail = tail[: len(tail) - rng.randrange(len(words[keep - 1]) + 1)]  # a cut word, or none
    return Case(lead + copies[0] + tail, len(lead), len(copies[0]))


FAMILIES: dict[str, Callable[[random.Random], Case]] = {
    "exact repeat": exact_repeat,
    "symbol run": symbol_run,
    "number slots": number_slots,
    "numbered cycle": numbered_cycle,
    "counting run": counting_run,
    "code line to the end": code_line_to_the_end,
    "name slots": name_slots,
    "cut-off block": cut_off_block,
    "near copies": near_copies,
}

# --- exemptions --------------------------------------------------------------------------------


def _prose_pair(rng: random.Random) -> tuple[str, str]:
    """Two clean texts of a sentence or more: an exemption sits inside prose, not at the text's end
    (a one-character clean reply after a quote would make the quote end the text, a known limit)."""
    a, b = rng.sample([t for t in clean_prose() if len(t) >= 80], 2)
    return a[:600], b[:600]


def whitespace_padding(rng: random.Random) -> Case:
    a, b = _prose_pair(rng)
    pad = rng.choice([" ", "\n", "\t", " \n", "\u3000"]) * rng.randint(10, 5000)
    return Case(a + pad + b, -1, 0)


def divider(rng: random.Random) -> Case:
    a, b = _prose_pair(rng)
    unit = rng.choice(["-", "=", "*", "─", "* ", "~", "_", "#", "=-", "|---"])
    rule = (unit * 200)[: rng.randint(3, 199)]
    return Case(a + "\n\n" + rule + "\n\n" + b, -1, 0)


def rows_differing_in_content(rng: random.Random) -> Case:
    """A table, a list or code whose rows differ in content (numbers of any kind included)."""
    kind = rng.randrange(4)
    rows = rng.randint(3, 40)
    names = [f"{rng.choice(_WORDS)}{rng.choice(['', 's', 'er', '_x'])}" for _ in range(rows)]
    if kind == 0:
        body = "".join(
            f"| {n} | {rng.randint(0, 10 ** rng.randint(1, 6))} | {_words(rng, 2)} |\n" for n in names
        )
    elif kind == 1:
        body = "".join(f"- {n.capitalize()}: {_words(rng, rng.randint(2, 8))}\n" for n in names)
    elif kind == 2:
        body = "".join(f"    self.{n} = {rng.choice(_WORDS)}({rng.randint(0, 99)})\n" for n in names)
    else:
        body = "".join(f"{rng.randint(2, 12)} x {i} = {rng.randint(0, 999)}\n" for i in range(1, rows + 1))
    a, b = _prose_pair(rng)
    return Case(a + "\n\n" + body + "\n" + b, -1, 0)


def quoted_twice(rng: random.Random) -> Case:
    """A phrase quoted twice, with text between or back to back."""
    phrase = _words(rng, rng.randint(3, 12)).capitalize()
    a, b = _prose_pair(rng)
    between = rng.choice([" ", f" {_words(rng, rng.randint(3, 20))} "])
    return Case(f'{a} "{phrase}."{between}"{phrase}." {b}', -1, 0)


def refrain(rng: random.Random) -> Case:
    """A refrain after every verse, then a closing line: copies with other text between.

    (A refrain that ends the text cannot be told from a loop the ceiling cut after a refrain: see the
    known limits in docs/detectors/tandem_repeat.md.)"""
    chorus = _words(rng, rng.randint(4, 10)).capitalize() + ",\n"
    verses = [
        "".join(_words(rng, rng.randint(4, 9)).capitalize() + ",\n" for _ in range(rng.randint(2, 4)))
        for _ in range(rng.randint(2, 6))
    ]
    outro = _words(rng, rng.randint(6, 12)).capitalize() + ".\n"
    return Case("\n".join(v + chorus for v in verses) + "\n" + outro, -1, 0)


def parallel_sentences(rng: random.Random) -> Case:
    """Two parallel sentences in a short clean reply: two copies are not a loop."""
    frame = _words(rng, rng.randint(3, 8)).capitalize()
    end = _words(rng, rng.randint(1, 5))
    a, b = rng.sample(_WORDS, 2)
    intro = rng.choice(["", "Sure. ", "Here is the answer. "])
    return Case(f"{intro}{frame} {a} {end}. {frame} {b} {end}.", -1, 0)


def restated_once(rng: random.Random) -> Case:
    """A paragraph restated once with a word or two changed, then the text moves on: two copies."""
    base = _near_copy_unit(rng, rng.randint(20, 80))
    slots = _slot_positions(rng, base)
    sep = rng.choice([" ", "\n", "\n\n"])
    a, b = _prose_pair(rng)
    return Case(a + "\n\n" + _near_copy(rng, base, slots, sep) + _near_copy(rng, base, slots, sep) + b, -1, 0)


def near_copies_then_new_text(rng: random.Random) -> Case:
    """Near copies of a paragraph (a word or two changed every few words) that give way to new text:
    a restatement or a template list the writer got out of, not a loop that runs into the ceiling."""
    base = _near_copy_unit(rng, rng.randint(8, 40))
    slots = _slot_positions(rng, base)
    sep = rng.choice([" ", "\n", "\n\n"])
    a, b = _prose_pair(rng)
    # Fewer than 6 copies: six copies whose slots are short are name slots, a loop anywhere.
    copies = "".join(_near_copy(rng, base, slots, sep) for _ in range(rng.randint(3, 5)))
    return Case(a + "\n\n" + copies + "\n\n" + b, -1, 0)


def records_cut_by_the_ceiling(rng: random.Random) -> Case:
    """Records whose fields take other values in every row (names, ids, flags), running into the
    ceiling: a table cut off, not copies of one unit."""
    rows = []
    for _ in range(rng.randint(5, 60)):
        row = {
            "id": rng.randint(1, 99_999),
            "name": f"{rng.choice(_WORDS).capitalize()} {rng.choice(_WORDS).capitalize()}",
            "city": rng.choice(_WORDS),
            "tags": rng.sample(_WORDS, rng.randint(1, 3)),
            "active": rng.random() < 0.5,
        }
        rows.append(json.dumps(row) + ",\n")
    body = "".join(rows)
    a, _ = _prose_pair(rng)
    return Case(a + "\n\n[\n" + body[: len(body) - rng.randrange(len(rows[-1]))], -1, 0)


def template_rows(rng: random.Random) -> Case:
    """List rows on one template whose items differ in several words at a time (runs of fewer than 4
    words agree between them): each row says something new."""
    frame = _words(rng, 12).split()
    rows = []
    for _ in range(rng.randint(3, 12)):
        w = list(frame)
        for i in range(rng.randint(0, 2), len(w), rng.randint(3, 4)):  # 3 new words every 3 or 4
            w[i : i + 3] = [rng.choice(_WORDS) for _ in w[i : i + 3]]
        rows.append("- " + " ".join(w).capitalize() + ".\n")
    a, b = _prose_pair(rng)
    return Case(a + "\n\n" + "".join(rows) + "\n" + b, -1, 0)


EXEMPTIONS: dict[str, Callable[[random.Random], Case]] = {
    "whitespace padding": whitespace_padding,
    "divider": divider,
    "rows differing in content": rows_differing_in_content,
    "phrase quoted twice": quoted_twice,
    "refrain": refrain,
    "two parallel sentences": parallel_sentences,
    "paragraph restated once": restated_once,
    "near copies giving way to new text": near_copies_then_new_text,
    "template rows differing in content": template_rows,
    "records cut by the ceiling": records_cut_by_the_ceiling,
}
