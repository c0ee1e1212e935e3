"""uno_env: UNO for reinforcement learning (rules engine in ``uno_env.core``)."""

__version__ = "0.1.0"
