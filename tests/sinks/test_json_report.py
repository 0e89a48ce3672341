"""`dump_split` / `shift_line`: a sample serialised in a worker, its line number rewritten by the parent.

Why its own test: the parent never rebuilds a sample, so the rewritten bytes must be exactly what
serialising the sample at its file line would give, for every shape `to_dict` can take (a record's own
`path` or `line` identity field standing where the pipeline's would, a stream with no line, line
numbers that grow a digit).
"""

from __future__ import annotations

import dataclasses

import orjson
import pytest
from degeneration_exporter.classification.classify import Classifier
from degeneration_exporter.record import Record
from degeneration_exporter.sinks.json_report import dump_sample, dump_split, shift_line

from tests.log_lines import LOOP

IDENTITIES: list[dict[str, object]] = [
    {},
    {"rollout_id": 3, "sample_index": 41},
    {"path": 7},  # a custom format's identity key named `path`: its value stands first
    {"path": "elsewhere/ü.jsonl", "id": "r-1"},
    {"line": 12},  # ... or named `line`: never shifted
]


@pytest.mark.parametrize("identity", IDENTITIES)
@pytest.mark.parametrize(("line", "shift"), [(1, 0), (9, 1), (99, 12345), (5, 3), (None, 40)])
def test_the_shifted_bytes_are_the_sample_serialised_at_its_file_line(
    identity: dict[str, object], line: int | None, shift: int
) -> None:
    verdict = Classifier().classify(Record(text=LOOP, identity=identity))
    sample = dataclasses.replace(verdict, path='/dumps/"quoted" run/7.jsonl', line=line)
    data, at = dump_split(sample)
    assert data == dump_sample(sample)
    moved = line + shift if line is not None else None
    expected = dump_sample(dataclasses.replace(sample, line=moved))
    assert shift_line(data, at, line, shift) == expected
    assert orjson.loads(expected)["line"] == identity.get("line", moved)
