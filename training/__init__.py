"""Self-play PPO training for ``uno_env`` (needs the ``train`` extra: torch, sb3-contrib, pyyaml, ...).

* ``training.cli``: ``uno-env train --config X``, dispatching on ``trainer``;
* ``training.run.config``: the one config schema of every trainer (pydantic models, checked strictly on load;
  ``training.run.schema_text`` writes its refusals and commented defaults from the fields);
* ``training.run``: the run layer under every trainer (imports no trainer):
  ``state`` (``RunState``, what ``resume/state.json`` holds), ``rundir`` (config, checkpoints and
  their cards, the one checkpoint exporter), ``schedule`` (drives every trainer through the
  ``Trainer`` protocol: ``learn_until`` the next snapshot, evaluation or checkpoint, then finish), ``evaluation``,
  ``launch`` (start or resume a run), ``resume`` (safetensors + JSON, no pickle), ``interrupt`` (Ctrl-C and
  SIGTERM), ``pool`` (the pool's draw rule and ratings) and ``critic`` (the hidden cards the privileged critic
  reads); progress is ``uno_env.progress``, the reporter the tournament uses too;
* ``training.sb3``: the SB3 trainer: ``trainer`` (MaskablePPO behind ``learn_until``, a thin
  callback for statistics), ``pool`` (the opponent pool and training env), ``vec_env`` (``ShardedVecEnv``),
  ``policy`` (input scaling, the privileged-critic policy), ``imitation`` (the warm start);
* ``training.batched``: the batched trainer on ``uno_env.batched``: ``networks``, ``selfplay``
  (opponents, seats, rollouts), ``ppo`` (the loop and the update), ``gpu_slice`` (a run in time slices);
* ``training.rllib``: self-play PPO on Ray RLlib (the ``rllib`` extra), same config schema and checkpoint format;
* ``training.tools``: ``quickstart`` (``make demo``), ``ship``, ``plot``, ``rule_net``, ``bench``,
  ``export_critic`` (a batched run's privileged critic as an ``agents.critic`` file).

Trained policies are played with ``agents.PPOAgent`` (numpy only).
"""
