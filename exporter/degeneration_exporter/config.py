"""Root `Settings`: assembles the component config models into the one config the daemon reads.

Why only assembly: each component's options live beside its code (`FileTailConfig` in
`sources/file_tail/`, detector params in each detector, `PrometheusSinkConfig` in
`sinks/prometheus.py`), so a new detector or sink never edits this file (style.md §6).

Where values come from, highest first (ecosystem.md §7.3):
1. command-line flags (`run --listen`, `--positions-file`, `--web-config`, `--format-in`, paths);
2. environment variables `DEGENERATION_<SECTION>__<FIELD>` (nested with `__`, e.g.
   `DEGENERATION_SINKS__PROMETHEUS__LISTEN=127.0.0.1:9464`; lists as JSON);
3. the YAML file (`--config FILE`, else `/etc/degeneration-exporter/config.yaml` when it exists);
4. the defaults below.
Mappings merge key by key across layers; lists (such as `sources`) are replaced whole.
Label caps live with the sinks that apply them (`sinks.prometheus.limits`, `sinks.otlp.limits`),
line-size and queue bounds with each source (`sources[].max_line_bytes`, `queue_max_lines`).
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, get_args

from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    ValidationError,
    create_model,
    field_validator,
    model_validator,
)
from pydantic.fields import FieldInfo
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    SettingsError,
    YamlConfigSettingsSource,
)

from .classification.classify import ClassifierConfig
from .detectors import DETECTORS
from .errors import ConfigError
from .pipeline_options import AUTO_FORMAT, PipelineOptions
from .sinks.otlp import OtlpSinkConfig
from .sinks.prometheus import PrometheusSinkConfig
from .sources.file_tail import FileTailConfig
from .sources.http_push import HttpPushConfig, require_token_off_loopback
from .sources.otlp_receiver import OtlpReceiverConfig
from .sources.stdin import StdinConfig
from .web.config import WebConfig

__all__ = [
    "AUTO_FORMAT",
    "DEFAULT_CONFIG_FILE",
    "SOURCE_CONFIGS",
    "DetectorsConfig",
    "FileTailSourceConfig",
    "HttpPushSourceConfig",
    "OtlpSourceConfig",
    "PipelineOptions",
    "Settings",
    "SinksConfig",
    "SourceConfig",
    "StateConfig",
    "StdinSourceConfig",
    "load_settings",
]

DEFAULT_CONFIG_FILE = Path("/etc/degeneration-exporter/config.yaml")
ENV_PREFIX = "DEGENERATION_"

log = logging.getLogger(__name__)

_FROZEN = ConfigDict(frozen=True, extra="forbid")


class FileTailSourceConfig(FileTailConfig, PipelineOptions):
    """`sources[] type: file_tail` (the default type): FileTailConfig plus the pipeline options."""


def _source_type(value: Any) -> str:
    if isinstance(value, Mapping):
        return str(value.get("type", "file_tail"))
    return str(getattr(value, "type", "file_tail"))


class StdinSourceConfig(StdinConfig, PipelineOptions):
    """`sources[] type: stdin`: JSONL piped into the daemon (`run -`), plus the pipeline options."""


class HttpPushSourceConfig(HttpPushConfig, PipelineOptions):
    """`sources[] type: http_push`: `POST /ingest`, plus the pipeline options."""


OTLP_FORMAT = "otlp_json"


class OtlpSourceConfig(OtlpReceiverConfig, PipelineOptions):
    """`sources[] type: otlp`: OTLP/HTTP `/v1/logs` and `/v1/traces` (docs/otlp.md), always `otlp_json`."""

    format: str = Field(
        OTLP_FORMAT, description="Always `otlp_json`: the receiver queues each completion as one such line."
    )

    @field_validator("format")
    @classmethod
    def _only_otlp_json(cls, value: str) -> str:
        if value != OTLP_FORMAT:
            raise ValueError(f"an otlp source reads format {OTLP_FORMAT!r} only")
        return value


SOURCE_CONFIGS: dict[str, type[BaseModel]] = {
    "file_tail": FileTailSourceConfig,
    "stdin": StdinSourceConfig,
    "http_push": HttpPushSourceConfig,
    "otlp": OtlpSourceConfig,
}

SourceConfig = Annotated[
    Annotated[FileTailSourceConfig, Tag("file_tail")]
    | Annotated[StdinSourceConfig, Tag("stdin")]
    | Annotated[HttpPushSourceConfig, Tag("http_push")]
    | Annotated[OtlpSourceConfig, Tag("otlp")],
    Discriminator(_source_type),
]


def _default_state_directory() -> Path:
    state_home = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(state_home) / "degeneration-exporter"


class StateConfig(BaseModel):
    """Where read positions are kept between runs (at-least-once, ecosystem.md §7.5.7)."""

    model_config = _FROZEN

    directory: Path = Field(
        default_factory=_default_state_directory,
        description="Positions of file_tail source NAME go to DIRECTORY/positions-NAME.json unless the "
        "source sets positions_file.",
        json_schema_extra={"default_doc": "`$XDG_STATE_HOME/degeneration-exporter` (`~/.local/state/...`)"},
    )

    @field_validator("directory")
    @classmethod
    def _not_a_file(cls, value: Path) -> Path:
        if value.exists() and not value.is_dir():
            raise ValueError(f"{value} exists and is not a directory")
        return value

    def positions_file_for(self, source_name: str) -> Path:
        """The positions file a file_tail source uses when it names none itself."""
        safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in source_name)
        return self.directory / f"positions-{safe}.json"


class SinksConfig(BaseModel):
    """Where classifications go (`sinks:`, the folder word; ecosystem.md §7.3 says `exporters:`)."""

    model_config = _FROZEN

    prometheus: PrometheusSinkConfig = Field(
        default_factory=PrometheusSinkConfig, description="The /metrics endpoint and its listen address."
    )
    otlp: OtlpSinkConfig = Field(default_factory=OtlpSinkConfig, description="OTLP/HTTP metrics push.")


def _build_detectors_config() -> type[BaseModel]:
    """One optional section per DETECTORS entry, typed by its params model (no edit here per detector)."""
    fields: dict[str, Any] = {
        name: (spec.params_model, Field(default_factory=spec.params_model, description=spec.summary))
        for name, spec in DETECTORS.items()
    }
    return create_model("DetectorsConfig", __config__=_FROZEN, __doc__="Per-detector parameters.", **fields)


if TYPE_CHECKING:  # the fields exist only at run time, one per DETECTORS entry
    DetectorsConfig = BaseModel
else:
    DetectorsConfig = _build_detectors_config()

_yaml_file: ContextVar[Path | None] = ContextVar("degeneration_yaml_file", default=None)


class Settings(BaseSettings):
    """The whole daemon configuration (`check-config --print-effective` prints it)."""

    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX,
        env_nested_delimiter="__",
        frozen=True,
        extra="forbid",
        nested_model_default_partial_update=True,
    )

    sources: list[SourceConfig] = Field(
        default_factory=list, description="Inputs, each with a unique `name` (the `source` label)."
    )
    detectors: DetectorsConfig = Field(
        default_factory=DetectorsConfig, description="Parameters of every detector, by detector name."
    )
    classify: ClassifierConfig = Field(
        default_factory=ClassifierConfig, description="Which detectors make up each verdict."
    )
    sinks: SinksConfig = Field(default_factory=SinksConfig, description="Prometheus and OTLP outputs.")
    state: StateConfig = Field(default_factory=StateConfig, description="Positions persistence.")
    web: WebConfig = Field(default_factory=WebConfig, description="Web server security and landing page.")

    @model_validator(mode="after")
    def _push_sources_need_a_token_off_loopback(self) -> Settings:
        for source in self.sources:
            if isinstance(source, HttpPushConfig):
                mounted = self.sinks.prometheus.host if source.listen_host is None else None
                require_token_off_loopback(source, mounted)
        return self

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        # `yaml_file` in model_config alone is ignored; the YAML source must be listed here (tooling.md).
        yaml_path = _yaml_file.get()
        env = _ScalarEnvSource(settings_cls, env_settings)
        layers: list[PydanticBaseSettingsSource] = [init_settings, env]
        if yaml_path is not None:
            layers.append(YamlConfigSettingsSource(settings_cls, yaml_file=yaml_path))
        return tuple(layers)


class _ScalarEnvSource(PydanticBaseSettingsSource):
    """The env source, with strings bound for int/float/bool fields JSON-decoded, durations as seconds.

    Why: env values are strings, and strict numeric params (`window_size: int = Field(strict=True)`)
    refuse `"2500"`; decoding only where the target field is numeric or boolean keeps string fields
    (names, paths) exactly as written.
    """

    def __init__(self, settings_cls: type[BaseSettings], inner: PydanticBaseSettingsSource) -> None:
        super().__init__(settings_cls)
        self._inner = inner

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        return self._inner.get_field_value(field, field_name)

    def __call__(self) -> dict[str, Any]:
        return _decode_scalars(self._inner(), self.settings_cls)


_SCALARS = (int, float, bool)


def _decode_scalars(values: dict[str, Any], model: type[BaseModel]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in values.items():
        field = model.model_fields.get(key)
        if field is None:
            out[key] = value
            continue
        annotation = field.annotation
        options = [arg for arg in (get_args(annotation) or (annotation,)) if arg is not type(None)]
        nested = next((t for t in options if isinstance(t, type) and issubclass(t, BaseModel)), None)
        if isinstance(value, dict) and nested is not None:
            out[key] = _decode_scalars(value, nested)
        elif isinstance(value, str) and options and all(t in _SCALARS for t in options):
            try:
                out[key] = json.loads(value.lower() if bool in options else value)
            except ValueError:
                out[key] = value  # let validation name the field
        elif isinstance(value, str) and timedelta in options:
            out[key] = _seconds_or_text(value)
        else:
            out[key] = value
    return out


def _seconds_or_text(value: str) -> float | str:
    """A duration from env: `5` or `0.5` is seconds, as in YAML (pydantic reads a string only as ISO 8601)."""
    try:
        return float(value)
    except ValueError:
        return value  # ISO 8601 (`PT5S`), or let validation name the field


@contextmanager
def _reading_yaml(path: Path | None) -> Iterator[None]:
    token = _yaml_file.set(path)
    try:
        yield
    finally:
        _yaml_file.reset(token)


def load_settings(config_file: Path | None = None, overrides: Mapping[str, Any] | None = None) -> Settings:
    """Merge flags (`overrides`, a nested dict), env, YAML and defaults; ConfigError names the field.

    With `config_file` None, `/etc/degeneration-exporter/config.yaml` is read when it exists.
    """
    if config_file is None and DEFAULT_CONFIG_FILE.is_file():
        config_file = DEFAULT_CONFIG_FILE
    if config_file is not None:
        _check_yaml_file(config_file)
    for name in unknown_env_variables(os.environ):
        log.warning("ignoring environment variable %s: no such setting (docs/configuration.md)", name)
    try:
        with _reading_yaml(config_file):
            settings = Settings(**dict(overrides or {}))
    except ValidationError as exc:
        raise _config_error(exc) from exc
    except SettingsError as exc:  # a DEGENERATION_* list or mapping that is not JSON
        raise _env_error(exc) from exc
    _check_unique_source_names(settings)
    return settings


def unknown_env_variables(environ: Mapping[str, str]) -> list[str]:
    """`DEGENERATION_*` names that set nothing (a typo is otherwise ignored silently).

    Walks `SECTION__FIELD__...` through the models; below a field that is not a model (a mapping,
    a list given as JSON) anything goes. Names are compared case-insensitively, as pydantic does.
    """
    unknown = []
    for name in sorted(environ):
        if not name.upper().startswith(ENV_PREFIX):
            continue
        model: type[BaseModel] | None = Settings
        for part in name[len(ENV_PREFIX) :].lower().split("__"):
            if model is None:
                break
            fields = {key.lower(): info for key, info in model.model_fields.items()}
            info = fields.get(part)
            if info is None:
                unknown.append(name)
                break
            options = get_args(info.annotation) or (info.annotation,)
            model = next((t for t in options if isinstance(t, type) and issubclass(t, BaseModel)), None)
    return unknown


def _env_error(exc: SettingsError) -> ConfigError:
    """`error parsing value for field "sources" from source ...` -> `DEGENERATION_SOURCES: ...`."""
    text = str(exc)
    field = text.split('field "', 1)[1].split('"', 1)[0] if 'field "' in text else ""
    variable = f"{ENV_PREFIX}{field.upper()}" if field else f"{ENV_PREFIX}*"
    return ConfigError(f"{variable}: not valid JSON ({text})", field=variable)


def check_state_paths(settings: Settings) -> None:
    """Raise ConfigError unless every file_tail source can create and lock its positions file.

    Why apart from the models: it depends on the machine, not the text (the default
    `~/.local/state` of a `nobody` user with no home is unwritable). `run` and `check-config`
    both call it, so `check-config` refuses what `run` would.
    """
    for source in settings.sources:
        if not isinstance(source, FileTailSourceConfig):
            continue
        if source.positions_file is None:
            field, folder = "state.directory", settings.state.directory
        else:
            field, folder = f"sources.{source.name}.positions_file", source.positions_file.parent
        existing = folder
        while not existing.exists() and existing != existing.parent:
            existing = existing.parent
        if not existing.is_dir():
            raise ConfigError(f"{field}: {existing} is not a directory", field=field)
        if not os.access(existing, os.W_OK | os.X_OK):
            what = "" if existing == folder else f" (to create {folder})"
            raise ConfigError(f"{field}: {existing} is not writable{what}", field=field)


def _check_yaml_file(path: Path) -> None:
    import yaml

    try:
        loaded = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"cannot read config file {path}: {exc.strerror}", field="--config") from exc
    except yaml.YAMLError as exc:
        raise ConfigError(f"config file {path} is not valid YAML: {exc}", field="--config") from exc
    if loaded is not None and not isinstance(loaded, dict):
        raise ConfigError(f"config file {path} must hold a mapping at the top level", field="--config")


def _check_unique_source_names(settings: Settings) -> None:
    seen: set[str] = set()
    for index, source in enumerate(settings.sources):
        if source.name in seen:
            raise ConfigError(
                f"sources.{index}.name: duplicate source name {source.name!r}", field=f"sources.{index}.name"
            )
        seen.add(source.name)


def _config_error(exc: ValidationError) -> ConfigError:
    """The first error as `dotted.field: message`; the union tag pydantic inserts is dropped."""
    error = exc.errors()[0]
    loc = list(error["loc"])
    if len(loc) > 2 and loc[0] == "sources" and isinstance(loc[1], int) and loc[2] in SOURCE_CONFIGS:
        del loc[2]
    dotted = ".".join(str(part) for part in loc) or "(root)"
    more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
    return ConfigError(f"{dotted}: {error['msg']}{more}", field=dotted)
