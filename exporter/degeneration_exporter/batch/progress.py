"""A progress bar on stderr while `scan` runs: bytes and records done, rate, flagged so far, time left.

Why only on a terminal: a log file or CI capture must get the report and the errors, nothing else;
`--quiet` turns it off on a terminal too. tqdm is imported only when a bar is shown.
"""

from __future__ import annotations

import shutil
import sys
from typing import Any

__all__ = ["Progress"]


class Progress:
    """Advance by finished pieces; `close()` removes the bar. A no-op when not enabled."""

    def __init__(self, total_bytes: int, *, enabled: bool) -> None:
        self._bar: Any = None
        self.records = 0
        self.flagged = 0
        if enabled:
            size = shutil.get_terminal_size((100, 20))  # a terminal reporting 0x0 gets 100x20
            from tqdm import tqdm  # type: ignore[import-untyped,unused-ignore]

            tqdm.monitor_interval = 0  # no monitor thread: worker processes are forked after this
            self._bar = tqdm(
                total=total_bytes or None,
                unit="B",
                unit_scale=True,
                unit_divisor=1024,
                file=sys.stderr,
                desc="scan",
                ncols=size.columns,
                nrows=size.lines,  # tqdm hides a bar at a row beyond a 0-row terminal
                leave=False,
            )

    @staticmethod
    def wanted(quiet: bool) -> bool:
        return not quiet and sys.stderr.isatty()

    def advance(self, size: int, records: int, flagged: int) -> None:
        self.records += records
        self.flagged += flagged
        if self._bar is not None:
            self._bar.set_postfix(records=self.records, flagged=self.flagged, refresh=False)
            self._bar.update(size)
            self._bar.refresh()  # once per finished piece (megabytes): cheap, and every piece is shown

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
