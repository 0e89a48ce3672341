"""Bounded label values: cap per source, overflow counted, TTL expiry with an injected clock."""

from __future__ import annotations

from datetime import timedelta

import pytest
from degeneration_exporter.classification.labels import (
    OVERFLOW_VALUE,
    UNKNOWN_VALUE,
    BoundedLabel,
    LabelLimits,
    leak_token_label,
    sanitize_label_value,
)
from degeneration_exporter.detectors.template_leak import FAMILIES
from pydantic import ValidationError


class FakeClock:
    def __init__(self) -> None:
        self.now = 50.0

    def __call__(self) -> float:
        return self.now


def test_keeps_values_up_to_the_cap_then_folds_and_counts() -> None:
    label = BoundedLabel("model_name", 2)
    assert [label.bound("a", v) for v in ("m1", "m2", "m3", "m1", "m4")] == [
        "m1",
        "m2",
        OVERFLOW_VALUE,
        "m1",
        OVERFLOW_VALUE,
    ]
    assert label.overflow_counts() == {"a": 2}
    assert label.values("a") == ["m1", "m2"]


def test_each_source_has_its_own_budget() -> None:
    label = BoundedLabel("model_name", 1)
    assert label.bound("a", "m1") == "m1"
    assert label.bound("b", "m2") == "m2"
    assert label.bound("a", "m2") == OVERFLOW_VALUE
    assert label.overflow_counts() == {"a": 1}


def test_allow_list_folds_every_other_value_into_the_overflow_value() -> None:
    label = BoundedLabel("token", 10, allowed={"<|im_end|>"}, overflow_value="other")
    assert label.bound("a", "<|im_end|>") == "<|im_end|>"
    assert label.bound("a", "</s>") == "other"
    assert label.overflow_counts() == {"a": 1}


def test_idle_values_expire_after_the_ttl_and_free_their_slot() -> None:
    clock = FakeClock()
    label = BoundedLabel("run", 2, ttl=timedelta(seconds=100), clock=clock)
    label.bound("a", "r1")
    clock.now += 60
    label.bound("a", "r2")
    assert label.bound("a", "r3") == OVERFLOW_VALUE
    clock.now += 50  # r1 idle 110 s, r2 idle 50 s
    assert label.expire() == [("a", "r1")]
    assert label.values("a") == ["r2"]
    assert label.bound("a", "r3") == "r3"
    assert label.expire() == []


def test_using_a_value_keeps_it_alive() -> None:
    clock = FakeClock()
    label = BoundedLabel("run", 5, ttl=timedelta(seconds=100), clock=clock)
    label.bound("a", "r1")
    for _ in range(5):
        clock.now += 90
        label.bound("a", "r1")
        assert label.expire() == []
    clock.now += 100
    assert label.expire() == [("a", "r1")]


def test_without_ttl_nothing_expires() -> None:
    clock = FakeClock()
    label = BoundedLabel("model_name", 5, clock=clock)
    label.bound("a", "m")
    clock.now += 1e9
    assert label.expire() == []


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("qwen3-8b", "qwen3-8b"),
        (None, UNKNOWN_VALUE),
        ("", UNKNOWN_VALUE),
        ("   \n\t", UNKNOWN_VALUE),
        ("a\nb\x00c", "a bc"),
        ("  spaced   out  ", "spaced out"),
        (42, "42"),
    ],
)
def test_sanitises_values(raw: object, expected: str) -> None:
    assert sanitize_label_value(raw) == expected


def test_leak_tokens_label_as_themselves_but_stripped_roles_newlines_read_as_escapes() -> None:
    """Only `stripped_roles` changes among the families: its newlines read as backslash-n instead of
    being collapsed away (`user` said nothing about a leaked template turn)."""
    changed = {
        token: leak_token_label(token)
        for tokens in FAMILIES.values()
        for token in tokens
        if leak_token_label(token) != token
    }
    assert changed == {
        "\nsystem\n": "\\nsystem\\n",
        "\nuser\n": "\\nuser\\n",
        "\nassistant\n": "\\nassistant\\n",
    }
    assert all(sanitize_label_value(label) == label for label in changed.values())  # survives the bound


@pytest.mark.parametrize(
    ("token", "label"),
    [
        ("\n\nHuman:", "\\n\\nHuman:"),
        ("a\tb\r", "a\\tb\\r"),
        ("\x00\x7f", "\\x00\\x7f"),
        ("line\u2028separator\xa0nbsp", "line\\u2028separator\\xa0nbsp"),
        ("<｜User｜> spaced", "<｜User｜> spaced"),
    ],
)
def test_leak_token_label_escapes_what_sanitising_would_drop_or_collapse(token: str, label: str) -> None:
    assert leak_token_label(token) == label and sanitize_label_value(label) == label


def test_cuts_long_values_so_two_long_values_may_share_a_series() -> None:
    label = BoundedLabel("model_name", 5, max_length=8)
    assert label.bound("a", "x" * 100) == "x" * 8
    assert label.bound("a", "x" * 50) == "x" * 8
    assert label.values("a") == ["x" * 8]


def test_limits_reject_nonsense() -> None:
    with pytest.raises(ValidationError):
        LabelLimits(max_model_names=0)
    with pytest.raises(ValidationError):
        LabelLimits(max_runz=3)  # type: ignore[call-arg]
    assert LabelLimits().max_model_names == 50 and LabelLimits().max_runs == 20
