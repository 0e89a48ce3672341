"""PromQL fragments built from catalogue names, shared by the boards and the alert rules.

Why: a metric name in a board or rule is looked up in `catalog.METRICS`, never retyped (style.md
§12), so renaming a metric breaks the build instead of silently emptying a panel. Histogram series
suffixes (`_bucket`, `_sum`, `_count`) are allowed only on histograms.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..catalog import METRICS

__all__ = ["HISTOGRAM_SUFFIXES", "ratio", "selector", "series"]

HISTOGRAM_SUFFIXES = ("_bucket", "_sum", "_count")
_MATCHER = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)(=~|!~|!=|=)"')


def series(metric: str, suffix: str = "") -> str:
    """The exposed series name of catalogue metric `metric` (e.g. `degeneration_responses_total`)."""
    spec = METRICS.get(metric)
    if spec is None:
        raise KeyError(f"{metric!r} is not in catalog.METRICS")
    if suffix and (spec.type != "histogram" or suffix not in HISTOGRAM_SUFFIXES):
        raise ValueError(f"suffix {suffix!r} is not valid for {spec.type} {metric}")
    return metric + suffix


def selector(metric: str, matchers: Sequence[str] = (), suffix: str = "") -> str:
    """`name{m1,m2}`; each matcher's label must be one of the metric's labels or a target label."""
    name = series(metric, suffix)
    allowed = {*METRICS[metric].labels, "job", "instance", *(("le",) if suffix == "_bucket" else ())}
    for matcher in matchers:
        parsed = _MATCHER.match(matcher)
        if parsed is None:
            raise ValueError(f"{matcher!r} is not a label matcher")
        if parsed.group(1) not in allowed:
            raise ValueError(f"{metric} has no label {parsed.group(1)!r}")
    body = ",".join(matchers)
    return f"{name}{{{body}}}" if body else name


def ratio(numerator: str, denominator: str, by: Sequence[str], window: str) -> str:
    """`sum by (...) (rate(num[w])) / sum by (...) (rate(den[w]))`: sum first, never average ratios."""
    labels = ", ".join(by)
    return (
        f"sum by ({labels}) (rate({numerator}[{window}]))\n"
        f"/\nsum by ({labels}) (rate({denominator}[{window}]))"
    )
