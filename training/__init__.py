"""Self-play PPO training for ``uno_env`` (needs the ``train`` extra: torch, sb3-contrib, pyyaml, ...).

* ``training.cli``: ``uno-env train --config X``, dispatching on ``trainer``;
* ``training.run.config``: YAML configs as typed models, checked strictly on load;
* ``training.run``: the run layer under every trainer (imports no trainer):
  ``state`` (``RunState``, what ``resume/state.json`` holds), ``rundir`` (config, checkpoints and
  their cards, the one checkpoint exporter), ``schedule`` (snapshots, evaluations, checkpoints,
  finish; the ``Trainer`` protocol), ``evaluation``, ``launch`` (start or resume a run),
  ``resume`` (safetensors + JSON, no pickle), ``interrupt`` (Ctrl-C and SIGTERM),
  ``pool`` (the pool's draw rule and ratings) and ``critic`` (the hidden cards the privileged critic
  reads); progress is ``uno_env.progress``, the reporter the tournament uses too;
* ``training.sb3``: the SB3 trainer: ``trainer`` (MaskablePPO with a thin callback calling the
  schedule), ``pool`` (the opponent pool and training env), ``vec_env`` (``ShardedVecEnv``),
  ``policy`` (input scaling, the privileged-critic policy), ``imitation`` (the warm start);
* ``training.batched``: the batched trainer on ``uno_env.batched``: ``networks``, ``selfplay``
  (opponents, seats, rollouts), ``ppo`` (the loop and the update), ``gpu_slice`` (a run in time slices);
* ``training.rllib``: self-play PPO on Ray RLlib (the ``rllib`` extra), same checkpoint format;
* ``training.tools``: ``quickstart`` (``make demo``), ``ship``, ``plot``, ``rule_net``, ``bench``.

Trained policies are played with ``agents.PPOAgent`` (numpy only).
"""
