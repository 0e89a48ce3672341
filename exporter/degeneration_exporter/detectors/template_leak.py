"""Template special tokens leaking into visible content (`template_leak`), detectors.md §4.4.

Why: a chat-template token in the content a user sees (`<|im_end|>`, `<|eot_id|>`, `<end_of_turn>`)
means the server's stop handling or the model's template is broken, usually for a whole deployment.
Only content counts: the reasoning channel is never a leak, and `<think>`/`</think>` are not leaks
by default (engines route them; only the osaurus gauntlet list has them). Tokens come as named
families (`FAMILIES`), including the three osaurus lists under their own names and order. Reports
every token's non-overlapping count and, as osaurus does, the first token in list order present.
Scanning is one compiled alternation, nested by prefix (C speed), and `str.find` per token only when
it hits. Deltas keep a carry of (longest token - 1) code points, so a token split across any deltas
is found and counted once.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Annotated, Literal

from pydantic import BaseModel, Field

from .base import DetectorInput, Finding, per_params

__all__ = [
    "DEFAULT_FAMILIES",
    "FAMILIES",
    "LeakScan",
    "TemplateLeak",
    "TemplateLeakParams",
    "TokenScanner",
    "detect_template_leak",
    "scanner_of",
]

FamilyName = Literal[
    "chatml",
    "llama3",
    "llama2",
    "gemma",
    "phi",
    "mistral",
    "deepseek",
    "gpt_oss_harmony",
    "osaurus_stream",
    "osaurus_gauntlet",
    "osaurus_autorun",
    "stripped_roles",
]

FAMILIES: dict[str, tuple[str, ...]] = {
    "chatml": ("<|im_start|>", "<|im_end|>", "<|endoftext|>"),
    "llama3": (
        "<|begin_of_text|>",
        "<|end_of_text|>",
        "<|start_header_id|>",
        "<|end_header_id|>",
        "<|eot_id|>",
        "<|eom_id|>",
        "<|python_tag|>",
    ),
    "llama2": ("[INST]", "[/INST]", "<<SYS>>", "<</SYS>>", "</s>"),
    "gemma": ("<start_of_turn>", "<end_of_turn>", "<bos>", "<eos>"),
    "phi": ("<|system|>", "<|user|>", "<|assistant|>", "<|end|>", "<|endoftext|>", "<|im_sep|>"),
    "mistral": (
        "[INST]",
        "[/INST]",
        "[TOOL_CALLS]",
        "[AVAILABLE_TOOLS]",
        "[/AVAILABLE_TOOLS]",
        "[TOOL_RESULTS]",
        "[/TOOL_RESULTS]",
        "[SYSTEM_PROMPT]",
        "[/SYSTEM_PROMPT]",
        "</s>",
    ),
    "deepseek": (
        "<｜begin▁of▁sentence｜>",
        "<｜end▁of▁sentence｜>",
        "<｜User｜>",
        "<｜Assistant｜>",
        "<｜tool▁calls▁begin｜>",
        "<｜tool▁calls▁end｜>",
        "<｜tool▁call▁begin｜>",
        "<｜tool▁call▁end｜>",
        "<｜tool▁sep｜>",
        "<｜tool▁outputs▁begin｜>",
        "<｜tool▁outputs▁end｜>",
        "<｜tool▁output▁begin｜>",
        "<｜tool▁output▁end｜>",
    ),
    "gpt_oss_harmony": (
        "<|start|>",
        "<|end|>",
        "<|message|>",
        "<|channel|>",
        "<|return|>",
        "<|call|>",
        "<|constrain|>",
        "<|startoftext|>",
        "<|endoftext|>",
    ),
    # The three osaurus lists, members and order exactly as published (§4.4).
    "osaurus_stream": (
        "<|im_start|>",
        "<|im_end|>",
        "\u3008|EOS|\u3009",
        "<tool_call>",
        "]~!b[",
        "[e~[",
        "\ufffe",
    ),
    "osaurus_gauntlet": (
        "<|im_start|>",
        "<|im_end|>",
        "\u3008|EOS|\u3009",
        "<think>",
        "</think>",
        "<tool_call>",
        "]~!b[",
        "[e~[",
        "<start_of_turn>",
        "<end_of_turn>",
        "<|eot_id|>",
        "<|start_header_id|>",
        "<|end_header_id|>",
        "<|end|>",
        "<|endoftext|>",
        "\ufffe",
    ),
    "osaurus_autorun": (
        "<|im_start|>",
        "<|im_end|>",
        "<|endoftext|>",
        "<|begin_of_text|>",
        "<|end_of_text|>",
        "<|start_header_id|>",
        "<|end_header_id|>",
        "<|eot_id|>",
        "<|eom_id|>",
        "<|system|>",
        "<|user|>",
        "<|assistant|>",
        "<|channel|>",
        "<|message|>",
        "<|return|>",
        "<start_of_turn>",
        "<end_of_turn>",
        "[INST]",
        "[/INST]",
        "<<SYS>>",
        "<</SYS>>",
        "</s>",
    ),
    # A template turn whose special tokens were stripped on decode (verl `skip_special_tokens=True`:
    # `<|im_end|>\n<|im_start|>user\n` -> `\nuser\n`). Not a default: applied only to records a
    # format marks `special_tokens_stripped`.
    "stripped_roles": ("\nsystem\n", "\nuser\n", "\nassistant\n"),
}

DEFAULT_FAMILIES: tuple[FamilyName, ...] = (
    "chatml",
    "llama3",
    "llama2",
    "gemma",
    "phi",
    "mistral",
    "deepseek",
    "gpt_oss_harmony",
)

Token = Annotated[str, Field(min_length=1)]


class TemplateLeakParams(BaseModel, frozen=True, extra="forbid"):
    """Config section `detectors.template_leak`: which special tokens count as a leak, in report order."""

    families: tuple[FamilyName, ...] = Field(
        DEFAULT_FAMILIES,
        description="Token families, in priority order (the first listed token present is reported).",
    )
    extra_tokens: tuple[Token, ...] = Field(
        (), description="More literal tokens, appended after the families."
    )
    exclude_tokens: tuple[Token, ...] = Field(
        (), description="Tokens never reported, even when a family lists them."
    )

    def tokens(self) -> tuple[str, ...]:
        """The resolved list: families in order, then extras, duplicates and exclusions removed."""
        excluded = set(self.exclude_tokens)
        ordered = [tok for family in self.families for tok in FAMILIES[family]] + list(self.extra_tokens)
        return tuple(tok for tok in dict.fromkeys(ordered) if tok not in excluded)


@dataclass(frozen=True, slots=True)
class LeakScan:
    """Counts per token (non-overlapping, list order), the first listed token present, the leftmost offset."""

    counts: dict[str, int]
    token: str | None
    onset: int | None


_ANCHORED_TRIES = 64  # token starts tried one by one; past that, one regex search is cheaper


def _trie(tokens: Sequence[str]) -> str:
    """A regex matching where any of `tokens` starts, its branches nested by shared prefix.

    Why: `re` tries a flat alternation's branches one by one at every `<` or `[`, so markup (500 `<`
    in 4,000 characters) took ~240 µs a text; nested, a position costs one branch per character
    read (~20 µs). Only "does one start here" is asked, so a token that another token extends cuts
    the longer one off."""
    if "" in tokens:
        return ""
    groups: dict[str, list[str]] = {}
    for tok in tokens:
        groups.setdefault(tok[0], []).append(tok[1:])
    branches = [re.escape(first) + _trie(rest) for first, rest in sorted(groups.items())]
    return branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"


class TokenScanner:
    """A fixed token list: a prefix-nested alternation says "any token here?", `str.find` then counts."""

    __slots__ = ("carry_chars", "firsts", "pattern", "tokens")

    def __init__(self, tokens: tuple[str, ...]) -> None:
        self.tokens = tokens
        self.pattern = re.compile(_trie(tokens)) if tokens else None
        self.carry_chars = max((len(tok) for tok in tokens), default=1) - 1
        # Every token starts with one of a few characters (`<`, `[`): most texts hold none of them, and
        # a memchr-speed `in` per character is cheaper than the alternation's pass.
        self.firsts = tuple(sorted({tok[0] for tok in tokens if tok}))

    def has_any(self, text: str) -> bool:
        """Whether any token occurs in `text` (C-speed passes).

        The alternation is tried only where a token could start: a regex search walks every
        character (about 8 ns each, a millisecond per 100 kB); `in` and `str.find` of one character
        are a memchr, and `str.count` runs only when one is there. A text full of `<` or `[`
        (markup) gets the one search instead."""
        pattern = self.pattern
        if pattern is None:
            return False
        for c in self.firsts:  # `in` of one character is a memchr; `count` walks every character
            if c in text:
                break
        else:
            return False  # nearly every reply: about 0.2 µs for a short one instead of 1.2 µs
        starts = sum(map(text.count, self.firsts))
        if starts > _ANCHORED_TRIES:
            return pattern.search(text) is not None
        for c in self.firsts:
            at = text.find(c)
            while at >= 0:
                if pattern.match(text, at) is not None:
                    return True
                at = text.find(c, at + 1)
        return False

    def first_present(self, text: str) -> str | None:
        """The first token in list order that occurs in `text` (osaurus' report rule)."""
        if not self.has_any(text):
            return None
        return next((tok for tok in self.tokens if tok in text), None)

    def scan(self, text: str) -> LeakScan:
        """Batch scan of one text."""
        if not self.has_any(text):
            return LeakScan({}, None, None)
        counts = {tok: n for tok in self.tokens if (n := text.count(tok))}
        token = next(iter(counts), None)
        onset = min(text.find(tok) for tok in counts) if counts else None
        return LeakScan(counts, token, onset)


@per_params
def _scanner_for(params: TemplateLeakParams) -> TokenScanner:
    """One scanner per configuration: resolving the token list and compiling the alternation cost
    about ten times the scan of a typical reply, so they are not redone per record or stream (equal
    params built apart share it through `scanner_of`)."""
    return scanner_of(params.tokens())


@lru_cache(maxsize=32)
def scanner_of(tokens: tuple[str, ...]) -> TokenScanner:
    return TokenScanner(tokens)


_CLEAN = Finding(
    detector="template_leak",
    kind="template_leak",
    flagged=False,
    score=0.0,
    leaks={},
    details={"token": None},
)
"""What `_leak_finding` builds for a scan that found nothing (nobody mutates a Finding's maps)."""


def _leak_finding(scan: LeakScan, details_token: str | None) -> Finding:
    """`scan.counts` is already in token-list order (both scans walk the list), as reports need."""
    counts = scan.counts
    if not counts and details_token is None and scan.onset is None:
        return _CLEAN  # nearly every reply: one shared (frozen) Finding instead of a new one each
    flagged = bool(counts)
    return Finding(
        detector="template_leak",
        kind="template_leak",
        flagged=flagged,
        score=float(sum(counts.values())),
        onset=scan.onset,
        unit=details_token,
        covered_chars=sum(len(tok) * n for tok, n in counts.items()) if flagged else None,
        evidence=f'template token "{details_token}" in content' if flagged else None,
        leaks=counts,
        details={"token": details_token},
    )


class TemplateLeak:
    """Incremental form over content deltas (the classifier never feeds it reasoning), with a carry.

    `feed` returns the published live report once (the first listed token present in carry + delta,
    then it latches); counting goes on for `finish`, which equals the batch scan of all content.
    """

    def __init__(self, params: TemplateLeakParams) -> None:
        self._scanner = _scanner_for(params)
        self._carry = ""
        self._seen = 0  # content code points fed
        self._next_free: dict[str, int] = {}  # per token: where its next counted occurrence may start
        self._counts: dict[str, int] = {}
        self._onset: int | None = None
        self._fired = False

    def feed(self, delta: str) -> Finding | None:
        """One content delta; a Finding the first time a token shows, then None (latch)."""
        if not delta:
            return None
        scanner = self._scanner
        buffer = self._carry + delta
        base = self._seen - len(self._carry)
        region = self._seen  # occurrences counted now end after this absolute offset
        self._seen += len(delta)
        keep = scanner.carry_chars
        self._carry = buffer[max(0, len(buffer) - keep) :] if keep else ""
        if not scanner.has_any(buffer):
            return None
        self._count(buffer, base, region)
        if self._fired:
            return None
        self._fired = True
        token = scanner.first_present(buffer)
        return _leak_finding(self._scan_so_far(), token)

    def _count(self, buffer: str, base: int, region: int) -> None:
        for tok in self._scanner.tokens:
            size = len(tok)
            pos = max(self._next_free.get(tok, 0), region - size + 1) - base
            found = buffer.find(tok, max(pos, 0))
            while found >= 0:
                self._counts[tok] = self._counts.get(tok, 0) + 1
                if self._onset is None or base + found < self._onset:
                    self._onset = base + found
                pos = found + size
                self._next_free[tok] = base + pos
                found = buffer.find(tok, pos)

    def _scan_so_far(self) -> LeakScan:
        counts = {tok: self._counts[tok] for tok in self._scanner.tokens if tok in self._counts}
        return LeakScan(counts, next(iter(counts), None), self._onset)

    def finish(self) -> Finding:
        """All content fed: the same Finding as `detect_template_leak` on the joined content."""
        scan = self._scan_so_far()
        return _leak_finding(scan, scan.token)


def detect_template_leak(inp: DetectorInput, params: TemplateLeakParams) -> Finding:
    """Batch form: the content channel only."""
    scanner = _scanner_for(params)
    if not scanner.has_any(inp.text):
        return _CLEAN  # what `_leak_finding` makes of an empty scan, without building the scan
    scan = scanner.scan(inp.text)
    return _leak_finding(scan, scan.token)
