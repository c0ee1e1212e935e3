"""``benchmarks/bench_learners.py``: its timing over whole cycles, its table, a smoke run of the batched row.

The smoke run builds the project's batched trainer (what every row is compared with) in its
``--quick`` shape and times it once, so the benchmark cannot rot in ``.venv``; the other rows
need ``.venv-eco`` and are run by hand (``python -m benchmarks.bench_learners``).
"""

from __future__ import annotations

import itertools
import os

import pytest

from benchmarks import bench_learners
from benchmarks.bench_learners import Learner, measure, run


def test_measure_times_whole_cycles_until_the_least_time_has_passed() -> None:
    ticks = itertools.count()  # a fake clock: one second per reading
    cycles: list[int] = []

    def cycle() -> int:
        cycles.append(100)
        return 100

    rate = measure(Learner("fake", "fake", cycle), seconds=3.0, clock=lambda: float(next(ticks)))
    # Readings 0 (start), then 1, 2, 3 after cycles 1-3: the third reaches 3 s and stops the clock.
    assert len(cycles) == 3 and rate == pytest.approx(300 / 3)


def test_a_library_that_is_not_installed_gets_a_row_saying_so_and_is_never_built(
        monkeypatch: pytest.MonkeyPatch) -> None:
    built: list[str] = []

    def build(players: int, quick: bool) -> Learner:
        built.append("absent")
        raise AssertionError("built a library that is not installed")

    monkeypatch.setitem(bench_learners.BUILDERS, "absent", ("no-such-distribution-for-uno-env", build))
    lines: list[str] = []
    assert run(["absent"], seconds=0.01, repeats=1, quick=True, log=lines.append) == {}
    assert not built
    assert "| absent | | no-such-distribution-for-uno-env not installed | | | |" in lines


@pytest.mark.slow
def test_quick_run_of_the_batched_trainer_measures_and_tabulates_it() -> None:
    lines: list[str] = []
    rates = run(["batched"], seconds=0.01, repeats=1, quick=True, log=lines.append)
    assert list(rates) == ["batched"] and len(rates["batched"]) == 1 and rates["batched"][0] > 0
    assert lines[0].startswith(f"{os.cpu_count()} cores, load average before: ")
    assert any(line.startswith("load average after: ") for line in lines)
    row = next(line for line in lines if line.startswith("| batched |"))
    assert row.endswith("| 1.000x |") and "PPO, 32 tables" in row


def test_bad_arguments_are_refused() -> None:
    with pytest.raises(SystemExit):
        bench_learners.main(["--seconds", "0"])
    with pytest.raises(SystemExit):
        bench_learners.main(["--only", "nonesuch"])
