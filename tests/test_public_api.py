"""The public surface is deliberate: `__all__` is sorted, complete and importable (httpx style)."""

from __future__ import annotations

import degeneration_exporter as pkg


def test_all_is_unique_and_every_name_exists() -> None:
    # order is enforced by ruff (RUF022); here: no duplicates, nothing missing
    assert len(pkg.__all__) == len(set(pkg.__all__))
    for name in pkg.__all__:
        assert hasattr(pkg, name), name


def test_public_classes_are_not_private_module_leaks() -> None:
    public = {n for n in dir(pkg) if not n.startswith("_")}
    modules = {
        "classification",
        "detectors",
        "errors",
        "formats",
        "record",
        "sources",
        "sinks",
        "web",
        "commands",
        "config",
        "catalog",
        "cli",
        "daemon",
        "pipeline",
        "dashboards",
        "batch",
    }
    assert public - modules - {"annotations"} == set(pkg.__all__) - {"__version__"}


def test_classify_end_to_end_through_the_public_api() -> None:
    loop = pkg.Record(
        text="Same row again and again, nothing new at all here.\n" * 30,
        finish_reason=pkg.FinishReason.LENGTH,
    )
    result = pkg.classify(loop)
    assert result.flags == {
        pkg.FlagKind.REPETITION,
        pkg.FlagKind.CEILING,
        pkg.FlagKind.CEILING_WHILE_REPEATING,
    }
    assert result.loop is not None and result.loop.onset == 0
    clean = pkg.classify(pkg.Record(text="A short and ordinary answer.", finish_reason=pkg.FinishReason.STOP))
    assert clean.flags == frozenset()
