"""TRL completions tables (`trl_completions`): GRPOTrainer's `log_completions` rows, one per line.

Why its own format: `GRPOTrainer` (`log_completions=True`) logs a table per logging step,
`{"step", "prompt", "completion", <one column per reward function>, ..., "advantage"}`, to
`<output_dir>/completions/completions_<step>.parquet` and to wandb / trackio (TRL
`trl/trainer/grpo_trainer.py` `log()` @f2cd57710ae3); users export it as JSONL
(`df.to_json(orient="records", lines=True)`, or a wandb table download). `step` is an integer in
GRPOTrainer and a string in other trainers of the same snapshot (`[str(self.state.global_step)]`,
`trl/experimental/distillation/distillation_trainer.py`); both are read. The completion is the
decoded string, or a list of messages (conversational data: the assistant messages are the text).

The text was decoded with `skip_special_tokens=True` (`batch_decode` in `grpo_trainer.py`), so the
record is marked `special_tokens_stripped`; `<think>...</think>` is split into reasoning. No
finish reason or length is logged. Identity: `step`, and `index` when the export kept the row
index.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from ..errors import MissingField
from ..record import Record
from ._openai import message_text
from ._think import split_think

__all__ = ["is_trl_completions", "parse_trl_completions"]


def is_trl_completions(obj: Mapping[str, Any]) -> bool:
    """`step`, `prompt` and `completion` columns."""
    return "completion" in obj and "prompt" in obj and "step" in obj


def parse_trl_completions(obj: Mapping[str, Any]) -> Iterator[Record]:
    """Yield one Record; MissingField names `completion` (or `completion.N`) or `step`."""
    content, reasoning = split_think(_completion_text(obj.get("completion")))
    step = _step(obj.get("step"))
    identity: dict[str, object] = {"step": step}
    index = obj.get("index")
    if isinstance(index, int) and not isinstance(index, bool):
        identity["index"] = index
    yield Record(
        text=content,
        reasoning=reasoning,
        step=step,
        identity=identity,
        special_tokens_stripped=True,
    )


def _completion_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if not isinstance(value, list):
        raise MissingField("completion", "'completion' is neither a string nor a list of messages")
    parts: list[str] = []
    for i, message in enumerate(value):
        if not isinstance(message, Mapping):
            raise MissingField(f"completion.{i}")
        if message.get("role", "assistant") == "assistant":
            parts.append(message_text(message.get("content")))
    return "\n".join(parts)


def _step(value: Any) -> int:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value)
    raise MissingField("step", "'step' is not an integer (or a string of digits)")
