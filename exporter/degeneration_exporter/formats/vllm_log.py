"""vLLM request/output log lines (`vllm_log`): `Generated response <id>: output: '<repr>', ...`.

Why its own format: `--enable-log-outputs` (vLLM 0.10+) is the only place a plain vLLM server
writes what it generated (formats.md, vLLM request/output logging). Lines are text, not JSON: the
pipeline passes each as `{"message": line}`; a JSON log shipper's `{"log": line}` works too.

- Non-streaming: `Generated response <id>: output: '<repr>'[, output_token_ids: [...]], finish_reason: X`
  -> one Record. Output token ids are listed by older builds at INFO (newer: DEBUG only).
- Streaming: `Generated response <id> (streaming delta): ...` -> one `Delta` per line; only the last
  delta carries the real finish reason. `(streaming complete)` carries the whole text (or
  `<streaming_complete: N tokens>`) -> a `whole_text` Delta that ends the stream.
- A delta logged as `[reasoning: ...]` is reasoning; `[tool_calls: ...]` summaries are not text.
- Every other line (`Received request`, engine stats, startup) yields nothing: it is not a response.

Known gaps: `--max-log-len N` cuts text and ids to their first N, so long loops are seen only in
their first N chars and `output_tokens` undercounts; the request's `max_tokens` sits on a different
line (`Received request`), so it is not joined in.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

import orjson

from ..errors import MissingField
from ..record import Delta, Record, parse_finish_reason
from ._fields import is_int_list

__all__ = ["is_vllm_log", "parse_vllm_log"]

_HEADER = re.compile(
    r"(?:\(\w+ pid=\d+\) )?(?:DEBUG|INFO|WARNING|ERROR|CRITICAL) \d\d-\d\d \d\d:\d\d:\d\d \["
)
_HEAD = re.compile(r"Generated response (?P<id>\S+?)(?: \(streaming (?P<mode>delta|complete)\))?: output: ")
_UNTRACKED = re.compile(r"<streaming_complete: (\d+) tokens>")
_WORD = re.compile(r"\w+")
_FINISH = ", finish_reason: "
_IDS = ", output_token_ids: "
_REASONING = re.compile(r"\[reasoning: (.*)\]", re.S)


def _line(obj: Mapping[str, Any]) -> str | None:
    text = obj.get("message", obj.get("log"))
    return text if isinstance(text, str) else None


def is_vllm_log(obj: Mapping[str, Any]) -> bool:
    """A vLLM logger header (`INFO 11-07 04:35:27 [logger.py:47] ...`, optionally `(APIServer pid=N) `)."""
    text = _line(obj)
    return text is not None and _HEADER.match(text) is not None


def parse_vllm_log(obj: Mapping[str, Any]) -> Iterator[Record | Delta]:
    """Yield a Record (non-streaming) or a Delta (streaming) for `Generated response` lines, else nothing."""
    text = _line(obj)
    if text is None:
        raise MissingField("message")
    if "Generated response " not in text:
        return
    head = _HEAD.match(text, text.find("Generated response "))
    cut = text.rfind(_FINISH)
    finish_m = _WORD.match(text, cut + len(_FINISH)) if cut != -1 else None
    if head is None or finish_m is None or cut < head.end():
        raise MissingField("output", "vLLM 'Generated response' line without a parsable output/finish_reason")
    request_id = head["id"]
    body = text[head.end() : cut]  # the output repr, then optionally the token ids
    raw_ids = None
    ids_at = body.rfind(_IDS) if body.endswith(("]", "None")) else -1
    if ids_at != -1 and body[ids_at - 1 : ids_at] in ("'", '"', ">"):
        body, raw_ids = body[:ids_at], body[ids_at + len(_IDS) :]
    untracked = _UNTRACKED.fullmatch(body)
    if untracked is not None:
        yield Delta(request_id=request_id, token_count=int(untracked[1]), whole_text=True)
        return
    output = _unrepr(body)
    ids = _token_ids(raw_ids)
    token_count = len(ids) if ids is not None else None
    finish_word = finish_m[0]
    if head["mode"] is None:
        content, reasoning = _split_channels(output)
        yield Record(
            text=content,
            reasoning=reasoning,
            finish_reason=parse_finish_reason(finish_word),
            token_ids=ids,
            output_tokens=token_count,
            identity={"request_id": request_id},
        )
    elif head["mode"] == "complete":
        yield Delta(request_id=request_id, content=output, whole_text=True, token_count=token_count)
    else:
        content, reasoning = _split_channels(output)
        finish = None if finish_word == "None" else parse_finish_reason(finish_word)
        yield Delta(
            request_id=request_id,
            content=content,
            reasoning=reasoning,
            finish_reason=finish,
            token_count=token_count,
        )


def _unrepr(literal: str) -> str:
    """Decode a Python `repr` of a str at C speed (`ast.literal_eval` is several times slower).

    repr only escapes backslashes, its own quote and non-printable characters, so text without a
    backslash is the repr's inside as is; otherwise `unicode_escape` undoes every escape repr makes
    (printable non-ASCII is first turned into escapes so it survives the latin-1 round trip).
    """
    quote = literal[:1]
    if len(literal) < 2 or quote not in ("'", '"') or literal[-1] != quote:
        raise MissingField("output", "vLLM output is not a Python string literal")
    inner = literal[1:-1]
    if "\\" not in inner:
        return inner
    try:
        return inner.encode("latin-1", "backslashreplace").decode("unicode_escape")
    except UnicodeDecodeError as exc:
        raise MissingField("output", "vLLM output is not a Python string literal") from exc


def _token_ids(raw: str | None) -> list[int] | None:
    if raw is None or raw == "None":
        return None
    try:
        ids = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise MissingField("output_token_ids", "vLLM output_token_ids is not a list of integers") from exc
    return ids if is_int_list(ids) else None


def _split_channels(output: str) -> tuple[str, str]:
    """(content, reasoning): vLLM logs reasoning as `[reasoning: ...]`, tool calls as `[tool_calls: ...]`."""
    if output.startswith("[reasoning: "):
        m = _REASONING.fullmatch(output)
        if m is not None:
            return "", m[1]
    if output.startswith("[tool_calls: ") and output.endswith("]"):
        return "", ""
    return output, ""
