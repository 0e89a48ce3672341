"""`Daemon`: builds the pipeline and the web server from `Settings`, starts and stops them in order.

Why apart from `pipeline.py`: that module is the per-line path; this one is assembly and lifecycle
(which sources, sinks and routes exist, and the stop order that flushes positions). Like
`pipeline.py` it crosses layers, and nothing else does (style.md §2).
Stop order: runners stop (sources close, positions written), sinks flush, then the web server, so a
final scrape during shutdown still answers. `dry_run` (`run --dry-run`): file tails resume from their
positions files but never write them (nor lock them).
"""

from __future__ import annotations

import logging
import ssl
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from . import __version__
from .classification.classify import Classifier
from .config import AUTO_FORMAT, FileTailSourceConfig, HttpPushSourceConfig, Settings, StdinSourceConfig
from .errors import ConfigError, PositionsInUse, SourceError
from .pipeline import SourceRunner
from .sinks.prometheus import PrometheusSink
from .sources.base import Source
from .sources.file_tail import FileTailSource
from .sources.http_push import HttpPushSource, Reply
from .sources.stdin import StdinSource
from .web import (
    BasicAuth,
    FlaggedSample,
    GuardedRoute,
    LandingView,
    Request,
    Response,
    Route,
    SourceView,
    WebServer,
    build_ssl_context,
    load_web_config,
    render_landing,
)

if TYPE_CHECKING:
    from .sinks.otlp import OtlpSink

__all__ = ["Daemon", "build_classifier"]

log = logging.getLogger(__name__)

_METRICS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


def build_classifier(settings: Settings) -> Classifier:
    """The classifier with `detectors:` as the parameters (`classify.detector_params` is refused)."""
    if settings.classify.detector_params:
        raise ConfigError(
            "set detector parameters under detectors.<name>, not classify.detector_params",
            field="classify.detector_params",
        )
    params = settings.detectors.model_dump()
    return Classifier(settings.classify.model_copy(update={"detector_params": params}))


def _ingest_route(source: HttpPushSource) -> GuardedRoute:
    """`POST /ingest` of a mounted http_push source, behind the main server's TLS and basic auth.

    The endpoint's preflight (bearer token, declared length) runs before the server reads the body.
    """

    def as_response(reply: Reply) -> Response:
        return Response(reply.status, reply.body, "application/json", reply.headers)

    def preflight(method: str, headers: Mapping[str, str]) -> Response | None:
        refused = source.endpoint.preflight(method, headers)
        return None if refused is None else as_response(refused)

    def ingest(request: Request) -> Response:
        return as_response(source.endpoint.handle(dict(request.headers.items()), request.body))

    return GuardedRoute(ingest, preflight, source.config.max_body_bytes)


@dataclass(frozen=True, slots=True)
class _Wired:
    runner: SourceRunner
    type: str
    patterns: tuple[str, ...]


class Daemon:
    """Everything `run` starts; construction validates (ConfigError) before any thread starts."""

    def __init__(self, settings: Settings, *, dry_run: bool = False) -> None:
        self.settings = settings
        self.dry_run = dry_run
        classifier = build_classifier(settings)
        self._sinks: list[PrometheusSink | OtlpSink] = []
        self.prometheus: PrometheusSink | None = None
        if settings.sinks.prometheus.enabled:
            self.prometheus = PrometheusSink(settings.sinks.prometheus)
            self._sinks.append(self.prometheus)
        if settings.sinks.otlp.enabled:
            from .sinks.otlp import OtlpSink  # optional extra, imported only when enabled

            otlp = OtlpSink(settings.sinks.otlp)
            self._sinks.append(otlp)
            if self.prometheus is not None:
                self.prometheus.register_otlp_failures(lambda: otlp.exports.failed)
        self._recent: deque[FlaggedSample] = deque(maxlen=max(settings.web.recent_flagged, 1))
        self._wired: list[_Wired] = []
        self._max_body_bytes = 1024 * 1024
        routes: dict[tuple[str, str], Route] = {
            ("GET", "/"): self._landing,
            ("GET", "/healthz"): self._healthz,
        }
        if self.prometheus is not None:
            routes[("GET", "/metrics")] = self._metrics
        built: list[Source] = []
        try:
            for config in settings.sources:
                source, patterns = self._build_source(config, routes)
                built.append(source)
                for sink in self._sinks:
                    sink.register_source_stats(source.name, source.stats)
                format_name = None if config.format == AUTO_FORMAT else config.format
                recent = self._recent if settings.web.recent_flagged else None
                runner = SourceRunner(
                    source,
                    format_name,
                    classifier,
                    tuple(self._sinks),
                    custom_fields=config.fields,
                    recent=recent,
                    keep_evidence=settings.web.landing_show_text,
                    max_stream_chars=config.max_stream_chars,
                    max_open_streams=config.max_open_streams,
                    stream_idle_timeout=config.stream_idle_timeout,
                )
                self._wired.append(_Wired(runner, config.type, patterns))
            self._web, self.tls = self._build_web(routes)
        except BaseException:
            # A refused start (busy port, a later source's error) must not keep the positions
            # locks of the file tails already built: a never-started source closes without writing.
            for source in built:
                source.close()
            raise

    def _build_source(
        self, config: Any, routes: dict[tuple[str, str], Route]
    ) -> tuple[Source, tuple[str, ...]]:
        if isinstance(config, FileTailSourceConfig):
            field = f"sources.{config.name}.positions_file"
            if config.positions_file is None:
                field = "state.directory"
                positions = self.settings.state.positions_file_for(config.name)
                config = config.model_copy(update={"positions_file": positions})
            try:
                return FileTailSource(config, dry_run=self.dry_run), config.include
            except PositionsInUse as exc:
                field = f"sources.{config.name}.positions_file"
                raise ConfigError(f"{field}: {exc}", field=field) from exc
            except SourceError as exc:  # unreadable positions, unwritable state directory: not corrupt
                raise ConfigError(f"{field}: {exc}", field=field) from exc
        if isinstance(config, StdinSourceConfig):
            return StdinSource(config), ("-",)
        assert isinstance(config, HttpPushSourceConfig)
        if config.listen_host is not None:
            own = HttpPushSource(config)
            own.bind()  # a busy port is exit 2 now, not a thread dying after "serving"
            return own, (f"http://{config.listen_host}:{config.listen_port}/ingest",)
        if ("POST", "/ingest") in routes:
            raise ConfigError(
                "only one http_push source can be mounted on the main server's /ingest",
                field=f"sources.{config.name}.listen_host",
            )
        source = HttpPushSource(config, mounted_on_host=self.settings.sinks.prometheus.host)
        routes[("POST", "/ingest")] = _ingest_route(source)
        return source, ("/ingest",)

    def _build_web(self, routes: dict[tuple[str, str], Route]) -> tuple[WebServer, bool]:
        """The server with the web config's auth and TLS applied; also whether it serves TLS."""
        prometheus = self.settings.sinks.prometheus
        auth: BasicAuth | None = None
        context: ssl.SSLContext | None = None
        mtls = False
        if self.settings.web.config_file is not None:
            web_config = load_web_config(self.settings.web.config_file)
            if web_config.basic_auth_users:
                auth = BasicAuth(web_config.basic_auth_users)
            if web_config.tls_server_config is not None:
                context = build_ssl_context(web_config.tls_server_config)
                mtls = web_config.tls_server_config.client_auth_type == "RequireAndVerifyClientCert"
        try:
            server = WebServer(
                (prometheus.host, prometheus.port),
                routes,
                auth=auth,
                ssl_context=context,
                max_body_bytes=self._max_body_bytes,
                require_client_cert=mtls,
            )
        except OSError as exc:
            message = f"sinks.prometheus.listen: cannot listen on {prometheus.listen}: {exc.strerror}"
            raise ConfigError(message, field="sinks.prometheus.listen") from exc
        return server, context is not None

    @property
    def address_text(self) -> str:
        host, port = self._web.address
        return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"

    def start(self) -> None:
        self._web.start()
        for wired in self._wired:
            wired.runner.start()

    def stop(self) -> None:
        """Graceful stop: pushed lines drained, positions flushed, sinks closed, then the web server.

        Push sources drain first (new pushes get 503, accepted ones are classified, each within its
        `drain_timeout`), while every pipeline still runs; idempotent.
        """
        for wired in self._wired:
            if isinstance(wired.runner.source, HttpPushSource):
                wired.runner.source.drain()
        for wired in self._wired:
            wired.runner.stop()
        for sink in self._sinks:
            try:
                sink.close()
            except Exception:  # a failing flush must not prevent the rest of the shutdown
                log.exception("sink close failed")
        self._web.stop()

    # -- routes ------------------------------------------------------------------------------------

    def _healthz(self, _request: Request) -> Response:
        """200 always (a restart fixes none of these), `ok` or `degraded` with each source's problems.

        Problems name a source and a condition, never a path: the endpoint needs no credentials.
        """
        problems = [
            f"source {wired.runner.source.name}: {problem}"
            for wired in self._wired
            for problem in getattr(wired.runner.source, "problems", ())
        ]
        if not problems:
            return Response(200, b"ok\n")
        return Response(200, ("degraded\n" + "".join(f"{p}\n" for p in problems)).encode())

    def _metrics(self, _request: Request) -> Response:
        assert self.prometheus is not None  # the route exists only with the sink
        return Response(200, self.prometheus.exposition(), _METRICS_CONTENT_TYPE)

    def _landing(self, _request: Request) -> Response:
        return Response(200, render_landing(self.landing_view()), "text/html; charset=utf-8")

    def landing_view(self) -> LandingView:
        views = []
        for wired in self._wired:
            runner = wired.runner
            stats = runner.source.stats
            with stats.lock:
                lines, size, rejected, lag = (
                    stats.lines_read,
                    stats.bytes_read,
                    dict(stats.rejected),
                    stats.lag_bytes,
                )
            with runner.counts.lock:
                responses, flagged = runner.counts.responses, dict(runner.counts.flagged)
            formats = ", ".join(runner.format_names) or "detecting"
            views.append(
                SourceView(
                    runner.source.name,
                    wired.type,
                    formats,
                    wired.patterns,
                    lines,
                    size,
                    rejected,
                    responses,
                    flagged,
                    lag,
                )
            )
        recent = list(self._recent)[::-1]
        return LandingView(__version__, views, recent, self.settings.web.landing_show_text)
