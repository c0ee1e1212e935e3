"""Self-play PPO training for ``uno_env`` (needs the ``train`` extra: torch, sb3-contrib, pyyaml, ...).

* ``training.config``: YAML configs as typed dataclasses, checked strictly on load;
* ``training.pool``: the opponent pool (baselines + frozen snapshots) and the training env;
* ``training.policy``: input scaling and export to the shareable checkpoint format;
* ``training.train``: the run (``uno-env train --config configs/universal.yaml``);
* ``training.quickstart``: a short run, then the evaluation table (``python -m training.quickstart``);
* ``training.plot``: the training curve from a run's ``evals.jsonl``.

Trained policies are played with ``agents.PPOAgent`` (numpy only).
"""
