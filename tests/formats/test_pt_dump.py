"""slime / Relax `.pt` rollout dumps read through `sources.pt_dump.iter_pt_lines` (needs torch).

The dumps are written here with `torch.save`, shaped after the writers:
- slime `save_debug_rollout_data` (slime/observability/rollout_data_utils.py @624b824a898a):
  `torch.save({"rollout_id": rollout_id, "samples": [sample.to_dict() for sample in data]}, path)`,
  where `Sample.to_dict()` (slime/utils/types.py @624b824a898a) is the dataclass `__dict__` with
  `status` as its string value; `rollout_top_p_token_ids` may be a tensor.
- Relax `save_debug_rollout_data` (relax/utils/training/train_dump_utils.py, redai-studio/Relax):
  the same wrapper, each sample with `decoded_tokens` (`[]` without a tokenizer).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from degeneration_exporter.formats.lines import LineParser
from degeneration_exporter.record import FinishReason, Record
from degeneration_exporter.sources.pt_dump import PtDumpError, iter_pt_lines

torch = pytest.importorskip("torch")


def slime_sample(index: int, response: str, status: str) -> dict[str, Any]:
    """`Sample.to_dict()` of slime's dataclass, field by field (defaults where the rollout sets none)."""
    tokens = [151644, 872, 198, 100, 101, 102, 103]
    return {
        "group_index": index // 2,
        "index": index,
        "rollout_id": None,
        "prompt": [{"role": "user", "content": "Compute 17*23."}],
        "tokens": tokens,
        "multimodal_inputs": None,
        "multimodal_train_inputs": None,
        "multimodal_train_input_id": None,
        "apply_chat_template_kwargs": {},
        "response": response,
        "response_length": 4,
        "label": "391",
        "reward": 0.0,
        "loss_mask": [1, 1, 1, 1],
        "weight_versions": ["3"],
        "rollout_log_probs": [-0.01, -0.02, -0.03, -0.04],
        "rollout_top_p_token_ids": torch.tensor([100, 7, 101, 102, 103], dtype=torch.int32),
        "rollout_top_p_token_offsets": torch.tensor([0, 2, 3, 4, 5], dtype=torch.int32),
        "rollout_routed_experts": None,
        "remove_sample": False,
        "teacher_log_probs": None,
        "status": status,
        "metadata": {},
        "generate_function_path": None,
        "custom_rm_path": None,
        "train_metadata": None,
        "session_id": None,
        "non_generation_time": 0.0,
        "spec_info": {
            "spec_accept_token_num": 0,
            "spec_draft_token_num": 0,
            "spec_verify_ct": 0,
            "completion_token_num": 0,
        },
        "prefix_cache_info": {"cached_tokens": 0, "total_prompt_tokens": 3},
    }


def records(path: Path, format_name: str | None = None) -> list[Record]:
    parser = LineParser(format_name)
    return [r for line in iter_pt_lines(str(path)) for r in parser.parse(line)]


def test_slime_dump_yields_one_record_per_sample_with_step_and_position(tmp_path: Path) -> None:
    path = tmp_path / "rollout_data" / "7.pt"
    path.parent.mkdir()
    loop = "17*23 = 391. " * 40
    samples = [slime_sample(0, "391", "completed"), slime_sample(1, loop, "truncated")]
    torch.save({"rollout_id": 7, "samples": samples}, path)

    lines = list(iter_pt_lines(str(path)))
    assert orjson.loads(lines[1])["samples"][0]["rollout_top_p_token_ids"] == [100, 7, 101, 102, 103]
    parser = LineParser()
    got = [r for line in lines for r in parser.parse(line)]
    assert parser.format_name == "slime_rollout"
    assert [(r.step, r.identity["position"], r.identity["index"]) for r in got] == [(7, 0, 0), (7, 1, 1)]
    assert got[1].finish_reason is FinishReason.LENGTH and got[1].text == loop
    assert (
        list(got[1].token_ids or []) == [151644, 872, 198, 100, 101, 102, 103] and got[1].prompt_length == 3
    )


def test_relax_dump_is_read_as_relax_rollout(tmp_path: Path) -> None:
    sample = {k: v for k, v in slime_sample(4, "Blue.", "completed").items() if k != "rollout_id"}
    sample["decoded_tokens"] = []
    path = tmp_path / "12.pt"
    torch.save({"rollout_id": 12, "samples": [sample]}, path)
    [record] = records(path)
    assert record.step == 12 and record.identity["index"] == 4 and record.finish_reason is FinishReason.STOP
    assert records(path, "relax_rollout")[0].text == "Blue."


class NotAllowed:
    """A class `weights_only=True` refuses to unpickle (what `weights_only=False` would run)."""

    def __reduce__(self) -> tuple[Any, ...]:
        return (print, ("arbitrary code ran",))


def test_a_pickle_of_other_objects_is_a_clear_error_and_runs_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "evil.pt"
    torch.save({"rollout_id": 1, "samples": [{"response": NotAllowed()}]}, path)
    with pytest.raises(PtDumpError, match="weights_only=True"):
        list(iter_pt_lines(str(path)))
    assert "arbitrary code ran" not in capsys.readouterr().out


@pytest.mark.parametrize(
    ("payload", "message"),
    [([1, 2, 3], "not a rollout dump"), ({"rollout_id": 1, "samples": ["x"]}, "not a Sample dict")],
)
def test_other_shapes_are_clear_errors(tmp_path: Path, payload: object, message: str) -> None:
    path = tmp_path / "other.pt"
    torch.save(payload, path)
    with pytest.raises(PtDumpError, match=message):
        list(iter_pt_lines(str(path)))


def test_a_file_that_is_not_a_torch_file_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "plain.pt"
    path.write_bytes(b"rollout_id,response\n7,hello\n")  # a CSV someone named .pt
    with pytest.raises(PtDumpError, match="not loadable"):
        list(iter_pt_lines(str(path)))
    with pytest.raises(FileNotFoundError):
        list(iter_pt_lines(str(tmp_path / "missing.pt")))
