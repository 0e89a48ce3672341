"""Group `degeneration.quality`: alerts on what the models generate (ecosystem.md §7.2).

Decisions (docs/runbook.md repeats them):
- Spikes (`repetition`, `ceiling`) compare the 15m fraction with the 1-day baseline taken 1h ago,
  so a model that always loops a little does not page, and the spike itself stays out of its
  baseline (§2.8). A floor and a minimum of responses stop low-traffic flapping.
- `ceiling_while_repeating` gets its own alert on a fixed fraction, not a baseline: each such
  response burned its whole token budget looping, and a baseline would learn to accept a chronic
  level that the spike alerts can never see. A fresh loop outbreak fires the repetition spike
  first; this one stays on while the waste continues.
- Template leaks are bugs (wrong template or stop tokens), so there is no baseline: any fraction
  above a small floor, at volume.
- RL rollouts are step-driven: the per-step gauge already is the fraction of one step, guarded by
  that step's response count, and fires at once (no `for`).
"""

from __future__ import annotations

from ...catalog import format_number
from ...classification.result import FlagKind
from ..promql import selector
from .alert import Rule, RuleGroup, alert_rule
from .recording import FRACTION_1D, FRACTION_15M, RESPONSES_RATE_15M
from .thresholds import AlertThresholds, FractionThresholds, SpikeThresholds

__all__ = ["build_quality_group"]

_WINDOW_SECONDS = 900  # the recorded rates are over 15m
_WHO = "{{ $labels.model_name }} ({{ $labels.source }})"


def _volume_guard(min_responses: int) -> str:
    return f"and ignoring(kind) ({RESPONSES_RATE_15M} * {_WINDOW_SECONDS}) >= {min_responses}"


def _spike(name: str, kind: FlagKind, t: SpikeThresholds, summary: str, what: str, runbook: str) -> Rule:
    current = f'{FRACTION_15M}{{kind="{kind}"}}'
    baseline = f'{FRACTION_1D}{{kind="{kind}"}}'
    expr = (
        f"(\n    {current}\n  > {format_number(t.factor)} * clamp_min({baseline} offset 1h, "
        f"{format_number(t.baseline_min)})\n)\n"
        f"and {current} > {format_number(t.floor)}\n"
        f"{_volume_guard(t.min_responses)}"
    )
    return alert_rule(
        name,
        expr,
        severity="warning",
        summary=summary,
        description=f"{_WHO}: {{{{ $value | humanizePercentage }}}} of responses {what} over the last 15m, "
        f"more than {format_number(t.factor)}x the 1-day baseline.",
        runbook_url=runbook,
        for_=t.for_,
        keep_firing_for=t.keep_firing_for,
    )


def _fraction(
    name: str, kind: FlagKind, t: FractionThresholds, summary: str, what: str, runbook: str
) -> Rule:
    expr = (
        f'{FRACTION_15M}{{kind="{kind}"}} > {format_number(t.max_fraction)}\n{_volume_guard(t.min_responses)}'
    )
    return alert_rule(
        name,
        expr,
        severity="warning",
        summary=summary,
        description=f"{_WHO}: {{{{ $value | humanizePercentage }}}} of responses {what} over the last 15m.",
        runbook_url=runbook,
        for_=t.for_,
    )


def _rollout_repetition(thresholds: AlertThresholds) -> Rule:
    t = thresholds.rollout_repetition
    expr = (
        f"{selector('degeneration_rollout_repetition_frac')} > {format_number(t.max_fraction)}\n"
        f"and {selector('degeneration_rollout_responses')} >= {t.min_responses}"
    )
    return alert_rule(
        "DegenerationRolloutRepetitionHigh",
        expr,
        severity="warning",
        summary="Many responses of the last RL rollout step loop.",
        description="run {{ $labels.run }} ({{ $labels.source }}): {{ $value | humanizePercentage }} of the "
        "last completed step's responses loop.",
        runbook_url=thresholds.runbook_url,
    )


def build_quality_group(thresholds: AlertThresholds) -> RuleGroup:
    """Repetition and ceiling spikes, looping into the ceiling, template leaks, RL step repetition."""
    url = thresholds.runbook_url
    return {
        "name": "degeneration.quality",
        "rules": [
            _spike(
                "DegenerationRepetitionSpike",
                FlagKind.REPETITION,
                thresholds.repetition_spike,
                "Repetition-loop fraction is far above its 1-day baseline.",
                "loop",
                url,
            ),
            _spike(
                "DegenerationCeilingSpike",
                FlagKind.CEILING,
                thresholds.ceiling_spike,
                "Fraction of responses hitting max_tokens is far above its 1-day baseline.",
                "hit the token ceiling",
                url,
            ),
            _fraction(
                "DegenerationCeilingWhileRepeating",
                FlagKind.CEILING_WHILE_REPEATING,
                thresholds.ceiling_while_repeating,
                "Responses loop until they hit the token ceiling.",
                "looped until max_tokens (each burnt its whole budget)",
                url,
            ),
            _fraction(
                "DegenerationTemplateLeak",
                FlagKind.TEMPLATE_LEAK,
                thresholds.template_leak,
                "Responses leak chat-template special tokens.",
                "contain chat-template special tokens",
                url,
            ),
            _rollout_repetition(thresholds),
        ],
    }
