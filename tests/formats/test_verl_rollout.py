"""verl dumps are decoded with `skip_special_tokens=True` (verl/trainer/ppo/ray_trainer.py
`_log_rollout_data` @b178a3cd56f5), so a reply that ran into the next turn keeps only bare role
lines; the leak check counts those for verl records and for no other format."""

from __future__ import annotations

import orjson
from degeneration_exporter.classification.classify import Classifier, ClassifierConfig
from degeneration_exporter.classification.result import FlagKind
from degeneration_exporter.formats.lines import LineParser

RAN_ON = "2+2 is 4.\nuser\nAnd 3+3?\nassistant\n3+3 is 6."


def verl_line(output: str) -> bytes:
    return orjson.dumps(
        {"input": "user\nWhat is 2+2?\nassistant\n", "output": output, "score": 0.0, "step": 5}
    )


def test_a_stripped_turn_in_a_verl_reply_is_a_template_leak() -> None:
    [record] = LineParser("verl_rollout").parse(verl_line(RAN_ON))
    result = Classifier().classify(record)
    assert FlagKind.TEMPLATE_LEAK in result.flags
    [leak] = [f for f in result.findings if f.kind == "template_leak"]
    assert dict(leak.leaks) == {"\nuser\n": 1, "\nassistant\n": 1}
    assert leak.onset == RAN_ON.index("\nuser\n")


def test_the_same_words_elsewhere_are_not_a_leak() -> None:
    [clean] = LineParser("verl_rollout").parse(verl_line("The user asked; the assistant answered."))
    assert FlagKind.TEMPLATE_LEAK not in Classifier().classify(clean).flags
    [generic] = LineParser("generic").parse(orjson.dumps({"response": RAN_ON}))
    assert FlagKind.TEMPLATE_LEAK not in Classifier().classify(generic).flags


def test_configured_families_still_apply_and_the_check_follows_template_leak_off() -> None:
    [record] = LineParser("verl_rollout").parse(verl_line("Done.<|im_end|>"))
    assert FlagKind.TEMPLATE_LEAK in Classifier().classify(record).flags
    off = Classifier(ClassifierConfig(template_leak=False))
    [ran_on] = LineParser("verl_rollout").parse(verl_line(RAN_ON))
    assert FlagKind.TEMPLATE_LEAK not in off.classify(ran_on).flags
