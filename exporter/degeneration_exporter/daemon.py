"""`Daemon`: builds the pipeline and the web server from `Settings`, starts and stops them in order.

Why apart from `pipeline.py`: that module is the per-line path; this one is assembly and lifecycle
(which sources, sinks and routes exist, and the stop order that flushes positions). Like
`pipeline.py` it crosses layers, and nothing else does (style.md §2).
The samples store (sinks/samples.py) is one more sink; its pages are routes on the same server.
Stop order: runners stop (sources close, positions written), sinks flush, then the web server, so a
final scrape during shutdown still answers. `dry_run` (`run --dry-run`): file tails resume from their
positions files but never write them (nor lock them).
"""

from __future__ import annotations

import glob
import logging
import os
import ssl
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from . import __version__
from .classification.classify import Classifier
from .config import (
    AUTO_FORMAT,
    FileTailSourceConfig,
    HttpPushSourceConfig,
    OtlpSourceConfig,
    Settings,
    StdinSourceConfig,
)
from .errors import ConfigError, PositionsInUse, SourceError
from .formats._genai import split_otlp_request
from .pipeline import PathLabels, SourceRunner
from .sinks.prometheus import PrometheusSink
from .sinks.samples import SampleStore
from .sources.base import Source
from .sources.file_tail import FileTailSource
from .sources.http_push import HttpPushSource, IngestEndpoint, Reply
from .sources.otlp_receiver import LOGS_PATH, TRACES_PATH, OtlpEndpoint, OtlpReceiverSource
from .sources.stdin import StdinSource
from .web import (
    BasicAuth,
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
from .web.samples_page import SECURITY_HEADERS, SamplesPages

if TYPE_CHECKING:
    from .sinks.otlp import OtlpSink

__all__ = ["Daemon", "build_classifier", "path_labels"]

log = logging.getLogger(__name__)


def build_classifier(settings: Settings) -> Classifier:
    """The classifier with `detectors:` as the parameters (`classify.detector_params` is refused)."""
    if settings.classify.detector_params:
        raise ConfigError(
            "set detector parameters under detectors.<name>, not classify.detector_params",
            field="classify.detector_params",
        )
    params = settings.detectors.model_dump()
    return Classifier(settings.classify.model_copy(update={"detector_params": params}))


def path_labels(config: Any) -> PathLabels:
    """A source's `run`/`model_name` options (`PipelineOptions`) as the pipeline applies them."""
    return PathLabels(config.run, config.model_name, config.run_from_path, config.model_from_path)


def _ingest_route(endpoint: IngestEndpoint, max_body_bytes: int) -> GuardedRoute:
    """`POST /ingest` of a mounted http_push source, behind the main server's TLS and basic auth.

    The endpoint's preflight (bearer token, declared length) runs before the server reads the body.
    """

    def as_response(reply: Reply) -> Response:
        return Response(reply.status, reply.body, "application/json", reply.headers)

    def preflight(method: str, headers: Mapping[str, str]) -> Response | None:
        refused = endpoint.preflight(method, headers)
        return None if refused is None else as_response(refused)

    def ingest(request: Request) -> Response:
        return as_response(endpoint.handle(dict(request.headers.items()), request.body))

    return GuardedRoute(ingest, preflight, max_body_bytes)


def _otlp_route(endpoint: OtlpEndpoint, max_body_bytes: int) -> GuardedRoute:
    """`POST /v1/logs` and `/v1/traces` of a mounted otlp source, behind the main server's TLS and auth.

    As for /ingest, the endpoint's preflight (bearer token, declared length, encoding) runs before the
    server reads the body.
    """

    def as_response(reply: Reply) -> Response:
        extra = {k: v for k, v in reply.headers.items() if k != "Content-Type"}
        return Response(
            reply.status, reply.body, reply.headers.get("Content-Type", "application/json"), extra
        )

    def preflight(method: str, headers: Mapping[str, str]) -> Response | None:
        refused = endpoint.preflight(method, headers)
        return None if refused is None else as_response(refused)

    def receive(request: Request) -> Response:
        return as_response(
            endpoint.respond(request.method, request.path, dict(request.headers.items()), request.body)
        )

    return GuardedRoute(receive, preflight, max_body_bytes)


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
        self._sinks: list[PrometheusSink | OtlpSink | SampleStore] = []
        self.prometheus: PrometheusSink | None = None
        if settings.sinks.prometheus.enabled:
            # exemplars point to /samples/<id>: only when the samples store keeps something
            self.prometheus = PrometheusSink(
                settings.sinks.prometheus, exemplars=settings.web.samples_per_kind > 0
            )
            self._sinks.append(self.prometheus)
        if settings.sinks.otlp.enabled:
            from .sinks.otlp import OtlpSink  # optional extra, imported only when enabled

            otlp = OtlpSink(settings.sinks.otlp)
            self._sinks.append(otlp)
            if self.prometheus is not None:
                self.prometheus.register_otlp_failures(lambda: otlp.exports.failed)
        web = settings.web
        self.samples = SampleStore(
            web.samples_per_kind, retain_text=web.retain_text, text_chars=web.sample_text_chars
        )
        self._sinks.append(self.samples)
        self._wired: list[_Wired] = []
        self._max_body_bytes = 1024 * 1024
        routes: dict[tuple[str, str], Route] = {
            ("GET", "/"): self._landing,
            ("GET", "/healthz"): self._healthz,
        }
        if web.samples_per_kind:
            routes.update(SamplesPages(self.samples).routes())
        if self.prometheus is not None:
            routes[("GET", "/metrics")] = self._metrics
        built: list[Source] = []
        try:
            for config in settings.sources:
                source, patterns = self._build_source(config, routes)
                built.append(source)
                for sink in self._sinks:
                    if not isinstance(sink, SampleStore):
                        sink.register_source_stats(source.name, source.stats)
                format_name = None if config.format == AUTO_FORMAT else config.format
                runner = SourceRunner(
                    source,
                    format_name,
                    classifier,
                    tuple(self._sinks),
                    custom_fields=config.fields,
                    labels=path_labels(config),
                    max_open_streams=config.max_open_streams,
                    stream_idle_timeout=config.stream_idle_timeout,
                    usage_wait=config.usage_wait,
                )
                if config.max_stream_chars is not None:
                    log.warning(
                        "source %r: max_stream_chars is deprecated and ignored (streamed responses keep "
                        "no text); remove it from the config",
                        config.name,
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
        if isinstance(config, OtlpSourceConfig):
            return self._build_otlp(config, routes)
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
        assert isinstance(source.endpoint, IngestEndpoint)
        routes[("POST", "/ingest")] = _ingest_route(source.endpoint, config.max_body_bytes)
        return source, ("/ingest",)

    def _build_otlp(
        self, config: OtlpSourceConfig, routes: dict[tuple[str, str], Route]
    ) -> tuple[Source, tuple[str, ...]]:
        """Own server on listen_host:listen_port, or `/v1/logs` + `/v1/traces` on the main server."""
        paths = (LOGS_PATH, TRACES_PATH)
        if config.listen_host is not None:
            base = f"http://{config.listen_host}:{config.listen_port}"
            own = OtlpReceiverSource(config, split_otlp_request)
            own.bind()  # a busy port is exit 2 now, not a thread dying after "serving"
            return own, tuple(base + path for path in paths)
        if any(("POST", path) in routes for path in paths):
            raise ConfigError(
                "only one otlp source can be mounted on the main server's /v1/logs and /v1/traces",
                field=f"sources.{config.name}.listen_host",
            )
        host = self.settings.sinks.prometheus.host
        source = OtlpReceiverSource(config, split_otlp_request, mounted_on_host=host)
        assert isinstance(source.endpoint, OtlpEndpoint)
        for path in paths:
            routes[("POST", path)] = _otlp_route(source.endpoint, config.max_body_bytes)
        return source, paths

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

        Push sources (http_push and otlp) drain first (new pushes get 503, accepted ones are
        classified, each within its `drain_timeout`), while every pipeline still runs; idempotent.
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

    def _metrics(self, request: Request) -> Response:
        """OpenMetrics with exemplars when the scraper asks for it, gzip when accepted."""
        assert self.prometheus is not None  # the route exists only with the sink
        body, headers = self.prometheus.scrape(
            request.headers.get("Accept"), request.headers.get("Accept-Encoding")
        )
        content_type = headers.pop("Content-Type")
        return Response(200, body, content_type, headers)

    def _landing(self, _request: Request) -> Response:
        body = render_landing(self.landing_view())
        return Response(200, body, "text/html; charset=utf-8", SECURITY_HEADERS)

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
                last_record, read_errors = stats.last_record_timestamp, stats.read_errors
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
                    models=self.samples.models(runner.source.name),
                    last_record_timestamp=last_record,
                    read_errors=read_errors,
                    unmatched=_unmatched(wired.patterns) if wired.type == "file_tail" else (),
                )
            )
        recent = self.samples.recent(limit=self.settings.web.recent_flagged)
        return LandingView(__version__, views, recent, samples_enabled=self.settings.web.samples_per_kind > 0)


def _unmatched(patterns: tuple[str, ...]) -> list[str]:
    """Include globs that match nothing now (the landing page warns: a typo reads nothing, silently)."""
    return [p for p in patterns if next(glob.iglob(os.path.expanduser(p), recursive=True), None) is None]
