"""Progress of a long phase, the one reporter of the project: training, imitation, tournaments, evaluations.

On a terminal a ``rich`` progress bar (count, elapsed, time left); otherwise (a log file, a
pipe, CI) plain lines: one when the phase starts, one at most every ``interval`` seconds, one
when it ends, and, if it stops early (an interruption, an error), one saying how far it got,
never "done". A phase resumed part-way (``start``) says so and counts from there. ``log``
prints a message above the bar (or as a line), so messages and the bar never garble each other.
The clock is injectable, so the lines can be tested without waiting.

>>> import io
>>> now = [0.0]
>>> out = io.StringIO()
>>> with Progress("[demo]", 300, "rounds", stream=out, interval=10, clock=lambda: now[0]) as bar:
...     now[0] = 12.0
...     bar.advance(100)
...     bar.log("[demo] a message")
...     now[0] = 15.0
...     bar.update(250)      # under 10 s since the last line: no line
...     now[0] = 30.0
>>> print(out.getvalue(), end="")
[demo] 0/300 rounds
[demo] 100/300 rounds (33%), 12 s elapsed, about 24 s left
[demo] a message
[demo] 300/300 rounds done in 30.0 s
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from types import TracebackType
from typing import Any, TextIO

__all__ = ["PROGRESS_EVERY_S", "Progress"]

PROGRESS_EVERY_S = 10.0
"""Without a terminal, a progress line at most this often (seconds)."""


class Progress:
    """One phase's progress (see the module docstring), used as ``with Progress(...) as bar``.

    ``description`` starts every line; ``total`` is the amount of work in ``unit`` s; ``start``: the
    amount already done (a resumed phase); ``enabled=False`` shows only ``log`` messages;
    ``transient``: the bar disappears when the phase ends (a terminal only); ``stream``: stderr by default.
    """

    def __init__(self, description: str, total: int, unit: str = "", *, enabled: bool = True,
                 stream: TextIO | None = None, interval: float = PROGRESS_EVERY_S, start: int = 0,
                 transient: bool = False, clock: Callable[[], float] = time.monotonic) -> None:
        self.description, self.total, self.unit = description, max(0, int(total)), unit
        self.start = min(max(0, int(start)), self.total)  # a resumed phase counts on from here
        self.enabled, self.transient = enabled, transient
        self.stream = sys.stderr if stream is None else stream
        self.interval, self.clock = interval, clock
        self.completed = self.start
        self._bar: Any = None
        self._task: Any = None
        self._started = self._printed = clock()

    def _count(self, n: int) -> str:
        return f"{n:,}/{self.total:,}{' ' + self.unit if self.unit else ''}"

    def __enter__(self) -> Progress:
        self._started = self._printed = self.clock()
        if not self.enabled:
            return self
        if self.start:
            self.log(f"{self.description} resuming at step {self.start:,} of {self.total:,}")
        if getattr(self.stream, "isatty", lambda: False)():
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn, TimeRemainingColumn
            from rich.progress import Progress as Bar

            self._bar = Bar(TextColumn("{task.description}", markup=False), BarColumn(), MofNCompleteColumn(),
                            TextColumn(self.unit), TimeElapsedColumn(), TimeRemainingColumn(),
                            transient=self.transient, console=Console(file=self.stream))
            self._bar.__enter__()
            self._task = self._bar.add_task(self.description, total=self.total, completed=self.completed)
        else:
            self._line(self._count(self.completed))
        return self

    def advance(self, amount: int) -> None:
        """Add ``amount`` to what is done."""
        self.update(self.completed + int(amount))

    def update(self, completed: int) -> None:
        """Set how much is done (at most one plain line per ``interval`` seconds)."""
        self.completed = min(int(completed), self.total)
        if not self.enabled:
            return
        if self._bar is not None:
            self._bar.update(self._task, completed=self.completed)
            return
        now = self.clock()
        if now - self._printed >= self.interval and self.completed < self.total:
            self._printed = now
            elapsed = now - self._started
            rate = (self.completed - self.start) / elapsed if elapsed > 0 else 0.0  # this session's rate
            left = f", about {(self.total - self.completed) / rate:.0f} s left" if rate > 0 else ""
            self._line(f"{self._count(self.completed)} ({100 * self.completed / max(1, self.total):.0f}%), "
                       f"{elapsed:.0f} s elapsed{left}")

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
            seconds = self.clock() - self._started
            if kind is None:
                self.completed = self.total
                self._line(f"{self._count(self.total)} done in {seconds:.1f} s")
            else:  # stopped (TrainingInterrupted, an error): how far it got, never "done"
                self._line(f"stopped at {self._count(self.completed)} after {seconds:.0f} s")
