"""Issue 27 pins: each hostile checkpoint (four metadata cases and a sparse gigabyte) refused with its own typed
error on every path that reads a checkpoint from data, and the remaining hand-checked cases of points 3, 4, 6, 7.

The files are built as in ``test_hostile_checkpoints.py``; here they arrive through ``ppo.init_from`` (``ConfigError``),
a pool snapshot on ``--resume`` (``ResumeError``), ``ppo:PATH`` and ``ppo:NAME`` with a checkpoints folder
(``AgentSpecError``), and a bare ``ppo`` with a checkpoints folder (the damaged file is skipped)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

pytest.importorskip("safetensors")

from test_hostile_checkpoints import _write_raw  # noqa: E402
from test_ppo_agent import _random_checkpoint  # noqa: E402
from test_training_config import _alias_bomb  # noqa: E402

from agents.ppo_agent import METADATA_KEY, PPOAgent, read_checkpoint  # noqa: E402
from agents.registry import AgentSpecError, agent_label, make_agent  # noqa: E402

RUNS = Path(__file__).parent / "data" / "runs_9f587ed"
HOSTILE = ["nested 200k deep", "max_players 1e999", "a 5,000-digit integer", "config as a list", "sparse 1 GiB"]


def _hostile(label: str, path: Path, scratch: Path) -> Path:
    """The hostile checkpoint ``label`` written at ``path`` (``scratch``: a folder for the good file it starts from)."""
    from safetensors.numpy import save_file

    if label == "sparse 1 GiB":
        count = (1 << 30) // 4
        return _write_raw(path, {"obs_scale": {"dtype": "F32", "shape": [count], "data_offsets": [0, 4 * count]}},
                          size=1 << 30)
    scratch.mkdir(parents=True, exist_ok=True)
    tensors, meta = read_checkpoint(_random_checkpoint(scratch / "good.safetensors"))
    text = json.dumps(meta)
    if label == "nested 200k deep":
        text = "[" * 200_000 + "]" * 200_000
    elif label == "max_players 1e999":
        text = text.replace('"max_players": 10', '"max_players": 1e999')
    elif label == "a 5,000-digit integer":
        text = text.replace('"max_players": 10', '"max_players": ' + "9" * 5000)
    else:
        text = json.dumps({**meta, "config": [1, 2]})
    assert text != json.dumps(meta)
    save_file(tensors, str(path), metadata={METADATA_KEY: text})
    return path


def _files(folder: Path) -> dict[Path, bytes]:
    """Every file under ``folder`` with its bytes (the sparse gigabyte by its header only)."""
    return {p: _head(p) + str(p.stat().st_size).encode() for p in folder.rglob("*") if p.is_file()}


def _head(path: Path) -> bytes:
    """The first 64 KiB of a file, read without reading the rest (read_bytes() would load the whole gigabyte)."""
    with path.open("rb") as file:
        return file.read(1 << 16)


@pytest.mark.parametrize("label", HOSTILE)
def test_a_hostile_init_from_is_a_config_error(tmp_path: Path, label: str) -> None:
    from training.run.config import ConfigError, config_from_dict

    path = _hostile(label, tmp_path / "init.safetensors", tmp_path / "scratch")
    before = _files(tmp_path)
    with pytest.raises(ConfigError, match=r"^ppo\.init_from: ") as refused:
        config_from_dict({"ppo": {"init_from": str(path)}})
    assert len(str(refused.value)) < 1000  # the message never repeats the hostile text
    assert _files(tmp_path) == before


@pytest.mark.parametrize("label", HOSTILE)
def test_a_hostile_pool_snapshot_on_resume_is_a_resume_error(tmp_path: Path, label: str) -> None:
    pytest.importorskip("torch")
    from training.run.resume import ResumeError, read_resume

    run = tmp_path / "run"
    shutil.copytree(RUNS / "batched", run)
    assert read_resume(run) is not None  # the run as written resumes
    _hostile(label, run / "pool" / "snap_256.safetensors", tmp_path / "scratch")
    before = _files(run)
    with pytest.raises(ResumeError, match=r"names .*snap_256\.safetensors, which is not a usable checkpoint") as refused:
        read_resume(run)
    assert len(str(refused.value)) < 1000
    assert _files(run) == before


@pytest.mark.parametrize("label", HOSTILE)
def test_a_hostile_checkpoint_named_by_a_ppo_spec_is_an_agent_spec_error(tmp_path: Path, label: str) -> None:
    folder = tmp_path / "checkpoints"
    folder.mkdir()
    path = _hostile(label, folder / "hostile.safetensors", tmp_path / "scratch")
    before = _files(folder)
    for spec, checkpoints in ((f"ppo:{path}", None), (f"ppo:path={path}", None), ("ppo:hostile", folder)):
        with pytest.raises(AgentSpecError, match="cannot load the PPO checkpoint .*hostile.safetensors") as refused:
            make_agent(spec, checkpoints=checkpoints)
        assert len(str(refused.value)) < 1000
    assert _files(folder) == before


@pytest.mark.parametrize("label", HOSTILE)
def test_a_bare_ppo_skips_a_hostile_file_in_the_checkpoints_folder(tmp_path: Path, label: str) -> None:
    from test_registry import _tiny

    folder = tmp_path / "checkpoints"
    folder.mkdir()
    _hostile(label, folder / "aa_hostile.safetensors", tmp_path / "scratch")  # sorted first
    _tiny(folder / "classic_2p.safetensors", ["classic"], [2])
    before = _files(folder)
    agent = make_agent("ppo", edition="classic", num_players=2, checkpoints=folder)
    assert isinstance(agent, PPOAgent) and agent_label("ppo", agent) == "ppo[classic_2p]"
    assert _files(folder) == before


# ---------------------------------------------------------------------- issue 27.3 and 27.4
def test_a_yaml_alias_bomb_in_a_str_field_is_refused_before_it_expands(tmp_path: Path) -> None:
    from training.run.config import ConfigError, load_config

    path = tmp_path / "bomb.yaml"
    path.write_text(_alias_bomb('"lol"').replace("\nseed: *a9\n", "\nname: *a9\n"), encoding="utf-8")
    assert path.stat().st_size < 600 and "name: *a9" in path.read_text(encoding="utf-8")
    with pytest.raises(ConfigError, match=r"aliases \(\*a0\) are refused") as refused:
        load_config(path)
    assert len(str(refused.value)) < 1000


def test_a_configs_search_baseline_with_a_huge_time_budget_is_refused() -> None:
    from training.run.config import ConfigError, config_from_dict

    with pytest.raises(ConfigError, match=r"pool\.baselines: .*time_budget=1000000000\.0 is outside 0\.001\.\.5") as refused:
        config_from_dict({"pool": {"baselines": ["rule", "ismcts:time_budget=1e9"]}})
    assert len(str(refused.value)) < 1000


# ---------------------------------------------------------------------- issue 27.6 and 27.7
def test_a_full_disk_raised_by_safetensors_is_a_run_write_error(tmp_path: Path) -> None:
    from types import SimpleNamespace

    from safetensors import SafetensorError

    from training.run.rundir import RunWriteError
    from training.run.schedule import Schedule

    def full_disk() -> None:
        raise SafetensorError("Error while serializing: IoError(No space left on device)")

    schedule = SimpleNamespace(run_dir=tmp_path, trainer=SimpleNamespace(steps=256))
    with pytest.raises(RunWriteError, match="No space left on device.*the last checkpoint is intact"):
        Schedule._write(schedule, full_disk)  # type: ignore[arg-type]


def test_a_batched_resume_without_state_json_is_refused_and_deletes_nothing(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    from training.run.resume import ResumeError, read_resume

    run = tmp_path / "batched"
    shutil.copytree(RUNS / "batched", run)
    (run / "resume" / "state.json").unlink()
    before = _files(run)
    with pytest.raises(ResumeError, match="state.json is missing.*--resume would restart it from step 0"):
        read_resume(run)
    assert _files(run) == before


@pytest.mark.parametrize("link", ["a loop", "to nowhere"])
def test_a_state_json_that_is_a_broken_link_is_a_resume_error_not_a_missing_state(tmp_path: Path, link: str) -> None:
    """``read_resume`` took a loop of links (or a link to a missing file) for no state at all, so --resume
    restarted from step 0 (noticed in stop 30)."""
    import os

    pytest.importorskip("torch")
    from training.run.resume import ResumeError, read_resume

    run = tmp_path / "run"
    (run / "resume").mkdir(parents=True)
    state = run / "resume" / "state.json"
    os.symlink(state if link == "a loop" else tmp_path / "gone.json", state)
    reason = "Too many levels of symbolic links" if link == "a loop" else "No such file or directory"
    with pytest.raises(ResumeError, match=f"state.json: a link that leads to no file \\({reason}\\)"):
        read_resume(run)
    assert state.is_symlink()


@pytest.mark.slow
@pytest.mark.parametrize("command", [["-m", "uno_app.cli", "play", "--load"], ["-m", "training.cli", "--config"]])
def test_load_or_config_naming_a_pipe_ends_with_a_message_not_a_wait(tmp_path: Path, command: list[str]) -> None:
    """Issue 27.7: ``--load`` or ``--config`` naming a FIFO blocked forever in ``open()``."""
    import os
    import subprocess
    import sys

    if command[1] == "training.cli":
        pytest.importorskip("yaml")
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    out = subprocess.run([sys.executable, *command, str(pipe)], cwd=Path(__file__).parent.parent, stdin=subprocess.DEVNULL,
                         capture_output=True, text=True, timeout=120)  # a wait for a writer would run past it
    assert out.returncode != 0 and "pipe" in out.stderr and "Traceback" not in out.stderr, out.stderr[-2000:]


def test_the_audit_table_of_the_probes_cases_names_tests_that_exist() -> None:
    """docs/testing.md maps every case of the reliability probe (issue 27, points 1-7) to the tests that pin
    it: each named file and test function must exist, and every point must have a row."""
    import ast
    import re

    root = Path(__file__).parent.parent
    text = (root / "docs" / "testing.md").read_text(encoding="utf-8")
    table = text.split("## The reliability probe's cases", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in table.splitlines() if re.match(r"\| \d[a-d]?\. ", line)]
    assert sorted({row[2] for row in rows}) == list("1234567")
    named = 0
    functions: dict[str, set[str]] = {}
    for row in rows:
        current = None
        for file, test in re.findall(r"`(?:(test_\w+\.py))?(?:::(test_\w+))?`", row.split(" | ", 1)[1]):
            if file:
                current = file
                assert (root / "tests" / file).is_file(), file
            if test:
                assert current is not None, row
                if current not in functions:
                    tree = ast.parse((root / "tests" / current).read_text(encoding="utf-8"))
                    functions[current] = {node.name for node in tree.body
                                          if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)}
                assert test in functions[current], f"{current}::{test} (docs/testing.md) does not exist"
                named += 1
    assert named > 40


@pytest.mark.slow
def test_refusals_of_resume_states_and_checkpoint_metadata_never_write_out_unbounded_data(tmp_path: Path) -> None:
    """Error messages shorten what they refuse (``short_repr``): a resume state's or a checkpoint's field holding
    20,000 items is named in a few hundred characters."""
    from safetensors.numpy import save_file

    from agents.ppo_agent import CheckpointError

    pytest.importorskip("torch")
    from training.run.resume import ResumeError, read_resume

    huge = [{"score": 1.0, "steps": 1}] * 20_000
    for key in ("best", "counters", "format", "model", "elo", "last_eval_step"):
        run = tmp_path / f"run_{key}"
        shutil.copytree(RUNS / "batched", run)
        state_path = run / "resume" / "state.json"
        state = json.loads(state_path.read_text(encoding="utf-8"))
        state[key] = {"x": huge} if key == "elo" else huge
        state_path.write_text(json.dumps(state), encoding="utf-8")
        with pytest.raises(ResumeError) as refused:
            read_resume(run)
        assert len(str(refused.value)) < 1000, (key, str(refused.value)[:1200])
    tensors, meta = read_checkpoint(_random_checkpoint(tmp_path / "good.safetensors"))
    for key in ("format", "format_version", "activation", "observation_size"):
        path = tmp_path / f"bad_{key}.safetensors"
        save_file(tensors, str(path), metadata={METADATA_KEY: json.dumps({**meta, key: huge})})
        with pytest.raises(CheckpointError) as refused:
            read_checkpoint(path)
        assert len(str(refused.value)) < 1000, (key, str(refused.value)[:1200])


@pytest.mark.parametrize("damage", ["evals.jsonl a pipe", "best.json a loop of links", "last.json a folder",
                                    "evals.jsonl a sparse gigabyte", "resume/best_256.json missing",
                                    "evals.jsonl missing", "evals.jsonl cut", "evals.jsonl damaged"])
def test_a_run_file_that_a_resume_would_read_or_rewrite_is_checked_first(tmp_path: Path, damage: str) -> None:
    """Found by ``tests/soak/soak_training.py``: ``evals.jsonl`` replaced by a pipe made ``--resume`` wait forever
    (``restore_files`` read it), and a run whose ``evals.jsonl`` was deleted resumed with its evaluations lost.
    Every file a resume reads or rewrites beside the checkpoints is now checked by ``read_resume``: a regular
    file of a bounded size (``evals.jsonl`` with at least the lines the state counts, each an evaluation), or a typed refusal that
    changes nothing."""
    import os
    import threading

    pytest.importorskip("torch")
    from training.run.resume import ResumeError, read_resume

    run = tmp_path / "run"
    shutil.copytree(RUNS / "batched", run)
    name, _, what = damage.partition(" ")
    path = run / name
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    path.unlink()
    if what == "cut":  # fewer lines than the state counts (the soak found such a run resumed, its evaluations lost)
        path.write_text("".join(lines[:-1]), encoding="utf-8")
    elif what == "damaged":  # a bit flipped in a line the resumed run keeps (it was kept, unreadable)
        path.write_text("".join([lines[0].replace(":", ";", 1), *lines[1:]]), encoding="utf-8")
    elif what == "a pipe":
        os.mkfifo(path)
    elif what == "a loop of links":
        os.symlink(path, path)
    elif what == "a folder":
        path.mkdir()
    elif what == "a sparse gigabyte":
        with open(path, "wb") as handle:
            handle.truncate(1 << 30)
    before = _files(run)
    raised: list[BaseException] = []

    def resume() -> None:
        try:
            read_resume(run)
        except BaseException as err:  # noqa: BLE001 - handed to the test
            raised.append(err)

    reader = threading.Thread(target=resume, daemon=True)
    reader.start()
    reader.join(60)
    assert not reader.is_alive(), "read_resume is waiting"
    assert raised and isinstance(raised[0], ResumeError), raised
    assert name in str(raised[0]) and len(str(raised[0])) < 1000
    assert _files(run) == before
