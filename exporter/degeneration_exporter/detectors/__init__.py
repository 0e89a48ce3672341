"""Detector registry: one literal dict, one line per detector module.

Registry key = config section (`detectors.<name>`) = docs page = bench row = the detector's module:
flat (`ngram_ratio.py`) or inside its family's subpackage (`osaurus/stream_ngram.py`, `compression/`).
The published detectors keep their spec names in docs and vectors (`relax_compression` is
`compression`, `trinity_ngram` is `ngram_ratio`, `utopia_tail` is `tail_period`,
`osaurus_stream` is `stream_ngram`, `osaurus_charrun` is `char_run`): see docs/detectors.md.

Each entry imports its module on first use (a function per line below): `scan` and the daemon with
their defaults load only the verdict and the leak check, not every published detector's module.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

from .base import DetectorInput, DetectorSpec, Finding, IncrementalDetector

__all__ = ["DETECTORS", "DetectorInput", "DetectorSpec", "Finding", "IncrementalDetector"]


class _Registry(Mapping[str, DetectorSpec[Any]]):
    """Detector name -> spec; a spec is built (its module imported) the first time it is looked up."""

    def __init__(self, entries: dict[str, Callable[[], DetectorSpec[Any]]]) -> None:
        self._entries = entries
        self._specs: dict[str, DetectorSpec[Any]] = {}

    def __getitem__(self, name: str) -> DetectorSpec[Any]:
        spec = self._specs.get(name)
        if spec is None:
            spec = self._specs[name] = self._entries[name]()
        return spec

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def __repr__(self) -> str:
        return f"DETECTORS({list(self._entries)})"


def _compression() -> DetectorSpec[Any]:
    from .compression import Compression, CompressionParams, detect_compression

    return DetectorSpec(
        "compression",
        "repetition",
        CompressionParams,
        detect_compression,
        Compression,
        "Relax: raw/zlib byte ratio above 10 in any 10k-character window.",
    )


def _ngram_ratio() -> DetectorSpec[Any]:
    from .ngram_ratio import NgramRatio, NgramRatioParams, detect_ngram_ratio

    return DetectorSpec(
        "ngram_ratio",
        "repetition",
        NgramRatioParams,
        detect_ngram_ratio,
        NgramRatio,
        "Trinity-RFT: duplicate 4-gram ratio above 0.5 (token ids, else words).",
    )


def _tail_period() -> DetectorSpec[Any]:
    from .tail_period import TailPeriod, TailPeriodParams, detect_tail_period

    return DetectorSpec(
        "tail_period",
        "repetition",
        TailPeriodParams,
        detect_tail_period,
        TailPeriod,
        "utopia: a 30-600 byte row repeated 5 times at the end, no period under 30.",
        chunking_dependent=True,  # check cadence
    )


def _stream_ngram() -> DetectorSpec[Any]:
    from .osaurus.stream_ngram import StreamNgram, StreamNgramParams, detect_stream_ngram

    return DetectorSpec(
        "stream_ngram",
        "repetition",
        StreamNgramParams,
        detect_stream_ngram,
        StreamNgram,
        "osaurus: a 3-12 word unit repeated 12 times back to back in the last 4096 characters.",
        chunking_dependent=True,  # bounded tail
    )


def _char_run() -> DetectorSpec[Any]:
    from .osaurus.char_run import CharRun, CharRunParams, detect_char_run

    return DetectorSpec(
        "char_run",
        "repetition",
        CharRunParams,
        detect_char_run,
        CharRun,
        "osaurus: one character repeated 64 (letters, digits) or 256 times, grown over 3 deltas.",
        chunking_dependent=True,  # growth gate
    )


def _template_leak() -> DetectorSpec[Any]:
    from .template_leak import TemplateLeak, TemplateLeakParams, detect_template_leak

    return DetectorSpec(
        "template_leak",
        "template_leak",
        TemplateLeakParams,
        detect_template_leak,
        TemplateLeak,
        "Chat-template special tokens (ChatML, Llama, Gemma, ...) in visible content.",
    )


def _tandem_repeat() -> DetectorSpec[Any]:
    from .tandem import TandemRepeat, TandemRepeatParams, detect_tandem_repeat

    return DetectorSpec(
        "tandem_repeat",
        "repetition",
        TandemRepeatParams,
        detect_tandem_repeat,
        TandemRepeat,
        "A unit repeated back to back (numbers and names may change), a counting run, or cut off repeating.",
    )


# Registry lines are added by each detector module's author, in this order.
DETECTORS: Mapping[str, DetectorSpec[Any]] = _Registry(
    {
        "compression": _compression,
        "ngram_ratio": _ngram_ratio,
        "tail_period": _tail_period,
        "stream_ngram": _stream_ngram,
        "char_run": _char_run,
        "template_leak": _template_leak,
        "tandem_repeat": _tandem_repeat,
    }
)
