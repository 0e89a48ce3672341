"""`/samples`, `/samples/<id>` and `/api/samples`: the flagged responses behind a spike on the board.

Why server-rendered: usable without JavaScript, from a laptop next to Grafana, and the pages carry
a Content-Security-Policy without any script source, so no response text can ever run as script.
Filters are plain GET query parameters (`kind`, `model`, `source`, `run`), the same the boards'
data links put in the URL.
"""

from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import parse_qs, urlencode

import orjson

from ..sinks.sample_html import CSP, SAMPLE_TABLE_HEAD, esc, page, render_sample, sample_row
from ..sinks.samples import SampleFilter, SampleStore
from .server import Request, Response, Route

__all__ = ["SAMPLES_PREFIX", "SamplesPages"]

SAMPLES_PREFIX = "/samples/"
_FILTERS = ("kind", "model", "source", "run")
_MAX_LIST = 500
SECURITY_HEADERS: Mapping[str, str] = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}


def _query(request: Request) -> dict[str, str]:
    parsed = parse_qs(request.query, keep_blank_values=False)
    return {k: v[0] for k, v in parsed.items() if v and v[0]}


def _filter(query: Mapping[str, str]) -> SampleFilter:
    return SampleFilter(**{k: query.get(k) for k in _FILTERS})


def _limit(query: Mapping[str, str]) -> int:
    try:
        return max(1, min(int(query.get("limit", "100")), _MAX_LIST))
    except ValueError:
        return 100


def _html(status: int, body: bytes) -> Response:
    return Response(status, body, "text/html; charset=utf-8", SECURITY_HEADERS)


class SamplesPages:
    """The three routes over one `SampleStore`."""

    def __init__(self, store: SampleStore) -> None:
        self._store = store

    def routes(self) -> dict[tuple[str, str], Route]:
        return {
            ("GET", "/samples"): self.list_page,
            ("GET", SAMPLES_PREFIX): self.detail_page,
            ("GET", "/api/samples"): self.api,
        }

    def list_page(self, request: Request) -> Response:
        query = _query(request)
        where = _filter(query)
        everything = self._store.recent()
        shown = [s for s in everything if where.matches(s)][: _limit(query)]
        options = {
            "kind": sorted({k for s in everything for k in s.kinds}),
            "model": sorted({s.model for s in everything if s.model}),
            "source": sorted({s.source for s in everything}),
            "run": sorted({s.run for s in everything if s.run}),
        }
        body = [
            "<h1>Flagged samples</h1>",
            "<p><a href='/'>Home</a> · <a href='/metrics'>Metrics</a> · "
            f"<a href='/api/samples?{esc(urlencode(query))}'>JSON</a></p>",
            "<form method='get' action='/samples'>",
        ]
        for name in _FILTERS:
            body.append(f"<label>{name} <select name='{name}'><option value=''>any</option>")
            values = options[name]
            if query.get(name) and query[name] not in values:
                values = [query[name], *values]
            for value in values:
                selected = " selected" if query.get(name) == value else ""
                body.append(f"<option value='{esc(value)}'{selected}>{esc(value)}</option>")
            body.append("</select></label> ")
        body.append("<button type='submit'>Filter</button></form>")
        body.append(
            f"<p>{len(shown)} shown of {len(everything)} held (the last {self._store.per_kind} per "
            "source and kind).</p>"
        )
        if shown:
            body.append(SAMPLE_TABLE_HEAD)
            body.extend(sample_row(s, f"{SAMPLES_PREFIX}{s.id}") for s in shown)
            body.append("</table>")
        else:
            body.append("<p class='muted'>No flagged responses held that match.</p>")
        return _html(200, page("Flagged samples", body))

    def detail_page(self, request: Request) -> Response:
        sid = request.path[len(SAMPLES_PREFIX) :]
        sample = self._store.get(sid)
        if sample is None:
            body = [
                "<h1>Sample not held</h1>",
                f"<p>No sample <code>{esc(sid)}</code>: only the last {self._store.per_kind} per source "
                "and kind are kept, in memory. <a href='/samples'>All held samples</a>.</p>",
            ]
            return _html(404, page("Sample not held", body))
        body = [
            f"<h1>Sample <code>{esc(sample.id)}</code></h1>",
            "<p><a href='/samples'>All samples</a> · "
            f"<a href='/api/samples?id={esc(sample.id)}'>JSON</a></p>",
            *render_sample(sample),
        ]
        return _html(200, page(f"Sample {sample.id}", body))

    def api(self, request: Request) -> Response:
        query = _query(request)
        if "id" in query:
            one = self._store.get(query["id"])
            items = [one] if one is not None else []
        else:
            items = self._store.recent(_filter(query), _limit(query))
        payload = {"retain_text": self._store.retain_text, "samples": [s.to_dict() for s in items]}
        return Response(200, orjson.dumps(payload), "application/json", SECURITY_HEADERS)
