"""vLLM offline outputs (`vllm_request_output`): `LLM.generate()` `RequestOutput`s dumped as JSON.

Why its own format: offline batch users write what `LLM.generate` returns with `json.dumps`,
field by field or via `dataclasses.asdict` of the outputs: `{"request_id", "prompt",
"prompt_token_ids", "outputs": [{"index", "text", "token_ids", "cumulative_logprob",
"finish_reason", "stop_reason"}], "finished"}` (vllm `vllm/outputs.py` `RequestOutput` /
`CompletionOutput` @72a8dbfa3884). One Record per output (`n` > 1 gives several); `finish_reason`
is "stop" / "length" / "abort", or null for an output that had not finished (-> UNKNOWN);
`output_tokens` is the number of `token_ids`. Identity: `request_id`, and the output's `index`
when the request has several.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from ..errors import MissingField
from ..record import Record, parse_finish_reason
from ._fields import optional_int_list, optional_str, require_list, require_str

__all__ = ["is_vllm_request_output", "parse_vllm_request_output"]


def is_vllm_request_output(obj: Mapping[str, Any]) -> bool:
    """`request_id` and an `outputs` list whose first item has `text` and `token_ids`."""
    outputs = obj.get("outputs")
    return (
        "request_id" in obj
        and isinstance(outputs, list)
        and bool(outputs)
        and isinstance(outputs[0], Mapping)
        and "text" in outputs[0]
        and "token_ids" in outputs[0]
    )


def parse_vllm_request_output(obj: Mapping[str, Any]) -> Iterator[Record]:
    """Yield one Record per output; MissingField names e.g. `outputs` or `outputs.1.text`."""
    outputs = require_list(obj, "outputs")
    if not outputs:
        raise MissingField("outputs.0")
    request_id = optional_str(obj, "request_id")
    for i, output in enumerate(outputs):
        where = f"outputs.{i}"
        if not isinstance(output, Mapping):
            raise MissingField(where)
        text = require_str(output, "text", where=where)
        token_ids = optional_int_list(output, "token_ids")
        identity: dict[str, object] = {"request_id": request_id} if request_id is not None else {}
        if len(outputs) > 1:
            index = output.get("index", i)
            identity["index"] = index if isinstance(index, int) else i
        yield Record(
            text=text,
            finish_reason=parse_finish_reason(output.get("finish_reason")),
            token_ids=token_ids,
            output_tokens=len(token_ids) if token_ids is not None else None,
            identity=identity,
        )
