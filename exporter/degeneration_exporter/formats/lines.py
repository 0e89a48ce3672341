"""`LineParser`: one raw line (bytes) -> Records and Deltas, for a named or detected format.

Why here: JSON is decoded once per line (orjson) and foreign errors are translated where they
enter (style.md §8): a bad line becomes `InvalidJson`/`EncodingError`, a line no format claims
becomes `UnknownFormat`, and the caller counts it by `reason` and moves on. Text-line formats
(`vllm_log`) receive non-JSON lines as `{"message": line}`.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from typing import Any

import orjson

from ..errors import ConfigError, EncodingError, InvalidJson, UnknownFormat
from ..record import Delta, Record
from . import FORMATS, FormatSpec, ParseFn, detect_format
from .custom import CustomFormatOptions, parse_custom

__all__ = ["LineParser", "decode_line"]


def decode_line(data: bytes, *, text_lines: bool = False) -> Mapping[str, Any]:
    """A JSON object, or `{"message": line}` for text-line formats; else InvalidJson / EncodingError."""
    try:
        obj = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        text = _utf8(data)
        if text_lines:
            return {"message": text}
        raise InvalidJson(f"not JSON: {exc}") from exc
    if isinstance(obj, dict):
        return obj
    if text_lines:
        return {"message": _utf8(data)}
    raise InvalidJson(f"JSON {type(obj).__name__}, not an object")


def _utf8(data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise EncodingError(f"invalid UTF-8 at byte {exc.start}") from exc


class LineParser:
    """Parses lines of one format; with `format_name=None` the format is detected from the first
    record that some format claims (earlier lines raise `UnknownFormat` and are counted).

    `parse` returns Records only and counts streamed chunks in `deltas_skipped` (for one-shot
    `scan`); the daemon uses `parse_items` and hands Deltas to the `StreamAssembler`.
    """

    def __init__(self, format_name: str | None = None, options: CustomFormatOptions | None = None) -> None:
        if format_name is not None and format_name not in FORMATS:
            raise ConfigError(
                f"unknown input format {format_name!r}; known: {', '.join(FORMATS)}", field="format"
            )
        if options is not None and format_name != "custom":
            raise ConfigError("fields apply only to format 'custom'", field="fields")
        self._spec: FormatSpec | None = None
        self._parse: ParseFn | None = None
        self.deltas_skipped = 0
        if format_name is not None:
            self._select(FORMATS[format_name], options)

    @property
    def format_name(self) -> str | None:
        """The configured or detected format; None until detection succeeded."""
        return self._spec.name if self._spec else None

    def _select(self, spec: FormatSpec, options: CustomFormatOptions | None = None) -> None:
        self._spec = spec
        if options is not None:
            self._parse = partial(parse_custom, options=options)
        else:
            self._parse = spec.joining() if spec.joining is not None else spec.parse

    def parse_items(self, data: bytes) -> list[Record | Delta]:
        """Records and Deltas of one line (blank lines: none). Raises a RecordError subclass."""
        if not data or data.isspace():
            return []
        parse = self._parse
        if self._spec is None or parse is None:
            obj = self._detect(data)
            parse = self._parse
            assert parse is not None
        else:
            try:  # the common case, a JSON object, without `decode_line`'s call (it handles the rest)
                loaded: Any = orjson.loads(data)
            except orjson.JSONDecodeError:
                loaded = None
            obj = loaded if type(loaded) is dict else decode_line(data, text_lines=self._spec.text_lines)
        return list(parse(obj))

    def _detect(self, data: bytes) -> Mapping[str, Any]:
        """Decode and pick the format from this line; a non-JSON line that no text format claims
        stays `InvalidJson` (a broken first JSONL line is not an unknown format)."""
        try:
            obj = decode_line(data)
        except InvalidJson as not_json:
            obj = decode_line(data, text_lines=True)
            try:
                name = detect_format([obj])
            except UnknownFormat:
                raise not_json from None
        else:
            name = detect_format([obj])
        self._select(FORMATS[name])
        return obj

    def parse(self, data: bytes) -> list[Record]:
        """Records of one line; streamed chunks are counted in `deltas_skipped`, not returned."""
        out: list[Record] = []
        for item in self.parse_items(data):
            if isinstance(item, Delta):
                self.deltas_skipped += 1
            else:
                out.append(item)
        return out
