"""Write the bundled example logs: a Relax-style rollout dump and an OpenAI-chat generation log.

Why generated: the expected verdict of every line is decided here (clean, looping, leaking, ceiling),
so `examples/README.md` and the tests can state exact counts. Deterministic (fixed seed, no clock).
Writes `examples/*.jsonl` and the packaged copy `exporter/degeneration_exporter/examples/*.jsonl`
(shipped so `degeneration-exporter run --example` works after `pip install .`).

    python examples/generate_examples.py          # rewrite both copies
    python examples/generate_examples.py --check  # exit 1 if a committed copy differs
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT_DIRS = (ROOT / "examples", ROOT / "exporter" / "degeneration_exporter" / "examples")

SENTENCES = [
    "The derivative of x squared is two x, which follows from the power rule.",
    "First, we list the prime factors of both numbers and compare them.",
    "A binary search halves the interval at every step, so it needs logarithmic time.",
    "Paris is the capital of France and sits on the river Seine.",
    "To balance the equation we add two molecules of water on the right side.",
    "The function returns early when the input list is empty.",
    "Photosynthesis turns light energy into chemical energy stored in glucose.",
    "We can check the answer by substituting it back into the original equation.",
    "The train leaves at nine and arrives three hours later, at noon.",
    "Hash maps give constant expected time for lookups and inserts.",
    "The sum of the interior angles of a triangle is one hundred eighty degrees.",
    "Recursion needs a base case, otherwise it never terminates.",
    "The mitochondria produce most of the cell's supply of ATP.",
    "Interest compounds monthly, so the effective annual rate is a little higher.",
    "In Python, a list comprehension builds a new list from an iterable.",
    "The speed of light in vacuum is about three hundred thousand kilometres per second.",
    "Merge sort splits the array, sorts both halves and merges them in linear time.",
    "Shakespeare wrote Hamlet around the year sixteen hundred.",
    "The probability of two independent events is the product of their probabilities.",
    "A prime number has exactly two divisors: one and itself.",
]
LOOP_UNITS = [
    "Wait, let me check that again. ",
    "The answer is 12. ",
    "I will verify the result. ",
    "x = 2 or x = -2. ",
]
LEAKS = ["<|im_end|>", "<|im_start|>assistant\n", "<|endoftext|>"]
MODELS = ["Qwen/Qwen3-8B", "meta-llama/Llama-3.1-8B-Instruct"]

# (verdict, how many) per file; verdicts: clean, loop_ceiling (loops until max tokens), loop_stop,
# leak, ceiling (cut at max tokens without looping)
GENERATION_PLAN = [("clean", 14), ("loop_ceiling", 3), ("loop_stop", 1), ("leak", 2), ("ceiling", 1)]
ROLLOUT_PLAN = [("clean", 10), ("loop_ceiling", 3), ("leak", 1), ("ceiling", 2)]


def _clean(rng: random.Random, n: int) -> str:
    return " ".join(rng.sample(SENTENCES, n))


def _text(verdict: str, rng: random.Random) -> str:
    if verdict == "clean":
        return _clean(rng, rng.randint(2, 5))
    if verdict.startswith("loop"):
        return _clean(rng, 2) + " " + rng.choice(LOOP_UNITS) * rng.randint(40, 60)
    if verdict == "leak":  # three distinct sentences, the special token after the second
        first, second, third = rng.sample(SENTENCES, 3)
        return f"{first} {second}{rng.choice(LEAKS)}{third}"
    return _clean(rng, 6)  # ceiling: prose cut off by the token limit


def _plan(plan: list[tuple[str, int]], rng: random.Random) -> list[str]:
    verdicts = [verdict for verdict, n in plan for _ in range(n)]
    rng.shuffle(verdicts)
    return verdicts


def generation_log(rng: random.Random) -> list[dict[str, object]]:
    """OpenAI chat.completion objects, one per line (vLLM / OpenAI-compatible server logs)."""
    lines: list[dict[str, object]] = []
    for i, verdict in enumerate(_plan(GENERATION_PLAN, rng)):
        text = _text(verdict, rng)
        hit_ceiling = verdict in ("loop_ceiling", "ceiling")
        completion_tokens = 512 if hit_ceiling else max(1, len(text) // 4)
        lines.append(
            {
                "id": f"chatcmpl-example{i:04d}",
                "object": "chat.completion",
                "created": 1764460800 + i,
                "model": MODELS[i % len(MODELS)],
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": text},
                        "finish_reason": "length" if hit_ceiling else "stop",
                    }
                ],
                "usage": {
                    "prompt_tokens": 40,
                    "completion_tokens": completion_tokens,
                    "total_tokens": 40 + completion_tokens,
                },
            }
        )
    return lines


def rollout_dump(rng: random.Random) -> list[dict[str, object]]:
    """Relax `rollout_result/train/{rollout_id}.jsonl` records (slime-style `status`)."""
    lines: list[dict[str, object]] = []
    for i, verdict in enumerate(_plan(ROLLOUT_PLAN, rng)):
        text = _text(verdict, rng)
        truncated = verdict in ("loop_ceiling", "ceiling")
        response_length = 1024 if truncated else max(1, len(text) // 4)
        lines.append(
            {
                "rollout_id": 7,
                "sample_index": i,
                "prompt": "<|im_start|>user\nExplain your answer.<|im_end|>\n<|im_start|>assistant\n",
                "response": text,
                "reward": 0.0 if verdict != "clean" else 1.0,
                "prompt_length": 12,
                "response_length": response_length,
                "total_length": 12 + response_length,
                "status": "truncated" if truncated else "completed",
                "group_index": i // 4,
                "weight_versions": ["7"],
            }
        )
    return lines


def expected_counts() -> dict[str, dict[str, int]]:
    """Verdict counts per file, as documented in examples/README.md."""
    return {
        "generation_log.jsonl": dict(Counter(dict(GENERATION_PLAN))),
        "rollout_dump.jsonl": dict(Counter(dict(ROLLOUT_PLAN))),
    }


def render() -> dict[str, bytes]:
    rng = random.Random(20261130)
    files = {"generation_log.jsonl": generation_log(rng), "rollout_dump.jsonl": rollout_dump(rng)}
    return {
        name: b"".join(json.dumps(obj, ensure_ascii=False).encode() + b"\n" for obj in objs)
        for name, objs in files.items()
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only verify the committed copies")
    args = parser.parse_args()
    stale = []
    for name, content in render().items():
        for out_dir in OUT_DIRS:
            path = out_dir / name
            if args.check:
                if not path.is_file() or path.read_bytes() != content:
                    stale.append(str(path))
            else:
                path.write_bytes(content)
    if stale:
        print("stale examples (run python examples/generate_examples.py):", *stale, sep="\n  ")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
