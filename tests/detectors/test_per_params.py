"""`per_params`: values derived from a params object are computed once per object and never mixed."""

from __future__ import annotations

from degeneration_exporter.detectors.base import per_params
from degeneration_exporter.detectors.tandem import TandemRepeatParams


def test_each_params_object_gets_its_own_value_computed_once() -> None:
    calls: list[TandemRepeatParams] = []

    @per_params
    def derive(params: TandemRepeatParams) -> int:
        calls.append(params)
        return params.min_repeated_chars

    a, b = TandemRepeatParams(min_repeated_chars=60), TandemRepeatParams(min_repeated_chars=70)
    assert (derive(a), derive(b), derive(a), derive(b)) == (60, 70, 60, 70)
    assert calls == [a, b]
    twin = TandemRepeatParams(min_repeated_chars=60)  # equal, another object: its own entry
    assert derive(twin) == 60 and calls[-1] is twin


def test_values_stay_right_past_the_cache_bound() -> None:
    @per_params
    def derive(params: TandemRepeatParams) -> int:
        return params.min_repeated_chars

    many = [TandemRepeatParams(min_repeated_chars=n) for n in range(1, 200)]
    assert [derive(p) for p in many] == list(range(1, 200))
    assert [derive(p) for p in reversed(many)] == list(range(199, 0, -1))
