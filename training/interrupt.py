"""Ctrl-C (SIGINT) and SIGTERM during training: stop at a safe point with a resumable checkpoint.

``StopRequests`` replaces the two handlers while a run is set up and trains. A signal is
acted on in one of two ways:

* in ``deferred`` sections (the PPO loop: rollouts, updates, saves) it is only recorded; the
  training callback sees it at the next env step, writes the resume state and stops;
* everywhere else (setup, the imitation warm start, the games of an evaluation: work that
  changes nothing a checkpoint holds) it raises ``TrainingInterrupted`` at once.

Worker processes forked while the handlers are installed (vec-env shards, evaluation pools)
inherit them: there a SIGINT is ignored (the parent stops them) and a SIGTERM ends the worker.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Iterator
from pathlib import Path
from types import FrameType, TracebackType
from typing import Any

__all__ = ["StopRequests", "TrainingInterrupted"]

SIGNALS = (signal.SIGINT, signal.SIGTERM)


class TrainingInterrupted(Exception):
    """A run stopped by SIGINT or SIGTERM; ``steps`` is its resume point, ``run_dir`` where it is."""

    def __init__(self, signum: int, steps: int = 0, run_dir: Path | None = None) -> None:
        super().__init__(f"interrupted by {signal.Signals(signum).name}")
        self.signum, self.steps, self.run_dir = signum, steps, run_dir

    @property
    def exit_code(self) -> int:
        """The shell's convention for a process ended by this signal (130 for SIGINT, 143 for SIGTERM)."""
        return 128 + self.signum


class StopRequests:
    """Installed with ``with StopRequests() as stop:``; see the module docstring."""

    def __init__(self) -> None:
        self.signum: int | None = None
        self._immediate = True
        self._previous: dict[int, Any] = {}
        self._pid = os.getpid()

    def __enter__(self) -> StopRequests:
        if threading.current_thread() is threading.main_thread():  # signal handlers live in the main thread
            for signum in SIGNALS:
                self._previous[signum] = signal.signal(signum, self._handle)
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 traceback: TracebackType | None) -> None:
        for signum, handler in self._previous.items():
            signal.signal(signum, handler)
        self._previous.clear()

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        if os.getpid() != self._pid:  # a forked worker: the parent decides
            if signum == signal.SIGTERM:
                os._exit(128 + signum)
            return
        self.signum = signum
        if self._immediate:
            raise TrainingInterrupted(signum)

    @property
    def requested(self) -> bool:
        """Whether a stop was asked for."""
        return self.signum is not None

    @contextlib.contextmanager
    def deferred(self) -> Iterator[None]:
        """A section where a signal is only recorded (polled with ``requested``)."""
        before, self._immediate = self._immediate, False
        try:
            yield
        finally:
            self._immediate = before

    @contextlib.contextmanager
    def immediate(self) -> Iterator[None]:
        """A section a signal interrupts at once (``TrainingInterrupted``), also if one came just before."""
        before, self._immediate = self._immediate, True
        try:
            if self.signum is not None:
                raise TrainingInterrupted(self.signum)
            yield
        finally:
            self._immediate = before
