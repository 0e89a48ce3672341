"""Read a slime / Relax `.pt` rollout dump as JSON lines: `iter_pt_lines(path)`.

Why: slime writes its debug rollout data only as `torch.save({"rollout_id": <step>, "samples":
[Sample.to_dict(), ...]}, path)` (`save_debug_rollout_data`, slime/observability/
rollout_data_utils.py @624b824a898a; `--save-debug-rollout-data`, `--dump-details`), and Relax's
own diagnosis reads the same shape. Each sample becomes one JSON line in the dump-wrapper form the
`slime_rollout` / `relax_rollout` formats read, `{"rollout_id": <step>, "position": i, "samples":
[sample]}`, so the step and the sample's place in the dump survive and the rest of the pipeline
is the one for JSONL.

Safety: `torch.load(..., weights_only=True)` only, never arbitrary unpickling (slime itself
loads with `weights_only=False`): a `.pt` holding anything but containers, numbers, strings and
tensors is a `PtDumpError`, as is a payload of another shape. Tensors become lists. `torch` is the
optional extra `degeneration-exporter[torch]`, imported only here, when a `.pt` is read. The whole
file is loaded at once (that is how `torch.load` works); lines are made one sample at a time.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import orjson

from ..errors import DegenerationError

__all__ = ["PtDumpError", "iter_pt_lines"]


class PtDumpError(DegenerationError, ValueError):
    """A `.pt` file that is not a rollout dump safe to load (or torch is not installed)."""


def iter_pt_lines(path: str) -> Iterator[bytes]:
    """One JSON line (bytes, no newline) per sample of the dump at `path`; OSError passes through."""
    payload = _load(path)
    if not isinstance(payload, Mapping) or not isinstance(payload.get("samples"), list):
        kind = type(payload).__name__
        raise PtDumpError(f"{path}: not a rollout dump ({kind}); expected {{'rollout_id', 'samples': [...]}}")
    step = payload.get("rollout_id")
    for position, sample in enumerate(payload["samples"]):
        if not isinstance(sample, Mapping):
            raise PtDumpError(f"{path}: samples[{position}] is a {type(sample).__name__}, not a Sample dict")
        line = {"rollout_id": step, "position": position, "samples": [sample]}
        try:
            yield orjson.dumps(line, default=_tensor_to_list, option=orjson.OPT_NON_STR_KEYS)
        except TypeError as exc:
            raise PtDumpError(f"{path}: samples[{position}] cannot be written as JSON: {exc}") from exc


def _load(path: str) -> Any:
    try:
        import torch
    except ImportError as exc:
        raise PtDumpError(
            f"{path}: reading .pt dumps needs torch: pip install 'degeneration-exporter[torch]'"
        ) from exc
    try:
        return torch.load(path, map_location="cpu", weights_only=True)
    except OSError:
        raise
    except Exception as exc:  # torch raises UnpicklingError, RuntimeError, EOFError, ... for bad files
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise PtDumpError(
            f"{path}: not loadable with weights_only=True (only tensors and plain containers): {first}"
        ) from exc


def _tensor_to_list(value: object) -> object:
    tolist = getattr(value, "tolist", None)
    if callable(tolist):  # torch.Tensor (and numpy arrays a dump may hold)
        return tolist()
    raise TypeError(f"unsupported value of type {type(value).__name__}")
