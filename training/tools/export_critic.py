"""Export a batched run's privileged critic beside its actor, for play without torch (``agents.critic``).

    python -m training.tools.export_critic RUN/resume/model_<steps>.safetensors RUN/best.safetensors OUT.safetensors

The resume model file holds the learner's tensors under ``policy/critic.*`` (``scale``, ``body.<2i>.*``,
``head.*``: ``training.batched.networks.Critic``); the critic shares the actor's hidden widths, activation and
``max_players``, so those are read from the run's actor checkpoint.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import numpy as np

from agents.critic import write_critic
from agents.ppo_agent import CheckpointError, read_checkpoint

__all__ = ["critic_tensors", "export_critic"]

PREFIX = "policy/critic."


def critic_tensors(model: dict[str, np.ndarray], depth: int) -> dict[str, np.ndarray]:
    """The critic of a resume model's tensors in the ``agents.critic`` layout (``depth`` hidden layers)."""
    try:
        out = {"input_scale": model[PREFIX + "scale"]}
        for i in range(depth):  # body is Linear, activation, Linear, activation, ...
            out[f"hidden.{i}.weight"] = model[f"{PREFIX}body.{2 * i}.weight"]
            out[f"hidden.{i}.bias"] = model[f"{PREFIX}body.{2 * i}.bias"]
        out["value.weight"] = model[PREFIX + "head.weight"]
        out["value.bias"] = model[PREFIX + "head.bias"]
    except KeyError as err:
        raise CheckpointError(f"the resume model has no critic tensor {err} (not a batched run's model?)") from None
    return out


def export_critic(model_path: str | os.PathLike[str], actor_path: str | os.PathLike[str],
                  out_path: str | os.PathLike[str]) -> dict[str, Any]:
    """Write the critic of the resume model ``model_path`` to ``out_path``; return its metadata. The model's header
    is checked before a tensor is read (``training.run.resume.read_resume_model``)."""
    from training.run.resume import read_resume_model

    _, actor_meta = read_checkpoint(actor_path)
    model = {name: tensor.numpy() for name, tensor in read_resume_model(Path(model_path)).items()}
    tensors = critic_tensors(model, len(actor_meta["hidden"]))
    metadata = {"max_players": actor_meta["max_players"], "hidden": actor_meta["hidden"],
                "activation": actor_meta["activation"], "input_size": int(tensors["input_scale"].shape[0]),
                "editions": actor_meta.get("editions"), "num_players": actor_meta.get("num_players"),
                "source": os.path.basename(os.fspath(model_path)), "actor": os.path.basename(os.fspath(actor_path))}
    write_critic(out_path, tensors, metadata)
    return metadata


def main(argv: list[str] | None = None) -> int:
    """Command line: MODEL ACTOR OUT."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    from training.run.resume import ResumeError

    try:
        print(export_critic(*args))
    except (CheckpointError, ResumeError, OSError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
