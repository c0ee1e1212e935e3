"""Soak training runs: killed at random moments, and run directories tampered with, then resumed.

Each case is one of:

* **kill**: a tiny run of either trainer (``sb3`` or ``batched``) started as ``uno-env train`` does it
  (``python -m training.cli`` in a process of its own) and ended at a random moment by ``SIGKILL``
  (sometimes ``SIGTERM`` or ``SIGINT``), then resumed in this process (``--resume``; a fresh start when
  it died before writing its config). It must resume to every promised file
  (``tests.test_training_resume.assert_complete``).
* **tamper**: a copy of a finished run of either trainer (``tests/data/runs_9f587ed``) with one to three
  of its files deleted, truncated, bit-flipped, replaced by a link loop, a link to nowhere, a folder, a
  pipe or a sparse gigabyte, a pickle put beside them, or its ``state.json`` mutated as data, then resumed
  for 256 more steps. A resume must either be refused with a typed error (``ResumeError``,
  ``ConfigError``, ``FileNotFoundError``) that changed no file, or reach every promised file.

::

    python -m tests.soak.soak_training --seconds 600 --seed 3

A case takes seconds (a kill about 10-30 s); ``--case-timeout`` bounds each.
"""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import signal
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from tests.soak.harness import Case, Family, ScratchFolder, main
from tests.soak.soak_saves import dumps
from tests.test_hostile_saves import mutate

PROG = "tests.soak.soak_training"
ROOT = Path(__file__).resolve().parents[2]
OLD_RUNS = ROOT / "tests" / "data" / "runs_9f587ed"
EXTRA_STEPS = 256  # a tampered run is resumed for this many more steps
SIGNALS = [signal.SIGKILL] * 4 + [signal.SIGTERM, signal.SIGINT]
MiB = 1 << 20


def tiny(trainer: str, run_dir: Path, total: int, seed: int) -> dict[str, Any]:
    """A run of a few seconds of either trainer: checkpoints every 256 steps, a pool, evaluations."""
    from agents.ppo_agent import SHIPPED_DIR

    data: dict[str, Any] = {
        "trainer": trainer, "name": "soak", "seed": seed, "total_steps": total, "run_dir": str(run_dir),
        "checkpoint_every": 256, "tensorboard": False, "progress_bar": False, "torch_threads": 1,
        "env": {"edition": "classic", "num_players": 2, "max_turns": 300},
        "ppo": {"n_envs": 2, "n_steps": 64, "batch_size": 64, "n_epochs": 1, "hidden": [16]},
        "pool": {"snapshot_every": 64, "size": 2},
        "eval": {"every": 256, "games": 4, "max_decisions": 300,
                 "matchups": [{"edition": "classic", "num_players": 2, "opponent": "rule"}]},
    }
    if trainer == "batched":
        data["ppo"].update(n_steps=128, batch_size=128)
        data["batched"] = {"num_tables": 8, "rule": f"ppo:path={SHIPPED_DIR / 'rule_net.safetensors'}"}
        data["pool"].update(snapshot_every=128, baselines=["rule", "random"])
    return data


FOREIGN = "model.zip"  # a file no run writes, put in resume/ by a tamper: a resume must leave it as it is


def resume(run_dir: Path, total: int) -> int:
    """``uno-env train --resume RUN --total-steps TOTAL`` in this process; the step the run reached, every
    promised file checked (and a foreign file left as it was)."""
    from training.cli import train
    from training.run.config import load_config

    foreign = run_dir / "resume" / FOREIGN
    before = foreign.read_bytes() if foreign.is_file() else None
    config = load_config(run_dir / "config.yaml", {"run_dir": str(run_dir), "total_steps": total}, resuming=True)
    train(config, resume=True, progress_bar=False)
    if before is not None:
        assert foreign.read_bytes() == before, f"the resume changed {foreign}, a file it never wrote"
        foreign.unlink()
    return completed(run_dir, total)


def completed(run_dir: Path, total: int) -> int:
    """The step a run of ``total`` steps reached (the batched trainer stops at the first rollout past it),
    every promised file checked."""
    from tests.test_training_resume import assert_complete

    reached = int(json.loads((run_dir / "resume" / "state.json").read_text(encoding="utf-8"))["steps"])
    assert total <= reached < total + 256, f"a run of {total} steps ended at {reached}"
    assert_complete(run_dir, reached)
    return reached


# ---------------------------------------------------------------------- kill
def kill_case(folder: Path, rng: random.Random) -> Case:
    trainer = rng.choice(["sb3", "batched"])
    total = rng.choice([512, 768])
    run_dir = folder / "run"
    data = tiny(trainer, run_dir, total, rng.randrange(1000))
    wait = rng.uniform(0.5, 25.0)
    signum = rng.choice(SIGNALS)
    what = f"kill: a {trainer} run of {total} steps, {signal.Signals(signum).name} after {wait:.1f} s"

    def run() -> str:
        from tests.test_training_resume import Run
        from training.cli import train
        from training.run.config import config_from_dict

        started = Run(folder, data)
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline and started.process.poll() is None:
            time.sleep(0.05)
        if started.process.poll() is None:
            code, _, err = started.stop(signum)
            stage = f"stopped at {max(started.state_steps(), 0)}"
        else:
            code, err = started.process.returncode, "".join(started.lines)
            assert code == 0, f"the run failed on its own (status {code}): {err[-2000:]}"
            stage = "finished"
        # Python's own startup (imports, before the CLI's handler exists) answers an early Ctrl-C with a
        # KeyboardInterrupt traceback; nothing is written by then. Any other traceback is a finding.
        early_ctrl_c = (signum == signal.SIGINT and err.rstrip().endswith("KeyboardInterrupt")
                        and not (run_dir / "config.yaml").exists())
        assert "Traceback" not in err or early_ctrl_c, err[-3000:]
        if not (run_dir / "config.yaml").exists():  # killed before it wrote anything: start it afresh
            train(config_from_dict(data), progress_bar=False)
            completed(run_dir, total)
            return f"accepted:{trainer}:killed before its config"
        resume(run_dir, total)
        return f"accepted:{trainer}:{stage.split()[0]}"

    return Case(what, run)


# ---------------------------------------------------------------------- tamper
def tampers(run_dir: Path, rng: random.Random) -> list[str]:
    """Damage one to three of the run's files; what was done."""
    done = []
    for _ in range(rng.choice([1, 1, 2, 3])):
        files = sorted(p for p in run_dir.rglob("*") if p.is_file() and not p.is_symlink())
        if not files:
            break
        path = rng.choice(files)
        name = str(path.relative_to(run_dir))
        kind = rng.randrange(10)
        if kind == 0:
            path.unlink()
            done.append(f"{name} deleted")
        elif kind == 1:
            at = rng.randrange(path.stat().st_size + 1)
            os.truncate(path, at)
            done.append(f"{name} truncated at byte {at}")
        elif kind == 2 and path.stat().st_size:
            at = rng.randrange(path.stat().st_size)
            with open(path, "r+b") as handle:  # one byte read and written (the file may be a sparse gigabyte)
                handle.seek(at)
                byte = handle.read(1)[0] ^ (1 << rng.randrange(8))
                handle.seek(at)
                handle.write(bytes([byte]))
            done.append(f"{name} bit flipped at byte {at}")
        elif kind == 3:
            path.unlink()
            os.symlink(path, path)
            done.append(f"{name} a loop of links")
        elif kind == 4:
            path.unlink()
            os.symlink(run_dir / "gone", path)
            done.append(f"{name} a link to nowhere")
        elif kind == 5:
            path.unlink()
            path.mkdir()
            done.append(f"{name} a folder")
        elif kind == 6:
            path.unlink()
            os.mkfifo(path)
            done.append(f"{name} a pipe")
        elif kind == 7:
            with open(path, "r+b") as handle:
                handle.truncate(1 << 30)
            done.append(f"{name} a sparse gigabyte")
        elif kind == 8:
            (run_dir / "resume" / FOREIGN).write_bytes(b"PK\x03\x04" + b"\x80\x04" + b"\0" * 64)
            done.append(f"a pickled resume/{FOREIGN} added")
        else:
            state_path = run_dir / "resume" / "state.json"
            if not state_path.is_file() or state_path.is_symlink() or state_path.stat().st_size > MiB:
                continue  # not read as data: a link, a pipe or a sparse gigabyte an earlier tamper made
            try:
                state = json.loads(state_path.read_text(encoding="utf-8"))
            except (ValueError, RecursionError):  # an earlier tamper of this case broke or nested it
                continue
            state, change = mutate(state, rng)
            state_path.write_bytes(dumps(state))  # it may nest thousands deep
            done.append(f"state.json: {change}")
    return done


def tamper_case(folder: Path, rng: random.Random) -> Case:
    from agents.ppo_agent import SHIPPED_DIR

    trainer = rng.choice(["sb3", "batched"])
    run_dir = folder / trainer
    shutil.copytree(OLD_RUNS / trainer, run_dir)
    config = run_dir / "config.yaml"
    config.write_text(re.sub(r"ppo:path=\S*rule_net\.safetensors", f"ppo:path={SHIPPED_DIR / 'rule_net.safetensors'}",
                             config.read_text(encoding="utf-8")), encoding="utf-8")
    steps = int(yaml.safe_load(config.read_text(encoding="utf-8"))["total_steps"])
    done = tampers(run_dir, rng)
    what = f"tamper: the old {trainer} run, {'; '.join(done) or 'unchanged'}"

    def run() -> str:
        resume(run_dir, steps + EXTRA_STEPS)
        return f"accepted:{trainer}:resumed"

    return Case(what, run, watch=[run_dir])


# ---------------------------------------------------------------------- the family
class TrainingSoak(ScratchFolder):
    """The folder every case works in (one sub-folder each, removed after it)."""

    prefix = "soak_training_"

    def __init__(self) -> None:
        super().__init__()

    def setup(self, args: Any) -> None:
        import torch

        torch.set_num_threads(1)
        self.open_scratch()

    def make_case(self, rng: random.Random, index: int) -> Case:
        assert self.folder is not None
        folder = self.folder / f"case_{index}"
        folder.mkdir()
        case = kill_case(folder, rng) if rng.random() < 0.4 else tamper_case(folder, rng)
        case.cleanup = lambda: shutil.rmtree(folder, ignore_errors=True)
        return case


def family() -> Family:
    """The training family."""

    from training.run.config import ConfigError
    from training.run.resume import ResumeError

    state = TrainingSoak()
    return Family("training", state.make_case, (ResumeError, ConfigError, FileNotFoundError), case_timeout=300.0,
                  max_rss_growth_mib=1536.0, setup=state.setup, teardown=state.teardown)


def run(argv: Sequence[str] | None = None) -> int:
    """Entry point."""
    return main(family(), argv, PROG, (__doc__ or "").split("\n")[0])


if __name__ == "__main__":
    sys.exit(run())
