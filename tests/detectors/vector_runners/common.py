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


# Section 6: exactly one input field per vector (`reasoning` is a second channel, not an input field).
INPUT_FIELDS = ("input", "gen", "tokens", "deltas", "deltas_gen", "channel_deltas", "batch", "experiences")


def input_field(vector: dict[str, Any], allowed: tuple[str, ...]) -> str:
    """The vector's one input field, which must be one its runner can interpret."""
    present = [k for k in INPUT_FIELDS if k in vector]
    assert len(present) == 1, f"{vector.get('id')}: exactly one input field expected, found {present}"
    assert present[0] in allowed, (
        f"{vector.get('id')}: input field {present[0]!r} is not interpretable here (allowed: {allowed})"
    )
    return present[0]


def check_known(vector: dict[str, Any], known: frozenset[str], what: str = "expected") -> dict[str, Any]:
    """The vector's `expected`, failing loudly on a key this runner cannot check (it would never fail)."""
    expected: dict[str, Any] = vector["expected"]
    unknown = sorted(set(expected) - known)
    assert not unknown, (
        f"{vector.get('id')}: unknown {what} key(s) {unknown} for {vector['detector']} "
        f"(known: {sorted(known)})"
    )
    assert expected, f"{vector.get('id')}: `expected` states nothing, so the vector cannot fail"
    return expected


def text_of(vector: dict[str, Any]) -> str:
    """The literal or generated input text; stream deltas (explicit or generated) are joined."""
    if "input" in vector:
        return str(vector["input"])
    if "gen" in vector:
        return str(evaluate(vector["gen"]))
    return "".join(deltas_of(vector))


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
