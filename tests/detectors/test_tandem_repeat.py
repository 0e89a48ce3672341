"""`tandem_repeat`: each loop kind the published detectors miss, legitimate structure, properties, and
the calibration goals on the hand-labelled sets (docs/detectors.md)."""

from __future__ import annotations

import gzip
import json
import random
from collections.abc import Iterator
from itertools import pairwise
from pathlib import Path

import pytest
from degeneration_exporter.detectors import DETECTORS
from degeneration_exporter.detectors.base import DetectorInput, Finding
from degeneration_exporter.detectors.tandem_repeat import (
    TandemRepeat,
    TandemRepeatParams,
    detect_tandem_repeat,
)
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import SHARED

DEFAULT = TandemRepeatParams()
# Tiny blocks put every text through the screened long-text path (blocks, history, zlib screen).
SMALL_BLOCKS = TandemRepeatParams(block_chars=256, history_chars=512)
_SYLLABLES = [
    "ka",
    "lo",
    "mi",
    "ren",
    "tu",
    "sa",
    "vo",
    "pel",
    "dri",
    "no",
    "qua",
    "zet",
    "bor",
    "fin",
    "gal",
    "hum",
    "jos",
    "wex",
    "yil",
    "cor",
]


def _word(rng: random.Random) -> str:
    return "".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(2, 4)))


def _prose(sentences: int, seed: int) -> str:
    """Varied sentences of made-up words: no phrase recurs, like clean prose."""
    rng = random.Random(seed)
    out = []
    for _ in range(sentences):
        words = [_word(rng) for _ in range(rng.randint(8, 16))]
        out.append(" ".join(words).capitalize() + ".")
    return " ".join(out)


def _detect(text: str, params: TandemRepeatParams = DEFAULT) -> Finding:
    return detect_tandem_repeat(DetectorInput(text), params)


def _split(text: str, cuts: list[int]) -> list[str]:
    points = sorted({min(c, len(text)) for c in cuts} | {0, len(text)})
    return [text[a:b] for a, b in pairwise(points)] or [""]


def _stream(text: str, cuts: list[int], params: TandemRepeatParams) -> tuple[list[Finding], Finding]:
    live = TandemRepeat(params)
    fired = [f for f in (live.feed(c) for c in _split(text, cuts)) if f is not None]
    return fired, live.finish()


# --- loop kinds the published detectors miss (detectors.md §5.2) ---------------------------------

BLOCK = (
    "The committee reviewed the annual budget and found that spending on roads rose sharply. "
    "Members asked the treasurer to explain the increase before the next public meeting. "
)


def test_flags_block_repeated_and_cut_off_in_its_second_copy() -> None:
    intro = _prose(4, seed=1) + " "
    text = intro + BLOCK + BLOCK[: len(BLOCK) * 2 // 3]
    f = _detect(text)
    assert f.flagged
    assert f.onset == len(intro)
    assert f.details["reaches_end"] is True


def test_flags_rows_repeated_with_a_counter() -> None:
    text = "Here is the list:\n" + "".join(f"{i}. Buy a gift wrap for the party\n" for i in range(1, 9))
    f = _detect(text)
    assert f.flagged
    assert text[f.onset :].startswith("1. Buy")
    assert f.details["counter_fraction"] > 0


@pytest.mark.parametrize(
    "cycle",
    [
        ["The river rose overnight.", "Farmers moved their cattle to the hills."],
        ["The river rose overnight.", "Farmers moved their cattle to the hills.", "Schools stayed closed."],
    ],
    ids=["two_sentences", "three_sentences"],
)
def test_flags_cycles_of_alternating_sentences(cycle: list[str]) -> None:
    intro = _prose(3, seed=2) + " "
    text = intro + " ".join(cycle * 4)
    f = _detect(text)
    assert f.flagged
    assert abs(f.onset - len(intro)) <= 1
    assert f.period is not None and abs(f.period - len(" ".join(cycle)) - 1) <= 2


def test_flags_a_late_loop_in_a_long_reply_the_global_ratio_would_dilute() -> None:
    intro = _prose(400, seed=3) + " "
    loop = "She had been watching them for twelve years. " * 40
    text = intro + loop
    assert len(intro) > 3 * len(loop)
    f = _detect(text)
    assert f.flagged
    assert abs(f.onset - len(intro)) <= 0.02 * len(text)


def test_flags_a_loop_in_the_middle_of_a_long_reply_that_then_recovers() -> None:
    # Mid-text the zlib screen must see it: 3,000 characters of loop make a block compress below 0.3.
    before, after = _prose(300, seed=12) + " ", " " + _prose(300, seed=13)
    loop = ("The committee reviewed the budget again and found nothing new to report. " * 50)[:3000]
    text = before + loop + after
    assert len(before) > 4 * DEFAULT.block_chars and len(after) > 4 * DEFAULT.block_chars
    f = _detect(text)
    assert f.flagged
    assert abs(f.onset - len(before)) <= 0.02 * len(text)


def test_flags_a_chinese_loop_without_spaces() -> None:
    text = "春天来了，花开了。" + "猫猫的福制是一种猫猫的福制，" * 12
    f = _detect(text)
    assert f.flagged
    assert f.onset is not None and f.onset <= len("春天来了，花开了。")


def test_a_changed_name_slot_still_counts_as_a_copy() -> None:
    names = ["Alice", "Bruno", "Chen", "Dara", "Emeka"]
    text = " ".join(
        f"{n} has been the best running back in the league since the first week of the season." for n in names
    )
    assert _detect(text).flagged


# --- the onset a reader gives: the first copy of the unit, slots allowed (docs/detectors/tandem_repeat.md)


def _flagged_onset(text: str) -> int | None:
    f = _detect(text)
    assert f.flagged
    return f.onset


def test_onset_counts_a_first_copy_whose_ordinal_slot_changes() -> None:
    intro = "He also makes a number of important points. "
    rows = [
        f"{n}, he notes that the party has been in power for a long time, and that it has lost its way."
        for n in ("First", "Second", "Third", "Fourth", "Fifth")
    ]
    text = intro + "\n\n".join(rows)
    assert _flagged_onset(text) == len(intro)


def test_onset_counts_a_first_list_item_whose_name_slots_change() -> None:
    intro = "The top running backs this season:\n\n"
    items = [
        f"{i}. {first} {last}, RB, {team}\n\n{last} has been the best running back in the league since "
        "the first week, and he is only going to get better as the season goes on.\n\n"
        for i, (first, last, team) in enumerate(
            [
                ("Ezekiel", "Elliott", "Dallas Cowboys"),
                ("Le'Veon", "Bell", "Pittsburgh Steelers"),
                ("Adrian", "Peterson", "Minnesota Vikings"),
            ],
            1,
        )
    ]
    text = intro + "".join(items)
    assert _flagged_onset(text) == len(intro)


def test_onset_skips_an_earlier_sentence_with_an_inserted_clause() -> None:
    # A paraphrase (a clause inserted) is not a copy: the loop starts where the copies start.
    lead = (
        "The agency filed a rule to allow wolves to be hunted.\n\nThe rule, which is expected to be "
        "finalized in the coming weeks, would allow wolves to be hunted if they threaten livestock.\n\n"
    )
    text = lead + "The rule would allow wolves to be hunted if they threaten livestock.\n\n" * 5
    assert _flagged_onset(text) == len(lead)


def test_onset_skips_a_sentence_that_only_ends_like_the_unit() -> None:
    lead = "Jenek's drag persona is a drag queen, but he is not a trans man. He is a drag queen.\n\n"
    text = lead + "Jenek is a trans man. He is a drag queen.\n\n" * 6
    assert _flagged_onset(text) == len(lead)


def test_onset_of_a_reply_that_opens_mid_copy_is_its_start() -> None:
    unit = "Airbnb, the well-known home-sharing service, raised a large round of funding this year. "
    text = unit[len("Airbnb, the well") :] + unit * 4
    assert _flagged_onset(text) == 0


def test_onset_of_alternating_lines_starts_at_the_first_line_of_the_cycle() -> None:
    lead = "The result means City are still unbeaten in seven league games.\n\n"
    a = "City's first goal came in the first minute of the second half, headed in by Sterling.\n\n"
    b = "The Reds had the better of the second half, but City's equaliser came late in the half.\n\n"
    text = lead + a + (b + a) * 3
    assert _flagged_onset(text) == len(lead)


def test_onset_ignores_the_full_stop_of_a_title() -> None:
    lead = '"The article is a smear," Stein said in a statement. '
    text = lead + "It is a blatant attempt to smear Dr. Stein and the Green Party. " * 6
    assert _flagged_onset(text) == len(lead)


def test_onset_counts_a_two_character_slot_in_a_chinese_copy_as_one_word() -> None:
    # Each CJK character is a unit, a word about two: `美丽洲在 … 中` is a slot here, not a clause.
    lead = "你好。"
    first = "美丽洲在春夏秋冬四个季节中，是一种美丽洲花花花的名称。"
    text = lead + first + "春夏秋冬四个季节是一种美丽洲花花花的名称。" * 8
    assert _flagged_onset(text) == len(lead)


def test_a_template_list_does_not_chain_into_the_loop_after_it() -> None:
    # Items that each change one word from the last are a list; the loop starts where rows repeat.
    items = ["a loaf of bread", "a salad", "a dessert", "a coffee", "a snack", "a meal", "a drink"]
    head = "".join(f"{i}. Buy {item}\n" for i, item in enumerate(items, 1))
    text = head + "".join(f"{i}. Buy a gift wrap\n" for i in range(len(items) + 1, 30))
    assert _flagged_onset(text) == len(head)


def test_a_phrase_looping_inside_a_sentence_is_dated_from_the_sentence() -> None:
    lead = "The rebels took the city in May.\n\n"
    text = lead + "The Syrian government" + " has been losing ground in the war for two years, and" * 6
    assert _flagged_onset(text) == len(lead)


def test_onset_counts_a_first_line_of_a_cycle_that_starts_mid_line() -> None:
    # Lines `B A B A …`, the first `A` (with a slot) opening after a question on the line before it.
    lead = "She showed me the gift. What was it? "
    first = '"A bottle of wine," she said. "It is a very expensive bottle."\n\n'
    b = 'I was confused. "A bottle of wine?" I asked. "What is a bottle of wine?"\n\n'
    a = '"A bottle of wine," she repeated. "It is a very expensive bottle."\n\n'
    assert _flagged_onset(lead + first + (b + a) * 3) == len(lead)


def test_onset_of_a_loop_nested_in_a_repeated_block_is_the_first_block() -> None:
    # Rows `[1] x` … `[9] x` loop inside a comment block that repeats whole (its first copy has one
    # line more): the rows' period is the most common one, but a reader dates the block.
    lead = "#!/bin/bash\n\n# Check if each website is reachable\n\n"
    rows = "".join(f"#   [{i}] https.com\n" for i in range(1, 10))
    first = "# Example usage:\n\n# Usage:\n\n#   reachable.sh https.com\n\n# Output:\n\n" + rows + "#\n\n"
    block = "# Example usage:\n\n#   reachable.sh https.com\n\n# Output:\n\n" + rows + "#\n\n"
    assert _flagged_onset(lead + first + block * 5) == len(lead)


def test_onset_of_a_bulleted_line_includes_the_bullet() -> None:
    lead = "Here is a more detailed explanation:\n\n"
    assert _flagged_onset(lead + "- O(1) for the LRU cache lookups:\n" * 8) == len(lead)


def test_onset_reads_back_past_the_lookback_through_slot_copies() -> None:
    # Eleven copies of one unit, then the unit with a slot changed to the end: the copies before the
    # scan's first copy run back further than dating first reads, and a slice must not cut a step.
    lead = "秋天"
    text = lead + "是一种独苦的名称，" * 11 + "是一私苦的名称，" * 40
    onset = _flagged_onset(text)
    assert onset is not None and onset <= len(lead)


def test_onset_counts_a_copy_followed_by_an_aside_as_long_as_a_copy() -> None:
    lead = "The hearing ended late on Friday.\n\n"
    unit = "The judge said the case would be decided by the end of the month at the latest. "
    aside = "Lawyers for both sides declined to comment on the ruling after the hearing was over. "
    assert _flagged_onset(lead + unit + aside + unit * 5) == len(lead)


def test_onset_of_a_loop_whose_unit_drifts_is_its_first_piece() -> None:
    # `A B A' B` then `B B B`: one region whose period shrinks; a reader dates it from the first A.
    lead = "We fixed the first bug in the parser last week.\n\n"
    b = "I had to learn a lot of the syntax to get it working.\n\n"
    text = (
        lead
        + "The other issue was that the syntax was not very well documented. "
        + b
        + "The final issue was that the syntax was not very well documented. "
        + b
        + b * 6
    )
    assert _flagged_onset(text) == len(lead)


def test_onset_of_a_chain_of_loops_is_the_first_loop() -> None:
    # A quote twice and a shortened third time, two sentences, then the quote again to the end.
    lead = "The campaign answered on Monday.\n\n"
    quote = (
        '"The article is an example of the kind of misinformation that has been a hallmark of the campaign,"'
    )
    between = (
        "The article, published on October 26, claimed the campaign had received large donations.\n\n"
        "Stein responded to the article on October 27.\n\n"
    )
    text = (
        lead
        + f"{quote} Stein said in a statement.\n\n" * 2
        + quote[:-2]
        + '."\n\n'
        + between
        + f"{quote} Stein said.\n\n" * 2
        + quote[:60]
    )
    assert _flagged_onset(text) == len(lead)


def test_onset_is_the_loop_the_text_ends_in_not_an_earlier_stutter() -> None:
    lead = "The meeting was long.\n\n"
    stutter = "The board approved the budget for next year without any changes at all. " * 3
    recovery = _prose(6, seed=11) + "\n\n"
    loop = "We will meet again next month to review the progress of the project. " * 12
    text = lead + stutter + recovery + loop
    assert _flagged_onset(text) == len(lead) + len(stutter) + len(recovery)


def test_onset_of_rows_running_into_a_sentence_loop_is_the_first_row() -> None:
    # The loop the text ends in outnumbers the rows, but the two are contiguous: one chain.
    lead = "Here is the list you asked for.\n\n"
    rows = "".join(
        f"{i}. White fruit: white fruit is a fruit that you can see in the market every day.\n\n"
        for i in range(1, 7)
    )
    assert _flagged_onset(lead + rows + "This is a common fruit.\n\n" * 20) == len(lead)


# --- legitimate structure stays clean ------------------------------------------------------------


def test_a_numbered_list_of_distinct_items_is_clean() -> None:
    rng = random.Random(4)
    text = "\n".join(f"{i}. {_word(rng).capitalize()} {_word(rng)} {_word(rng)}" for i in range(1, 41))
    assert not _detect(text).flagged


CODE = """class Point:
    def __init__(self, x: float, y: float, z: float) -> None:
        self.x = x
        self.y = y
        self.z = z
        self.norm = None
        self.label = None

    def scale(self, k: float) -> "Point":
        return Point(self.x * k, self.y * k, self.z * k)

    def shift(self, d: float) -> "Point":
        return Point(self.x + d, self.y + d, self.z + d)

    def dot(self, other: "Point") -> float:
        return self.x * other.x + self.y * other.y + self.z * other.z
"""


def test_code_with_repeated_structure_is_clean() -> None:
    assert not _detect(CODE).flagged


ASSIGNMENTS = "".join(
    f"    self.{name} = compute_value(data, scale=2, offset=3, label='main', weight=None)\n"
    for name in ("alpha", "beta", "gamma", "delta", "omega", "sigma", "kappa")
)


def test_near_copies_are_clean_inside_a_code_fence_but_flagged_in_prose() -> None:
    # One name changes per line: a loop with a slot in prose, legitimate structure in code.
    assert _detect("Setup:\n" + ASSIGNMENTS + "Done.").flagged
    assert not _detect("Setup:\n```python\n" + ASSIGNMENTS + "```\nDone.").flagged


def test_a_fence_opened_long_before_the_window_still_counts() -> None:
    # The fence lies far outside the bounded window (and the trimmed buffer); it is counted as it leaves.
    body = _prose(600, seed=14) + "\n" + ASSIGNMENTS
    assert len(body) > 3 * (DEFAULT.history_chars + DEFAULT.block_chars)
    assert not _detect("Intro\n```python\n" + body + "```\n").flagged
    assert _detect("Intro\n" + body).flagged


def test_a_code_loop_repeated_exactly_inside_a_fence_is_flagged() -> None:
    loop = "    rows[i][j] = None\n    cols[i][j] = None\n" * 20
    f = _detect("Sure:\n```python\ndef reset(rows, cols, i, j):\n" + loop)
    assert f.flagged
    assert f.unit is not None and "[i][j] = None" in f.unit


def test_onset_is_the_first_appearance_of_a_quote_that_then_loops() -> None:
    text = (
        '"I don\'t think Jairus wants to go anywhere," Williams said, via the Buffalo News. "'
        + "I don't think Jairus wants to go anywhere. " * 8
    )
    f = _detect(text)
    assert f.flagged
    assert f.onset == 0  # the start of the sentence, opening quote included


def test_a_table_of_numbers_is_clean() -> None:
    rng = random.Random(5)
    rows = [
        f"| {2000 + i} | {rng.randint(10, 999)} | {rng.randint(10, 999)} | {rng.random():.3f} |"
        for i in range(30)
    ]
    text = "| year | sold | returned | ratio |\n|---|---|---|---|\n" + "\n".join(rows)
    assert not _detect(text).flagged


def test_a_times_table_is_clean() -> None:
    text = "\n".join(f"7 x {i} = {7 * i}" for i in range(1, 21))
    assert not _detect(text).flagged


def test_a_short_requested_repetition_is_clean_but_a_long_one_is_flagged() -> None:
    # Decision (docs/detectors/tandem_repeat.md): the text alone cannot tell a request from a loop, so
    # repetition below `min_repeated_words` of repeated material is let through, and above it flagged.
    assert not _detect("Sure! Hello world! Hello world! Hello world!").flagged
    assert _detect("Sure! " + "I will always tell the truth to my friends. " * 3).flagged


def test_a_quote_used_twice_with_text_between_is_clean() -> None:
    quote = "We will rebuild the bridge before winter comes, the mayor said on Monday. "
    text = _prose(3, seed=6) + " " + quote + _prose(4, seed=7) + " " + quote + _prose(3, seed=8)
    assert not _detect(text).flagged


def test_clean_prose_is_clean_on_both_paths() -> None:
    text = _prose(300, seed=9)
    assert not _detect(text).flagged
    assert not _detect(text, SMALL_BLOCKS).flagged


# --- finding shape, registry, streaming ----------------------------------------------------------


def test_finding_reports_onset_period_unit_copies_and_coverage() -> None:
    intro = "Intro words here. "
    text = intro + "The bell rang at noon and the town square slowly filled with people. " * 5
    f = _detect(text)
    assert f.flagged and f.detector == "tandem_repeat" and f.kind == "repetition"
    assert f.onset == len(intro)
    assert f.period == len("The bell rang at noon and the town square slowly filled with people. ")
    assert f.unit is not None and f.unit.startswith("The bell rang")
    assert f.score is not None and f.score >= 4.5
    assert f.covered_chars is not None and f.coverage is not None and 0.9 < f.coverage <= 1.0


def test_registry_entry_runs_the_batch_function() -> None:
    spec = DETECTORS["tandem_repeat"]
    assert spec.kind == "repetition" and spec.incremental is TandemRepeat
    assert spec.detect(DetectorInput(BLOCK * 3), spec.params_model()).flagged


def test_stream_fires_once_on_the_block_that_shows_the_loop_and_finish_agrees() -> None:
    text = _prose(60, seed=10) + " " + "Tl, " * 2000
    fired, final = _stream(text, list(range(0, len(text), 7)), DEFAULT)
    assert len(fired) == 1
    assert final == _detect(text)
    assert final.flagged


def test_stream_memory_is_bounded_by_a_window() -> None:
    live = TandemRepeat(DEFAULT)
    chunk = _prose(40, seed=11) + " "
    for i in range(60):
        live.feed(_prose(40, seed=100 + i) + " ")
        assert len(live._buf) <= 2 * (DEFAULT.history_chars + DEFAULT.block_chars) + len(chunk) * 2
    assert not live.finish().flagged


def test_rejects_short_variation_looser_than_the_long_one() -> None:
    with pytest.raises(ValueError, match="max_slot_variation_short"):
        TandemRepeatParams(max_slot_variation=0.1, max_slot_variation_short=0.2)


_PIECES = ["alpha", "beta", "gamma", "1.", "2.", "猫", "的", "\n", ",", "delta epsilon", "\n```", "```\n"]
_LOOPY = st.lists(st.sampled_from(_PIECES), max_size=400).map(" ".join)


@settings(max_examples=60, deadline=None)
@given(
    text=st.one_of(_LOOPY, st.text(max_size=1500)),
    cuts=st.lists(st.integers(0, 3000), max_size=12),
    small=st.booleans(),
)
def test_incremental_finish_equals_batch_for_any_chunking(text: str, cuts: list[int], small: bool) -> None:
    params = SMALL_BLOCKS if small else DEFAULT
    _, final = _stream(text, cuts, params)
    assert final == _detect(text, params)


@settings(max_examples=80, deadline=None)
@given(text=st.text(alphabet=st.characters(codec=None, categories=None), max_size=800))
def test_never_raises_on_arbitrary_unicode_including_lone_surrogates(text: str) -> None:
    for params in (DEFAULT, SMALL_BLOCKS):
        f = _detect(text + "\ud800" + text, params)
        assert isinstance(f.flagged, bool)


# --- calibration goals on the hand-labelled sets (docs/detectors.md) -----------------------------


def _jsonl(path: Path) -> Iterator[dict[str, object]]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as fh:
        yield from (json.loads(line) for line in fh if line.strip())


def _labelled(folder: Path, files: list[str]) -> tuple[dict[str, str], dict[str, tuple[str, int | None]]]:
    texts = {str(r["id"]): str(r["text"]) for name in files for r in _jsonl(folder / name)}
    labels: dict[str, tuple[str, int | None]] = {}
    for r in _jsonl(folder / "labels.jsonl"):
        onset = r.get("onset")
        labels[str(r["id"])] = (str(r["label"]), onset if isinstance(onset, int) else None)
    return texts, labels


# Onset: the share of flagged loops whose onset is within 2% of the text's length of the labelled one
# (bench/calibrate.py prints the same number). The goal is 0.9; these floors are what is reached now
# (docs/detectors.md, "Reading the onset column"), so a change that dates loops worse fails here.
_GPT2_METHODS = ("greedy", "beam", "topk", "nucleus", "typical", "contrastive", "human")
_GPT2_FILES = [f"{m}.jsonl.gz" for m in _GPT2_METHODS]


@pytest.mark.parametrize(
    ("folder", "files", "onset_floor"),
    [
        ("gpt2-large-webtext-dev", _GPT2_FILES, 0.83),
        ("smollm2-long-dev", ["outputs.jsonl.gz"], 0.86),
    ],
)
def test_meets_the_calibration_goals_on_the_labelled_set(
    folder: str, files: list[str], onset_floor: float
) -> None:
    if not SHARED.is_dir():
        pytest.fail(f"shared material not found at {SHARED} (set DEGENERATION_SHARED)")
    texts, labels = _labelled(SHARED / "data" / folder, files)
    tp = fp = fn = onset_ok = 0
    for sid, (label, onset) in labels.items():
        if label == "borderline":
            continue
        f = _detect(texts[sid])
        tp += label == "loop" and f.flagged
        fn += label == "loop" and not f.flagged
        fp += label == "clean" and f.flagged
        if label == "loop" and f.flagged and onset is not None and f.onset is not None:
            onset_ok += abs(f.onset - onset) <= 0.02 * len(texts[sid])
    assert tp / (tp + fn) >= 0.97, (tp, fn)
    assert tp / (tp + fp) >= 0.99, (tp, fp)
    assert onset_ok / tp >= onset_floor, (onset_ok, tp)
    human_clean = [sid for sid, (label, _) in labels.items() if sid.startswith("human") and label == "clean"]
    assert not [sid for sid in human_clean if _detect(texts[sid]).flagged]
