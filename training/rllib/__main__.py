"""``python -m training.rllib``: the RLlib self-play trainer's command line (``training.rllib.trainer.main``)."""
from training.rllib.trainer import main

raise SystemExit(main())
