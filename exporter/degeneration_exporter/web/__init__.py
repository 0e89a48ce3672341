"""The daemon's HTTP side: one server, exporter-toolkit web config, landing page."""

from __future__ import annotations

from .basic_auth import BasicAuth
from .config import WebConfig
from .landing import FlaggedSample, LandingView, SourceView, render_landing
from .server import OPEN_PATHS, GuardedRoute, Request, Response, Route, WebServer
from .toolkit_config import TlsServerConfig, WebConfigFile, build_ssl_context, load_web_config

__all__ = [
    "OPEN_PATHS",
    "BasicAuth",
    "FlaggedSample",
    "GuardedRoute",
    "LandingView",
    "Request",
    "Response",
    "Route",
    "SourceView",
    "TlsServerConfig",
    "WebConfig",
    "WebConfigFile",
    "WebServer",
    "build_ssl_context",
    "load_web_config",
    "render_landing",
]
