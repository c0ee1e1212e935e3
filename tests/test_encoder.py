"""``uno_env.observation.Encoder``: the encoder an env keeps for its own table gives exactly
``observe()``'s vectors (and so the documented layout), whatever games it is handed in turn."""

from __future__ import annotations

import random

import numpy as np
import pytest

from tests.test_observation import reference
from uno_env.core import Game, Rules
from uno_env.core.view import seat_view
from uno_env.observation import Encoder, encoder_for, observe


@pytest.mark.parametrize(("n", "options"), [(2, {}), (2, {"target_score": 30}), (3, {"elimination": True,
                                                                                    "target_score": 40}),
                                           (4, {"teams": True, "seven_zero": True})])
def test_an_env_encoder_matches_the_layout_across_rounds_and_interleaved_games(n: int, options: dict) -> None:
    rules = Rules(edition="monster_high", num_players=n, **options)
    encoder = Encoder(rules, max_players=6)
    games = [Game(rules, seed=s) for s in range(2)]
    rng = random.Random(n)
    checked = 0
    for _ in range(900):
        game = rng.choice(games)
        if game.is_game_over:
            continue
        if game.is_round_over:
            game.next_round()
        for seat in range(n):
            vector = encoder.encode(seat_view(game.state, seat))
            assert np.array_equal(vector, reference(game.view(seat), 6))
            assert np.array_equal(vector, observe(game, seat, 6))
        checked += 1
        game.step(rng.choice(game.legal_actions()))
    assert checked > 250
    assert any(game.scores != [0] * n for game in games)  # later rounds (scores, eliminations) were encoded


def test_encoders_are_shared_per_rules_and_size_and_refuse_small_sizes() -> None:
    rules = Rules(num_players=4)
    assert encoder_for(rules, 5) is encoder_for(rules, 5) is not encoder_for(rules, 6)
    with pytest.raises(ValueError, match="raise max_players to at least 4"):
        Encoder(rules, 3)
    with pytest.raises(ValueError, match="max_players must be an int from 2 to 10"):
        Encoder(rules, 11)
