"""Board `rollouts`: the per-step view RL trainers plot, per run (slime/verl/OpenRLHF, ecosystem.md §6).

Why a board of its own: rollout gauges carry `run`, not `model_name`, and describe the last
completed step of each run (docs/metrics.md "Per rollout step"), so they are read against the step
counter rather than summed over time. The responses-per-step panel is the volume guard the
DegenerationRolloutRepetitionHigh alert uses. The fraction panels link each run to the exporter's
/samples page (`exporter_url` variable, docs/samples.md).
"""

from __future__ import annotations

from grafana_foundation_sdk.builders.dashboard import Dashboard, Row

from ._panels import Scope, board, exporter_url_variable, query, samples_link, stat_panel, timeseries_panel

__all__ = ["UID", "build_rollouts"]

UID = "degeneration-rollouts"
SCOPE = Scope(("job", "instance", "source", "run"), "degeneration_rollout_step")
_LEGEND = "{{run}} ({{source}})"

_FRACTIONS: tuple[tuple[str, str, str, str], ...] = (
    (
        "degeneration_rollout_repetition_frac",
        "repetition",
        "Repetition fraction per step",
        "Fraction of the last completed step's responses flagged as looping (slime rollout/repetition_frac).",
    ),
    (
        "degeneration_rollout_truncated_frac",
        "ceiling",
        "Truncated fraction per step",
        "Fraction of the last completed step's responses that hit the token ceiling (slime "
        "rollout/truncated_ratio, OpenRLHF rollout/truncated_rate).",
    ),
    (
        "degeneration_rollout_template_leak_frac",
        "template_leak",
        "Template-leak fraction per step",
        "Fraction of the last completed step's responses leaking chat-template special tokens.",
    ),
)


def build_rollouts() -> Dashboard:
    """The rollouts board builder (call `.build()` for the model)."""
    dash = board(
        UID,
        "Degeneration / RL rollouts",
        "Per-run, per-step repetition, truncation and template-leak fractions of RL rollouts "
        "(degeneration-exporter).",
        SCOPE,
    ).with_variable(exporter_url_variable())
    step = SCOPE.select("degeneration_rollout_step")
    dash = dash.with_row(Row("Progress"))
    dash = dash.with_panel(
        stat_panel(
            "Last completed step",
            "Last completed step of each run.",
            "none",
            [query(f"max by (run) ({step})", "{{run}}")],
        ).span(24)
    )
    dash = dash.with_row(Row("Per-step fractions"))
    for metric, kind, title, description in _FRACTIONS:
        filters = [("kind", kind), ("run", "${__field.labels.run}"), ("source", "${__field.labels.source}")]
        dash = dash.with_panel(
            timeseries_panel(
                title,
                description,
                "percentunit",
                [query(SCOPE.select(metric), _LEGEND)],
                max_value=1,
                links=[samples_link(filters)],
            )
        )
    dash = dash.with_panel(
        timeseries_panel(
            "Responses per step",
            "Responses in the last completed step (the per-step alerts need enough of them).",
            "short",
            [query(SCOPE.select("degeneration_rollout_responses"), _LEGEND)],
        )
    )
    return dash.with_panel(
        timeseries_panel(
            "Step",
            "Last completed step over time: flat lines are stalled runs.",
            "none",
            [query(step, _LEGEND)],
        )
    )
