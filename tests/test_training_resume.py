"""Runs that survive: resume state without pickle, hostile run directories, kill -9, Ctrl-C and SIGTERM."""

from __future__ import annotations

import importlib
import io
import json
import os
import pickle
import re
import shutil
import signal
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")
pytest.importorskip("yaml")

import yaml  # noqa: E402

from agents import PPOAgent  # noqa: E402
from agents.ppo_agent import SHIPPED_DIR, read_checkpoint  # noqa: E402
from training.cli import main, train  # noqa: E402
from training.run.config import config_from_dict, load_config  # noqa: E402
from training.run.resume import ResumeError, read_resume  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def _tiny(run_dir: Path, **top: Any) -> dict[str, Any]:
    """A run of a few seconds: rotation of a 2-snapshot pool, checkpoints every 256 steps, evaluations."""
    data: dict[str, Any] = {
        "name": "tiny", "seed": 5, "total_steps": 768, "run_dir": str(run_dir), "checkpoint_every": 256,
        "tensorboard": False, "progress_bar": False,
        "env": {"edition": "classic", "num_players": 2, "max_turns": 300},
        "ppo": {"n_envs": 2, "n_steps": 64, "batch_size": 64, "n_epochs": 1, "hidden": [16]},
        "pool": {"snapshot_every": 64, "size": 2},
        "eval": {"every": 256, "games": 4, "max_decisions": 300,
                 "matchups": [{"edition": "classic", "num_players": 2, "opponent": "rule"}]},
    }
    for key, value in top.items():
        if isinstance(value, dict):
            data.setdefault(key, {}).update(value)
        else:
            data[key] = value
    return data


def _state(run_dir: Path) -> dict[str, Any]:
    return json.loads((run_dir / "resume" / "state.json").read_text(encoding="utf-8"))


def assert_complete(run_dir: Path, total: int) -> None:
    """Every promised file exists and agrees with the final resume state."""
    state = _state(run_dir)
    assert state["complete"] and state["steps"] == total
    assert read_checkpoint(run_dir / "last.safetensors")[1]["steps"] == total
    best = json.loads((run_dir / "best.json").read_text())
    assert state["best"] is not None and best["metadata"]["steps"] == state["best"]["steps"]
    assert read_checkpoint(run_dir / "best.safetensors")[1]["steps"] == state["best"]["steps"]
    evals = [json.loads(line) for line in (run_dir / "evals.jsonl").read_text().splitlines()]
    assert len(evals) == state["evals"] and evals[-1]["steps"] == total
    assert [e["steps"] for e in evals] == sorted({e["steps"] for e in evals})  # one line per step, in order
    assert state["last_eval_step"] == total
    assert sorted(p.stem for p in (run_dir / "pool").glob("*.safetensors")) == sorted(state["snapshots"])
    assert sorted(p.name for p in (run_dir / "resume").iterdir()) == sorted(
        ["state.json", state["model"], f"best_{state['best']['steps']}.safetensors",
         f"best_{state['best']['steps']}.json"])
    leftovers = [p for p in run_dir.rglob("*") if p.name.endswith(".tmp") or p.suffix == ".zip"]
    assert not leftovers


# ---------------------------------------------------------------------- the resume state
def test_the_resume_state_is_safetensors_and_json_and_resumes_to_every_promised_file(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    train(config_from_dict(_tiny(run_dir, total_steps=512)))
    assert_complete(run_dir, 512)
    for path in (run_dir / "resume").iterdir():
        head = path.read_bytes()[:2]
        assert head not in (b"PK", b"\x80\x04", b"\x80\x05"), f"{path} looks like a zip or a pickle"
    state, tensors = read_resume(run_dir)  # type: ignore[misc]
    assert {k.split("/")[0] for k in tensors} == {"policy", "optimizer", "rng"}
    assert state.counters.n_updates > 0
    train(config_from_dict(_tiny(run_dir, total_steps=768)), resume=True)
    assert_complete(run_dir, 768)
    assert _state(run_dir)["resumed_at"] == [512]


def test_a_resume_restores_the_optimizer_and_generators_so_it_trains_what_an_unbroken_run_trains(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Stopped right after the step-0 checkpoint (after the warm start), a resumed run is the unbroken run."""
    from training.run.schedule import Schedule

    class Stop(Exception):
        pass

    original = Schedule.save

    def stopping(self: Schedule, complete: bool = False) -> None:
        original(self, complete)
        raise Stop  # killed right after the step-0 checkpoint

    def data(name: str) -> dict[str, Any]:
        d = _tiny(tmp_path / name, total_steps=384, imitation={"teacher": "rule", "decisions": 300, "epochs": 1})
        d["eval"]["matchups"] = []
        return d

    train(config_from_dict(data("unbroken")))
    monkeypatch.setattr(Schedule, "save", stopping)
    with pytest.raises(Stop):
        train(config_from_dict(data("stopped")))
    monkeypatch.setattr(Schedule, "save", original)
    assert _state(tmp_path / "stopped")["steps"] == 0
    train(config_from_dict(data("stopped")), resume=True)
    a, b = (read_checkpoint(tmp_path / name / "last.safetensors")[0] for name in ("unbroken", "stopped"))
    assert all(np.array_equal(a[k], b[k]) for k in a)
    assert _state(tmp_path / "stopped")["resumed_at"] == []  # step 0 is the fresh run: nothing to reproduce


def test_checkpoints_get_the_usual_permissions(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        run_dir = tmp_path / "run"
        train(config_from_dict(_tiny(run_dir, total_steps=256)))
    finally:
        os.umask(old)
    for name in ("last.safetensors", "best.safetensors", "last.json", "best.json", "evals.jsonl", "config.yaml"):
        assert stat.S_IMODE((run_dir / name).stat().st_mode) == 0o644, name
    for path in [*(run_dir / "pool").iterdir(), *(run_dir / "resume").iterdir()]:
        assert stat.S_IMODE(path.stat().st_mode) == 0o644, path


# ---------------------------------------------------------------------- hostile run directories
class _Canary:
    """Unpickling this creates a file: the proof that a pickle ran code."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __reduce__(self) -> tuple[Any, ...]:
        return (Path.touch, (self.path,))


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    run_dir = tmp_path_factory.mktemp("finished") / "run"
    train(config_from_dict(_tiny(run_dir, total_steps=256)))
    return run_dir


def _copy(run_dir: Path, tmp_path: Path) -> Path:
    import shutil

    target = tmp_path / "run"
    shutil.copytree(run_dir, target)
    return target


def _poison_state(run_dir: Path, change: Callable[[dict[str, Any]], Any]) -> None:
    state = _state(run_dir)
    change(state)
    (run_dir / "resume" / "state.json").write_text(json.dumps(state), encoding="utf-8")


POISONS: dict[str, Callable[[Path, Path], None]] = {
    "not json": lambda r, c: (r / "resume" / "state.json").write_text("{not json", encoding="utf-8"),
    "a pickle as state.json": lambda r, c: (r / "resume" / "state.json").write_bytes(pickle.dumps(_Canary(c))),
    "NaN": lambda r, c: (r / "resume" / "state.json").write_text(
        (r / "resume" / "state.json").read_text().replace('"learner": ', '"learner": NaN, "x": '), encoding="utf-8"),
    "deep nesting": lambda r, c: (r / "resume" / "state.json").write_text("[" * 100_000 + "]" * 100_000),
    "another format": lambda r, c: _poison_state(r, lambda s: s.update(format="sb3.zip")),
    "a snapshot outside the pool": lambda r, c: _poison_state(r, lambda s: s["snapshots"].append("../../etc/passwd")),
    "a missing snapshot": lambda r, c: _poison_state(r, lambda s: s["snapshots"].append("snap_999")),
    "a model path outside resume/": lambda r, c: _poison_state(r, lambda s: s.update(model="../last.safetensors")),
    "steps not matching the tensors": lambda r, c: _poison_state(r, lambda s: s.update(steps=128)),
    "a negative counter": lambda r, c: _poison_state(r, lambda s: s["counters"].update(n_updates=-1)),
    "an unknown key": lambda r, c: _poison_state(r, lambda s: s.update(hook="os.system")),
    "a pickle as the tensors": lambda r, c: (r / "resume" / _state(r)["model"]).write_bytes(pickle.dumps(_Canary(c))),
    "truncated tensors": lambda r, c: (r / "resume" / _state(r)["model"]).write_bytes(
        (r / "resume" / _state(r)["model"]).read_bytes()[:1000]),
    "a damaged generator state": lambda r, c: _poison_state(r, lambda s: s["rng"].update(python=[3, [1, 2], None])),
    "a damaged snapshot": lambda r, c: (r / "pool" / f"{_state(r)['snapshots'][-1]}.safetensors").write_bytes(
        pickle.dumps(_Canary(c))),
    "state.json linked to an endless device": lambda r, c: (
        (r / "resume" / "state.json").unlink(), (r / "resume" / "state.json").symlink_to("/dev/zero")),
}


@pytest.mark.parametrize("poison", list(POISONS))
def test_a_poisoned_run_directory_is_refused_with_a_typed_error_and_runs_nothing(
        finished_run: Path, tmp_path: Path, poison: str) -> None:
    run_dir = _copy(finished_run, tmp_path)
    canary = tmp_path / "PWNED"
    POISONS[poison](run_dir, canary)
    config = load_config(run_dir / "config.yaml", {"run_dir": str(run_dir), "total_steps": 384})
    def files() -> dict[Path, bytes]:
        return {p: p.read_bytes() for p in run_dir.rglob("*") if p.is_file() and not p.is_symlink()}

    before = files()
    with pytest.raises(ResumeError):
        train(config, resume=True)
    assert not canary.exists()
    assert files() == before  # nothing changed


def test_an_sb3_model_zip_is_never_unpickled_and_the_error_says_what_is_allowed(
        finished_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import shutil
    import zipfile

    run_dir = _copy(finished_run, tmp_path)
    shutil.rmtree(run_dir / "resume")
    (run_dir / "resume").mkdir()
    canary = tmp_path / "PWNED"
    with zipfile.ZipFile(run_dir / "resume" / "model.zip", "w") as archive:  # SB3's layout, poisoned
        archive.writestr("data", json.dumps({"policy_class": {":serialized:": pickle.dumps(_Canary(canary)).hex()}}))
        archive.writestr("pytorch_variables.pth", pickle.dumps(_Canary(canary)))
    with pytest.raises(SystemExit) as stopped:
        main(["--resume", str(run_dir)])
    err = capsys.readouterr().err
    assert stopped.value.code == 2 and "Traceback" not in err
    assert "model.zip" in err and "state.json" in err and "pickle" in err
    assert not canary.exists()


def test_a_warm_started_run_resumes_after_its_init_file_is_gone_and_a_fresh_one_is_refused(
        finished_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import shutil

    init = tmp_path / "init.safetensors"
    shutil.copy(finished_run / "last.safetensors", init)
    run_dir = tmp_path / "warm"
    train(config_from_dict(_tiny(run_dir, total_steps=128, eval={"every": 0, "games": 2},
                                 ppo={"init_from": str(init)})))
    init.unlink()  # moved or deleted: the resumed weights come from resume/, not from it
    main(["--resume", str(run_dir), "--total-steps", "256", "--no-progress"])
    assert_complete(run_dir, 256)
    assert load_config(run_dir / "config.yaml", resuming=True).ppo.init_from == str(init)  # kept as a record
    with pytest.raises(SystemExit) as stopped:  # a fresh run needs it
        main(["--config", str(run_dir / "config.yaml"), "--run-dir", str(tmp_path / "fresh")])
    err = capsys.readouterr().err
    assert stopped.value.code == 2 and "ppo.init_from" in err and str(init) in err
    assert not (tmp_path / "fresh").exists()


def test_resuming_with_another_network_is_refused_naming_the_mismatch(finished_run: Path, tmp_path: Path) -> None:
    run_dir = _copy(finished_run, tmp_path)
    config = load_config(run_dir / "config.yaml", {"run_dir": str(run_dir), "ppo.hidden": [32], "total_steps": 384})
    with pytest.raises(ResumeError, match="policy/mlp_extractor"):
        train(config, resume=True)


def test_a_budget_below_the_steps_reached_is_refused(finished_run: Path, tmp_path: Path) -> None:
    from training.run.config import ConfigError

    run_dir = _copy(finished_run, tmp_path)
    with pytest.raises(ConfigError, match="total_steps"):
        train(load_config(run_dir / "config.yaml", {"run_dir": str(run_dir), "total_steps": 128}), resume=True)


# ---------------------------------------------------------------------- real processes, killed
STARTED: list[subprocess.Popen[str]] = []


@pytest.fixture(autouse=True)
def _no_orphans() -> Any:
    """A failing test never leaves its training subprocess running."""
    yield
    while STARTED:
        process = STARTED.pop()
        if process.poll() is None:
            process.kill()
            process.wait(timeout=60)


class Run:
    """``python -m training.cli`` in a subprocess, its stderr collected line by line."""

    def __init__(self, tmp_path: Path, data: dict[str, Any], *args: str) -> None:
        self.config = tmp_path / "config.yaml"
        self.config.write_text(yaml.safe_dump(data), encoding="utf-8")
        self.run_dir = Path(data["run_dir"])
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        self.process = subprocess.Popen([sys.executable, "-m", "training.cli", "--config", str(self.config), *args],
                                        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                                        start_new_session=True)  # its own process group, as in a terminal
        STARTED.append(self.process)
        self.lines: list[str] = []  # stderr
        self.out: list[str] = []
        self._readers = [threading.Thread(target=self._read, args=(pipe, into), daemon=True)
                         for pipe, into in ((self.process.stderr, self.lines), (self.process.stdout, self.out))]
        for reader in self._readers:
            reader.start()

    @staticmethod
    def _read(pipe: Any, into: list[str]) -> None:
        for line in pipe:
            into.append(line)

    def wait_for(self, condition: Callable[[], bool], timeout: float = 300) -> None:
        deadline = time.monotonic() + timeout
        while not condition():
            assert self.process.poll() is None, f"the run ended early:\n{''.join(self.lines)}"
            assert time.monotonic() < deadline, f"timed out:\n{''.join(self.lines)}"
            time.sleep(0.05)

    def said(self, text: str) -> bool:
        return any(text in line for line in self.lines)

    def state_steps(self) -> int:
        try:
            return int(_state(self.run_dir)["steps"])
        except (FileNotFoundError, json.JSONDecodeError):
            return -1

    def stop(self, signum: int, group: bool = False) -> tuple[int, str, str]:
        """Send ``signum`` (to the whole process group with ``group``, as Ctrl-C in a terminal does)."""
        if group:
            os.killpg(self.process.pid, signum)
        else:
            self.process.send_signal(signum)
        self.process.wait(timeout=300)
        for reader in self._readers:
            reader.join(timeout=30)
        return self.process.returncode, "".join(self.out), "".join(self.lines)


@pytest.mark.slow
@pytest.mark.parametrize("moment", ["during the warm start", "after pool rotation", "during the final evaluation"])
def test_a_run_killed_at_any_moment_resumes_to_every_promised_file(tmp_path: Path, moment: str) -> None:
    run_dir = tmp_path / "run"
    if moment == "during the warm start":
        data = _tiny(run_dir, imitation={"teacher": "rule", "decisions": 50_000, "epochs": 1})
        run = Run(tmp_path, data)
        run.wait_for(lambda: run.said("[imitation]"))
        resume_with = {"imitation.decisions": 300}
    elif moment == "after pool rotation":  # the case: rotation deleted snapshots the state still listed
        data = _tiny(run_dir, total_steps=100_000)
        run = Run(tmp_path, data)
        run.wait_for(lambda: run.state_steps() >= 256 and not (run_dir / "pool" / "snap_128.safetensors").exists(),
                     )
        resume_with = {"total_steps": 1024}  # past the state the kill finds (512 or so)
    else:  # 700: not a checkpoint step (256, 512); the final evaluation starts after a checkpoint of its own
        data = _tiny(run_dir, total_steps=700, eval={"every": 0, "games": 1_000_000})
        run = Run(tmp_path, data)
        run.wait_for(lambda: run.said("[eval @ 700 steps]"))
        resume_with = {"eval.games": 4}
    code, _, err = run.stop(signal.SIGKILL)
    assert code == -signal.SIGKILL
    lost_at = run.state_steps()
    config = load_config(run_dir / "config.yaml", {"run_dir": str(run_dir), **resume_with})
    train(config, resume=True)
    total = config.total_steps
    assert_complete(run_dir, total)
    if moment == "during the final evaluation":
        assert lost_at == 700 and _state(run_dir)["resumed_at"] == []  # only the evaluation was left to do
    if moment == "after pool rotation":
        assert lost_at >= 256 and _state(run_dir)["resumed_at"] == [lost_at]


@pytest.mark.slow
def test_ctrl_c_writes_a_checkpoint_and_says_how_to_resume_and_the_resumed_run_is_reproducible(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    sharded = {"vec_env": "sharded", "workers": 2}  # worker processes get the Ctrl-C too
    data = _tiny(run_dir, total_steps=1_000_000, progress_bar=True, ppo=sharded)
    run = Run(tmp_path, data)
    run.wait_for(lambda: run.state_steps() >= 256)
    code, out, err = run.stop(signal.SIGINT, group=True)
    assert code == 130, err
    steps = _state(run_dir)["steps"]
    last = err.rstrip().splitlines()[-1]
    prefix = f"interrupted at step {steps}; resume with: "
    assert steps >= 256 and last.startswith(prefix) and last.endswith(f" -m training.cli --resume {run_dir}")
    python = last[len(prefix):].split(" -m ")[0]
    assert python == "python" or os.path.abspath(ROOT / python) == os.path.abspath(sys.executable)
    assert "Traceback" not in err and "Exception ignored" not in err and "KeyboardInterrupt" not in err
    assert "[train] 0/1,000,000 steps" in err  # progress lines, not a terminal
    # resume to a nearby budget; the same as training to the interruption point, then resuming
    resumed = load_config(run_dir / "config.yaml", {"run_dir": str(run_dir), "total_steps": steps + 128})
    train(resumed, resume=True)
    assert_complete(run_dir, steps + 128)
    recipe = tmp_path / "recipe"
    train(config_from_dict(_tiny(recipe, total_steps=steps, ppo=sharded)))
    train(config_from_dict(_tiny(recipe, total_steps=steps + 128, ppo=sharded)), resume=True)
    a, b = (read_checkpoint(d / "last.safetensors")[0] for d in (run_dir, recipe))
    assert all(np.array_equal(a[k], b[k]) for k in a)


@pytest.mark.slow
def test_sigterm_during_the_final_evaluation_stops_at_once_and_resume_finishes_it(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    run = Run(tmp_path, _tiny(run_dir, eval={"every": 0, "games": 1_000_000, "workers": 2}))
    run.wait_for(lambda: run.said("[eval @ 768 steps]"))
    code, out, err = run.stop(signal.SIGTERM)  # 10,000,000 games: only a stop ends this evaluation
    assert code == 143
    assert "interrupted at step 768; resume with:" in err and "Traceback" not in err
    assert "run complete" not in out
    state = _state(run_dir)
    assert not state["complete"] and state["last_eval_step"] is None and not (run_dir / "best.safetensors").exists()
    train(load_config(run_dir / "config.yaml", {"run_dir": str(run_dir), "eval.games": 4}), resume=True)
    assert_complete(run_dir, 768)


@pytest.mark.slow
def test_sigterm_after_a_periodic_evaluation_in_this_process_still_writes_a_checkpoint(tmp_path: Path) -> None:
    """The evaluation's games once ran in the trainer's own process through the pool workers' start, which set
    SIGTERM to its default: from the first evaluation on, a SIGTERM killed the run with no checkpoint (run M,
    5 December 2026, lost up to a checkpoint interval that way, twice)."""
    run_dir = tmp_path / "run"
    run = Run(tmp_path, _tiny(run_dir, total_steps=1_000_000, eval={"workers": 1}))
    run.wait_for(lambda: run.said("[eval @ 256 steps") and run.state_steps() >= 512)
    code, _, err = run.stop(signal.SIGTERM)
    assert code == 143, err
    assert f"interrupted at step {_state(run_dir)['steps']}; resume with:" in err and "Traceback" not in err


@pytest.mark.slow
def test_the_quickstart_resumes_after_ctrl_c_with_the_command_it_prints(tmp_path: Path,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    run_dir = tmp_path / "qs"
    config = tmp_path / "qs.yaml"
    config.write_text(yaml.safe_dump({**_tiny(run_dir, total_steps=1_000_000), "name": "quickstart"}), encoding="utf-8")
    args = ["--config", str(config), "--games", "2", "--workers", "1"]
    process = subprocess.Popen([sys.executable, "-m", "training.tools.quickstart", *args], cwd=ROOT, text=True,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    STARTED.append(process)
    deadline = time.monotonic() + 300
    while not (run_dir / "resume" / "state.json").exists() or _state(run_dir)["steps"] < 256:
        assert process.poll() is None and time.monotonic() < deadline
        time.sleep(0.05)
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=300)
    assert process.returncode == 130 and "Traceback" not in err
    assert err.rstrip().endswith(f"-m training.tools.quickstart --config {config} --games 2 --workers 1 --resume")
    steps = _state(run_dir)["steps"]
    from training.tools.quickstart import EXPECTED
    from training.tools.quickstart import main as quickstart

    resumed = tmp_path / "resumed.yaml"  # the printed command, with a budget the test can wait for
    resumed.write_text(config.read_text().replace("total_steps: 1000000", f"total_steps: {steps + 64}"))
    capsys.readouterr()
    quickstart(["--config", str(resumed), "--games", "2", "--workers", "1", "--resume"])
    assert_complete(run_dir, steps + 64)
    told = capsys.readouterr().out
    # make demo says how long it takes before it starts, and sets the strongest shipped checkpoints beside it
    assert told.splitlines()[0].endswith(f"{EXPECTED}: training, then evaluating each policy against the baselines "
                                         "(2 games per lineup); Ctrl-C stops with a checkpoint and prints how to resume")
    for name in ("classic_2p", "classic_2p_points", "classic", "classic_points", "universal"):
        assert f"| shipped-{name} | classic | 2 | rule x1 |" in told
    assert "| shipped-classic_4p_points | classic | 4 | rule x3 |" in told  # trained for 4 players only
    assert "`--agents ppo` plays classic_2p_long_points at 2 players, classic_3to6 at 3 and classic_4p_points at 4;" in told


# ---------------------------------------------------------------------- progress output
def test_progress_is_plain_lines_off_a_terminal_and_a_bar_on_one() -> None:
    import doctest

    import uno_env.progress
    from uno_env.progress import Progress

    assert doctest.testmod(uno_env.progress).failed == 0

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    screen = Terminal()
    with Progress("[fit]", 4, "batches", stream=screen) as bar:
        bar.update(4)
        bar.log("epoch 1")
    assert "[fit]" in screen.getvalue() and "4/4" in screen.getvalue() and "epoch 1" in screen.getvalue()
    quiet = io.StringIO()
    with Progress("[fit]", 4, stream=quiet, enabled=False) as bar:
        bar.update(2)
        bar.log("only this")
    assert quiet.getvalue() == "only this\n"


def test_the_tournament_training_and_imitation_share_one_progress_reporter() -> None:
    """Issue 23.3: one reporter, below ``agents``; the old copies are gone."""
    import agents.tournament
    import training.run.schedule
    import training.sb3.imitation
    import uno_env.progress

    assert agents.tournament.Progress is training.sb3.imitation.Progress is uno_env.progress.Progress
    assert training.run.schedule.Progress is uno_env.progress.Progress
    assert not hasattr(agents.tournament, "_progress")
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("training.run.progress")


def test_every_long_phase_prints_progress_when_not_on_a_terminal(tmp_path: Path, capfd: pytest.CaptureFixture[str]
                                                                  ) -> None:
    data = _tiny(tmp_path / "run", total_steps=256, progress_bar=True,
                 imitation={"teacher": "rule", "decisions": 300, "epochs": 1})
    train(config_from_dict(data))
    err = capfd.readouterr().err
    for expected in ("[imitation] recording rule's play: 0/300 decisions", "[imitation] fitting:",
                     "[imitation] epoch 1/1: held-out accuracy", "[train] 0/256 steps", "[eval @ 256 steps]",
                     "[eval] 1/1 classic_2p_vs_rule", "[train] 256/256 steps done in"):
        assert expected in err, expected
    agent = PPOAgent.load(tmp_path / "run" / "best.safetensors")
    assert agent.metadata["steps"] == 256


# ---------------------------------------------------------------------- run directories of older code
OLD_RUNS = ROOT / "tests" / "data" / "runs_9f587ed"


@pytest.mark.parametrize(("trainer", "steps", "extended"), [("sb3", 256, 384), ("batched", 512, 768)])
def test_a_run_directory_written_before_the_training_layer_was_split_resumes_to_every_promised_file(
        tmp_path: Path, trainer: str, steps: int, extended: int) -> None:
    """tests/data/runs_9f587ed holds runs written by the code of 9f587ed; they resume with today's code,
    keep their evaluations, and write checkpoints with the same tensors and metadata keys. They were written
    on observation version 2: the resume state is widened as it loads (``training.run.resume._widened``)."""
    if trainer == "batched":
        pytest.importorskip("safetensors")
    run_dir = tmp_path / trainer
    shutil.copytree(OLD_RUNS / trainer, run_dir)
    config = run_dir / "config.yaml"
    config.write_text(re.sub(r"ppo:path=\S*rule_net\.safetensors", f"ppo:path={SHIPPED_DIR / 'rule_net.safetensors'}",
                             config.read_text(encoding="utf-8")), encoding="utf-8")
    old_evals = (run_dir / "evals.jsonl").read_text(encoding="utf-8")
    old_tensors, old_meta = read_checkpoint(run_dir / "last.safetensors")
    main(["--resume", str(run_dir), "--total-steps", str(extended), "--no-progress"])
    reached = _state(run_dir)["steps"]  # the batched trainer stops at the first rollout past the budget
    assert extended <= reached < extended + 256
    assert_complete(run_dir, reached)
    assert _state(run_dir)["resumed_at"] == [steps]
    assert (run_dir / "evals.jsonl").read_text(encoding="utf-8").startswith(old_evals)
    new_tensors, new_meta = read_checkpoint(run_dir / "last.safetensors")
    assert {k: (v.shape, v.dtype) for k, v in new_tensors.items()} == {
        k: (v.shape, v.dtype) for k, v in old_tensors.items()}
    # written on observation version 2, read widened to version 3 (the draw evidence): the resumed run
    # writes version 3 checkpoints of the shapes its old ones are read as
    assert old_meta.pop("widened_from_observation_version") == 2 and new_meta["observation_version"] == 3
    assert set(new_meta) == set(old_meta)


def test_a_resume_without_state_json_but_with_a_runs_files_is_refused_and_deletes_nothing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 27.6: --resume of a directory whose state.json is gone must not restart from step 0 over its files."""
    run_dir = tmp_path / "sb3"
    shutil.copytree(OLD_RUNS / "sb3", run_dir)
    (run_dir / "resume" / "state.json").unlink()
    before = {p: p.read_bytes() for p in run_dir.rglob("*") if p.is_file()}
    with pytest.raises(ResumeError, match="state.json is missing.*--resume would restart it from step 0"):
        read_resume(run_dir)
    with pytest.raises(SystemExit) as stopped:
        main(["--resume", str(run_dir), "--no-progress"])
    assert stopped.value.code == 2 and "put the run's resume/state.json back" in capsys.readouterr().err.lower()
    assert {p: p.read_bytes() for p in run_dir.rglob("*") if p.is_file()} == before


def test_a_fresh_start_in_a_directory_holding_a_runs_files_is_refused_and_overwrites_nothing(tmp_path: Path) -> None:
    run_dir = tmp_path / "sb3"
    shutil.copytree(OLD_RUNS / "sb3", run_dir)
    shutil.rmtree(run_dir / "resume")
    before = {p: p.read_bytes() for p in run_dir.rglob("*") if p.is_file()}
    with pytest.raises(FileExistsError, match="already holds a run .*evals.jsonl"):
        train(config_from_dict(_tiny(run_dir, total_steps=256)))
    assert {p: p.read_bytes() for p in run_dir.rglob("*") if p.is_file()} == before


def test_a_full_disk_during_training_is_a_typed_error_and_the_last_checkpoint_resumes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 27.7: a write failing with ENOSPC ends the run with RunWriteError; the previous state resumes."""
    import errno

    import training.run.resume as resume_module
    from training.run.rundir import RunWriteError

    run_dir = tmp_path / "run"
    original = resume_module.write_resume

    def full_disk(where: Path, state: Any, tensors: Any) -> None:
        if state.steps >= 256:
            raise OSError(errno.ENOSPC, "No space left on device")
        original(where, state, tensors)

    monkeypatch.setattr("training.run.schedule.write_resume", full_disk)
    with pytest.raises(RunWriteError, match="No space left on device.*the last checkpoint is intact"):
        train(config_from_dict(_tiny(run_dir, total_steps=512)))
    monkeypatch.undo()
    assert _state(run_dir)["steps"] < 256
    train(config_from_dict(_tiny(run_dir, total_steps=512)), resume=True)
    assert_complete(run_dir, 512)


@pytest.mark.parametrize("trainer", ["sb3", "batched"])
def test_a_resumed_run_says_where_it_resumes_and_counts_from_there(
        tmp_path: Path, trainer: str, capfd: pytest.CaptureFixture[str]) -> None:
    if trainer == "batched":
        pytest.importorskip("safetensors")
    run_dir = tmp_path / trainer
    shutil.copytree(OLD_RUNS / trainer, run_dir)
    config = run_dir / "config.yaml"
    config.write_text(re.sub(r"ppo:path=\S*rule_net\.safetensors", f"ppo:path={SHIPPED_DIR / 'rule_net.safetensors'}",
                             config.read_text(encoding="utf-8")), encoding="utf-8")
    steps = _state(run_dir)["steps"]
    main(["--resume", str(run_dir), "--total-steps", str(steps + 256), "--set", "progress_bar=true"])
    err = capfd.readouterr().err
    assert f"[train] resuming at step {steps:,} of {steps + 256:,}" in err
    assert f"[train] {steps:,}/{steps + 256:,} steps" in err and "[train] 0/" not in err


def test_progress_that_stops_early_says_how_far_it_got_never_done() -> None:
    from training.run.interrupt import TrainingInterrupted
    from uno_env.progress import Progress

    out = io.StringIO()
    with pytest.raises(TrainingInterrupted), Progress("[train]", 1000, "steps", stream=out, start=200) as bar:
        bar.update(450)
        raise TrainingInterrupted(signal.SIGINT)
    lines = out.getvalue().splitlines()
    assert lines[0] == "[train] resuming at step 200 of 1,000" and lines[1] == "[train] 200/1,000 steps"
    assert lines[-1].startswith("[train] stopped at 450/1,000 steps after ") and "done" not in out.getvalue()


def test_stale_temporaries_of_killed_writes_are_removed_and_nothing_else(tmp_path: Path) -> None:
    from training.run.resume import remove_stale_temporaries

    resume = tmp_path / "resume"
    resume.mkdir()
    stale = [resume / ".tmpXk8Od8", resume / ".state.json.a1b2c3.tmp", tmp_path / ".last.safetensors.zz.tmp"]
    kept = [resume / "state.json", resume / "model_256.safetensors", resume / ".tmpfile_kept", tmp_path / "tmpXk8Od8"]
    for path in stale + kept:
        path.write_bytes(b"x")
    remove_stale_temporaries(tmp_path)
    assert [p for p in stale if p.exists()] == [] and all(p.exists() for p in kept)


def test_a_resume_state_of_observation_version_2_is_widened_to_compute_what_it_did() -> None:
    """A network saved before the drew_on slice (170 more public entries at max_players=10) resumes with zero
    weights on the new entries, inserted where the version 2 public vector ended: the actor's first layer at its
    end, a privileged critic's before the hidden part; a per-input scale takes this run's fresh entries."""
    import torch

    from training.run.resume import _widened
    from uno_env.observation import observation_size
    from uno_env.privileged import privileged_size

    old, new, hidden = observation_size(10, 2), observation_size(10), privileged_size(10)
    gen = torch.Generator().manual_seed(0)
    public = torch.rand(new, generator=gen)  # the drew_on entries non-zero too
    secret = torch.rand(hidden, generator=gen)
    actor = torch.randn(8, old, generator=gen)
    wide = _widened(actor, (8, new), None)
    assert wide.shape == (8, new)
    torch.testing.assert_close(wide @ public, actor @ public[:old])
    critic = torch.randn(8, old + hidden, generator=gen)
    wide = _widened(critic, (8, new + hidden), None)
    torch.testing.assert_close(wide @ torch.cat([public, secret]), critic @ torch.cat([public[:old], secret]))
    fresh = torch.full((new,), 7.0)
    scale = _widened(torch.ones(old), (new,), fresh)
    assert scale[:old].eq(1).all() and scale[old:].eq(7).all()
    moment = _widened(torch.ones(8, old), (8, new), None)
    assert moment[:, old:].eq(0).all() and moment[:, :old].eq(1).all()
    for shape in ((8, new + 1), (9, new), (8, old)):  # anything else is left for restore to refuse
        assert _widened(actor, shape, None) is actor
