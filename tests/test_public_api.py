"""The public surface is deliberate (httpx style): `__all__` is exactly the documented list, every
name resolves lazily to its home module, importing the package loads nothing heavy, and every code
example of docs/python-api.md runs."""

from __future__ import annotations

import array
import re
import subprocess
import sys
import types
from pathlib import Path

import degeneration_exporter as pkg
import pytest

REPO = Path(__file__).resolve().parents[1]
API_DOC = REPO / "docs" / "python-api.md"

EXPORTED = [
    "DETECTORS",
    "FORMATS",
    "Classification",
    "Classifier",
    "ClassifierConfig",
    "ConfigError",
    "Decision",
    "DegenerationError",
    "Delta",
    "DetectorInput",
    "DetectorSpec",
    "EncodingError",
    "Finding",
    "FinishReason",
    "FlagKind",
    "InvalidJson",
    "LineTooLong",
    "LoopGuard",
    "LoopSpan",
    "MissingField",
    "PartialLine",
    "PositionsInUse",
    "Record",
    "RecordError",
    "RepetitionFilter",
    "ResponseStream",
    "Settings",
    "SinkError",
    "SourceError",
    "UnknownFormat",
    "__version__",
    "batch_metrics",
    "classify",
    "detect_format",
]


def test_all_is_exactly_the_exported_names() -> None:
    assert pkg.__all__ == EXPORTED  # sorted by ruff (RUF022); additions are deliberate
    assert set(pkg._HOMES) == set(EXPORTED) - {"__version__"}  # nothing importable but unlisted


@pytest.mark.parametrize("name", EXPORTED)
def test_every_name_resolves_and_is_public_where_it_lives(name: str) -> None:
    value = getattr(pkg, name)
    module = getattr(value, "__module__", None)
    if module is not None and module.startswith("degeneration_exporter."):  # classes and functions
        assert getattr(sys.modules[module], name) is value
    assert name in dir(pkg)


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no_such_name"):
        pkg.no_such_name  # noqa: B018


def test_importing_the_package_loads_no_implementation_module() -> None:
    """PEP 562: `import degeneration_exporter` (what `--version` needs) imports neither pydantic nor
    a pipeline module; the first use of a name does."""
    code = (
        "import sys, degeneration_exporter as p\n"
        "heavy = sorted(m for m in sys.modules if m.startswith(('pydantic', 'degeneration_exporter.')))\n"
        "assert not heavy, heavy\n"
        "p.classify\n"
        "assert 'degeneration_exporter.classification.classify' in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


def test_classify_takes_a_plain_string_or_a_record_and_nothing_else() -> None:
    assert pkg.classify("A short and ordinary answer.").flags == frozenset()
    record = pkg.Record(
        text="Same row again and again, nothing new.\n" * 30, finish_reason=pkg.FinishReason.LENGTH
    )
    assert pkg.classify(record).flags == pkg.classify(record.text, finish_reason="length").flags
    with pytest.raises(TypeError, match="not bytes"):
        pkg.classify(b"bytes are not text")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="on the Record itself"):
        pkg.classify(record, max_tokens=10)


def test_loop_guard_stops_once_and_stays_stopped() -> None:
    guard = pkg.LoopGuard()
    text = "A calm start to the answer. " + "Let me check the units again. " * 300
    decisions = [guard.feed(text[i : i + 10]) for i in range(0, len(text), 10)]
    first = next(i for i, d in enumerate(decisions) if d.stop)
    assert all(d.stop for d in decisions[first:]) and not any(d.stop for d in decisions[:first])
    assert guard.finish().text_chars == len(text)
    clean = pkg.LoopGuard()
    words = ("a", "plain", "and", "varied", "answer", "with", "nothing", "repeated")
    assert not any(clean.feed(w + " ").stop for w in words)
    assert clean.finish(pkg.FinishReason.STOP).flags == frozenset()


def test_repetition_filter_keeps_unreadable_experiences_and_counts_them() -> None:
    kept, metrics = pkg.RepetitionFilter().process([{"reward": 1.0}, "fine answer", {"text": "ok " * 3}])
    assert len(kept) == 3 and metrics["unreadable_count"] == 1 and metrics["filtered_count"] == 0


def _examples() -> list[str]:
    return re.findall(r"```python\n(.*?)```", API_DOC.read_text(encoding="utf-8"), flags=re.S)


def test_the_api_page_has_examples_for_each_form() -> None:
    joined = "\n".join(_examples())
    for needle in ("classify(", "LoopGuard()", "RepetitionFilter()", "batch_metrics("):
        assert needle in joined, needle


@pytest.mark.parametrize("index", range(len(_examples())))
def test_api_page_example_runs(index: int) -> None:
    """Each block alone, as a reader would paste it, in a real module (dataclasses need one)."""
    module = types.ModuleType(f"python_api_example_{index}")
    sys.modules[module.__name__] = module
    try:
        exec(compile(_examples()[index], f"{API_DOC.name}[example {index}]", "exec"), module.__dict__)
    finally:
        del sys.modules[module.__name__]


def test_repetition_filter_reads_trinity_shaped_token_ids_through_tolist() -> None:
    """Trinity's Experience holds tensors; anything with `.tolist()` (here array.array) is read,
    the prompt is dropped and the action mask applied, as Trinity's own filter does."""
    by_ids = pkg.Classifier(pkg.ClassifierConfig(repetition_detectors=("ngram_ratio",)))
    prompt = list(range(100, 140))
    looping = types.SimpleNamespace(
        response_text=None,
        tokens=array.array("i", prompt + [7, 8, 9] * 40),
        prompt_length=len(prompt),
        action_mask=array.array("b", [1] * 120),
    )
    masked = types.SimpleNamespace(  # the same loop, but the mask says the model wrote none of it
        response_text=None,
        tokens=array.array("i", prompt + [7, 8, 9] * 40),
        prompt_length=len(prompt),
        action_mask=array.array("b", [0] * 120),
    )
    varied = {"tokens": prompt + list(range(120)), "prompt_length": len(prompt)}
    kept, metrics = pkg.RepetitionFilter(by_ids).process([looping, masked, varied])
    assert kept == [masked, varied] and metrics["filtered_count"] == 1
