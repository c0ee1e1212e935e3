"""Self-play PPO on Ray RLlib (the ``rllib`` extra): ``trainer``; ``python -m training.rllib`` runs it."""
