"""`web:` settings: the optional exporter-toolkit web config file and landing-page options.

The listen address is `sinks.prometheus.listen` (the port Prometheus scrapes); this section only
says how that server is secured and what the landing page may show.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, Field

__all__ = ["WebConfig"]


class WebConfig(BaseModel, frozen=True, extra="forbid"):
    config_file: Path | None = Field(
        None,
        description="exporter-toolkit web config (tls_server_config, basic_auth_users) applied to every "
        "endpoint except /healthz; same as --web-config.",
    )
    landing_show_text: bool = Field(
        False,
        description="Show evidence snippets of flagged responses on the landing page (may be user text).",
    )
    recent_flagged: int = Field(
        20, ge=0, description="How many recently flagged responses the landing page lists."
    )
