"""The verdict against its written definition (docs/detectors/tandem_repeat.md): generated, not copied.

Every family of the definition is generated with random units, copy counts, cut points and real clean
lead-ins (tests/detectors/loop_families.py) and must be flagged with its onset within one copy of the
true start, with and without token ids, in batch and incremental form alike. Every exemption must be
left alone. The issue's own examples come last, written out. Nothing here paraphrases a dev text.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable

import pytest
from degeneration_exporter.detectors import DETECTORS
from degeneration_exporter.detectors.base import DetectorInput, Finding
from degeneration_exporter.detectors.tandem import TandemRepeat, TandemRepeatParams, detect_tandem_repeat
from degeneration_exporter.detectors.tandem.offsets import FoldedText
from degeneration_exporter.detectors.tandem.periods import fold_numbers
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.detectors.chunkings import chunkings
from tests.detectors.loop_families import EXEMPTIONS, FAMILIES, Case, clean_prose

DEFAULT = TandemRepeatParams()
# A seeded generator per example: hypothesis' own `randoms()` shrink towards all-zero draws, which turn
# every "random" word into the same word, a loop the definition rightly flags.
_RNG = st.integers(0, 2**32).map(random.Random)


def _detect(text: str, token_ids: list[int] | None = None) -> Finding:
    return detect_tandem_repeat(DetectorInput(text, token_ids=token_ids), DEFAULT)


def _stream(parts: list[str]) -> tuple[list[Finding], Finding]:
    live = TandemRepeat(DEFAULT)
    fired = [f for f in (live.feed(p) for p in parts) if f is not None]
    return fired, live.finish()


@pytest.mark.parametrize("family", sorted(FAMILIES))
@settings(max_examples=100)
@given(rng=_RNG, with_ids=st.booleans())
def test_every_family_is_a_loop_dated_within_one_copy(
    family: str, rng: random.Random, with_ids: bool
) -> None:
    case = FAMILIES[family](rng)
    ids = list(case.text.encode("utf-8", "surrogatepass")) if with_ids else None
    f = _detect(case.text, ids)
    assert f.flagged, (family, case.text[case.onset :][:200])
    assert f.onset is not None and abs(f.onset - case.onset) <= case.period, (f.onset, case.onset, f.evidence)
    assert f.coverage is not None and f.coverage > 0


@pytest.mark.parametrize("exemption", sorted(EXEMPTIONS))
@settings(max_examples=100)
@given(rng=_RNG)
def test_no_exemption_is_a_loop(exemption: str, rng: random.Random) -> None:
    case = EXEMPTIONS[exemption](rng)
    f = _detect(case.text)
    assert not f.flagged, (exemption, f.evidence)


_ANY_CASE: list[Callable[[random.Random], Case]] = [*FAMILIES.values(), *EXEMPTIONS.values()]


@settings(max_examples=40)
@given(data=st.data(), rng=_RNG, which=st.integers(0, len(_ANY_CASE) - 1))
def test_incremental_finish_equals_batch_and_a_live_hit_is_a_loop(
    data: st.DataObject, rng: random.Random, which: int
) -> None:
    text = _ANY_CASE[which](rng).text[-30_000:]
    parts = data.draw(chunkings(text))
    fired, final = _stream(parts)
    assert final == _detect(text)
    assert len(fired) <= 1
    if fired:
        assert final.flagged


@settings(max_examples=60)
@given(text=st.text(max_size=1500))
def test_never_raises_on_arbitrary_unicode_including_lone_surrogates(text: str) -> None:
    f = _detect(text + "\ud800" + text)
    assert isinstance(f.flagged, bool)


# --- the issue's families, written out (each was measured missed by the first version) ---------------

_CYCLE = ["Canada", "United States", "Australia", "United States"]
_LEAD = "The committee met on Tuesday to review the budget for the coming year.\n\n"


@pytest.mark.parametrize(
    "loop",
    [
        "* A" * 300,
        "6NAD+ + " * 120,
        "!" * 500,
        " ".join(
            f"{i}. {c}"
            for i, c in enumerate(["Canada", "United States", "Australia", "United States"] * 15, 1)
        ),
        ", ".join(str(i) for i in range(17, 432)),
        " ".join(str(i) for i in range(1, 191)),
        "".join(f"Number of people needed = {x} * 4 = {4 * x}\n" for x in range(3, 60)),
        "x = load(a)\ny = parse(x)\nz = fit(y)\n" + "    total += weight(item)\n" * 40,
    ],
    ids=["star-A", "6NAD+", "bangs", "numbered-cycle", "count-17-431", "count-1-190", "number-slots", "code"],
)
def test_the_issues_missed_families_are_loops(loop: str) -> None:
    f = _detect(_LEAD + loop)
    assert f.flagged
    assert f.onset is not None and len(_LEAD) - 40 <= f.onset <= len(_LEAD) + 60


def test_two_parallel_sentences_in_a_short_reply_are_not_a_loop() -> None:
    text = "I like apples because they are crisp and sweet. I like pears because they are soft and juicy."
    assert not _detect(text).flagged


def test_a_short_stutter_is_not_a_loop_but_the_same_unit_at_length_is() -> None:
    assert not _detect("Hello world! Hello world! Hello world!").flagged
    assert _detect("Hello world! " * 8).flagged


def test_finding_reports_onset_period_unit_family_and_coverage() -> None:
    unit = "The bell rang at noon and the town square slowly filled with people. "
    f = _detect(_LEAD + unit * 5)
    assert f.flagged and f.detector == "tandem_repeat" and f.kind == "repetition"
    assert f.onset == len(_LEAD) and f.period == len(unit)
    assert f.unit is not None and f.unit.startswith("The bell rang")
    assert f.details["family"] == "repeat" and f.score is not None and 5.0 <= f.score < 5.1
    assert f.covered_chars == 5 * len(unit)
    assert f.coverage == round(5 * len(unit) / len(_LEAD + unit * 5), 4)


def test_a_copy_whose_bytes_agree_from_mid_word_starts_at_its_line_even_at_the_copys_end() -> None:
    # The exact repeat starts at "he board…" (the lead-in's "t" is not the copies' "T"), so the
    # first line start it can snap to is the last character of that copy.
    copy = "The board met again on Monday and voted to keep the plan as it stands.\n\n"
    text = _LEAD + "Wind and rain. It went on, and t" + copy[1:] + copy * 4
    f = _detect(text)
    assert f.flagged and f.onset is not None
    assert text[f.onset - 1] == "\n"  # a line start: the copy's, or its near copy's before it


def test_an_earlier_copy_with_a_few_words_after_it_starts_the_loop() -> None:
    sentence = "We will keep building the new bridge across the river this year. "
    first = len(_LEAD)
    text = _LEAD + sentence + '"It matters," the mayor told reporters on Friday. ' + sentence * 4
    f = _detect(text)
    assert f.flagged and f.onset == first


def test_a_short_item_seen_earlier_with_other_items_between_is_a_list_not_a_copy() -> None:
    run = "Cream cheese\n\n" * 6
    text = _LEAD + "Toppings:\n\nCream cheese\n\nOlives\n\nSour cream\n\n" + run
    f = _detect(text)
    assert f.flagged and f.onset == text.index(run)


def test_registry_points_at_the_package() -> None:
    spec = DETECTORS["tandem_repeat"]
    assert spec.kind == "repetition" and spec.incremental is TandemRepeat
    assert spec.params_model is TandemRepeatParams
    assert spec.detect(DetectorInput("!" * 300), spec.params_model()).flagged


def test_a_live_check_fires_mid_stream_before_the_end() -> None:
    live = TandemRepeat(DEFAULT)
    live.feed(_LEAD)
    fired = None
    for _ in range(2000):
        fired = fired or live.feed("Tl, ")
    assert fired is not None and fired.onset == len(_LEAD)
    assert live.finish().flagged


@settings(max_examples=100)
@given(text=st.text(alphabet=" \n\t\r0123456789ab猫😀", max_size=9000))
def test_folding_equals_the_regexes_it_names(text: str) -> None:
    raw = text.encode("utf-8")
    expected = re.sub(rb"[0-9]+", b"0", re.sub(rb"[ \t\n\r\x0b\x0c]+", b" ", raw))
    assert fold_numbers(raw) == expected


def _reference_offsets(text: str) -> list[tuple[int, int]]:
    """(folded byte, text offset) for every folded byte, by walking the text run by run."""
    pairs: list[tuple[int, int]] = []
    folded = 0
    for m in re.finditer(r"[0-9]+|[ \t\n\r\x0b\x0c]+|.", text, re.S):
        size = 1 if m.group()[0] in "0123456789 \t\n\r\x0b\x0c" else len(m.group().encode("utf-8"))
        pairs.extend((folded + k, m.start()) for k in range(size))
        folded += size
    return pairs


@settings(max_examples=30)
@given(text=st.text(alphabet=" \n\t0123456789ab猫😀", min_size=1, max_size=12_000), data=st.data())
def test_folded_offsets_map_back_to_the_text(text: str, data: st.DataObject) -> None:
    folded = FoldedText(text)
    pairs = _reference_offsets(text)
    for at, expected in data.draw(st.lists(st.sampled_from(pairs), max_size=20)):
        if folded.folded[at] & 0xC0 != 0x80:  # offsets are asked at the start of a character
            assert folded.original(at) == expected


def test_a_stream_past_the_kept_part_is_judged_by_its_live_checks_in_bounded_memory() -> None:
    params = TandemRepeatParams(max_text_chars=5_000, check_chars=1_024)
    live = TandemRepeat(params)
    prose = "\n\n".join(clean_prose()[:12]) + "\n\n"  # real clean text, longer than the kept part
    assert len(prose) > params.max_text_chars
    for i in range(0, len(prose), 50):
        assert live.feed(prose[i : i + 50]) is None
    fired = [f for f in (live.feed("Tl, ") for _ in range(3_000)) if f is not None]
    assert len(fired) == 1 and fired[0].onset is not None and fired[0].onset >= len(prose) - 8
    assert live._kept_chars <= params.max_text_chars
    final = live.finish()
    assert final.flagged and final.onset == fired[0].onset


# --- near copies, written out from the definition ---------------------------------------------------

_TEMPLATE = "{n}) Pick a good {x}. I bought the Acme Studio {x} in grey, which is a fine {x} for work.\n"
_ITEMS = ["desk", "lamp", "chair", "shelf", "monitor", "keyboard", "cable box", "mouse pad", "printer"]


def test_template_rows_with_a_slot_every_few_words_running_to_the_end_are_near_copies() -> None:
    rows = "".join(_TEMPLATE.format(n=i, x=x) for i, x in enumerate(_ITEMS, 1))
    text = _LEAD + rows[:-25]  # the ceiling cuts the last row
    f = _detect(text)
    assert f.flagged and f.details["family"] == "near_copies"
    assert f.onset is not None and abs(f.onset - len(_LEAD)) <= len(_TEMPLATE)
    assert not detect_tandem_repeat(DetectorInput(text), TandemRepeatParams(min_near_copy_words=0)).flagged


def test_the_same_rows_followed_by_new_text_are_a_list_not_a_loop() -> None:
    rows = "".join(_TEMPLATE.format(n=i, x=x) for i, x in enumerate(_ITEMS[:5], 1))
    closing = "\nThat is all I would buy for a small office; the rest can wait."
    assert not _detect(_LEAD + rows + closing).flagged


def test_a_times_table_shares_only_operators_and_is_not_near_copies() -> None:
    table = " ".join(f"7 x {i} = {7 * i}" for i in range(1, 40))
    f = _detect(_LEAD + table)
    assert not f.flagged or f.details["family"] != "near_copies"


def test_a_long_region_of_dense_slots_is_grown_a_bounded_number_of_times(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Rows whose words change every few words hold a repeat at every multiple of the row's length;
    # each is grown across the whole region, so growing all of them was quadratic in its length
    # (40 kB took seconds). The screen moves past a region after a few overlapping repeats.
    from degeneration_exporter.detectors.tandem import periods

    rng = random.Random(1)
    words = ["river", "stone", "lantern", "copper", "meadow", "signal", "harbor", "violet", "engine"]
    text = "".join(
        f"Pick the {rng.choice(words)} first, then the brass {rng.choice(words)} fitting, then tighten the "
        f"{rng.choice(words)} bolt on row {i}. "
        for i in range(450)
    )
    grows = 0
    real_grow = periods._grow

    def counting_grow(*args: object, **kwargs: object) -> periods.Repeat:
        nonlocal grows
        grows += 1
        return real_grow(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(periods, "_grow", counting_grow)
    assert len(text) > 40_000
    assert _detect(text).flagged
    assert grows <= 3 * periods._REGION_TRIES * 3  # a few regions (screens), a few tries each


def test_a_closing_phrase_written_before_is_ruled_out_before_the_walk(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The last runs recur (the first check passes), but a stretch of 30 echoed words would also need
    # a run 30 tokens before the end to recur: the second check rules the text out without a walk.
    from degeneration_exporter.detectors.tandem import near_copies

    closing = "and that is why we keep the old mill running every single winter"
    text = (
        f"{_LEAD}The town votes on it each spring, {closing}. The miller's daughter keeps the books now, "
        f"and her figures show a small profit most years, mostly from flour sold at the Saturday market "
        f"and from school visits in the autumn. Nobody expects it to make anyone rich, {closing}."
    )
    walks = 0
    real_stretch = near_copies._stretch

    def counting_stretch(*args: object, **kwargs: object) -> object:
        nonlocal walks
        walks += 1
        return real_stretch(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(near_copies, "_stretch", counting_stretch)
    params = TandemRepeatParams()
    assert near_copies._last_runs_recur(FoldedText(text).folded.lower(), params)
    assert not _detect(text).flagged
    assert walks == 0
    # The family itself still goes through both checks to the walk.
    rows = "".join(_TEMPLATE.format(n=i, x=x) for i, x in enumerate(_ITEMS, 1))
    assert _detect(_LEAD + rows[:-25]).flagged and walks >= 1


# --- the screen always ends ----------------------------------------------------------------------------

_DRIFTING_ROWS = (  # short rows with names and cut rows: each slot let the local period fall by a few bytes
    "ab 0 cd 1 aUnited Statesb 2 cd 1 aA1 cd 6 ab 3 cd 1 ab 0 cd 3ce ab 6 cd 7 7 cd 4 ab 5 cd 8Zürich ab 1 "
    "cd 3 ab 4 cd ab 8 cd 2 ab 1b 2 cd 3 cd 7 ab 8 cd 7 ab 0cdab 2 ab 2 cd 0 ab 0 cd 6 ab 5 cd "
)


def test_a_bridged_repeat_keeps_every_local_period_long_enough_to_hold_a_slot() -> None:
    # With slots up to 24 bytes, each resync in these rows found the next copy a little earlier, the
    # local period fell below zero and the screen never ended (memory grew until it ran out). Every
    # local period must hold a slot and more, as the unit's own period must.
    import signal

    from degeneration_exporter.detectors.tandem.periods import short_repeats
    from degeneration_exporter.detectors.tandem.verdict import _evidence

    def too_slow(*_: object) -> None:
        raise TimeoutError("the screen did not end")

    previous = signal.signal(signal.SIGALRM, too_slow)
    signal.setitimer(signal.ITIMER_REAL, 5)
    try:
        for max_slot in (12, 24):
            params = TandemRepeatParams(max_slot_chars=max_slot)
            for text in (_DRIFTING_ROWS, _DRIFTING_ROWS * 3, _LEAD + _DRIFTING_ROWS):
                folded = fold_numbers(text.encode())
                for rep in short_repeats(folded, _evidence(params), max_slot):
                    if rep.slot_bytes:
                        assert all(p >= 2 * max_slot for p in rep.periods), rep
                detect_tandem_repeat(DetectorInput(text), params)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@pytest.mark.parametrize("sep", [" ", ",", "\n", ", "])
def test_a_counting_run_of_exactly_the_minimum_numbers_is_a_loop_and_one_fewer_is_not(sep: str) -> None:
    # One-byte separators fold 30 numbers to 59 bytes, of which a repeat of period 2 repeats 57: the
    # screen's least repeated material follows from the counting family's own minimum, not only
    # from the 60 characters of the other families.
    terms = DEFAULT.min_counting_terms
    run = sep.join(str(i) for i in range(1, terms + 1))
    f = _detect(f"{_LEAD}The list you asked for: {run}")
    assert f.flagged and f.details["family"] == "counting"
    assert f.onset == len(f"{_LEAD}The list you asked for: ")
    shorter = sep.join(str(i) for i in range(1, terms))
    assert not _detect(f"{_LEAD}The list you asked for: {shorter}").flagged
