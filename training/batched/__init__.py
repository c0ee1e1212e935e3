"""The batched trainer: PPO whose rollouts run on ``uno_env.batched`` without leaving the torch device."""
