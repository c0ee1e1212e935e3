"""Training throughput: learner env steps per second, PPO updates included (``python -m training.bench``).

The learner against rule-based opponents at 2 and 4 players, and at a 4-player table against
three frozen PPO snapshots (numpy inference inside the env), each with a DummyVecEnv, SB3's
SubprocVecEnv and ``training.vec_env.ShardedVecEnv`` over 2 workers. The network and PPO
settings are those of ``--config`` (default ``configs/classic.yaml``: 256x256, privileged critic,
forced moves skipped); every run is a real ``MaskablePPO.learn`` of ``--steps`` steps after a
short warm-up, one torch thread per process. Each setting runs ``--repeats`` times, interleaved
with the others (shared machines are noisy), and the table reports the median and the range.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import statistics  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402


def _run(data: dict[str, Any], steps: int, snapshot: str | None) -> float:
    import torch
    from sb3_contrib import MaskablePPO

    from .config import config_from_dict
    from .policy import policy_class, policy_kwargs
    from .train import make_vec_env

    torch.set_num_threads(1)
    config = config_from_dict(data)
    venv = make_vec_env(config)
    if snapshot:
        venv.env_method("set_pool", [("snap", snapshot)], True)
    p = config.ppo
    model = MaskablePPO(policy_class(p.privileged_critic), venv, n_steps=p.n_steps, batch_size=p.batch_size,
                        n_epochs=p.n_epochs, seed=0, device="cpu",
                        policy_kwargs=policy_kwargs(p.hidden, p.activation, config.env.max_players,
                                                    p.privileged_critic))
    model.learn(p.n_steps * p.n_envs)  # warm-up
    start = time.perf_counter()
    model.learn(steps, reset_num_timesteps=False)
    elapsed = time.perf_counter() - start
    venv.close()
    return (model.num_timesteps - p.n_steps * p.n_envs) / elapsed


def main(argv: list[str] | None = None) -> None:
    """Print steps/s for each setting."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=32768)
    parser.add_argument("--repeats", type=int, default=3, help="interleaved runs per setting; the median is reported")
    parser.add_argument("--config", default=str(Path(__file__).resolve().parent.parent / "configs" / "classic.yaml"))
    args = parser.parse_args(argv)
    from sb3_contrib import MaskablePPO

    from .config import config_from_dict, load_config
    from .policy import export_policy, policy_kwargs
    from .pool import make_training_env
    from .train import checkpoint_metadata

    source = load_config(args.config)
    ppo, env = source.to_dict()["ppo"], source.to_dict()["env"]
    base = config_from_dict({"ppo": {"n_envs": 1, "n_steps": 64, "batch_size": 64, "hidden": ppo["hidden"],
                                     "activation": ppo["activation"]}})
    model = MaskablePPO("MlpPolicy", make_training_env(base),
                        policy_kwargs=policy_kwargs(ppo["hidden"], ppo["activation"], 10),
                        n_steps=64, batch_size=64, seed=0, device="cpu")
    snapshot = os.path.join(tempfile.mkdtemp(), "snap.safetensors")
    # An untrained snapshot (random weights) plays the PPO opponents: it costs what a trained one does.
    export_policy(model.policy, snapshot, checkpoint_metadata(base, 0))
    settings: list[tuple[str, dict[str, Any], dict[str, Any], str | None]] = [
        ("2p classic vs rule", {"edition": "classic", "num_players": 2}, {"baselines": ["rule"]}, None),
        ("4p classic vs rule x3", {"edition": "classic", "num_players": 4}, {"baselines": ["rule"]}, None),
        ("4p classic vs PPO x3", {"edition": "classic", "num_players": 4},
         {"baselines": ["rule"], "baseline_share": 0.0, "latest_share": 1.0}, snapshot),
    ]
    n = ppo["n_envs"]
    vecs: list[tuple[str, dict[str, Any]]] = [(f"dummy x{n}", {"vec_env": "dummy"}), (f"subproc x{n}", {"vec_env": "subproc"}),
            (f"sharded 2 workers x{n}", {"vec_env": "sharded", "workers": 2})]
    runs = [(label, vec_label, {"env": {**env, **table}, "pool": pool, "ppo": {**ppo, **vec}}, snap)
            for label, table, pool, snap in settings for vec_label, vec in vecs]
    rates: dict[tuple[str, str], list[float]] = {}
    for repeat in range(args.repeats):
        for label, vec_label, data, snap in runs:
            rate = _run(data, args.steps, snap)
            rates.setdefault((label, vec_label), []).append(rate)
            print(f"[{repeat + 1}/{args.repeats}] {label:24s} {vec_label:24s} {rate:7.0f} learner steps/s", flush=True)
    print(f"\n| table | vec env | learner steps/s (median of {args.repeats}) | range |\n|---|---|---:|---|")
    for (label, vec_label), values in rates.items():
        print(f"| {label} | {vec_label} | {statistics.median(values):.0f} | {min(values):.0f}-{max(values):.0f} |")

if __name__ == "__main__":
    main()
