"""The configuration reference (Markdown), generated from the settings models.

Why generated: the models are the one source of truth for keys, types, defaults and descriptions
(style.md §6); docs/configuration.md embeds this output between markers and tests/test_config.py
fails when it is stale. Regenerate with `degeneration-exporter check-config --print-reference`.
"""

from __future__ import annotations

import json
import types
from collections.abc import Iterator
from datetime import timedelta
from enum import Enum
from pathlib import Path
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel
from pydantic.fields import FieldInfo

from ..config import SOURCE_CONFIGS, Settings

__all__ = ["render_reference"]

ENV_PREFIX = "DEGENERATION_"


def render_reference() -> str:
    """Every option as a Markdown table per section: key, env var, type, default, description."""
    out: list[str] = []
    for name, field in Settings.model_fields.items():
        out.append(f"### `{name}`\n\n{field.description or ''}\n")
        if name == "sources":
            out.append("A list; each entry is one source. Env: `DEGENERATION_SOURCES` as a JSON list.\n")
            for type_name, source_model in SOURCE_CONFIGS.items():
                out.append(f"#### `type: {type_name}`\n\n{_first_line(source_model)}\n")
                out.extend(_table(_rows(source_model, "sources[].", env=False)))
            continue
        model = _model_of(field)
        if model is None:
            continue
        out.extend(_table(_rows(model, f"{name}.", env=True)))
    return "\n".join(out)


def _first_line(model: type[BaseModel]) -> str:
    return (model.__doc__ or "").strip().splitlines()[0]


def _model_of(field: FieldInfo) -> type[BaseModel] | None:
    annotation = field.annotation
    return annotation if isinstance(annotation, type) and issubclass(annotation, BaseModel) else None


def _rows(model: type[BaseModel], prefix: str, *, env: bool) -> Iterator[tuple[str, ...]]:
    defaults = _defaults(model)
    for name, field in model.model_fields.items():
        key = f"{prefix}{name}"
        nested = _model_of(field)
        if nested is not None:
            yield from _rows(nested, f"{key}.", env=env)
            continue
        env_name = f"`{ENV_PREFIX}{key.replace('.', '__').upper()}`" if env else "—"
        extra = field.json_schema_extra if isinstance(field.json_schema_extra, dict) else {}
        default = extra.get("default_doc") or _show(defaults.get(name))
        description = (field.description or "").replace("|", "\\|").replace("\n", " ")
        yield f"`{key}`", env_name, _type_name(field.annotation), str(default), description


def _defaults(model: type[BaseModel]) -> dict[str, Any]:
    try:
        return model().model_dump(mode="json")
    except ValueError:  # a model with required fields has no defaults row
        return {}


def _show(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, str) and value.startswith("P") and value[1:2] in "T0123456789":
        return f"`{value}`"
    return f"`{json.dumps(value, ensure_ascii=False)}`"


def _type_name(annotation: Any) -> str:
    origin = get_origin(annotation)
    args = get_args(annotation)
    if origin is Annotated:
        return _type_name(args[0])
    if origin is Literal:
        return " \\| ".join(f"`{a}`" for a in args)
    if origin in (Union, types.UnionType):
        return " or ".join("null" if a is type(None) else _type_name(a) for a in args)
    if origin in (tuple, list):
        return f"list of {_type_name(args[0])}" if args else "list"
    if origin is dict or (origin is not None and getattr(origin, "__name__", "") == "Mapping"):
        return f"map of {_type_name(args[1])}" if len(args) == 2 else "map"
    if annotation is timedelta:
        return "duration"
    if annotation is Path:
        return "path"
    if isinstance(annotation, type) and issubclass(annotation, Enum):
        return " \\| ".join(f"`{m.value}`" for m in annotation)
    return getattr(annotation, "__name__", str(annotation))


def _table(rows: Iterator[tuple[str, ...]]) -> list[str]:
    lines = ["| key | env var | type | default | description |", "|---|---|---|---|---|"]
    lines.extend("| " + " | ".join(row) + " |" for row in rows)
    lines.append("")
    return lines
