"""`slots_builder`: the positional constructors of the hot paths build what the dataclass would."""

from __future__ import annotations

from dataclasses import dataclass, fields

import pytest
from degeneration_exporter._slots import slots_builder
from degeneration_exporter.classification.classify import Classifier
from degeneration_exporter.classification.result import Classification, LoopSpan
from degeneration_exporter.detectors.base import DetectorInput, Finding
from degeneration_exporter.detectors.tandem.periods import Repeat
from degeneration_exporter.detectors.tandem.verdict import Loop
from degeneration_exporter.record import FinishReason, Record
from degeneration_exporter.sources.base import Line


@pytest.mark.parametrize(
    "cls", [Classification, LoopSpan, Finding, DetectorInput, Repeat, Loop, Record, Line]
)
def test_builder_equals_the_dataclass_init(cls: type) -> None:
    names = [f.name for f in fields(cls)]
    values = [object() for _ in names]
    built: object = slots_builder(cls)(*values)
    made = cls(*values)
    assert type(built) is cls
    assert all(getattr(built, name) is getattr(made, name) for name in names)


def test_a_class_whose_layout_the_twin_cannot_copy_is_built_through_its_slots() -> None:
    @dataclass(frozen=True, slots=True)
    class Base:
        x: int

    @dataclass(frozen=True, slots=True)
    class Derived(Base):  # inherited slots: a plain twin with both names has another layout
        y: int

    built = slots_builder(Derived)(1, 2)
    assert type(built) is Derived and built == Derived(1, 2)


def test_builder_refuses_a_post_init() -> None:
    @dataclass(frozen=True, slots=True)
    class Checked:
        x: int

        def __post_init__(self) -> None:
            pass

    with pytest.raises(TypeError):
        slots_builder(Checked)


def test_assembled_fields_come_from_the_record() -> None:
    record = Record(
        text="a reply " * 40,
        reasoning="thinking",
        finish_reason=FinishReason.LENGTH,
        model="m",
        output_tokens=7,
        max_tokens=9,
        run="r",
        step=3,
        identity={"id": "x"},
    )
    got = Classifier().classify(record)
    assert (got.model, got.run, got.step, got.identity) == ("m", "r", 3, {"id": "x"})
    assert (got.output_tokens, got.max_tokens, got.path, got.line) == (7, 9, None, None)
    assert got.text is record.text and got.reasoning is record.reasoning
    assert (got.text_chars, got.reasoning_chars) == (len(record.text), len(record.reasoning))
    assert got.loop is not None and got.loop.chars_after_onset == len(record.text) - got.loop.onset
