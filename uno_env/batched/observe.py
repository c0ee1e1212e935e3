"""``uno_env.observe`` for every table at once: the same vector, entry for entry."""

from __future__ import annotations

import torch

from ..core.cards import DREW_ON_SIZE, NUM_COLORS, NUM_KINDS, WILD_DRAW_FOUR
from ..core.game import PLAY_DRAWN, ROUND_OVER, Phase
from ..observation import RULE_FLAGS, observation_fields, observation_size
from .rules import EDITION_NAMES, per_seat_row
from .tables import Tables

# The Tables field holding each of the encoder's rule flags; the flags' order is the encoder's (RULE_FLAGS).
_FLAG_FIELDS = {"uno_call": "uno_auto", "allow_bluff": "allow_bluff", "scoring": "lowest", "teams": "teams",
                "elimination": "elimination", "stacking": "stacking", "seven_zero": "seven_zero",
                "draw_until_playable": "until_playable"}


class Observer:
    """Builds ``(B, observation_size(max_players))`` float32 observations from ``Tables``."""

    def __init__(self, max_players: int, device: torch.device) -> None:
        self.max_players = max_players
        self.size = observation_size(max_players)
        self.fields = observation_fields(max_players)
        self.offsets = torch.arange(max_players, device=device)
        self.kinds = torch.arange(NUM_KINDS, device=device)
        self.colors = torch.arange(NUM_COLORS, device=device)
        self.phases = torch.arange(len(Phase), device=device)
        self.editions = torch.arange(len(EDITION_NAMES), device=device)
        start = sum(size for name, size in self.fields[:[name for name, _ in self.fields].index("score")])
        self.score = slice(start, start + max_players)
        self.drew_on = slice(self.size - max_players * DREW_ON_SIZE, self.size)  # the last slice (version 3)
        self.flag_fields = [_FLAG_FIELDS[name] for name, _ in RULE_FLAGS]  # a KeyError names a new flag

    def observe(self, t: Tables, seat: torch.Tensor) -> torch.Tensor:
        """The observation of ``seat`` (B,) at every table, as ``uno_env.observe(game, seat, max_players)``.

        Every entry but the scores is a small integer, so the vector is assembled as ``int8``
        and converted to ``float32`` once (a quarter of the memory traffic of float parts).
        """
        b = seat.shape[0]
        p = t.hands.shape[1]
        rows = torch.arange(b, device=seat.device)
        n = t.num_players[:, None]
        in_play = t.phase.lt(ROUND_OVER)
        offsets = self.offsets[None, :]
        present = offsets.lt(n)
        around = (seat[:, None] + offsets) % n  # the seat at each offset (padding: masked below)

        def small(x: torch.Tensor) -> torch.Tensor:
            return x.view(torch.int8) if x.dtype == torch.bool else x.to(torch.int8)

        def one_hot(value: torch.Tensor, choices: torch.Tensor, on: torch.Tensor | None = None) -> torch.Tensor:
            hot = value[:, None].eq(choices[None, :])
            return small(hot if on is None else hot & on[:, None])

        def offset_of(other: torch.Tensor, on: torch.Tensor | None = None) -> torch.Tensor:
            return one_hot((other - seat) % t.num_players, self.offsets, on)

        sizes = t.hands.sum(-1)
        pending_w4 = in_play & t.player.ge(0) & t.played.eq(WILD_DRAW_FOUR) & t.w4_prev.ge(0)
        seen = ((rows * p + seat)[:, None] * p + around[:, 1:]).reshape(-1)
        known = t.known.reshape(-1, NUM_KINDS).index_select(0, seen).view(b, self.max_players - 1, NUM_KINDS)
        known = known * small(present[:, 1:, None])
        flags = torch.stack([getattr(t, name) for name in self.flag_fields], 1)
        parts = {
            "hand": per_seat_row(t.hands, seat),
            "top_card": one_hot(t.top, self.kinds),
            "active_color": one_hot(t.active, self.colors),
            "phase": one_hot(t.phase, self.phases),
            "direction": small(t.direction[:, None]),
            "drawn_card": one_hot(t.drawn, self.kinds, t.phase.eq(PLAY_DRAWN) & t.current.eq(seat)),
            "discard": t.discard_count,
            "draw_pile_size": small(t.draw_len[:, None]),
            "penalty": small(t.penalty[:, None]),
            "w4_prev_color": one_hot(t.w4_prev, self.colors, pending_w4),
            "edition": one_hot(t.edition, self.editions),
            "rules": small(flags),
            "present": small(present.expand(b, -1)),
            "to_act": offset_of(t.current, in_play),
            "pending_player": offset_of(t.player, in_play & t.player.ge(0)),
            "dealer": offset_of(t.dealer),
            "hand_size": small(sizes.gather(1, around) * present),
            "score": torch.zeros(b, self.max_players, dtype=torch.int8, device=seat.device),
            "uno_called": small(t.uno.gather(1, around) & present),
            "teammate": small(offsets.eq(0) | t.teams[:, None] & present & offsets.remainder(2).eq(0)),
            "eliminated": small(~t.alive.gather(1, around) & present),
            "known": known.reshape(b, -1),
            "drew_on": torch.zeros(b, self.max_players * DREW_ON_SIZE, dtype=torch.int8, device=seat.device),
        }
        obs = torch.cat([parts[name] for name, _ in self.fields], 1).float()
        # The draw evidence as shares of each hand: count / size in float32, as the encoder's division.
        counts = t.drew_on.gather(1, around[:, :, None].expand(b, self.max_players, DREW_ON_SIZE)).float()
        held = sizes.gather(1, around).clamp(min=1).float()[:, :, None]
        obs[:, self.drew_on] = ((counts / held) * present[:, :, None]).reshape(b, -1)
        # Scores are fractions: as the encoder, score * (1 / target) in float64, capped at 1.
        score = (t.scores.double() * (1.0 / t.target_score.double())[:, None]).clamp(max=1.0).float()
        obs[:, self.score] = score.gather(1, around) * present
        return obs
