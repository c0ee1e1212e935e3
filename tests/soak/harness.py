"""The loop every soak script shares: seeded cases until a budget is spent, each held to one contract.

A soak family is a function ``make_case(rng, index) -> Case``. The harness builds case ``index`` from
its own generator (``random.Random(f"{family}:{seed}:{index}")``), so one case can be rebuilt alone
(``--case INDEX``) and the same seed always gives the same cases. Each case's ``run`` either returns
an outcome label (an input accepted and held to the family's checks) or raises one of the family's
typed errors (a refusal, counted by type). Anything else fails the soak, and the message names the
family, the seed and the case index, with the command that runs that case again:

* any other exception (an untyped traceback, or a family check that found a problem: AssertionError);
* a case still running after ``--case-timeout`` seconds (``SIGALRM`` interrupts it; a hang that holds
  the interpreter is ended by ``faulthandler`` a little later, which prints every thread's stack);
* this process's resident memory (``VmRSS``, and its peak ``VmHWM``, from ``/proc/self/status``)
  growing past ``--max-rss-growth`` MiB above what it was after the first case;
* a refused case that changed, added or removed a file under its ``watch`` paths (sha256 of every file
  before and after).

``--report PATH`` writes a JSON summary (cases, outcomes, cases per minute, memory, the failure); the
exit status is 0 when the budget was spent without a failure, 1 otherwise, 2 for bad arguments.
"""

from __future__ import annotations

import argparse
import contextlib
import faulthandler
import hashlib
import json
import os
import random
import shutil
import signal
import sys
import tempfile
import threading
import time
import traceback
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

DEFAULT_SECONDS = 60.0
MiB = 1 << 20
MAX_MESSAGE = 4_000  # characters of a refusal's message: one screen, never a dump of the input


@dataclass
class Case:
    """One soak input: what it is (``what``, shown on failure), how to run it, which files it may not change."""

    what: str
    run: Callable[[], str]  # the outcome label of an accepted input; raises a typed error to refuse it
    watch: Sequence[Path] = ()  # files or folders a refusal must leave exactly as they were
    cleanup: Callable[[], None] | None = None  # always called after the case (e.g. delete its folder)


@dataclass
class Family:
    """A soak family: its name, how to build case ``index``, which exceptions are refusals."""

    name: str
    make_case: Callable[[random.Random, int], Case]
    refusals: tuple[type[BaseException], ...]
    case_timeout: float = 30.0  # the default of --case-timeout
    max_rss_growth_mib: float = 1024.0  # the default of --max-rss-growth
    setup: Callable[[argparse.Namespace], None] | None = None  # once, before the first case
    teardown: Callable[[], None] | None = None  # once, after the last
    extra_arguments: Callable[[argparse.ArgumentParser], None] | None = None


class ScratchFolder:
    """A family's temporary folder: made by ``open_scratch`` in its ``setup``, removed with all it holds at
    ``teardown``; ``scratch`` is the folder while it exists."""

    prefix = "soak_"

    def __init__(self) -> None:
        self.folder: Path | None = None

    def open_scratch(self) -> Path:
        """Make the folder (``prefix`` starts its name) and return it."""
        self.folder = Path(tempfile.mkdtemp(prefix=self.prefix))
        return self.folder

    @property
    def scratch(self) -> Path:
        """The folder; only between ``open_scratch`` and ``teardown``."""
        assert self.folder is not None, "open_scratch() was not called"
        return self.folder

    def teardown(self) -> None:
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)
            self.folder = None


class CaseTimeout(BaseException):  # noqa: N818 - a BaseException, so that no ``except Exception`` swallows it
    """Raised into a case that ran past its deadline."""


@dataclass
class Summary:
    """What a soak did: written as ``--report`` JSON."""

    family: str
    seed: int
    cases: int = 0
    seconds: float = 0.0
    outcomes: Counter[str] = field(default_factory=Counter)
    rss_start_mib: float = 0.0
    rss_end_mib: float = 0.0
    rss_peak_mib: float = 0.0
    slowest: tuple[float, int, str] = (0.0, -1, "")  # seconds, case index, what
    peak_jump: tuple[float, int, str] = (0.0, -1, "")  # MiB the peak memory rose by in one case, index, what
    failure: str | None = None
    reproduce: str | None = None

    def as_json(self) -> dict[str, Any]:
        """The report: plain JSON data."""
        per_minute = 60.0 * self.cases / self.seconds if self.seconds > 0 else 0.0
        return {"family": self.family, "seed": self.seed, "cases": self.cases, "seconds": round(self.seconds, 3),
                "cases_per_minute": round(per_minute, 1), "outcomes": dict(sorted(self.outcomes.items())),
                "rss_start_mib": round(self.rss_start_mib, 1), "rss_end_mib": round(self.rss_end_mib, 1),
                "rss_peak_mib": round(self.rss_peak_mib, 1),
                "slowest_case": {"seconds": round(self.slowest[0], 3), "case": self.slowest[1], "input": self.slowest[2][:300]},
                "largest_peak_rise": {"mib": round(self.peak_jump[0], 1), "case": self.peak_jump[1],
                                      "input": self.peak_jump[2][:300]},
                "failure": self.failure, "reproduce": self.reproduce,
                "load_average": [round(x, 2) for x in os.getloadavg()]}


def memory_mib() -> tuple[float, float]:
    """This process's resident memory now and at its peak (``VmRSS``, ``VmHWM``), in MiB; zeros without /proc."""
    now = peak = 0.0
    try:
        with open("/proc/self/status", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("VmRSS:"):
                    now = int(line.split()[1]) / 1024
                elif line.startswith("VmHWM:"):
                    peak = int(line.split()[1]) / 1024
    except OSError:
        pass
    return now, peak


WHOLE_FILE_BYTES = 64 * MiB  # larger files (sparse ones a case made) are fingerprinted, not read whole


def file_digest(path: Path) -> str:
    """sha256 of the file; past ``WHOLE_FILE_BYTES``, of its size, modification time, blocks and first and
    last MiB (a gigabyte of sparse zeros is not read twice a case)."""
    digest = hashlib.sha256()
    info = path.stat()
    with open(path, "rb") as handle:
        if info.st_size <= WHOLE_FILE_BYTES:
            for block in iter(lambda: handle.read(MiB), b""):
                digest.update(block)
        else:
            digest.update(f"{info.st_size}:{info.st_mtime_ns}:{info.st_blocks}".encode())
            digest.update(handle.read(MiB))
            handle.seek(-MiB, os.SEEK_END)
            digest.update(handle.read(MiB))
    return digest.hexdigest()


def snapshot(paths: Sequence[Path]) -> dict[str, str]:
    """sha256 of every file under ``paths`` (files or folders), by path; a missing path maps to ``missing``."""
    out: dict[str, str] = {}
    for root in paths:
        if root.is_dir():
            files = sorted(p for p in root.rglob("*") if p.is_file() or p.is_symlink())
        elif root.exists() or root.is_symlink():
            files = [root]
        else:
            out[str(root)] = "missing"
            continue
        for path in files:
            if path.is_symlink() or not path.is_file():
                out[str(path)] = f"link or special -> {os.readlink(path) if path.is_symlink() else '?'}"
                continue
            out[str(path)] = file_digest(path)
    return out


def changes(before: dict[str, str], after: dict[str, str]) -> list[str]:
    """What differs between two snapshots, in words."""
    found = []
    for path in sorted(set(before) | set(after)):
        if path not in after:
            found.append(f"{path} removed")
        elif path not in before:
            found.append(f"{path} added")
        elif before[path] != after[path]:
            found.append(f"{path} changed")
    return found


@contextlib.contextmanager
def deadline(seconds: float, hard_hang: str = "") -> Iterator[None]:
    """Raise ``CaseTimeout`` in this (main) thread after ``seconds``. Should the interpreter never get the
    signal back (a call in C that does not return), a watchdog thread prints ``hard_hang`` and exits the
    process with status 1 at twice that plus 5 s, and ``faulthandler`` (which needs no interpreter lock)
    prints every thread's stack and exits at twice that plus 10 s."""
    def expire(signum: int, frame: FrameType | None) -> None:
        raise CaseTimeout(f"still running after {seconds:g} s")

    def hung() -> None:
        print(f"{hard_hang} (hung past {2 * seconds + 5:g} s, beyond the reach of SIGALRM)", file=sys.stderr, flush=True)
        os._exit(1)

    previous = signal.signal(signal.SIGALRM, expire)
    watchdog = threading.Timer(2 * seconds + 5, hung)
    watchdog.daemon = True
    watchdog.start()
    signal.setitimer(signal.ITIMER_REAL, seconds)
    faulthandler.dump_traceback_later(2 * seconds + 10, exit=True, file=sys.__stderr__)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        faulthandler.cancel_dump_traceback_later()
        watchdog.cancel()
        signal.signal(signal.SIGALRM, previous)


def case_rng(family: str, seed: int, index: int) -> random.Random:
    """The generator of case ``index``: independent of every other case, so one case can be rebuilt alone."""
    return random.Random(f"{family}:{seed}:{index}")


def build_parser(family: Family, prog: str, description: str) -> argparse.ArgumentParser:
    """The options every soak script takes (and the family's own)."""
    parser = argparse.ArgumentParser(prog=prog, description=description)
    parser.add_argument("--seconds", type=float, default=None,
                        help=f"stop starting cases after this many seconds (default {DEFAULT_SECONDS:g} "
                             "when --iterations is not given either)")
    parser.add_argument("--iterations", type=int, default=None, help="stop after this many cases")
    parser.add_argument("--seed", type=int, default=1, help="seed of every case (default 1)")
    parser.add_argument("--case", type=int, default=None, metavar="INDEX", help="run case INDEX alone (to reproduce)")
    parser.add_argument("--report", type=Path, default=None, metavar="PATH", help="write a JSON summary here")
    parser.add_argument("--case-timeout", type=float, default=family.case_timeout, metavar="SECONDS",
                        help=f"longest a case may run (default {family.case_timeout:g})")
    parser.add_argument("--max-rss-growth", type=float, default=family.max_rss_growth_mib, metavar="MIB",
                        help=f"most this process's memory may grow past its size after the first case "
                             f"(default {family.max_rss_growth_mib:g} MiB)")
    if family.extra_arguments is not None:
        family.extra_arguments(parser)
    return parser


def run_case(case: Case, family: Family, timeout: float, hard_hang: str = "") -> str:
    """Run one case under its deadline: its outcome label, or ``refused:<Type>`` for a typed refusal that
    changed none of the watched files and says what is wrong in at most ``MAX_MESSAGE`` characters; raises
    on anything else."""
    before = snapshot(case.watch)
    try:
        with deadline(timeout, hard_hang):
            try:
                return case.run()
            except family.refusals as err:
                refusal = err
        message = str(refusal)
        if not message.strip() or len(message) > MAX_MESSAGE:
            raise AssertionError(f"a refusal's message must say what is wrong in 1..{MAX_MESSAGE} characters, got "
                                 f"{len(message):,}: {message[:200]!r}")
        lost = changes(before, snapshot(case.watch))
        if lost:
            raise AssertionError(f"a refused input changed files: {'; '.join(lost[:6])}")
        return f"refused:{type(refusal).__name__}"
    finally:
        if case.cleanup is not None:
            case.cleanup()


def soak(family: Family, args: argparse.Namespace, prog: str, out: Any = None) -> Summary:
    """Run cases until the budget is spent or one fails; the summary (its ``failure`` set on a failure)."""
    out = out or sys.stdout
    summary = Summary(family.name, args.seed)
    seconds = args.seconds
    iterations = args.iterations
    if args.case is not None:
        indices: Iterator[int] = iter([args.case])
    else:
        if seconds is None and iterations is None:
            seconds = DEFAULT_SECONDS
        indices = iter(range(iterations)) if iterations is not None else _count()
    start = time.monotonic()
    baseline: float | None = None
    peak_baseline = 0.0
    index = -1
    try:
        if family.setup is not None:
            family.setup(args)
        for index in indices:
            if seconds is not None and time.monotonic() - start >= seconds:
                break
            case: Case | None = None
            began = time.monotonic()
            try:
                case = family.make_case(case_rng(family.name, args.seed, index), index)
                outcome = run_case(case, family, args.case_timeout,
                                   f"soak {family.name}: case {index} (seed {args.seed}) failed; input: {case.what[:300]}; "
                                   f"reproduce: python -m {prog} --seed {args.seed} --case {index}")
            except (Exception, CaseTimeout) as err:  # noqa: BLE001 - every other outcome is the finding
                summary.failure = _failure(family, args, index, case, err)
                break
            took = time.monotonic() - began
            previous_peak = summary.rss_peak_mib
            now, peak = memory_mib()
            if baseline is None:
                baseline, peak_baseline = now, peak
                summary.rss_start_mib = now
            elif peak - previous_peak > summary.peak_jump[0]:
                summary.peak_jump = (peak - previous_peak, index, case.what)
            summary.rss_end_mib, summary.rss_peak_mib = now, peak
            if max(now - baseline, peak - peak_baseline) > args.max_rss_growth:
                summary.failure = _failure(family, args, index, case, None,
                                           f"memory grew to {now:.0f} MiB (peak {peak:.0f}) from {baseline:.0f} MiB "
                                           f"(peak {peak_baseline:.0f}) after the first case, past the "
                                           f"{args.max_rss_growth:g} MiB allowed")
                break
            summary.outcomes[outcome] += 1
            summary.cases += 1
            if took > summary.slowest[0]:
                summary.slowest = (took, index, case.what)
    finally:
        if family.teardown is not None:
            family.teardown()
    summary.seconds = time.monotonic() - start
    if summary.failure is not None:
        summary.reproduce = f"python -m {prog} --seed {args.seed} --case {index}"
    return summary


def _count() -> Iterator[int]:
    index = 0
    while True:
        yield index
        index += 1


def _failure(family: Family, args: argparse.Namespace, index: int, case: Case | None, err: BaseException | None,
             what: str | None = None) -> str:
    shown = case.what if case is not None else "(the case could not be built)"
    if err is not None:
        where = "".join(traceback.format_exception(err)[-3:]).strip().replace("\n", " | ")
        what = f"{type(err).__name__}: {str(err)[:500]} [{where[-400:]}]"
    return f"soak {family.name}: case {index} (seed {args.seed}) failed: {what}; input: {shown[:500]}"


def main(family: Family, argv: Sequence[str] | None, prog: str, description: str) -> int:
    """Parse the options, soak, print the summary (and the failure with its reproduction line), write the report."""
    parser = build_parser(family, prog, description)
    args = parser.parse_args(argv)
    for name in ("seconds", "case_timeout", "max_rss_growth"):
        value = getattr(args, name)
        if value is not None and not value > 0:
            parser.error(f"--{name.replace('_', '-')} must be a positive number, got {value}")
    if args.iterations is not None and args.iterations < 0:
        parser.error(f"--iterations must be 0 or more, got {args.iterations}")
    if threading.current_thread() is not threading.main_thread():
        parser.error("a soak runs in the main thread (it times cases with SIGALRM)")
    summary = soak(family, args, prog)
    report = summary.as_json()
    if args.report is not None:
        args.report.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    print(f"soak {family.name}: {summary.cases:,} cases in {summary.seconds:.1f} s "
          f"({report['cases_per_minute']:,} a minute): {dict(sorted(summary.outcomes.items()))}; "
          f"memory {summary.rss_start_mib:.0f} -> {summary.rss_end_mib:.0f} MiB (peak {summary.rss_peak_mib:.0f})",
          flush=True)
    if summary.failure is not None:
        print(summary.failure, file=sys.stderr)
        print(f"reproduce: {summary.reproduce}", file=sys.stderr, flush=True)
        return 1
    return 0
