"""Panel, query and variable builders every board shares (grafana-foundation-sdk, Grafana 11.6 flavour).

Why here: the dashboard-linter conventions (ecosystem.md §5.3) hold for every board by construction:
one `datasource` variable used by every panel and query, `job`/`instance`/`source`/... variables
that are multi-select with `allValue: ".+"` and refresh on time change, a unit, a title and a
description on every panel, a `refId` on every query and `$__rate_interval` in every rate.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from grafana_foundation_sdk.builders import heatmap, stat, timeseries
from grafana_foundation_sdk.builders.common import StackingConfig, VizLegendOptions, VizTooltipOptions
from grafana_foundation_sdk.builders.dashboard import (
    Dashboard,
    DashboardLink,
    DatasourceVariable,
    QueryVariable,
    TextBoxVariable,
)
from grafana_foundation_sdk.builders.heatmap import YAxisConfig
from grafana_foundation_sdk.builders.prometheus import Dataquery
from grafana_foundation_sdk.models.common import (
    LegendDisplayMode,
    LegendPlacement,
    SortOrder,
    StackingMode,
    TooltipDisplayMode,
)
from grafana_foundation_sdk.models.dashboard import (
    DashboardCursorSync,
    DashboardLinkType,
    DataSourceRef,
    VariableRefresh,
    VariableSort,
)
from grafana_foundation_sdk.models.prometheus import PromQueryFormat

from ...catalog import METRICS
from ..promql import selector

__all__ = [
    "DATASOURCE",
    "EXPORTER_URL",
    "RATE",
    "TAG",
    "Scope",
    "board",
    "exporter_url_variable",
    "heatmap_panel",
    "query",
    "samples_link",
    "stat_panel",
    "timeseries_panel",
]

TAG = "degeneration-exporter"
RATE = "$__rate_interval"
DATASOURCE = DataSourceRef(type_val="prometheus", uid="${datasource}")
_REF_IDS = "ABCDEFGHIJ"
EXPORTER_URL = "exporter_url"
"""Board variable: the exporter's base URL as the viewer's browser reaches it (data links to /samples)."""


@dataclass(frozen=True, slots=True)
class Scope:
    """The label filters a board offers as variables, in cascade order (`job` narrows `instance`...).

    `source_metric` is the series each variable's values are read from (`label_values`).
    """

    labels: tuple[str, ...]
    source_metric: str

    def select(self, metric: str, extra: Sequence[str] = (), suffix: str = "") -> str:
        """`metric{label=~"$label", ...}` for each scope label the metric has, plus `extra` matchers."""
        own = {*METRICS[metric].labels, "job", "instance"}
        matchers = [f'{label}=~"${label}"' for label in self.labels if label in own]
        return selector(metric, [*matchers, *extra], suffix)

    def variables(self) -> list[QueryVariable]:
        """One multi-select variable per label, each filtered by the ones before it."""
        out = []
        for index, label in enumerate(self.labels):
            upstream = ",".join(f'{prior}=~"${prior}"' for prior in self.labels[:index])
            series = selector(self.source_metric)
            if upstream:
                series = f"{series}{{{upstream}}}"
            out.append(
                QueryVariable(label)
                .label(label.replace("_", " ").capitalize())
                .datasource(DATASOURCE)
                .query(f"label_values({series}, {label})")
                .multi(True)
                .include_all(True)
                .all_value(".+")
                .refresh(VariableRefresh.ON_TIME_RANGE_CHANGED)
                .sort(VariableSort.ALPHABETICAL_ASC)
            )
        return out


def board(uid: str, title: str, description: str, scope: Scope) -> Dashboard:
    """An empty board with the shared settings, the datasource variable and the scope's variables."""
    dash = (
        Dashboard(title)
        .uid(uid)
        .description(description)
        .tags([TAG])
        .refresh("1m")
        .time("now-6h", "now")
        .timezone("browser")
        .tooltip(DashboardCursorSync.CROSSHAIR)
        .link(
            DashboardLink("Degeneration boards")
            .type(DashboardLinkType.DASHBOARDS)
            .tags([TAG])
            .as_dropdown(True)
            .include_vars(True)
            .keep_time(True)
        )
        .with_variable(DatasourceVariable("datasource").label("Data source").type("prometheus"))
    )
    for variable in scope.variables():
        dash = dash.with_variable(variable)
    return dash


def exporter_url_variable() -> TextBoxVariable:
    """A text box for the exporter's base URL; Prometheus only knows scrape addresses, not what a
    browser can open, so the viewer sets it (default: a port-forward to the default port)."""
    return (
        TextBoxVariable(EXPORTER_URL)
        .label("Exporter URL (for sample links)")
        .description(
            "Base URL of a degeneration-exporter as your browser reaches it; data links open /samples."
        )
        .default_value("http://localhost:10142")
    )


def samples_link(filters: Sequence[tuple[str, str]]) -> DashboardLink:
    """A data link to the exporter's `/samples` page, filtered by the series' own labels.

    `filters`: (query parameter, value) pairs; values may use `${__field.labels.<label>}`.
    """
    params = "&".join(f"{name}={value}" for name, value in filters)
    return (
        DashboardLink("Flagged samples of this series")
        .url(f"${{{EXPORTER_URL}}}/samples?{params}")
        .target_blank(True)
    )


def query(
    expr: str, legend: str, index: int = 0, *, heatmap_format: bool = False, exemplar: bool = False
) -> Dataquery:
    """A Prometheus target with its refId (A, B, ...) and the board's datasource.

    `exemplar`: also ask for exemplars (the flagged-responses series carry the sample id).
    """
    target = Dataquery().ref_id(_REF_IDS[index]).datasource(DATASOURCE).expr(expr).legend_format(legend)
    if heatmap_format:
        target = target.format(PromQueryFormat.HEATMAP)
    if exemplar:
        target = target.exemplar(True)
    return target


def timeseries_panel(
    title: str,
    description: str,
    unit: str,
    targets: Sequence[Dataquery],
    *,
    max_value: float | None = None,
    stacked: bool = False,
    links: Sequence[DashboardLink] = (),
) -> timeseries.Panel:
    """A time series with a unit, a floor at 0 and a table legend (sortable by last/max); `links`
    are data links on every series."""
    panel = (
        timeseries.Panel()
        .title(title)
        .description(description)
        .datasource(DATASOURCE)
        .unit(unit)
        .min(0)
        .legend(
            VizLegendOptions()
            .display_mode(LegendDisplayMode.TABLE)
            .placement(LegendPlacement.BOTTOM)
            .show_legend(True)
            .calcs(["lastNotNull", "max"])
        )
        .tooltip(VizTooltipOptions().mode(TooltipDisplayMode.MULTI).sort(SortOrder.DESCENDING))
    )
    if max_value is not None:
        panel = panel.max(max_value)
    if stacked:
        panel = panel.stacking(StackingConfig().mode(StackingMode.NORMAL)).fill_opacity(40)
    if links:
        panel = panel.data_links(list(links))
    for target in targets:
        panel = panel.with_target(target)
    return panel


def heatmap_panel(
    title: str, description: str, y_unit: str, expr: str, *, exemplar: bool = False
) -> heatmap.Panel:
    """A heatmap of a classic histogram's buckets (`format: heatmap`, legend `{{le}}`, not recalculated)."""
    return (
        heatmap.Panel()
        .title(title)
        .description(description)
        .datasource(DATASOURCE)
        .unit(y_unit)
        .calculate(False)
        .y_axis(YAxisConfig().unit(y_unit))
        .with_target(query(expr, "{{le}}", heatmap_format=True, exemplar=exemplar))
    )


def stat_panel(title: str, description: str, unit: str, targets: Sequence[Dataquery]) -> stat.Panel:
    """A single-value panel (last value) for current state: files watched, last step, version."""
    panel = stat.Panel().title(title).description(description).datasource(DATASOURCE).unit(unit).height(5)
    for target in targets:
        panel = panel.with_target(target)
    return panel
