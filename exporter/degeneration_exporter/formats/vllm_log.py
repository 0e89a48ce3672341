"""vLLM request/output log lines (`vllm_log`): `Generated response <id>: output: '<repr>', ...`.

Why its own format: `--enable-log-outputs` (vLLM 0.10+) is the only place a plain vLLM server
writes what it generated (formats.md, vLLM request/output logging). Lines are text, not JSON: the
pipeline passes each as `{"message": line}`; a JSON log shipper's `{"log": line}` works too.
Writer: `RequestLogger` (vllm/entrypoints/serve/utils/request_logger.py @029f1bfda877) and its
callers in vllm/entrypoints/openai/chat_completion/serving.py @5e918640d7b6.

- Non-streaming: `Generated response <id>: output: '<repr>'[, output_token_ids: [...]], finish_reason: X`
  -> one Record. Output token ids are listed by older builds at INFO; current builds log them
  at DEBUG on a line of their own, just before: `Generated response <id> details:
  output_token_ids: [...]`, which is joined to the response that follows (never malformed).
- Streaming: `Generated response <id> (streaming delta): ...` -> one `Delta` per line; only the last
  delta carries the real finish reason. `(streaming complete)` carries the whole text (or
  `<streaming_complete: N tokens>`) -> a `whole_text` Delta that ends the stream.
- A streamed delta joins content, `[reasoning: ...]` and `[tool_calls: ...]` with a space; they
  are split back into channels (tool-call arguments are not text).
- The token route (`/generate`) logs `output: ''` with the ids on the DEBUG line: an empty text
  with its token ids and count.
- `Received request <id>: params: SamplingParams(..., max_tokens=N, ...)` (INFO) gives the budget,
  and `Request <id> JSON body: {...}` (DEBUG, the client's `request_id`, which the response id
  carries after `chatcmpl-`/`cmpl-`) the model name; both are joined to the response.
- Every other line (engine stats, startup) yields nothing: it is not a response.

Joining needs the lines in order, so it happens in the per-reader parser (`VllmLogJoiner`,
`FormatSpec.joining`); what it remembers is bounded (`MAX_PENDING` requests, oldest dropped).

Known gaps: `--max-log-len N` cuts text and ids to their first N, so long loops are seen only in
their first N chars and `output_tokens` undercounts.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Final

import orjson

from ..errors import MissingField
from ..record import Delta, Record, parse_finish_reason
from ._fields import is_int_list

__all__ = ["MAX_PENDING", "VllmLogJoiner", "is_vllm_log", "parse_vllm_log"]

MAX_PENDING: Final = 4096
"""Requests whose request line or DEBUG ids wait for their response line (oldest dropped)."""

_HEADER = re.compile(
    r"(?:\(\w+ pid=\d+\) )?(?:DEBUG|INFO|WARNING|ERROR|CRITICAL) \d\d-\d\d \d\d:\d\d:\d\d \["
)
_HEAD = re.compile(r"Generated response (?P<id>\S+?)(?: \(streaming (?P<mode>delta|complete)\))?: output: ")
_DETAILS = re.compile(
    r"Generated response (?P<id>\S+?)(?: \(streaming (?P<mode>delta|complete)\))? details: output_token_ids: "
)
_RECEIVED = re.compile(r"Received request (?P<id>\S+?): ")
_MAX_TOKENS = re.compile(r"[(, ]max_tokens=(\d+)")
_JSON_BODY = re.compile(r"Request (?P<id>\S+) JSON body: ")
_UNTRACKED = re.compile(r"<streaming_complete: (\d+) tokens>")
_WORD = re.compile(r"\w+")
_FINISH = ", finish_reason: "
_IDS = ", output_token_ids: "
_PARAMS = "params: SamplingParams("
_ID_PREFIXES = ("chatcmpl-", "cmpl-")


def _line(obj: Mapping[str, Any]) -> str | None:
    text = obj.get("message", obj.get("log"))
    return text if isinstance(text, str) else None


def is_vllm_log(obj: Mapping[str, Any]) -> bool:
    """A vLLM logger header (`INFO 11-07 04:35:27 [logger.py:47] ...`, optionally `(APIServer pid=N) `)."""
    text = _line(obj)
    return text is not None and _HEADER.match(text) is not None


@dataclass(slots=True)
class _Request:
    """What the request lines said about one request, until its response line comes."""

    model: str | None = None
    max_tokens: int | None = None


class VllmLogJoiner:
    """A stateful `ParseFn` for one reader: joins request lines and DEBUG ids to their response.

    Why a class: the facts of one response sit on up to four lines (request params, request
    body, DEBUG ids, output), in that order; each reader needs its own memory of them.
    """

    def __init__(self, max_pending: int = MAX_PENDING) -> None:
        self._max = max_pending
        self._requests: OrderedDict[str, _Request] = OrderedDict()
        self._ids: OrderedDict[tuple[str, str | None], list[int] | None] = OrderedDict()

    def __call__(self, obj: Mapping[str, Any]) -> Iterator[Record | Delta]:
        """Yield a Record (non-streaming) or a Delta (streaming) for output lines, else nothing."""
        text = _line(obj)
        if text is None:
            raise MissingField("message")
        at = text.find("Generated response ")
        if at != -1:
            details = _DETAILS.match(text, at)
            if details is not None:
                ids = _token_ids(text[details.end() :].rstrip())
                self._remember(self._ids, (details["id"], details["mode"]), ids)
                return iter(())
            return self._output(text, at)
        self._request_line(text)
        return iter(())

    def _remember(self, table: OrderedDict[Any, Any], key: Any, value: Any) -> None:
        table[key] = value
        table.move_to_end(key)
        if len(table) > self._max:
            table.popitem(last=False)

    def _request_line(self, text: str) -> None:
        received = _RECEIVED.search(text)
        if received is not None:
            params = text.rfind(_PARAMS, received.end())
            found = _MAX_TOKENS.search(text, params) if params != -1 else None
            if found is not None:
                self._request(received["id"]).max_tokens = int(found[1])
            return
        body = _JSON_BODY.search(text)
        if body is not None:
            try:
                request = orjson.loads(text[body.end() :])
            except orjson.JSONDecodeError:
                return  # cut by --max-log-len: nothing to join
            if isinstance(request, dict):
                facts = self._request(body["id"])
                model, budget = request.get("model"), request.get("max_completion_tokens")
                budget = budget if isinstance(budget, int) else request.get("max_tokens")
                facts.model = model if isinstance(model, str) else facts.model
                if isinstance(budget, int) and not isinstance(budget, bool):
                    facts.max_tokens = budget

    def _request(self, request_id: str) -> _Request:
        facts = self._requests.get(request_id)
        if facts is None:
            facts = _Request()
            self._remember(self._requests, request_id, facts)
        return facts

    def _take_request(self, response_id: str) -> _Request:
        """The joined facts: the response id's own, then the client id's (`chatcmpl-<client id>`)."""
        facts = self._requests.pop(response_id, None) or _Request()
        for prefix in _ID_PREFIXES:
            if response_id.startswith(prefix):
                body = self._requests.pop(response_id[len(prefix) :], None)
                if body is not None:
                    facts.model = facts.model or body.model
                    facts.max_tokens = facts.max_tokens or body.max_tokens
        return facts

    def _output(self, text: str, at: int) -> Iterator[Record | Delta]:
        head = _HEAD.match(text, at)
        cut = text.rfind(_FINISH)
        finish_m = _WORD.match(text, cut + len(_FINISH)) if cut != -1 else None
        if head is None or finish_m is None or cut < head.end():
            raise MissingField(
                "output", "vLLM 'Generated response' line without a parsable output/finish_reason"
            )
        request_id, mode = head["id"], head["mode"]
        body = text[head.end() : cut]  # the output repr, then optionally the token ids
        raw_ids = None
        ids_at = body.rfind(_IDS) if body.endswith(("]", "None")) else -1
        if ids_at != -1 and body[ids_at - 1 : ids_at] in ("'", '"', ">"):
            body, raw_ids = body[:ids_at], body[ids_at + len(_IDS) :]
        ids = _token_ids(raw_ids)
        debug_ids = self._ids.pop((request_id, mode), None)
        ids = ids if ids is not None else debug_ids
        untracked = _UNTRACKED.fullmatch(body)
        if untracked is not None:
            yield Delta(request_id=request_id, token_count=int(untracked[1]), whole_text=True)
            return
        output = _unrepr(body)
        token_count = len(ids) if ids is not None else None
        finish_word = finish_m[0]
        if mode == "complete":
            yield Delta(request_id=request_id, content=output, whole_text=True, token_count=token_count)
            return
        facts = self._take_request(request_id)
        content, reasoning = _split_channels(output)
        if mode is None:
            yield Record(
                text=content,
                reasoning=reasoning,
                finish_reason=parse_finish_reason(finish_word),
                model=facts.model,
                token_ids=ids,
                output_tokens=token_count,
                max_tokens=facts.max_tokens,
                identity={"request_id": request_id},
            )
            return
        if facts.model is not None or facts.max_tokens is not None:
            self._remember(self._requests, request_id, facts)  # every delta of the stream may carry them
        yield Delta(
            request_id=request_id,
            content=content,
            reasoning=reasoning,
            finish_reason=None if finish_word == "None" else parse_finish_reason(finish_word),
            token_count=token_count,
            model=facts.model,
            max_tokens=facts.max_tokens,
        )


def parse_vllm_log(obj: Mapping[str, Any]) -> Iterator[Record | Delta]:
    """The one-line form: a line read alone, with nothing joined from earlier lines."""
    return VllmLogJoiner(max_pending=1)(obj)


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
    """(content, reasoning) of a logged output.

    A streamed delta is `" ".join` of the content, `[reasoning: ...]` and `[tool_calls: ...]`
    parts, in that order, each present only when non-empty (serving.py @5e918640d7b6); tool-call
    arguments are not text. A non-streamed output is the content (or a tool-call summary) alone.
    """
    if output.endswith("]"):
        tools = output.rfind("[tool_calls: ")
        if tools == 0 or (tools > 0 and output[tools - 1] == " "):
            output = output[: max(tools - 1, 0)]
    reasoning = ""
    if output.endswith("]"):
        start = output.find("[reasoning: ")
        if start == 0 or (start > 0 and output[start - 1] == " "):
            reasoning = output[start + len("[reasoning: ") : -1]
            output = output[: max(start - 1, 0)]
    return output, reasoning
