"""`lookup` and `identity_fields`: the field access every format's parse goes through.

Why: `lookup` has a fast path for a decoded line's top-level named keys (most lookups); it must give
what the general walk gives, digit parts included (a digit part indexes a list, or is the key of its
integer's text in an object).
"""

from __future__ import annotations

from collections import OrderedDict

from degeneration_exporter.formats._fields import ABSENT, lookup
from degeneration_exporter.formats._samples import identity_fields


def test_a_top_level_key_is_read_from_a_decoded_line() -> None:
    line = {"response": "hi", "": 1, "rollout_id": None}
    assert lookup(line, "response") == "hi"
    assert lookup(line, "") == 1
    assert lookup(line, "rollout_id") is None  # a JSON null is a value, not ABSENT
    assert lookup(line, "status") is ABSENT


def test_a_digit_part_is_a_list_index_or_the_key_of_its_integers_text() -> None:
    assert lookup({"7": "seven", "007": "padded"}, "007") == "seven"
    assert lookup({"-1": "minus one"}, "-1") == "minus one"
    assert lookup({"choices": [{"text": "a"}, {"text": "b"}]}, "choices.-1.text") == "b"
    assert lookup({"choices": {"0": {"text": "a"}}}, "choices.0.text") == "a"
    assert lookup({"choices": []}, "choices.0.text") is ABSENT


def test_a_mapping_that_is_not_a_dict_takes_the_general_walk() -> None:
    assert lookup(OrderedDict(response="hi"), "response") == "hi"
    assert lookup(OrderedDict(response="hi"), "text") is ABSENT
    assert lookup(["a", "b"], "1") == "b"


def test_identity_keeps_ints_and_strings_in_key_order() -> None:
    sample = {"index": "x", "rollout_id": 3, "dataset": ["not", "kept"], "group_index": None, "flag": True}
    assert list(
        identity_fields(sample, ("rollout_id", "index", "dataset", "group_index", "flag")).items()
    ) == [
        ("rollout_id", 3),
        ("index", "x"),
        ("flag", True),  # a bool is an int, as before
    ]
