"""`ExampleReplay`: the bundled examples, written whole and then replayed slowly, for `run --example`.

Why replay rather than read once: a one-shot read leaves `rate(...[5m])` at NaN after the first
scrape interval and the per-step rollout gauges empty, so the README's queries, the boards and the
alerts show nothing live. The replay writes every example file whole into a temporary folder
(the first counts are the ones examples/README.md promises), then appends each file's lines again
in a loop, `rate` lines per second per file, each pass with fresh ids (`id` gets a `-rN` suffix)
and the rollout step advanced (`rollout_id` + N), so a new step starts every pass (16 samples:
8 s at the default rate) and completes the one before it. The daemon tails the folder with its
ordinary file_tail source: the real tailer, detection and pipeline. A file over `ROTATE_BYTES` is
renamed to `NAME.1` and started anew (rename + create, which the tailer follows), so the folder
stays bounded however long the demo runs.
"""

from __future__ import annotations

import json
import logging
import shutil
import threading
import time
from pathlib import Path
from typing import Any

__all__ = ["DEFAULT_RATE", "ROTATE_BYTES", "ExampleReplay"]

log = logging.getLogger(__name__)

DEFAULT_RATE = 2.0
"""Lines appended per second to each example file (`run --example-rate`)."""
ROTATE_BYTES = 4 * 1024 * 1024


class ExampleReplay:
    """Copies `examples` into `folder` now; `start()` keeps appending replays until `stop()`."""

    def __init__(
        self, examples: list[Path], folder: Path, rate: float = DEFAULT_RATE, rotate_bytes: int = ROTATE_BYTES
    ) -> None:
        self.folder = folder
        self.rate = rate
        self.rotate_bytes = rotate_bytes
        self._lines = {source.name: source.read_text(encoding="utf-8").splitlines() for source in examples}
        for source in examples:
            shutil.copyfile(source, folder / source.name)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.passes = 0

    @property
    def paths(self) -> list[str]:
        """The files a tail must read (their rotated copies are left behind on purpose)."""
        return sorted(str(self.folder / name) for name in self._lines)

    def start(self) -> None:
        """Begin replaying in a daemon thread; with rate 0 the examples are read once, as written."""
        if self.rate <= 0 or self._thread is not None:
            return
        self._thread = threading.Thread(target=self._run, name="example-replay", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    def _run(self) -> None:
        interval = 1.0 / self.rate
        longest = max((len(lines) for lines in self._lines.values()), default=0)
        next_at = time.monotonic()
        while not self._stop.is_set():
            self.passes += 1
            for index in range(longest):
                for name, lines in self._lines.items():
                    if index < len(lines):
                        self._append(name, replayed(lines[index], self.passes))
                next_at += interval
                if self._stop.wait(max(0.0, next_at - time.monotonic())):
                    return

    def _append(self, name: str, line: str) -> None:
        path = self.folder / name
        try:
            if path.exists() and path.stat().st_size > self.rotate_bytes:
                path.replace(path.with_name(name + ".1"))
            with path.open("a", encoding="utf-8") as out:
                out.write(line + "\n")
        except OSError as exc:  # a full disk must not kill the demo daemon; the next line tries again
            log.warning("example replay cannot write %s: %s", path, exc)


def replayed(line: str, replay: int) -> str:
    """One example line as replay number `replay` writes it: a fresh `id`, the step moved on."""
    obj: dict[str, Any] = json.loads(line)
    if isinstance(obj.get("id"), str):
        obj["id"] = f"{obj['id']}-r{replay}"
    if isinstance(obj.get("rollout_id"), int):
        obj["rollout_id"] += replay
        if isinstance(obj.get("weight_versions"), list):
            obj["weight_versions"] = [str(obj["rollout_id"])]
    if isinstance(obj.get("created"), int):
        obj["created"] = int(time.time())
    return json.dumps(obj, ensure_ascii=False)
