"""Input builders for seed vectors: `gen` expressions with the spec's two fillers (section 6)."""

from __future__ import annotations

import hashlib
import json
from typing import Any


def hexfill(n: int, salt: str) -> str:
    """Concatenated hex SHA-256 digests of f"{salt}:{i}", first n characters."""
    out: list[str] = []
    total = 0
    i = 0
    while total < n:
        d = hashlib.sha256(f"{salt}:{i}".encode()).hexdigest()
        out.append(d)
        total += len(d)
        i += 1
    return "".join(out)[:n]


def noise(n: int) -> str:
    """The same over str(i), ceil(n/64) digests."""
    k = -(-n // 64)
    return "".join(hashlib.sha256(str(i).encode()).hexdigest() for i in range(k))[:n]


_BUILTINS = {"chr": chr, "range": range, "list": list, "str": str, "hexfill": hexfill, "noise": noise}


def evaluate(expr: str) -> Any:
    """Evaluate a vector's generator expression with only the allowed builtins."""
    # The names go in globals: a generator expression's own scope does not see eval's locals.
    return eval(expr, {"__builtins__": {}, **_BUILTINS})


def text_of(vector: dict[str, Any]) -> str:
    """The literal or generated input text."""
    if "input" in vector:
        return str(vector["input"])
    return str(evaluate(vector["gen"]))


def deltas_of(vector: dict[str, Any]) -> list[str]:
    """Stream deltas: explicit, generated, or `input`/`gen` split by params.chunk_size (None = one)."""
    if "deltas" in vector:
        return list(vector["deltas"])
    if "deltas_gen" in vector:
        return list(evaluate(vector["deltas_gen"]))
    text = text_of(vector)
    size = vector.get("params", {}).get("chunk_size")
    if size is None:
        return [text]
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def load_vectors(path: str) -> list[dict[str, Any]]:
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]
