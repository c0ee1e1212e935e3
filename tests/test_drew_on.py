"""The public draw evidence ``PublicState.drew_on`` (observation version 3's ``drew_on`` slice).

Per seat, 4 counts by color slot then 13 by rank: the cards that were in the seat's hand when it
last made a turn draw (rule 3.4) while that color was active or a card of that rank was on top,
less the cards that have left the hand since. The scenarios also run on the batched engine
(``batched_mirror``), which keeps the same counts.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from agents import RuleAgent
from tests.helpers import legal, play, position
from uno_env.core import EDITIONS, Game, Rules
from uno_env.core.cards import DREW_ON_SIZE, KIND_COLOR, KIND_RANK, NUM_COLORS, WILD
from uno_env.observation import observe, split_observation

pytestmark = pytest.mark.usefixtures("batched_mirror")



def row(game: Game, seat: int) -> dict[str, int]:
    """A seat's non-zero entries, named by the edition's colors and by rank (``"red"``, ``"rank 7"``)."""
    names = list(game.edition.colors) + [f"rank {r}" for r in range(13)]
    return {names[j]: c for j, c in enumerate(game.state.public.drew_on[seat]) if c}


def test_drew_on_a_turn_draw_covers_the_hand_held_before_it_by_color_and_rank() -> None:
    game = position("classic", 3, hands={0: ["B5", "G2"]}, discard=["R7"], draw=["Y3"])
    assert legal(game) == ["draw"]
    play(game, ["draw"])  # a forced keep of Y3: the two cards held before it are neither red nor 7s
    assert row(game, 0) == {"red": 2, "rank 7": 2}
    assert game.hand_sizes[0] == 3
    play(game, ["keep"])
    assert row(game, 0) == {"red": 2, "rank 7": 2}
    assert not row(game, 1) and not row(game, 2)


def test_drew_on_a_wild_on_top_offers_no_rank_only_its_color() -> None:
    game = position("classic", 3, hands={0: ["B5", "G2", "Y1"]}, discard=["W"], active_color="red", draw=["Y3"])
    play(game, ["draw", "keep"])
    assert row(game, 0) == {"red": 3}


def test_drew_on_a_seat_may_draw_holding_a_playable_card_and_still_gives_the_evidence() -> None:
    game = position("classic", 3, hands={0: ["R5", "B2"]}, discard=["R7"], draw=["Y3"])
    play(game, ["draw"])  # rule 3.4: the evidence is what the table saw, not a proof
    assert row(game, 0) == {"red": 2, "rank 7": 2}


def test_drew_on_the_card_just_drawn_is_not_a_covered_one_and_later_draws_add_their_ranks() -> None:
    game = position("classic", 2, hands={0: ["B5", "G2", "G4"], 1: ["Y7", "Y8", "Y9", "B2", "B3"]},
                    discard=["R7"], draw=["R1", "Y3"])
    play(game, ["draw"])  # draws R1, which plays
    assert row(game, 0) == {"red": 3, "rank 7": 3}
    play(game, ["play R1"])  # the drawn card: the three covered cards are all still there
    assert row(game, 0) == {"red": 3, "rank 7": 3}
    play(game, ["draw", "keep"])  # seat 1 draws Y3 on red 1
    assert row(game, 1) == {"red": 5, "rank 1": 5}
    play(game, ["draw"])  # seat 0 draws R7 (the reshuffled pile) on red 1: rank 1 joins the row
    assert row(game, 0) == {"red": 3, "rank 1": 3, "rank 7": 3}


def test_drew_on_each_card_played_lowers_the_counts_by_one() -> None:
    game = position("classic", 2, hands={0: ["B5", "G2", "Y2"], 1: ["Y7", "Y8", "B9", "B8"]}, discard=["R7"],
                    draw=["Y3", "Y4"])
    play(game, ["draw", "keep"])  # seat 0: B5 G2 Y2 covered, Y3 kept
    assert row(game, 0) == {"red": 3, "rank 7": 3}
    play(game, ["play Y7", "play Y3"])  # a card played may be a covered one (the table cannot tell)
    assert row(game, 0) == {"red": 2, "rank 7": 2}
    play(game, ["play Y8", "play Y2"])
    assert row(game, 0) == {"red": 1, "rank 7": 1}


def test_drew_on_penalty_draws_do_not_count_as_turn_draws() -> None:
    game = position("classic", 2, hands={0: ["RD", "R1", "B3"], 1: ["G1", "G2", "G3"]}, discard=["R7"], draw=["Y3", "Y4"])
    play(game, ["play RD"])  # seat 1 draws two and is skipped
    assert not row(game, 1)
    assert game.hand_sizes[1] == 5


def test_drew_on_draw_until_playable_covers_the_hand_before_the_first_card_once() -> None:
    game = position("classic", 3, hands={0: ["B5", "G2"]}, discard=["R7"], draw=["Y3", "Y4", "R1"],
                    draw_until_playable=True)
    play(game, ["draw"])  # Y3 and Y4 kept, R1 must be played
    assert game.hand_sizes[0] == 5 and row(game, 0) == {"red": 2, "rank 7": 2}
    play(game, ["play R1"])
    assert row(game, 0) == {"red": 2, "rank 7": 2}


def test_drew_on_a_give_away_lowers_the_givers_counts_by_the_cards_given() -> None:
    game = position("monster_high", 3, hands={0: ["P5", "G2", "G3"], 1: ["WU", "B1", "B2", "Y4"], 2: ["P1", "G5", "G6"]},
                    discard=["P7"], draw=["Y3", "Y6"], current=1)
    play(game, ["draw", "keep"])  # seat 1 covers WU B1 B2 Y4 (it may draw holding a playable card)
    assert row(game, 1) == {"pink": 4, "rank 7": 4}
    play(game, ["play P1", "play P5", "play WU"])
    assert row(game, 1) == {"pink": 3, "rank 7": 3}
    play(game, ["give blue"])  # B1 and B2 go: of the four covered cards only Y4 is surely left
    assert row(game, 1) == {"pink": 1, "rank 7": 1}
    assert game.state.hands[1] == [game.edition.kind("Y4"), game.edition.kind("Y3")]
    assert not row(game, 0) and not row(game, 2)  # receiving cards changes no row


def test_drew_on_seven_zero_rows_move_with_their_hands() -> None:
    game = position("classic", 3, hands={0: ["B5", "G2"], 1: ["R1", "R7", "Y9", "Y8"], 2: ["G4", "G5", "G6"]},
                    discard=["R3"], draw=["Y3", "Y4"], seven_zero=True)
    play(game, ["draw", "keep"])  # seat 0: B5 G2 covered (red, rank 3)
    assert row(game, 0) == {"red": 2, "rank 3": 2}
    play(game, ["play R7", "swap +2"])  # seat 1 takes seat 0's hand (its row comes along) and gives its own
    assert row(game, 1) == {"red": 2, "rank 3": 2}
    assert row(game, 0) == {}
    game2 = position("classic", 3, hands={0: ["B5", "G2"], 1: ["R0", "R1", "Y9"], 2: ["G4", "G5", "G6"]},
                     discard=["R3"], draw=["Y3", "Y4"], seven_zero=True)
    play(game2, ["draw", "keep", "play R0"])  # a 0 passes every hand one seat on
    assert row(game2, 1) == {"red": 2, "rank 3": 2} and not row(game2, 0) and not row(game2, 2)


def test_drew_on_a_new_round_deals_with_no_evidence() -> None:
    game = Game(Rules(num_players=3), seed=4)
    rng = random.Random(4)
    while not game.is_round_over:
        game.step(rng.choice(game.legal_actions()))
    assert any(any(r) for r in game.state.public.drew_on)
    game.next_round()
    assert game.state.public.drew_on == [[0] * DREW_ON_SIZE for _ in range(3)]


@pytest.mark.parametrize("edition", list(EDITIONS))
@pytest.mark.parametrize("options", [{}, {"seven_zero": True, "stacking": True}, {"draw_until_playable": True}],
                         ids=["plain", "seven_zero_stacking", "until_playable"])
def test_drew_on_at_rule_agent_tables_never_overstates_the_cards_that_lack_the_color_or_rank(edition, options) -> None:
    """RuleAgent draws only without a playable card, so at its tables the evidence is always true:
    at least ``drew_on[s][j]`` cards of ``s``'s hand are neither wild nor of color / rank ``j``."""
    rules = Rules(edition=edition, num_players=4, **options)
    agents = [RuleAgent() for _ in range(4)]
    checked = 0
    for seed in range(3):
        game = Game(rules, seed=seed)
        while not game.is_round_over:
            pub = game.state.public
            for seat, counts in enumerate(pub.drew_on):
                hand = game.state.hands[seat]
                for j, count in enumerate(counts):
                    if count:
                        checked += 1
                        if j < NUM_COLORS:
                            lacking = sum(k < WILD and KIND_COLOR[k] != j for k in hand)
                        else:
                            lacking = sum(k < WILD and KIND_RANK[k] != j - NUM_COLORS for k in hand)
                        assert count <= lacking, (seed, seat, j, count, hand)
            seat = game.current_player
            game.step(agents[seat].act(None, game.view(seat)))
        game.check()
    assert checked > 50


def test_drew_on_the_observation_gives_each_seats_counts_as_shares_of_its_hand_by_offset() -> None:
    game = position("classic", 3, hands={0: ["B5", "G2"], 1: ["G1", "G3", "B4"]}, discard=["R7"], draw=["Y3"])
    play(game, ["draw", "keep"])  # seat 0: 2 of its 3 cards lack red and 7s
    for observer in range(3):
        parts = split_observation(observe(game, observer))
        offset = (0 - observer) % 3
        expected = np.zeros((10, DREW_ON_SIZE), np.float32)
        red = KIND_COLOR[game.edition.kind("R7")]
        expected[offset, red] = expected[offset, NUM_COLORS + 7] = np.float32(2 / 3)
        assert np.array_equal(parts["drew_on"], expected)
