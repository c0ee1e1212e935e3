"""Training throughput: learner env steps per second, PPO updates included (``python -m training.bench``).

Two settings: the learner against rule-based opponents, and at a 4-player table against three
frozen PPO snapshots (numpy inference inside the env), each with a DummyVecEnv and a
SubprocVecEnv. Every run is a real ``MaskablePPO.learn`` of ``--steps`` steps after a short
warm-up, one torch thread per process.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from typing import Any  # noqa: E402


def _run(data: dict[str, Any], steps: int, snapshot: str | None) -> float:
    import torch
    from sb3_contrib import MaskablePPO

    from .config import config_from_dict
    from .policy import policy_kwargs
    from .train import make_vec_env

    torch.set_num_threads(1)
    config = config_from_dict(data)
    venv = make_vec_env(config)
    if snapshot:
        venv.env_method("set_pool", [("snap", snapshot)], True)
    p = config.ppo
    model = MaskablePPO("MlpPolicy", venv, n_steps=p.n_steps, batch_size=p.batch_size, n_epochs=p.n_epochs,
                        policy_kwargs=policy_kwargs(p.hidden, p.activation, config.env.max_players), seed=0,
                        device="cpu")
    model.learn(p.n_steps * p.n_envs)  # warm-up
    start = time.perf_counter()
    model.learn(steps, reset_num_timesteps=False)
    elapsed = time.perf_counter() - start
    venv.close()
    return (model.num_timesteps - p.n_steps * p.n_envs) / elapsed


def main(argv: list[str] | None = None) -> None:
    """Print steps/s for each setting."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=16384)
    args = parser.parse_args(argv)
    from sb3_contrib import MaskablePPO

    from .config import config_from_dict
    from .policy import export_policy, policy_kwargs
    from .pool import make_training_env
    from .train import checkpoint_metadata

    base = config_from_dict({"ppo": {"n_envs": 1, "n_steps": 64, "batch_size": 64}})
    model = MaskablePPO("MlpPolicy", make_training_env(base), policy_kwargs=policy_kwargs([128, 128], "tanh", 10),
                        n_steps=64, batch_size=64, seed=0, device="cpu")
    snapshot = os.path.join(tempfile.mkdtemp(), "snap.safetensors")
    # An untrained snapshot (random weights) plays the PPO opponents: it costs what a trained one does.
    export_policy(model.policy, snapshot, checkpoint_metadata(base, 0))
    settings = [
        ("2p classic vs rule", {"edition": "classic", "num_players": 2}, {"baselines": ["rule"]}, None),
        ("4p classic vs rule x3", {"edition": "classic", "num_players": 4}, {"baselines": ["rule"]}, None),
        ("4p classic vs PPO x3", {"edition": "classic", "num_players": 4},
         {"baselines": ["rule"], "baseline_share": 0.0, "latest_share": 1.0}, snapshot),
    ]
    vecs = [("dummy x8", {"vec_env": "dummy", "n_envs": 8, "n_steps": 512, "batch_size": 1024}),
            ("subproc x2", {"vec_env": "subproc", "n_envs": 2, "n_steps": 2048, "batch_size": 1024})]
    for label, env, pool, snap in settings:
        for vec_label, ppo in vecs:
            rate = _run({"env": {**env, "max_turns": 600}, "pool": pool, "ppo": ppo}, args.steps, snap)
            print(f"{label:24s} {vec_label:11s} {rate:7.0f} learner steps/s", flush=True)


if __name__ == "__main__":
    main()
