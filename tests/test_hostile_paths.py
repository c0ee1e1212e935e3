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
