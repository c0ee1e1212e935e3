"""Progress of the long phases of training (PPO steps, imitation demos and fit, evaluations).

On a terminal a ``rich`` progress bar (count, elapsed, time left); otherwise (a log file, a
pipe, CI) plain lines: one when the phase starts, one every ``interval`` seconds, one when it
ends. ``log`` prints a message above the bar (or as a line), so messages and the bar never
garble each other.

>>> import io
>>> out = io.StringIO()
>>> with Progress("[demo]", 3, "rounds", stream=out, interval=0) as bar:
...     bar.update(2)
...     bar.log("[demo] a message")
>>> print(out.getvalue().replace("0 s", "T"), end="")  # doctest: +ELLIPSIS
[demo] 0/3 rounds
[demo] 2/3 rounds (67%)...
[demo] a message
[demo] 3/3 rounds done in ...
"""

from __future__ import annotations

import sys
import time
from types import TracebackType
from typing import Any, TextIO

__all__ = ["Progress"]


class Progress:
    """One phase's progress (see the module docstring); ``enabled=False`` shows only ``log`` messages."""

    def __init__(self, description: str, total: int, unit: str = "", *, enabled: bool = True,
                 stream: TextIO | None = None, interval: float = 10.0, start: int = 0) -> None:
        self.description, self.total, self.unit = description, max(0, int(total)), unit
        self.start = min(max(0, int(start)), self.total)  # a resumed phase counts on from here
        self.enabled = enabled
        self.stream = sys.stderr if stream is None else stream
        self.interval = interval
        self.completed = self.start
        self._bar: Any = None
        self._task: Any = None
        self._started = self._printed = time.monotonic()

    def _count(self, n: int) -> str:
        return f"{n:,}/{self.total:,}{' ' + self.unit if self.unit else ''}"

    def __enter__(self) -> Progress:
        self._started = self._printed = time.monotonic()
        if not self.enabled:
            return self
        if self.start:
            self.log(f"{self.description} resuming at step {self.start:,} of {self.total:,}")
        if self.stream.isatty():
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn, TimeRemainingColumn
            from rich.progress import Progress as Bar

            self._bar = Bar(TextColumn("{task.description}", markup=False), BarColumn(), MofNCompleteColumn(), TextColumn(self.unit),
                            TimeElapsedColumn(), TimeRemainingColumn(), console=Console(file=self.stream))
            self._bar.__enter__()
            self._task = self._bar.add_task(self.description, total=self.total, completed=self.completed)
        else:
            self._line(self._count(self.completed))
        return self

    def update(self, completed: int) -> None:
        """Set how much is done (at most one plain line per ``interval`` seconds)."""
        self.completed = min(int(completed), self.total)
        if not self.enabled:
            return
        if self._bar is not None:
            self._bar.update(self._task, completed=self.completed)
            return
        now = time.monotonic()
        if now - self._printed >= self.interval and self.completed < self.total:
            self._printed = now
            elapsed = now - self._started
            rate = (self.completed - self.start) / elapsed if elapsed > 0 else 0.0  # this session's rate
            left = f", about {(self.total - self.completed) / rate:.0f} s left" if rate > 0 else ""
            self._line(f"{self._count(self.completed)} ({100 * self.completed / max(1, self.total):.0f}%){left}")

    def log(self, message: str) -> None:
        """Print a message (above the bar on a terminal)."""
        if self._bar is not None:
            self._bar.console.print(message, markup=False, highlight=False, soft_wrap=True)
        else:
            print(message, file=self.stream, flush=True)

    def _line(self, text: str) -> None:
        print(f"{self.description} {text}", file=self.stream, flush=True)

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 traceback: TracebackType | None) -> None:
        if self._bar is not None:
            self._bar.__exit__(kind, error, traceback)
            self._bar = None
        elif self.enabled:
            seconds = time.monotonic() - self._started
            if kind is None:
                self.completed = self.total
                self._line(f"{self._count(self.total)} done in {seconds:.0f} s")
            else:  # stopped (TrainingInterrupted, an error): how far it got, never "done"
                self._line(f"stopped at {self._count(self.completed)} after {seconds:.0f} s")
