"""Input formats: `FORMATS` (name -> `FormatSpec`) and `detect_format`.

Why a literal registry: a new format is one module plus one line here (style.md §3, §11); nothing
registers itself on import. Format names are the config's `format:` values and `scan --format-in`.

Detection precedence (docs/formats.md, "Detection"): every format except `custom` has a sniff
(cheap key checks). The specific sniffs are written to be mutually exclusive (each keys on a
field its format alone has: `object`, `custom_id`, `event`+`rid`, `eid`, `sample_index`,
`index`+`group_index`, `input`+`output`, `resourceLogs`/`resourceSpans`, a vLLM log header,
`request_id`+`outputs[].token_ids`, `step`+`prompt`+`completion`, `call_type`+`model_parameters`,
`type: GENERATION`+`traceId`).
`generic` is the fallback: picked only when no specific sniff matches any sampled record. One
record matching two specific formats, or sampled records matching different ones, is
`UnknownFormat` naming the candidates.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from itertools import islice
from typing import Any, Final

from ..errors import UnknownFormat
from .base import FormatSpec, ParseFn, SniffFn
from .custom import CustomFormatOptions, parse_custom
from .generic import is_generic, parse_generic
from .langfuse_generation import is_langfuse_generation, parse_langfuse_generation
from .litellm_payload import is_litellm_payload, parse_litellm_payload
from .openai_batch import is_openai_batch, parse_openai_batch
from .openai_chat import is_openai_chat, parse_openai_chat
from .openai_chunk import is_openai_chunk, parse_openai_chunk
from .openai_completion import is_openai_completion, parse_openai_completion
from .openai_response import is_openai_response, parse_openai_response
from .otlp_json import is_otlp_json, parse_otlp_json
from .relax_rollout import is_relax_rollout, parse_relax_rollout
from .sglang_log import is_sglang_log, parse_sglang_log
from .slime_rollout import is_slime_rollout, parse_slime_rollout
from .trinity_experience import is_trinity_experience, parse_trinity_experience
from .trl_completions import is_trl_completions, parse_trl_completions
from .verl_rollout import is_verl_rollout, parse_verl_rollout
from .vllm_log import VllmLogJoiner, is_vllm_log, parse_vllm_log
from .vllm_request_output import is_vllm_request_output, parse_vllm_request_output

__all__ = [
    "DETECT_SAMPLE",
    "FORMATS",
    "CustomFormatOptions",
    "FormatSpec",
    "ParseFn",
    "SniffFn",
    "detect_format",
    "format_candidates",
]

FORMATS: Final[dict[str, FormatSpec]] = {
    "openai_chat": FormatSpec(
        "openai_chat",
        parse_openai_chat,
        is_openai_chat,
        "OpenAI chat.completion responses, bare or {request, response}",
    ),
    "openai_completion": FormatSpec(
        "openai_completion",
        parse_openai_completion,
        is_openai_completion,
        "OpenAI text_completion responses, bare or {request, response}",
    ),
    "openai_chunk": FormatSpec(
        "openai_chunk",
        parse_openai_chunk,
        is_openai_chunk,
        "OpenAI chat.completion.chunk stream lines (reassembled by request id)",
    ),
    "openai_response": FormatSpec(
        "openai_response",
        parse_openai_response,
        is_openai_response,
        "OpenAI Responses API bodies (object: response), bare or {request, response}",
    ),
    "openai_batch": FormatSpec(
        "openai_batch",
        parse_openai_batch,
        is_openai_batch,
        "OpenAI Batch output lines (vLLM run-batch), chat or Responses bodies",
    ),
    "vllm_log": FormatSpec(
        "vllm_log",
        parse_vllm_log,
        is_vllm_log,
        "vLLM server log with --enable-log-outputs (text lines)",
        text_lines=True,
        joining=VllmLogJoiner,
    ),
    "vllm_request_output": FormatSpec(
        "vllm_request_output",
        parse_vllm_request_output,
        is_vllm_request_output,
        "vLLM offline LLM.generate RequestOutputs dumped as JSON ({request_id, outputs: [...]})",
    ),
    "sglang_log": FormatSpec(
        "sglang_log", parse_sglang_log, is_sglang_log, "SGLang --log-requests-format json events"
    ),
    "slime_rollout": FormatSpec(
        "slime_rollout",
        parse_slime_rollout,
        is_slime_rollout,
        "slime Sample.to_dict() records or {rollout_id, samples} dumps",
    ),
    "relax_rollout": FormatSpec(
        "relax_rollout",
        parse_relax_rollout,
        is_relax_rollout,
        "Relax rollout_result/{train,eval}/<rollout_id>.jsonl",
    ),
    "verl_rollout": FormatSpec(
        "verl_rollout",
        parse_verl_rollout,
        is_verl_rollout,
        "verl rollout_data_dir/<step>.jsonl ({input, output, step})",
    ),
    "trinity_experience": FormatSpec(
        "trinity_experience",
        parse_trinity_experience,
        is_trinity_experience,
        "Trinity-RFT Experience.to_dict() JSONL",
    ),
    "trl_completions": FormatSpec(
        "trl_completions",
        parse_trl_completions,
        is_trl_completions,
        "TRL GRPOTrainer completions tables ({step, prompt, completion, rewards..., advantage})",
    ),
    "litellm_payload": FormatSpec(
        "litellm_payload",
        parse_litellm_payload,
        is_litellm_payload,
        "LiteLLM StandardLoggingPayload lines (standard_logging_object)",
    ),
    "langfuse_generation": FormatSpec(
        "langfuse_generation",
        parse_langfuse_generation,
        is_langfuse_generation,
        "Langfuse generation observations (type: GENERATION) as exported",
    ),
    "otlp_json": FormatSpec(
        "otlp_json",
        parse_otlp_json,
        is_otlp_json,
        "OTLP/JSON logs and traces with GenAI completions (Collector file exporter lines)",
    ),
    "custom": FormatSpec("custom", parse_custom, None, "any JSON, fields read from configured dot paths"),
    "generic": FormatSpec(
        "generic",
        parse_generic,
        is_generic,
        "any JSON object with a response/text string (detection fallback)",
        fallback=True,
    ),
}

DETECT_SAMPLE: Final = 20
"""How many leading records `detect_format` looks at."""


def format_candidates(obj: Mapping[str, Any]) -> tuple[str, ...]:
    """Names of the specific (non-fallback) formats whose sniff matches `obj`, in registry order."""
    return tuple(n for n, s in FORMATS.items() if s.sniff is not None and not s.fallback and s.sniff(obj))


def detect_format(objs: Iterable[Mapping[str, Any]], *, sample: int = DETECT_SAMPLE) -> str:
    """The one format the first `sample` records are in; raises `UnknownFormat` naming the candidates.

    Records matching no format (startup lines, junk) are ignored as long as some record matches.
    """
    winners: Counter[str] = Counter()
    fallback = 0
    for obj in islice(objs, sample):
        names = format_candidates(obj)
        if len(names) > 1:
            raise UnknownFormat(f"a record matches several formats ({', '.join(names)}); name one", names)
        if names:
            winners[names[0]] += 1
        elif any(s.fallback and s.sniff is not None and s.sniff(obj) for s in FORMATS.values()):
            fallback += 1
    if len(winners) == 1:
        return next(iter(winners))
    if winners:
        found = ", ".join(f"{n} ({c} records)" for n, c in winners.most_common())
        raise UnknownFormat(f"records match different formats: {found}; name one", tuple(sorted(winners)))
    if fallback:
        return next(n for n, s in FORMATS.items() if s.fallback)
    tried = tuple(n for n, s in FORMATS.items() if s.sniff is not None)
    raise UnknownFormat(f"no known format matches these records; tried: {', '.join(tried)}", tried)
