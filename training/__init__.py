"""Self-play PPO training for ``uno_env`` (needs the ``train`` extra: torch, sb3-contrib, pyyaml, ...).

* ``training.config``: YAML configs as typed dataclasses, checked strictly on load;
* ``training.sb3.pool``: the opponent pool (baselines + frozen snapshots) and the training env
  (forced moves skipped, the privileged critic's observation);
* ``training.run.critic``: the hidden cards the privileged critic reads during training;
* ``training.sb3.policy``: input scaling, the privileged-critic policy, export to the shareable format;
* ``training.sb3.imitation``: the warm start that fits the policy and critic to a teacher's play;
* ``training.sb3.vec_env``: ``ShardedVecEnv``, envs split over a few worker processes;
* ``training.cli``: the run (``uno-env train --config configs/classic.yaml``);
* ``training.run.resume``: the resume state (safetensors + JSON, no pickle) and its checks;
* ``training.run.interrupt``: Ctrl-C and SIGTERM stop a run at a safe point with a checkpoint;
* ``training.run.progress``: progress of the long phases, a bar on a terminal, plain lines otherwise;
* ``training.tools.quickstart``: a short run, then the evaluation table (``python -m training.tools.quickstart``);
* ``training.tools.ship``: copy a run's checkpoint under ``agents/checkpoints/`` with its config and evaluation;
* ``training.tools.rule_net``: a network fitted to RuleAgent's decisions by imitation alone (``rule_net``);
* ``training.tools.plot``: the training curve from a run's ``evals.jsonl``;
* ``training.tools.bench``: learner steps per second;
* ``training.rllib``: self-play PPO on Ray RLlib, a laptop or a cluster (the ``rllib`` extra),
  exported to the same checkpoint format.

Trained policies are played with ``agents.PPOAgent`` (numpy only).
"""
