"""Ctrl-C (SIGINT) and SIGTERM during training: stop at a safe point with a resumable checkpoint.

``StopRequests`` replaces the two handlers while a run is set up and trains. The handler only
records the signal: it never raises. An exception raised from a signal handler lands wherever
the main thread happens to be, and there it can be lost or changed: inside a ``fork`` hook of a
worker pool Python prints it as "Exception ignored" and carries on (an evaluation of many games
would then run to its end), inside a class being created it comes out as a ``RuntimeError``.
So the work asks instead, at points where stopping is safe:

* the PPO loop (rollouts, updates, saves): the trainer's ``learn_until`` sees ``requested`` at the
  next env step and returns; the schedule writes the resume state and stops the run;
* setup, the imitation warm start and the games of an evaluation (work that changes nothing a
  checkpoint holds) call ``check()`` between phases, rounds, batches and games, and at least
  every 0.1 s while an evaluation's worker processes play: it raises ``TrainingInterrupted``,
  and the work is abandoned on the spot.

A time budget (``StopRequests(seconds=...)``, ``training.batched.gpu_slice --seconds``) is a stop
request too: once it is spent, ``requested`` is true as after a Ctrl-C (``signum`` SIGINT), so the run
stops the same way, at the same safe points.

Worker processes forked while the handlers are installed (vec-env shards, evaluation pools)
inherit them: there a SIGINT is ignored (the parent stops them) and a SIGTERM ends the worker.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Callable
from pathlib import Path
from types import FrameType, TracebackType

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
    """Installed with ``with StopRequests() as stop:``; see the module docstring. ``seconds``: a time budget,
    counted from the ``with`` on ``clock`` (None: none)."""

    def __init__(self, seconds: float | None = None, clock: Callable[[], float] = time.monotonic) -> None:
        if seconds is not None and not seconds > 0:
            raise ValueError(f"seconds: {seconds!r}; a time budget is a positive number of seconds (or None)")
        self.signum: int | None = None
        self.seconds, self._clock = seconds, clock
        self._deadline: float | None = None
        self._previous: dict[int, Callable[[int, FrameType | None], object] | int | None] = {}
        self._pid = os.getpid()

    def __enter__(self) -> StopRequests:
        if self.seconds is not None:
            self._deadline = self._clock() + self.seconds
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
        self.signum = signum  # only recorded: raising here could land anywhere (see the module docstring)

    @property
    def requested(self) -> bool:
        """Whether a stop was asked for (a signal, or the time budget spent: then ``signum`` is SIGINT)."""
        if self.signum is None and self._deadline is not None and self._clock() >= self._deadline:
            self.signum = signal.SIGINT  # the budget ends the run as a Ctrl-C does
        return self.signum is not None

    def check(self) -> None:
        """Raise ``TrainingInterrupted`` if a stop was asked for (called where stopping is safe)."""
        if self.requested:
            raise TrainingInterrupted(self.signum or signal.SIGINT)
