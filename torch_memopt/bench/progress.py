"""A one-line progress bar on stderr, redrawn in place, for runs that take minutes.

Written here rather than taken from tqdm, which is not installed everywhere. It draws
only when stderr is a terminal: in a log file or a pipe, ``\\r`` redraws would pile up
as noise, and the tables on stdout already say what ran. It writes to stderr so that
stdout stays the report alone.
"""
from __future__ import annotations

import sys
import time
from typing import TextIO

BAR_WIDTH = 24


class ProgressBar:
    """``[#######.........]  7/45  12s  gemm float16 2048x2048x2048 memopt auto``"""

    def __init__(self, total: int, stream: TextIO | None = None, enabled: bool | None = None):
        self.total = total
        self.begun = 0
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = self.stream.isatty() if enabled is None else enabled
        self.started = time.monotonic()
        self.line_width = 0

    def step(self, what: str) -> None:
        """Show ``what`` as running now; every step begun before it counts as finished."""
        self._draw(min(self.begun, self.total), what)
        self.begun += 1

    def close(self) -> None:
        """Show the bar full, then move to a fresh line."""
        if self.enabled:
            self._draw(self.total, "done")
            self.stream.write("\n")
            self.stream.flush()

    def _draw(self, finished: int, what: str) -> None:
        if not self.enabled:
            return
        filled = BAR_WIDTH * finished // max(self.total, 1)
        elapsed = time.monotonic() - self.started
        width = len(str(self.total))
        line = (
            f"[{'#' * filled}{'.' * (BAR_WIDTH - filled)}] "
            f"{finished:>{width}}/{self.total}  {elapsed:4.0f}s  {what}"
        )
        # Pad over the tail of a longer previous line instead of relying on ANSI codes.
        self.stream.write("\r" + line.ljust(self.line_width))
        self.stream.flush()
        self.line_width = len(line)
