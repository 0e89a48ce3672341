"""Board `overview`: how often each model loops, leaks or hits the ceiling, and what loops cost.

Why this order (ecosystem.md §5.3, general to specific): volume and the flagged fraction per kind
first (the alerting symptoms), then the cost of loops (tokens burnt after onset), then the
distributions that explain them (length, onset position, budget use, repetition score), then
which template tokens leak. Every fraction is a ratio of summed rates, never an average of ratios.
The flagged-fraction panels and the onset heatmap show exemplars (each carries the sample id of a
flagged response, docs/samples.md) and link every series to the exporter's /samples page
(`exporter_url` variable).
"""

from __future__ import annotations

from grafana_foundation_sdk.builders.dashboard import Dashboard, Row

from ...classification.result import FlagKind
from ..promql import ratio
from ._panels import (
    RATE,
    Scope,
    board,
    exporter_url_variable,
    heatmap_panel,
    query,
    samples_link,
    timeseries_panel,
)

__all__ = ["UID", "build_overview"]

UID = "degeneration-overview"
SCOPE = Scope(("job", "instance", "source", "model_name"), "degeneration_responses_total")
_BY = ("source", "model_name")
_LEGEND = "{{model_name}} ({{source}})"

_KIND_PANELS: tuple[tuple[FlagKind, str, str], ...] = (
    (
        FlagKind.REPETITION,
        "Repetition-loop fraction",
        "Share of responses a repetition detector flagged as looping.",
    ),
    (
        FlagKind.TEMPLATE_LEAK,
        "Template-leak fraction",
        "Share of responses whose visible text contains chat-template special tokens (wrong template or "
        "stop tokens).",
    ),
    (
        FlagKind.CEILING,
        "Ceiling-hit fraction",
        "Share of responses that ended at max_tokens (finish_reason length, or output tokens at the budget).",
    ),
    (
        FlagKind.CEILING_WHILE_REPEATING,
        "Ceiling hit while looping",
        "Share of responses that looped until max_tokens: each burnt its whole token budget in a loop.",
    ),
)


def _sample_filters(kind: FlagKind) -> list[tuple[str, str]]:
    """/samples filters of one series of a flagged-fraction panel (its kind, model and source)."""
    return [
        ("kind", kind.value),
        ("model", "${__field.labels.model_name}"),
        ("source", "${__field.labels.source}"),
    ]


def _kind_fraction(kind: FlagKind) -> str:
    flagged = SCOPE.select("degeneration_responses_flagged_total", [f'kind="{kind}"'])
    return ratio(flagged, SCOPE.select("degeneration_responses_total"), _BY, RATE)


def _quality_row(dash: Dashboard) -> Dashboard:
    dash = dash.with_row(Row("Quality"))
    responses = SCOPE.select("degeneration_responses_total")
    dash = dash.with_panel(
        timeseries_panel(
            "Responses per second",
            "Classified responses per second (the denominator of every fraction).",
            "reqps",
            [query(f"sum by (source, model_name) (rate({responses}[{RATE}]))", _LEGEND)],
        )
    )
    dash = dash.with_panel(
        timeseries_panel(
            "Finish reasons",
            "Share of responses by normalised finish reason (stop, length, abort, ...).",
            "percentunit",
            [
                query(
                    f"sum by (finish_reason) (rate({responses}[{RATE}]))\n"
                    "/ ignoring(finish_reason) group_left\n"
                    f"sum (rate({responses}[{RATE}]))",
                    "{{finish_reason}}",
                )
            ],
            max_value=1,
            stacked=True,
        )
    )
    for kind, title, description in _KIND_PANELS:
        dash = dash.with_panel(
            timeseries_panel(
                title,
                description,
                "percentunit",
                [query(_kind_fraction(kind), _LEGEND, exemplar=True)],
                max_value=1,
                links=[samples_link(_sample_filters(kind))],
            )
        )
    return dash


def _cost_row(dash: Dashboard) -> Dashboard:
    dash = dash.with_row(Row("Cost of loops"))
    tokens = SCOPE.select("degeneration_loop_tokens_after_onset_total")
    chars = SCOPE.select("degeneration_loop_chars_after_onset_total")
    dash = dash.with_panel(
        timeseries_panel(
            "Budget burnt after loop onset",
            "Share of all generated output spent after a loop began: tokens (where records state them) and "
            "characters. This is what loops cost.",
            "percentunit",
            [
                query(
                    ratio(tokens, SCOPE.select("degeneration_response_tokens", suffix="_sum"), _BY, RATE),
                    f"tokens {_LEGEND}",
                ),
                query(
                    ratio(chars, SCOPE.select("degeneration_response_chars", suffix="_sum"), _BY, RATE),
                    f"chars {_LEGEND}",
                    1,
                ),
            ],
            max_value=1,
        )
    )
    return dash.with_panel(
        timeseries_panel(
            "Tokens per second after loop onset",
            "Output tokens per second generated after a loop began (wasted decode throughput).",
            "short",
            [query(f"sum by (source, model_name) (rate({tokens}[{RATE}]))", _LEGEND)],
        )
    )


def _bucket_rate(metric: str, by: str = "le") -> str:
    """`sum by (le, ...) (rate(<metric>_bucket[...]))`: what heatmaps and quantiles read."""
    return f"sum by ({by}) (rate({SCOPE.select(metric, suffix='_bucket')}[{RATE}]))"


def _distribution_row(dash: Dashboard) -> Dashboard:
    dash = dash.with_row(Row("Distributions"))
    tokens_by_model = _bucket_rate("degeneration_response_tokens", "le, model_name")
    dash = dash.with_panel(
        heatmap_panel(
            "Response length (tokens)",
            "Output tokens per response, where records state them.",
            "short",
            _bucket_rate("degeneration_response_tokens"),
        )
    )
    dash = dash.with_panel(
        timeseries_panel(
            "Response length quantiles",
            "p50, p90 and p99 of output tokens per response, by model.",
            "short",
            [
                query(
                    f"histogram_quantile({q}, {tokens_by_model})",
                    f"p{round(q * 100)} {{{{model_name}}}}",
                    index,
                )
                for index, q in enumerate((0.5, 0.9, 0.99))
            ],
        )
    )
    dash = dash.with_panel(
        heatmap_panel(
            "Loop onset position",
            "Where detected loops began, as a fraction of the response (0 = at the start). Late onsets mean "
            "long useful text before the loop.",
            "percentunit",
            _bucket_rate("degeneration_loop_onset_ratio"),
            exemplar=True,
        )
    )
    dash = dash.with_panel(
        heatmap_panel(
            "Token budget used",
            "Output tokens over max_tokens per response (1 = at the ceiling).",
            "percentunit",
            _bucket_rate("degeneration_response_token_budget_ratio"),
        )
    )
    return dash.with_panel(
        heatmap_panel(
            "Repetition score",
            "Repetition score of each response, 0 (none) to 1 (all loop).",
            "percentunit",
            _bucket_rate("degeneration_response_repetition_ratio"),
        )
    )


def _leak_row(dash: Dashboard) -> Dashboard:
    dash = dash.with_row(Row("Template leaks and detectors"))
    leaks = SCOPE.select("degeneration_template_leak_tokens_total")
    detections = SCOPE.select("degeneration_detections_total")
    dash = dash.with_panel(
        timeseries_panel(
            "Leaked tokens by token",
            "Chat-template special tokens per second found in visible text, by token (configured list, else "
            "other).",
            "short",
            [query(f"sum by (token) (rate({leaks}[{RATE}]))", "{{token}}")],
        )
    )
    return dash.with_panel(
        timeseries_panel(
            "Detections by detector",
            "Responses per second on which each repetition/leak detector fired.",
            "reqps",
            [query(f"sum by (detector) (rate({detections}[{RATE}]))", "{{detector}}")],
        )
    )


def build_overview() -> Dashboard:
    """The overview board builder (call `.build()` for the model)."""
    dash = board(
        UID,
        "Degeneration / Overview",
        "Repetition loops, template-token leaks and ceiling hits of LLM responses, by model and source "
        "(degeneration-exporter).",
        SCOPE,
    ).with_variable(exporter_url_variable())
    for add_row in (_quality_row, _cost_row, _distribution_row, _leak_row):
        dash = add_row(dash)
    return dash
