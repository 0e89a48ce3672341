"""`classify`: the one place where detector findings, the finish reason and the token budget become flags.

Why one place: Prometheus, OTLP, the JSON report and streaming all need the same verdict, so the
rules (which detectors make up `repetition`, what counts as a ceiling hit, where the loop is) live
here and nowhere else. Detector semantics are in detectors.md; the default list is measured against
the hand labels (docs/detectors.md).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from itertools import product
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from .._slots import slots_builder
from ..detectors import DETECTORS
from ..detectors.base import Channel, DetectorInput, Finding, IncrementalDetector
from ..errors import ConfigError
from ..record import FinishReason, Record, parse_finish_reason
from .ceiling import is_ceiling_hit
from .result import Classification, FlagKind, LoopSpan

__all__ = ["Classifier", "ClassifierConfig", "ResponseStream", "classify", "default_classifier"]

DEFAULT_REPETITION_DETECTORS: tuple[str, ...] = ("tandem_repeat",)
LEAK_DETECTOR = "template_leak"
STRIPPED_ROLES = "stripped_roles"
"""The leak family added for a record marked `special_tokens_stripped` (verl dumps)."""


def _flag_sets() -> dict[tuple[bool, bool, bool], frozenset[FlagKind]]:
    """The flags for each (repetition, template leak, ceiling) combination, built once.

    Why: every record gets one of these eight sets; building a set and a frozenset per record (and
    reading enum members, ~0.2 µs each on Python 3.11) was a good part of the classifier's own cost."""
    out: dict[tuple[bool, bool, bool], frozenset[FlagKind]] = {}
    for repeating, leaking, ceiling in product((False, True), repeat=3):
        flags = {FlagKind.REPETITION} if repeating else set()
        if leaking:
            flags.add(FlagKind.TEMPLATE_LEAK)
        if ceiling:
            flags.add(FlagKind.CEILING)
            if repeating:
                flags.add(FlagKind.CEILING_WHILE_REPEATING)
        out[(repeating, leaking, ceiling)] = frozenset(flags)
    return out


_FLAGS = _flag_sets()
# Every field positionally (`_slots.slots_builder`): about 1 µs less per record than the frozen
# dataclasses' keyword `__init__`.
_new_classification = slots_builder(Classification)
_new_loop_span = slots_builder(LoopSpan)


class ClassifierConfig(BaseModel):
    """Which detectors make up each verdict, and with which parameters."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    repetition_detectors: tuple[str, ...] = Field(
        DEFAULT_REPETITION_DETECTORS,
        description="Detectors whose flag makes a response `repetition` (any one suffices); the loop "
        "location comes from the first flagged one in this order.",
    )
    report_detectors: tuple[str, ...] = Field(
        (),
        description="Extra detectors run for their findings only (reported, counted per detector, "
        "never part of the verdict).",
    )
    template_leak: bool = Field(True, description="Scan visible content for chat-template special tokens.")
    scan_reasoning: bool = Field(
        True, description="Also look for loops in the reasoning channel (a looping thought burns budget too)."
    )
    detector_params: Mapping[str, Mapping[str, Any]] = Field(
        default_factory=dict,
        description="Per-detector parameter overrides, keyed by detector name (see docs/detectors/).",
    )

    @field_validator("repetition_detectors", "report_detectors")
    @classmethod
    def _known_repetition_detectors(cls, names: tuple[str, ...]) -> tuple[str, ...]:
        for name in names:
            spec = DETECTORS.get(name)
            if spec is None:
                raise ValueError(f"unknown detector {name!r}; known: {sorted(DETECTORS)}")
            if spec.kind != "repetition":
                raise ValueError(f"detector {name!r} is a {spec.kind} detector, not a repetition detector")
        return names

    @field_validator("detector_params")
    @classmethod
    def _known_param_sections(
        cls, params: Mapping[str, Mapping[str, Any]]
    ) -> Mapping[str, Mapping[str, Any]]:
        for name in params:
            if name not in DETECTORS:
                raise ValueError(f"unknown detector {name!r}; known: {sorted(DETECTORS)}")
        return params


class Classifier:
    """Runs the configured detectors over records (batch) or deltas (streams)."""

    def __init__(self, config: ClassifierConfig | None = None) -> None:
        self.config = config or ClassifierConfig()
        self._params: dict[str, BaseModel] = {}
        names = [*self.config.repetition_detectors, *self.config.report_detectors]
        if self.config.template_leak:
            names.append(LEAK_DETECTOR)
        for name in dict.fromkeys([*names, *self.config.detector_params]):  # unused sections validated too
            spec = DETECTORS[name]
            overrides = self.config.detector_params.get(name, {})
            try:
                self._params[name] = spec.params_model.model_validate(overrides)
            except ValueError as exc:
                raise ConfigError(f"detectors.{name}: {exc}", field=f"detectors.{name}") from exc
        self._repetition = tuple(
            dict.fromkeys([*self.config.repetition_detectors, *self.config.report_detectors])
        )
        if self.config.template_leak:  # records decoded without special tokens also get bare role lines
            leak = self._params[LEAK_DETECTOR]
            families = getattr(leak, "families", ())
            if STRIPPED_ROLES not in families:
                leak = leak.model_copy(update={"families": (*families, STRIPPED_ROLES)})
            self._stripped_leak_params = leak
        # Verdict membership and loop-location priority, fixed per config (read for every record).
        self._verdict = frozenset(self.config.repetition_detectors)
        self._verdict_order = {name: i for i, name in enumerate(self.config.repetition_detectors)}
        self._runs = tuple((name, DETECTORS[name], self._params[name]) for name in self._repetition)
        self._scan_reasoning = self.config.scan_reasoning
        self._leak = (
            (DETECTORS[LEAK_DETECTOR], self._params[LEAK_DETECTOR]) if self.config.template_leak else None
        )

    def classify(self, record: Record) -> Classification:
        """Batch form: every detector over the whole record."""
        return self._assemble(record, self._findings(record, {}, has_reasoning=bool(record.reasoning)))

    def open_stream(self) -> ResponseStream:
        """Streaming form: feed deltas as they arrive, then `finish(record)`."""
        return ResponseStream(self)

    def _findings(
        self, record: Record, live: Mapping[tuple[str, Channel], IncrementalDetector], *, has_reasoning: bool
    ) -> list[Finding]:
        """Every configured finding: from a `live` incremental detector when the stream has one for
        that (detector, channel), else the batch form on the record (one code path for both forms).

        `has_reasoning`: the response had reasoning text, even when a stream kept none of it."""
        findings: list[Finding] = []
        content = _content_input(record)
        on_reasoning_too = self._scan_reasoning and has_reasoning
        reasoning = DetectorInput(record.reasoning) if on_reasoning_too else content
        for name, spec, params in self._runs:
            # Deltas carry text only; a record with token ids is judged on them, as in batch form.
            on_content = None if record.token_ids is not None or not live else live.get((name, "content"))
            findings.append(on_content.finish() if on_content else spec.detect(content, params))
            if on_reasoning_too:
                on_reasoning = live.get((name, "reasoning"))
                found = on_reasoning.finish() if on_reasoning else spec.detect(reasoning, params)
                findings.append(_on_channel(found, "reasoning"))
        if self._leak is not None:
            leak, leak_params = self._leak
            stripped = record.special_tokens_stripped
            if stripped:
                leak_params = self._stripped_leak_params
            on_leak = None if stripped or not live else live.get((LEAK_DETECTOR, "content"))
            findings.append(on_leak.finish() if on_leak else leak.detect(content, leak_params))
        return findings

    def _assemble(
        self, record: Record, findings: list[Finding], lengths: tuple[int, int] | None = None
    ) -> Classification:
        """The verdict; `lengths` (content, reasoning chars) stand in for the record's when its text
        was not kept (a stream, classification/streams.py)."""
        text_chars, reasoning_chars = lengths or (len(record.text), len(record.reasoning))
        verdict = self._verdict
        looping: list[Finding] = []
        leaks: dict[str, int] = {}
        score = 0.0  # the repetition score: the largest coverage among the verdict's detectors
        for f in findings:  # one pass: most findings are clean
            if f.kind == "repetition":
                if f.detector in verdict:
                    if f.coverage is not None and f.coverage > score:
                        score = f.coverage
                    if f.flagged:
                        looping.append(f)
            elif f.flagged:  # a template leak
                for token, n in f.leaks.items():
                    leaks[token] = leaks.get(token, 0) + n
        if len(looping) > 1:
            order = self._verdict_order
            looping.sort(key=lambda f: (f.channel != "content", order[f.detector]))
        output_tokens = record.output_tokens
        if output_tokens is None and record.token_ids is not None:
            output_tokens = _output_tokens(record)
        ceiling = is_ceiling_hit(record.finish_reason, output_tokens, record.max_tokens)
        return _new_classification(
            _FLAGS[(bool(looping), bool(leaks), ceiling)],  # flags
            record.finish_reason,
            tuple(findings),
            _loop_span(looping[0], text_chars, reasoning_chars, output_tokens) if looping else None,
            leaks,
            text_chars,
            reasoning_chars,
            min(score, 1.0),  # repetition_score
            output_tokens,
            record.max_tokens,
            record.model,
            record.run,
            record.step,
            record.identity,
            None,  # path: set by the line pipeline
            None,  # line
            record.text,
            record.reasoning,
        )


class ResponseStream:
    """One in-flight response: one incremental detector per (detector, channel), first finding kept.

    Detectors take the delta only; which channel a delta belongs to is this class's business, and it
    names the channel on the findings it returns.
    """

    def __init__(self, classifier: Classifier) -> None:
        self._classifier = classifier
        cfg = classifier.config
        self._live: dict[tuple[str, Channel], IncrementalDetector] = {}
        channels: tuple[Channel, ...] = ("content", "reasoning") if cfg.scan_reasoning else ("content",)
        for name in classifier._repetition:
            factory = DETECTORS[name].incremental
            for channel in channels:
                self._live[(name, channel)] = factory(classifier._params[name])
        if cfg.template_leak:
            leak = DETECTORS[LEAK_DETECTOR].incremental
            self._live[(LEAK_DETECTOR, "content")] = leak(classifier._params[LEAK_DETECTOR])
        self.first_finding: Finding | None = None
        self.loop_finding: Finding | None = None
        """The first in-flight finding of a detector in `repetition_detectors` (the verdict): from
        then on the response is certain to be flagged `repetition` (incremental forms latch)."""

    def feed(self, delta: str, channel: Channel = "content") -> Finding | None:
        """Feed one delta; returns a finding the first time anything fires in this stream."""
        fired: Finding | None = None
        verdict = self._classifier._verdict
        for (name, ch), detector in self._live.items():
            if ch != channel:
                continue
            finding = detector.feed(delta)
            if finding is None:
                continue
            finding = _on_channel(finding, channel)
            fired = fired or finding
            if self.loop_finding is None and name in verdict and finding.kind == "repetition":
                self.loop_finding = finding
        if fired is not None and self.first_finding is None:
            self.first_finding = fired
            return fired
        return None

    def finish(self, record: Record, *, lengths: tuple[int, int] | None = None) -> Classification:
        """Final verdict; `record` carries the response metadata (its text is not read unless it has
        token ids, which are judged in batch form as `classify` does).

        `lengths`: the true (content, reasoning) lengths when `record` does not hold the text (the
        incremental detectors saw every delta, so the text need not be kept).
        """
        classifier = self._classifier
        has_reasoning = bool(lengths[1] if lengths is not None else record.reasoning)
        findings = classifier._findings(record, self._live, has_reasoning=has_reasoning)
        return classifier._assemble(record, findings, lengths)


_DEFAULT: Classifier | None = None


def default_classifier() -> Classifier:
    """The classifier with default settings, built once per process (building validates params)."""
    global _DEFAULT
    if _DEFAULT is None:
        _DEFAULT = Classifier()
    return _DEFAULT


def classify(
    response: str | Record,
    classifier: Classifier | None = None,
    *,
    reasoning: str = "",
    finish_reason: FinishReason | str = FinishReason.UNKNOWN,
    token_ids: Sequence[int] | None = None,
    prompt_length: int = 0,
    output_tokens: int | None = None,
    max_tokens: int | None = None,
) -> Classification:
    """Classify one response with `classifier` (default settings when omitted).

    `response` is the visible text (`classify("...")`) with the other fields as keywords, or a whole
    `Record` (then the keywords must stay at their defaults: the record carries them).
    """
    classifier = classifier or default_classifier()
    if isinstance(response, Record):
        given = (reasoning, finish_reason, token_ids, prompt_length, output_tokens, max_tokens)
        if given != ("", FinishReason.UNKNOWN, None, 0, None, None):
            raise TypeError("classify(record, ...): set reasoning, finish_reason, ... on the Record itself")
        return classifier.classify(response)
    if not isinstance(response, str):
        raise TypeError(
            f"classify() takes the response text (str) or a Record, not {type(response).__name__}"
        )
    record = Record(
        text=response,
        reasoning=reasoning,
        finish_reason=parse_finish_reason(finish_reason),
        token_ids=token_ids,
        prompt_length=prompt_length,
        output_tokens=output_tokens,
        max_tokens=max_tokens,
    )
    return classifier.classify(record)


def _on_channel(finding: Finding, channel: Channel) -> Finding:
    return finding if finding.channel == channel else replace(finding, channel=channel)


_new_detector_input = slots_builder(DetectorInput)


def _content_input(record: Record) -> DetectorInput:
    return _new_detector_input(
        record.text, record.reasoning, record.token_ids, record.prompt_length, record.action_mask
    )


def _output_tokens(record: Record) -> int | None:
    if record.output_tokens is not None:
        return record.output_tokens
    if record.token_ids is not None:
        if record.action_mask is not None:  # masks are int lists: nonzero = generated, counted in C
            return len(record.action_mask) - record.action_mask.count(0)
        return max(len(record.token_ids) - record.prompt_length, 0)
    return None


def _loop_span(finding: Finding, text_chars: int, reasoning_chars: int, tokens: int | None) -> LoopSpan:
    channel = finding.channel
    in_content = channel == "content"
    length = text_chars if in_content else reasoning_chars
    onset = finding.onset or 0  # clamped into [0, length], as min(max(onset, 0), length)
    if onset < 0:
        onset = 0
    if onset > length:
        onset = length
    after = length - onset
    fraction = onset / length if length else 0.0
    tokens_after = None
    if tokens is not None and in_content and length and not reasoning_chars:
        # Proportional estimate: no tokenizer here, so tokens spent after the onset are scaled by chars.
        tokens_after = round(tokens * after / length)
    return _new_loop_span(
        channel,
        onset,
        finding.period,
        finding.unit,
        finding.covered_chars,
        after,  # chars_after_onset
        fraction,  # onset_fraction
        tokens_after,  # tokens_after_onset
    )
