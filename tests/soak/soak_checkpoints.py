"""Soak the ``.safetensors`` loaders (a PPO checkpoint: ``PPOAgent.load``; a critic: ``read_critic``; a run's
resume state: ``read_resume``) with damaged and hostile files.

Setup trains one tiny run (a few seconds: its ``last.safetensors``, ``resume/``, pool snapshots) and
exports its critic; the shipped checkpoints are read as they are. Each case copies one of these and
changes it once: its header (``tests.test_hostile_saves.mutate`` on the header JSON: dtypes, shapes,
offsets, names), its ``uno_env`` metadata (mutated, or replaced by nesting 200,000 deep, ``1e999``, a
5,000-digit int, a ``config`` that is a list, NaN), the header's length field, a cut or a flipped bit,
or a sparse tail that claims up to a gigabyte; for a resume state also ``state.json`` (mutated, or
deleted while the run's files stay). The loader must refuse it with a ``CheckpointError`` (a
``ResumeError``) and leave the folder as it was, within the memory bound, or accept it; an accepted
checkpoint's agent then chooses legal actions for a few decisions::

    python -m tests.soak.soak_checkpoints --seconds 600 --seed 3
"""

from __future__ import annotations

import json
import os
import random
import shutil
import struct
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch

from agents import choose_action
from agents.critic import read_critic
from agents.ppo_agent import SHIPPED_DIR, CheckpointError, PPOAgent
from tests.soak.harness import Case, Family, ScratchFolder, main
from tests.soak.soak_saves import dumps
from tests.test_hostile_saves import mutate
from training.run.resume import ResumeError, read_resume
from uno_env.core import Game, Rules

PROG = "tests.soak.soak_checkpoints"
METADATA_KEY = "uno_env"


def split(raw: bytes) -> tuple[dict[str, Any], bytes] | None:
    """A safetensors file's header and data; None when the bytes are not one."""
    if len(raw) < 8:
        return None
    length = struct.unpack("<Q", raw[:8])[0]
    try:
        return json.loads(raw[8:8 + length]), raw[8 + length:]
    except ValueError:
        return None


def join(header: Any, data: bytes) -> bytes:
    """A safetensors file from a header and its data."""
    text = dumps(header)
    return struct.pack("<Q", len(text)) + text + data


def hostile_metadata(rng: random.Random, meta: dict[str, Any]) -> tuple[str, str]:
    """The ``uno_env`` metadata string, damaged once: (what, text)."""
    kind = rng.randrange(9)
    if kind == 0:
        return "metadata nested 200,000 deep", "[" * 200_000 + "]" * 200_000
    if kind == 1:
        return "max_players 1e999", json.dumps({**meta, "max_players": 1}).replace('"max_players": 1', '"max_players": 1e999')
    if kind == 2:
        return "a 5,000-digit steps", json.dumps({**meta, "steps": 0}).replace('"steps": 0', '"steps": ' + "9" * 5000)
    if kind == 3:
        return "config as a list", json.dumps({**meta, "config": [1, 2]})
    if kind == 4:
        return "NaN hidden size", json.dumps({**meta, "hidden": [float("nan")]})
    if kind == 5:
        return "not JSON", "{not json"
    if kind == 6:
        return "a JSON list", "[1, 2, 3]"
    mutated, what = mutate(meta or {"format": "uno_env.ppo"}, rng)
    return f"metadata: {what}", dumps(mutated).decode()


def damage(raw: bytes, rng: random.Random) -> tuple[bytes, str, int | None]:
    """One change to a safetensors file: (bytes, what, apparent size for a sparse tail or None)."""
    parts = split(raw)
    kind = rng.randrange(8)
    if parts is not None and kind <= 2:
        header, data = parts
        mutated, what = mutate(header, rng)
        return join(mutated, data), f"header: {what}", None
    if parts is not None and kind == 3:
        header, data = parts
        meta_text = header.get("__metadata__", {}).get(METADATA_KEY, "{}")
        try:
            meta = json.loads(meta_text)
        except ValueError:
            meta = {}
        what, text = hostile_metadata(rng, meta if isinstance(meta, dict) else {})
        return join({**header, "__metadata__": {METADATA_KEY: text}}, data), what, None
    if kind == 4:
        length = rng.choice([0, 1, 2**63, 2**64 - 1, len(raw), len(raw) - 8, (1 << 20) + 1])
        return struct.pack("<Q", length) + raw[8:], f"header length {length}", None
    if kind == 5:
        at = rng.randrange(len(raw))
        return raw[:at], f"cut at byte {at}", None
    if kind == 6:
        at = rng.randrange(len(raw))
        return raw[:at] + bytes([raw[at] ^ (1 << rng.randrange(8))]) + raw[at + 1:], f"bit flipped at byte {at}", None
    size = rng.choice([1 << 30, 200 << 20, 64 << 20])
    count = (size - 4096) // 4
    if rng.random() < 0.5 or parts is None:  # a header that claims the whole tail: one huge tensor
        header = {"obs_scale": {"dtype": "F32", "shape": [count], "data_offsets": [0, 4 * count]}}
        body = join(header, b"")
        return body, f"one tensor of {count:,} floats in a sparse file of {size:,} bytes", len(body) + 4 * count
    return raw, f"a sparse tail to {size:,} bytes", size


class CheckpointSoak(ScratchFolder):
    """The files to damage (built once) and the folder the cases are written under."""

    prefix = "soak_checkpoints_"

    def __init__(self) -> None:
        super().__init__()
        self.checkpoints: list[tuple[str, bytes]] = []
        self.critic = b""
        self.run_dir: Path | None = None

    def setup(self, args: Any) -> None:
        from training.cli import train
        from training.run.config import config_from_dict
        torch.set_num_threads(1)
        folder = self.open_scratch()
        self.run_dir = folder / "run"
        train(config_from_dict(tiny_run(self.run_dir, total_steps=256)))
        self.checkpoints = [("last.safetensors", (self.run_dir / "last.safetensors").read_bytes())]
        self.checkpoints += [(p.name, p.read_bytes()) for p in sorted(SHIPPED_DIR.glob("*.safetensors"))[:3]]
        self.critic = exported_critic(folder)

    def make_case(self, rng: random.Random, index: int) -> Case:
        assert self.folder is not None and self.run_dir is not None
        folder = self.folder / f"case_{index}"
        roll = rng.random()
        if roll < 0.3:
            shutil.copytree(self.run_dir, folder)
            return self.resume_case(folder, rng)
        folder.mkdir()
        if roll < 0.45:
            name, raw, loader = "critic.safetensors", self.critic, "critic"
        else:
            name, raw = rng.choice(self.checkpoints)
            loader = "checkpoint"
        body, what, size = damage(raw, rng) if rng.random() < 0.9 else (raw, "unchanged", None)
        path = folder / name
        path.write_bytes(body)
        if size is not None:
            os.truncate(path, size)
        decide = random.Random(rng.getrandbits(64))
        return Case(f"{loader} {name}: {what}", lambda: self.load(loader, path, decide), watch=[folder],
                    cleanup=lambda: shutil.rmtree(folder, ignore_errors=True))

    def resume_case(self, run_dir: Path, rng: random.Random) -> Case:
        state_path = run_dir / "resume" / "state.json"
        state = json.loads(state_path.read_text())
        model = run_dir / "resume" / state["model"]
        kind = rng.randrange(4)
        if kind == 0:
            mutated, what = mutate(state, rng)
            state_path.write_bytes(dumps(mutated))
            what = f"state.json: {what}"
        elif kind == 1:
            state_path.unlink()
            what = "state.json deleted, the run's files kept"
        else:
            body, what, size = damage(model.read_bytes(), rng)
            model.write_bytes(body)
            if size is not None:
                os.truncate(model, size)
            what = f"{model.name}: {what}"
        return Case(f"resume {what}", lambda: self.resume(run_dir), watch=[run_dir],
                    cleanup=lambda: shutil.rmtree(run_dir, ignore_errors=True))

    @staticmethod
    def resume(run_dir: Path) -> str:
        found = read_resume(run_dir)
        return "accepted:resume" if found is not None else "accepted:no-resume-state"

    @staticmethod
    def load(loader: str, path: Path, rng: random.Random) -> str:
        if loader == "critic":
            read_critic(path)
            return "accepted:critic"
        agent = PPOAgent.load(path, seed=rng.getrandbits(32))
        players = agent.observation_players() or 2
        game = Game(Rules(num_players=min(players, 4)), seed=rng.getrandbits(32))
        for _ in range(6):
            if game.is_round_over:
                break
            game.step(choose_action(agent, game))
        return "accepted:checkpoint"


def exported_critic(folder: Path) -> bytes:
    """The bytes of a critic file exported (``export_critic``) from a batched run's resume model (a small
    seeded critic saved as one, ``tests.test_critic_export.resume_model_files``) and its actor checkpoint."""
    from tests.test_critic_export import resume_model_files
    from training.tools.export_critic import export_critic

    _, model_path, actor_path = resume_model_files(folder, "relu")
    export_critic(model_path, actor_path, folder / "critic.safetensors")
    return (folder / "critic.safetensors").read_bytes()


def tiny_run(run_dir: Path, **top: Any) -> dict[str, Any]:
    """A run of a few seconds on one core: checkpoints every 128 steps, a 2-snapshot pool, evaluations."""
    data: dict[str, Any] = {
        "name": "tiny", "seed": 5, "total_steps": 512, "run_dir": str(run_dir), "checkpoint_every": 128,
        "tensorboard": False, "progress_bar": False,
        "env": {"edition": "classic", "num_players": 2, "max_turns": 300},
        "ppo": {"n_envs": 2, "n_steps": 64, "batch_size": 64, "n_epochs": 1, "hidden": [16], "privileged_critic": True},
        "pool": {"snapshot_every": 64, "size": 2},
        "eval": {"every": 128, "games": 2, "max_decisions": 300,
                 "matchups": [{"edition": "classic", "num_players": 2, "opponent": "rule"}]},
    }
    data.update(top)
    return data


def family() -> Family:
    """The checkpoints family."""
    state = CheckpointSoak()
    return Family("checkpoints", state.make_case, (CheckpointError, ResumeError), case_timeout=30.0,
                  max_rss_growth_mib=768.0, setup=state.setup, teardown=state.teardown)


def run(argv: Sequence[str] | None = None) -> int:
    """Entry point."""
    return main(family(), argv, PROG, __doc__.split("\n")[0])


if __name__ == "__main__":
    sys.exit(run())
