"""The privileged critic: during training only, the value network also sees the hidden cards.

The features live in ``uno_env.privileged`` (a search agent in ``agents`` reads them too, and agents
may not import training); this module keeps the names training code and older imports use. The
value network is discarded at export, so a shipped checkpoint is exactly a public-information
policy; ``python -m training.tools.export_critic`` writes the critic beside it (``agents.critic``).
"""

from __future__ import annotations

from uno_env.privileged import NEXT_DRAWS, critic_bounds, critic_size, privileged_features, privileged_size

__all__ = ["NEXT_DRAWS", "critic_bounds", "critic_size", "privileged_features", "privileged_size"]
