"""Detector registry: one literal dict, one line per detector module.

Registry key = config section (`detectors.<name>`) = docs page = bench row = the detector's module:
flat (`ngram_ratio.py`) or inside its family's subpackage (`osaurus/stream_ngram.py`, `compression/`).
The published detectors keep their spec names in docs and vectors (`relax_compression` is
`compression`, `trinity_ngram` is `ngram_ratio`, `utopia_tail` is `tail_period`,
`osaurus_stream` is `stream_ngram`, `osaurus_charrun` is `char_run`): see docs/detectors.md.
"""

from __future__ import annotations

from typing import Any

from .base import DetectorInput, DetectorSpec, Finding, IncrementalDetector
from .compression import Compression, CompressionParams, detect_compression
from .ngram_ratio import NgramRatio, NgramRatioParams, detect_ngram_ratio
from .osaurus.char_run import CharRun, CharRunParams, detect_char_run
from .osaurus.stream_ngram import StreamNgram, StreamNgramParams, detect_stream_ngram
from .tail_period import TailPeriod, TailPeriodParams, detect_tail_period
from .tandem import TandemRepeat, TandemRepeatParams, detect_tandem_repeat
from .template_leak import TemplateLeak, TemplateLeakParams, detect_template_leak

__all__ = ["DETECTORS", "DetectorInput", "DetectorSpec", "Finding", "IncrementalDetector"]

# Registry lines are added by each detector module's author, in this order.
DETECTORS: dict[str, DetectorSpec[Any]] = {
    "compression": DetectorSpec(
        "compression",
        "repetition",
        CompressionParams,
        detect_compression,
        Compression,
        "Relax: raw/zlib byte ratio above 10 in any 10k-character window.",
    ),
    "ngram_ratio": DetectorSpec(
        "ngram_ratio",
        "repetition",
        NgramRatioParams,
        detect_ngram_ratio,
        NgramRatio,
        "Trinity-RFT: duplicate 4-gram ratio above 0.5 (token ids, else words).",
    ),
    "tail_period": DetectorSpec(
        "tail_period",
        "repetition",
        TailPeriodParams,
        detect_tail_period,
        TailPeriod,
        "utopia: a 30-600 byte row repeated 5 times at the end, no period under 30.",
        chunking_dependent=True,  # check cadence
    ),
    "stream_ngram": DetectorSpec(
        "stream_ngram",
        "repetition",
        StreamNgramParams,
        detect_stream_ngram,
        StreamNgram,
        "osaurus: a 3-12 word unit repeated 12 times back to back in the last 4096 characters.",
        chunking_dependent=True,  # bounded tail
    ),
    "char_run": DetectorSpec(
        "char_run",
        "repetition",
        CharRunParams,
        detect_char_run,
        CharRun,
        "osaurus: one character repeated 64 (letters, digits) or 256 times, grown over 3 deltas.",
        chunking_dependent=True,  # growth gate
    ),
    "template_leak": DetectorSpec(
        "template_leak",
        "template_leak",
        TemplateLeakParams,
        detect_template_leak,
        TemplateLeak,
        "Chat-template special tokens (ChatML, Llama, Gemma, ...) in visible content.",
    ),
    "tandem_repeat": DetectorSpec(
        "tandem_repeat",
        "repetition",
        TandemRepeatParams,
        detect_tandem_repeat,
        TandemRepeat,
        "A unit repeated back to back (numbers and names may change), a counting run, or cut off repeating.",
    ),
}
