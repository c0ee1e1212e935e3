"""The run layer under every trainer: the run directory, its schedule, resume state, stop requests and the pool's rules.

It imports no trainer: a trainer (``training.sb3``, ``training.batched``) implements
``training.run.schedule.Trainer`` (``learn_until``, ``export``, ``tensors``, ``load``, ...) and the schedule
drives it (``training.run.schedule.drive``).
"""
