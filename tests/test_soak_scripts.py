"""The soak scripts (``tests/soak/``): each runs for a tiny budget and exits 0, and each way the harness
fails (an untyped exception, a hang, a refusal that changed a file, memory growth) exits 1 naming the
case and the command that reproduces it."""

from __future__ import annotations

import json
import random
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.soak.harness import Case, Family, main

ROOT = Path(__file__).resolve().parent.parent


class Refused(ValueError):
    """The planted family's typed refusal."""


def _family(run: str, tmp_path: Path) -> Family:
    target = tmp_path / "input.json"

    def make_case(rng: random.Random, index: int) -> Case:
        target.write_text("{}")

        def case() -> str:
            if index < 3:  # a few good cases first, so the failure is not the first case
                return "accepted" if index % 2 else _refuse()
            if run == "exception":
                raise KeyError("planted")
            if run == "hang":
                time.sleep(60)
            if run == "file":
                target.write_text("changed")
                _refuse()
            if run == "memory":
                case.hold = bytearray(200 << 20)  # type: ignore[attr-defined]
                case.hold[::4096] = b"\1" * len(case.hold[::4096])  # type: ignore[attr-defined]
            return "accepted"
        return Case(f"planted {run} case {index}", case, watch=[target])

    return Family("planted", make_case, (Refused,), case_timeout=5.0, max_rss_growth_mib=100.0)  # far above the other cases on any machine


def _refuse() -> str:
    raise Refused("refused: a planted input")


@pytest.mark.parametrize(("run", "message"), [
    ("exception", "KeyError: 'planted'"), ("hang", "CaseTimeout: still running after 5 s"),
    ("file", "a refused input changed files"), ("memory", "memory grew"),
])
def test_every_failure_exits_1_naming_the_case_and_how_to_reproduce_it(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], run: str, message: str) -> None:
    report = tmp_path / "report.json"
    code = main(_family(run, tmp_path), ["--iterations", "10", "--seed", "4", "--report", str(report)],
                "tests.soak.planted", "planted")
    err = capsys.readouterr().err
    assert code == 1
    assert message in err and "case 3 (seed 4)" in err and "input: planted" in err
    assert "reproduce: python -m tests.soak.planted --seed 4 --case 3" in err
    data = json.loads(report.read_text())
    assert data["cases"] == 3 and data["outcomes"] == {"accepted": 1, "refused:Refused": 2}


def test_a_clean_run_exits_0_and_counts_outcomes_the_same_for_the_same_seed(tmp_path: Path) -> None:
    reports = []
    for name in ("a.json", "b.json"):
        assert main(_family("none", tmp_path), ["--iterations", "8", "--report", str(tmp_path / name)], "p", "d") == 0
        reports.append(json.loads((tmp_path / name).read_text()))
    assert reports[0]["cases"] == 8 and reports[0]["outcomes"] == reports[1]["outcomes"]


@pytest.mark.slow
@pytest.mark.parametrize(("script", "cases"), [("soak_saves", 15), ("soak_replays", 15), ("soak_configs", 15),
                                               ("soak_checkpoints", 15), ("soak_web", 15), ("soak_training", 2)])
def test_each_soak_script_runs_a_tiny_budget_and_exits_0(tmp_path: Path, script: str, cases: int) -> None:
    report = tmp_path / "report.json"
    out = subprocess.run([sys.executable, "-m", f"tests.soak.{script}", "--iterations", str(cases), "--seed", "2",
                          "--report", str(report)], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    data = json.loads(report.read_text())
    assert data["cases"] == cases and data["failure"] is None and sum(data["outcomes"].values()) == cases


def test_make_soak_runs_every_family_script() -> None:
    """``make soak`` names every tests/soak/soak_*.py but the batched engine's lockstep (its own options)."""
    written = {p.stem.removeprefix("soak_") for p in (ROOT / "tests" / "soak").glob("soak_*.py")} - {"batched"}
    line = next(line for line in (ROOT / "Makefile").read_text().splitlines() if line.strip().startswith("for family in"))
    assert set(line.split(" in ", 1)[1].split(";")[0].split()) == written
