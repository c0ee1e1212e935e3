"""Make tests/data/run_format_v1: a tiny SB3 and a tiny batched run directory with the code of 9f587ed."""
import sys
from pathlib import Path

from training.train import train

from agents.ppo_agent import SHIPPED_DIR
from training.run.config import config_from_dict

out = Path(sys.argv[1])
common = {"seed": 5, "checkpoint_every": 128, "tensorboard": False, "progress_bar": False}
sb3 = {**common, "name": "sb3", "total_steps": 256, "run_dir": str(out / "sb3"),
       "env": {"edition": "classic", "num_players": 2, "max_turns": 300},
       "ppo": {"n_envs": 2, "n_steps": 64, "batch_size": 64, "n_epochs": 1, "hidden": [8]},
       "pool": {"snapshot_every": 64, "size": 2},
       "eval": {"every": 128, "games": 2, "max_decisions": 200,
                "matchups": [{"edition": "classic", "num_players": 2, "opponent": "random"}]}}
batched = {**common, "trainer": "batched", "name": "batched", "total_steps": 512, "run_dir": str(out / "batched"),
           "checkpoint_every": 256,
           "env": {"edition": "classic", "num_players": [2, 3], "max_turns": 300, "skip_forced": True},
           "ppo": {"n_envs": 2, "n_steps": 128, "batch_size": 128, "n_epochs": 1, "hidden": [8],
                   "privileged_critic": True},
           "pool": {"baselines": ["rule", "random"], "snapshot_every": 128, "size": 2, "baseline_only_steps": 128},
           "batched": {"num_tables": 8, "rule": "ppo:path=" + str(SHIPPED_DIR / "rule_net.safetensors")},
           "eval": {"every": 256, "games": 2, "max_decisions": 200,
                    "matchups": [{"edition": "classic", "num_players": 2, "opponent": "random"}]}}
for data in (sb3, batched):
    train(config_from_dict(data))
