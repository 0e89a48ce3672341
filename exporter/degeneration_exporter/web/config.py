"""`web:` settings: the optional exporter-toolkit web config file, the landing page and the samples store.

The listen address is `sinks.prometheus.listen` (the port Prometheus scrapes); this section only
says how that server is secured and what the landing and /samples pages may keep and show.
Response text is off by default: prompts and replies can hold user data (docs/security.md).
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
    retain_text: bool = Field(
        False,
        description="Keep the text of flagged responses in the samples store and show it on /samples "
        "(may be user data); off, the pages show the evidence (offsets, unit, counts) without text.",
    )
    sample_text_chars: int = Field(
        32768,
        ge=1,
        description="With retain_text, keep at most this many characters per channel of each stored sample.",
    )
    samples_per_kind: int = Field(
        50,
        ge=0,
        description="How many recently flagged responses /samples keeps per source and kind (0 = none).",
    )
    recent_flagged: int = Field(
        20, ge=0, description="How many recently flagged responses the landing page lists."
    )
