"""The privileged critic exported beside the actor and run in numpy (agents.critic, training.tools.export_critic)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from agents.critic import PrivilegedCritic, read_critic, write_critic  # noqa: E402
from agents.ppo_agent import CheckpointError, write_checkpoint  # noqa: E402
from training.batched.networks import Actor, Critic, actor_tensors  # noqa: E402
from training.run.critic import critic_size  # noqa: E402
from training.run.resume import METADATA_KEY, ResumeError, capture  # noqa: E402
from training.tools.export_critic import export_critic  # noqa: E402
from uno_env.observation import observation_size  # noqa: E402

MAX_PLAYERS, HIDDEN = 2, [8, 6]


def resume_model_files(tmp_path: Path, activation: str) -> tuple[Critic, Path, Path]:
    """A torch critic saved as a batched run's resume model (``capture``'s tensors, as ``write_resume`` saves
    them), and the run's actor checkpoint."""
    from safetensors.torch import save_file

    torch.manual_seed(0)
    critic = Critic(MAX_PLAYERS, HIDDEN, activation, privileged=True)
    holder = torch.nn.Module()
    holder.critic = critic
    optimizer = torch.optim.Adam(holder.parameters())
    critic(torch.zeros(1, critic_size(MAX_PLAYERS))).sum().backward()
    optimizer.step()  # a resume model holds more than the critic: Adam's state, the generators
    model, _ = capture(holder, optimizer)
    model_path = tmp_path / "model_1.safetensors"
    save_file(model, str(model_path), metadata={METADATA_KEY: json.dumps({"steps": 1})})
    actor_path = tmp_path / "best.safetensors"
    write_checkpoint(actor_path, actor_tensors(Actor(MAX_PLAYERS, HIDDEN, activation)),
                     {"max_players": MAX_PLAYERS, "hidden": HIDDEN, "activation": activation,
                      "observation_size": observation_size(MAX_PLAYERS),
                      "editions": ["classic"], "num_players": [2]})
    return critic, model_path, actor_path


@pytest.mark.parametrize("activation", ["relu", "tanh"])
def test_exported_critic_in_numpy_equals_the_torch_critic(tmp_path: Path, activation: str) -> None:
    critic, model_path, actor_path = resume_model_files(tmp_path, activation)
    out = tmp_path / "critic.safetensors"
    meta = export_critic(model_path, actor_path, out)
    assert meta["input_size"] == critic_size(MAX_PLAYERS)
    numpy_critic = PrivilegedCritic.load(out)
    rng = np.random.default_rng(1)
    inputs = rng.integers(0, 3, size=(5, critic_size(MAX_PLAYERS))).astype(np.float32)
    with torch.no_grad():
        expected = critic(torch.as_tensor(inputs)).numpy()
    np.testing.assert_allclose(numpy_critic.values(inputs), expected, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(numpy_critic.values(inputs[0]), expected[:1], rtol=1e-4, atol=1e-5)


def test_a_resume_model_without_a_critic_is_refused(tmp_path: Path) -> None:
    from safetensors.torch import save_file

    _, _, actor_path = resume_model_files(tmp_path, "relu")
    holder = torch.nn.Module()
    holder.actor = torch.nn.Linear(3, 2)
    bare = tmp_path / "bare.safetensors"
    save_file(capture(holder, torch.optim.Adam(holder.parameters()))[0], str(bare),
              metadata={METADATA_KEY: json.dumps({"steps": 1})})
    with pytest.raises(CheckpointError, match="no critic tensor"):
        export_critic(bare, actor_path, tmp_path / "out.safetensors")
    assert not (tmp_path / "out.safetensors").exists()


def test_a_file_that_is_no_resume_model_is_refused_from_its_header(tmp_path: Path) -> None:
    from safetensors.numpy import save_file

    _, _, actor_path = resume_model_files(tmp_path, "relu")
    foreign = tmp_path / "foreign.safetensors"
    save_file({"policy/critic.scale": np.ones(3, np.float32)}, str(foreign))  # no step count, no generator state
    with pytest.raises(ResumeError, match="model_<steps>.safetensors"):
        export_critic(foreign, actor_path, tmp_path / "out.safetensors")
    huge = tmp_path / "huge.safetensors"
    huge.write_bytes((10**12).to_bytes(8, "little") + b"{}")  # a header that claims a terabyte
    with pytest.raises(ResumeError):
        export_critic(huge, actor_path, tmp_path / "out.safetensors")
    assert not (tmp_path / "out.safetensors").exists()


def test_damaged_critics_are_refused_with_what_is_wrong(tmp_path: Path) -> None:
    critic, model_path, actor_path = resume_model_files(tmp_path, "relu")
    good = tmp_path / "critic.safetensors"
    export_critic(model_path, actor_path, good)
    tensors, meta = read_critic(good)
    nan = dict(tensors, **{"value.bias": np.array([np.nan], np.float32)})
    with pytest.raises(CheckpointError, match="NaN"):
        write_critic(tmp_path / "x.safetensors", nan, meta)
    missing = {k: v for k, v in tensors.items() if k != "hidden.1.bias"}
    with pytest.raises(CheckpointError, match="expected"):
        write_critic(tmp_path / "x.safetensors", missing, meta)
    with pytest.raises(CheckpointError, match="format"):
        PrivilegedCritic(tensors, dict(meta, format="uno_env.ppo"))
    with pytest.raises(CheckpointError, match="uno_env.critic"):
        read_critic(actor_path)  # an actor checkpoint is not a critic
    assert not (tmp_path / "x.safetensors").exists()
    with pytest.raises(ValueError, match="critic inputs must be"):
        PrivilegedCritic(tensors, meta).values(np.zeros((2, 3), np.float32))


@pytest.mark.parametrize("max_players", [102, 1, 1e999])
def test_a_critic_whose_max_players_is_no_table_size_is_a_checkpoint_error(tmp_path: Path, max_players: float) -> None:
    """max_players 102 was a raw ValueError from observation_size, 1e999 an OverflowError; found by
    ``tests/soak/soak_checkpoints.py``."""
    _, model_path, actor_path = resume_model_files(tmp_path, "relu")
    good = tmp_path / "critic.safetensors"
    export_critic(model_path, actor_path, good)
    tensors, meta = read_critic(good)
    with pytest.raises(CheckpointError, match="max_players|mangles"):
        PrivilegedCritic(tensors, dict(meta, max_players=max_players))
