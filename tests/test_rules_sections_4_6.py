"""Scenario tests for RULES.md sections 4 (card effects), 5 (UNO and challenges) and 6 (end of
a round and scoring): at least one test per numbered rule, each on an exact position.

Positions come from stacked decks (``stacked_deck`` + ``Game(rules, deck=..., dealer=...)``)
or from ``Game.from_dict`` on an edited ``to_dict()`` of a real game (``setup_position``),
which starts with an empty log so the events of a scenario can be compared exactly.
"""

from __future__ import annotations

import random
from collections import Counter

import pytest
from helpers import brief, draws, legal, stacked_game, table_position

from uno_env.core import EDITIONS, Game, GameFlowError, IllegalActionError, Phase, Rules, stacked_deck

# Every scenario runs on the batched engine too, compared after every step (tests/batched_mirror.py).
pytestmark = pytest.mark.usefixtures("batched_mirror")

# ---------------------------------------------------------------------------- helpers


setup_position = table_position


def play(game: Game, *actions: str) -> None:
    """Apply actions in order (text form)."""
    for action in actions:
        game.step(action)








def test_helper_position_is_exact() -> None:
    game = setup_position(
        num_players=3,
        hands=[["R1"], ["G2", "W"], ["B3"]],
        top="Y4",
        below=["Y5"],
        draw=["R9", "W4"],
        leftover=2,
        current=1,
    )
    assert game.hands[:2] == [["R1"], ["G2", "W"]]
    assert game.discard_pile == ["Y5", "Y4"]
    assert game.draw_pile == ["R9", "W4"]
    assert sum(game.hand_sizes) + 4 == 108
    assert (game.current_player, game.phase, game.active_color) == (1, Phase.PLAY, "yellow")
    assert game.events() == []


# ---------------------------------------------------------------------------- 4.1 Skip


def test_rule_4_1_skip_three_players_next_player_loses_turn() -> None:
    game = setup_position(num_players=3, hands=[["RS", "G1", "G2"], ["B2", "Y3", "Y4"], ["G4", "B5", "B6"]], top="R5")
    game.step("play RS")
    assert brief(game) == [("play", 0, "RS", None), ("skip", 1, None, None)]
    assert (game.current_player, game.phase) == (2, Phase.PLAY)
    assert game.hands == [["G1", "G2"], ["B2", "Y3", "Y4"], ["G4", "B5", "B6"]]
    assert (game.top_card, game.active_color, game.direction) == ("RS", "red", 1)


def test_rule_4_1_skip_counter_clockwise_skips_previous_seat() -> None:
    game = setup_position(hands=[["RS", "G1", "G2"], ["B2", "Y3"], ["G4", "B5"], ["B7", "Y8"]], top="R5", direction=-1)
    game.step("play RS")
    assert brief(game)[-1] == ("skip", 3, None, None)
    assert game.current_player == 2


def test_rule_4_1_skip_two_players_player_goes_again() -> None:
    # Stacked deck, dealer 0: seat 1 (left of the dealer) starts on R5.
    game = stacked_game(
        "classic",
        2,
        0,
        hands={0: ["B1", "B2", "B3", "B4", "B5", "B6", "B7"], 1: ["RS", "R7", "G2", "G3", "G4", "G5", "G6"]},
        start=["R5"],
    )
    assert game.current_player == 1
    game.step("play RS")
    assert brief(game)[-2:] == [("play", 1, "RS", None), ("skip", 0, None, None)]
    assert (game.current_player, game.phase) == (1, Phase.PLAY)
    assert game.hands[0] == ["B1", "B2", "B3", "B4", "B5", "B6", "B7"]
    assert legal(game) == ["play R7", "draw"]


# ---------------------------------------------------------------------------- 4.2 Reverse


def test_rule_4_2_reverse_flips_direction_with_four_players() -> None:
    game = setup_position(
        hands=[["R4", "G4", "B5"], ["RR", "GR", "Y1"], ["B7", "Y8"], ["R6", "B2", "Y3"]], top="R5", current=1
    )
    game.step("play RR")
    assert brief(game) == [("play", 1, "RR", None), ("reverse", 1, None, -1)]
    assert (game.direction, game.current_player, game.phase) == (-1, 0, Phase.PLAY)
    game.step("play R4")
    assert (game.direction, game.current_player) == (-1, 3)  # counter-clockwise from 0
    game.step("play R6")
    assert game.current_player == 2
    assert game.hands == [["G4", "B5"], ["GR", "Y1"], ["B7", "Y8"], ["B2", "Y3"]]


def test_rule_4_2_second_reverse_restores_clockwise() -> None:
    game = setup_position(hands=[["RR", "G4", "B5"], ["B2", "Y3"], ["B7", "Y8"], ["GR", "Y1", "Y2"]], top="R5")
    game.step("play RR")
    assert (game.direction, game.current_player) == (-1, 3)
    game.step("play GR")  # a Reverse on a Reverse
    assert brief(game) == [
        ("play", 0, "RR", None),
        ("reverse", 0, None, -1),
        ("play", 3, "GR", None),
        ("reverse", 3, None, 1),
    ]
    assert (game.direction, game.current_player, game.active_color) == (1, 0, "green")


def test_rule_4_2_reverse_two_players_acts_as_skip() -> None:
    game = setup_position(num_players=2, hands=[["RR", "G1", "G2"], ["B2", "Y3", "Y4"]], top="R5")
    game.step("play RR")
    assert brief(game) == [("play", 0, "RR", None), ("reverse", 0, None, -1), ("skip", 1, None, None)]
    assert (game.current_player, game.phase) == (0, Phase.PLAY)
    assert game.hands == [["G1", "G2"], ["B2", "Y3", "Y4"]]


# ---------------------------------------------------------------------------- 4.3 Draw Two


def test_rule_4_3_draw_two_three_players() -> None:
    game = setup_position(
        num_players=3, hands=[["RD", "G1", "G2"], ["B2", "Y3"], ["G4", "B5"]], top="R5", draw=["Y7", "B9", "G8"]
    )
    game.step("play RD")
    assert brief(game) == [("play", 0, "RD", None), *draws(1, ["Y7", "B9"], "draw_two"), ("skip", 1, None, None)]
    assert game.hands[1] == ["B2", "Y3", "Y7", "B9"]
    assert game.draw_pile[0] == "G8"
    assert (game.current_player, game.phase) == (2, Phase.PLAY)


def test_rule_4_3_draw_two_counter_clockwise() -> None:
    game = setup_position(
        hands=[["RD", "G1", "G2"], ["B2", "Y3"], ["G4", "B5"], ["B7", "Y8"]], top="R5", draw=["Y7", "B9"], direction=-1
    )
    game.step("play RD")
    assert game.hands[3] == ["B7", "Y8", "Y7", "B9"]
    assert game.hand_sizes == [2, 2, 2, 4]
    assert game.current_player == 2


def test_rule_4_3_draw_two_two_players_player_goes_again() -> None:
    game = stacked_game(
        "classic",
        2,
        1,
        hands={0: ["RD", "G1", "G2", "G3", "G4", "G5", "G6"], 1: ["B1", "B2", "B3", "B4", "B5", "B6", "B7"]},
        start=["R5"],
        then=["Y7", "Y8", "Y9"],
    )
    assert game.current_player == 0
    game.step("play RD")
    assert game.hands[1] == ["B1", "B2", "B3", "B4", "B5", "B6", "B7", "Y7", "Y8"]
    assert brief(game)[-1] == ("skip", 1, None, None)
    assert (game.current_player, game.phase) == (0, Phase.PLAY)
    assert game.draw_pile[0] == "Y9"


# ---------------------------------------------------------------------------- 4.4 Wild Draw Four


def test_rule_4_4_wild_draw_four_accept_draws_four_and_loses_turn() -> None:
    game = setup_position(
        hands=[["W4", "G1", "G2"], ["B2", "Y3"], ["G4", "B5"], ["B7", "Y8"]],
        top="R5",
        draw=["Y1", "Y2", "B3", "B4", "G9"],
    )
    game.step("play W4")
    assert (game.phase, game.current_player) == (Phase.CHOOSE_COLOR, 0)
    game.step("color green")
    assert (game.phase, game.current_player) == (Phase.CHALLENGE, 1)
    assert legal(game) == ["challenge", "accept"]
    game.step("accept")
    assert brief(game) == [
        ("play", 0, "W4", None),
        ("color", 0, None, 2),
        ("accept", 1, None, None),
        *draws(1, ["Y1", "Y2", "B3", "B4"], "draw_four"),
        ("skip", 1, None, None),
    ]
    assert game.hands[1] == ["B2", "Y3", "Y1", "Y2", "B3", "B4"]
    assert (game.current_player, game.phase, game.active_color) == (2, Phase.PLAY, "green")


def test_rule_4_4_wild_draw_four_two_players_player_goes_again() -> None:
    game = setup_position(
        num_players=2, hands=[["W4", "G1", "G2"], ["B2", "Y3"]], top="R5", draw=["Y1", "Y2", "B3", "B4"]
    )
    play(game, "play W4", "color blue", "accept")
    assert game.hands == [["G1", "G2"], ["B2", "Y3", "Y1", "Y2", "B3", "B4"]]
    assert (game.current_player, game.phase, game.active_color) == (0, Phase.PLAY, "blue")


# ---------------------------------------------------------------------------- 4.5 Urrrhhh (monster_high)
# monster_high colors: blue, green, pink, yellow (B G P Y)


def test_rule_4_5_urrrhhh_offers_only_colors_still_held() -> None:
    game = setup_position(
        "monster_high", hands=[["B1"], ["WU", "PD", "B4", "P0", "W"], ["G1"], ["G2"]], top="Y5", current=1, leftover=0
    )
    game.step("play WU")
    assert (game.phase, game.current_player) == (Phase.GIVE_AWAY, 1)
    assert legal(game) == ["give blue", "give pink"]
    with pytest.raises(IllegalActionError):
        game.step("give yellow")  # the color on top, but not held
    with pytest.raises(IllegalActionError):
        game.step("color blue")  # the color choice comes after the giveaway
    assert game.hands[1] == ["PD", "B4", "P0", "W"]


@pytest.mark.parametrize("direction", [1, -1])
def test_rule_4_5_urrrhhh_gives_in_rank_order_clockwise_from_left(direction: int) -> None:
    game = setup_position(
        "monster_high",
        hands=[["B1", "B2"], ["WU", "PD", "P7", "B4", "P0", "PS", "P3", "W"], ["G1", "G2"], ["Y1", "Y2"]],
        top="P5",
        current=1,
        direction=direction,
    )
    play(game, "play WU", "give pink")
    # Rank order P0 P3 P7 PS PD, dealt to seats 2, 3, 0, 2, 3 (seat order, giver skipped).
    assert brief(game) == [
        ("play", 1, "WU", None),
        ("give", 1, "P0", 2),
        ("give", 1, "P3", 3),
        ("give", 1, "P7", 0),
        ("give", 1, "PS", 2),
        ("give", 1, "PD", 3),
    ]
    assert game.hands == [["B1", "B2", "P7"], ["B4", "W"], ["G1", "G2", "P0", "PS"], ["Y1", "Y2", "P3", "PD"]]
    assert (game.phase, game.current_player) == (Phase.CHOOSE_COLOR, 1)
    game.step("color yellow")
    assert brief(game)[-1] == ("color", 1, None, 3)
    # The next player (in the direction of play) plays normally: no skip, no draw.
    assert (game.phase, game.current_player, game.active_color) == (Phase.PLAY, (1 + direction) % 4, "yellow")
    assert game.hand_sizes == [3, 2, 4, 4]


def test_rule_4_5_urrrhhh_rounds_the_table_again_two_players() -> None:
    game = setup_position("monster_high", num_players=2, hands=[["WU", "G9", "G0", "GR", "B1"], ["Y1", "Y2"]], top="G5")
    play(game, "play WU", "give green")
    assert [e[2] for e in brief(game) if e[0] == "give"] == ["G0", "G9", "GR"]
    assert game.hands == [["B1"], ["Y1", "Y2", "G0", "G9", "GR"]]
    assert game.known_cards(0, 1) == ["G0", "G9", "GR"]


def test_rule_4_5_urrrhhh_given_cards_known_to_giver_and_receiver_only() -> None:
    game = setup_position(
        "monster_high",
        hands=[["B1", "B2"], ["WU", "PD", "P7", "B4", "P0", "PS", "P3", "W"], ["G1", "G2"], ["Y1", "Y2"]],
        top="P5",
        current=1,
    )
    play(game, "play WU", "give pink")
    assert game.known_cards(1, 2) == ["P0", "PS"]
    assert game.known_cards(1, 3) == ["P3", "PD"]
    assert game.known_cards(1, 0) == ["P7"]
    for observer in (0, 3):
        assert game.known_cards(observer, 2) == []
    assert game.known_cards(2, 3) == [] and game.known_cards(2, 0) == []
    gives = [e for e in game.events() if e["type"] == "give"]
    assert [e["seen_by"] for e in gives] == [[1, 2], [1, 3], [1, 0], [1, 2], [1, 3]]
    # Each seat's own view: the giver sees every card, a receiver its own, the others counts.
    assert [e[2] for e in brief(game, 1) if e[0] == "give"] == ["P0", "P3", "P7", "PS", "PD"]
    assert [e[2] for e in brief(game, 2) if e[0] == "give"] == ["P0", None, None, "PS", None]
    assert [e[2] for e in brief(game, 0) if e[0] == "give"] == [None, None, "P7", None, None]
    view = game.view(0)
    assert {o["seat"]: o["known_cards"] for o in view["opponents"]} == {1: [], 2: [], 3: []}
    assert {o["seat"]: o["known_cards"] for o in game.view(1)["opponents"]} == {
        2: ["P0", "PS"],
        3: ["P3", "PD"],
        0: ["P7"],
    }


def test_rule_4_5_urrrhhh_hand_of_only_wilds_gives_nothing() -> None:
    game = setup_position(
        "monster_high", hands=[["WU", "W", "W4"], ["G1", "G2"], ["Y1", "Y2"]], num_players=3, top="P5"
    )
    game.step("play WU")
    assert (game.phase, game.current_player) == (Phase.CHOOSE_COLOR, 0)
    assert legal(game) == ["color blue", "color green", "color pink", "color yellow"]
    game.step("color green")
    assert brief(game) == [("play", 0, "WU", None), ("color", 0, None, 1)]
    assert game.hands == [["W", "W4"], ["G1", "G2"], ["Y1", "Y2"]]
    assert (game.phase, game.current_player, game.active_color) == (Phase.PLAY, 1, "green")


def test_rule_4_5_urrrhhh_giveaway_that_empties_hand_ends_round() -> None:
    game = setup_position(
        "monster_high", num_players=3, hands=[["WU", "G5", "G2"], ["Y1", "Y2"], ["BS", "B9"]], top="P5"
    )
    play(game, "play WU", "give green")
    assert brief(game) == [
        ("play", 0, "WU", None),
        ("give", 0, "G2", 1),
        ("give", 0, "G5", 2),
        ("round_end", 0, None, 39),
    ]
    assert game.is_round_over and game.phase == Phase.ROUND_OVER
    assert game.round_winner == 0
    assert game.hands == [[], ["Y1", "Y2", "G2"], ["BS", "B9", "G5"]]
    # The given cards count: (1 + 2 + 2) + (20 + 9 + 5).
    assert game.round_points == [39, 0, 0] and game.scores == [39, 0, 0]
    assert game.current_player is None and game.legal_actions() == []


# ---------------------------------------------------------------------------- 4.6 King Pig (angry_birds)
# angry_birds colors: red, yellow, green, blue (R Y G B)


@pytest.mark.parametrize("direction", [1, -1])
def test_rule_4_6_king_pig_color_first_then_deal_from_left_until_color(direction: int) -> None:
    game = setup_position(
        "angry_birds",
        hands=[["Y1", "Y2"], ["WK", "B1", "B2"], ["G1", "G2"], ["Y3", "Y4"]],
        top="G5",
        current=1,
        direction=direction,
        draw=["W", "WK", "Y3", "G6", "W4", "B7", "R7", "Y9"],
    )
    game.step("play WK")
    assert (game.phase, game.current_player) == (Phase.CHOOSE_COLOR, 1)
    assert not [e for e in brief(game) if e[0] == "king_pig"]  # nothing dealt before the color
    game.step("color red")
    # Seats 2, 3, 0, 1 (the King Pig player included), 2, 3, 0: wild cards never match.
    assert brief(game) == [
        ("play", 1, "WK", None),
        ("color", 1, None, 0),
        ("king_pig", 2, "W", None),
        ("king_pig", 3, "WK", None),
        ("king_pig", 0, "Y3", None),
        ("king_pig", 1, "G6", None),
        ("king_pig", 2, "W4", None),
        ("king_pig", 3, "B7", None),
        ("king_pig", 0, "R7", None),
    ]
    assert game.hands == [
        ["Y1", "Y2", "Y3", "R7"],
        ["B1", "B2", "G6"],
        ["G1", "G2", "W", "W4"],
        ["Y3", "Y4", "WK", "B7"],
    ]
    assert game.draw_pile[0] == "Y9"
    # The next player plays normally.
    assert (game.phase, game.current_player, game.active_color) == (Phase.PLAY, (1 + direction) % 4, "red")


def test_rule_4_6_king_pig_dealt_cards_are_public() -> None:
    game = setup_position(
        "angry_birds",
        hands=[["Y1", "Y2"], ["WK", "B1", "B2"], ["G1", "G2"]],
        num_players=3,
        top="G5",
        current=1,
        draw=["W", "Y3", "B7", "R7"],
    )
    play(game, "play WK", "color red")
    dealt_to = {2: ["W", "R7"], 0: ["Y3"], 1: ["B7"]}
    for target, cards in dealt_to.items():
        for observer in range(3):
            if observer != target:
                assert game.known_cards(observer, target) == cards
    deal_events = [e for e in game.events(0) if e["type"] == "king_pig"]
    assert [e["card"] for e in deal_events] == ["W", "Y3", "B7", "R7"]
    assert all(e["seen_by"] == [0, 1, 2] for e in deal_events)


def test_rule_4_6_king_pig_refills_from_discard_then_stops_when_nothing_to_draw() -> None:
    # The draw pile holds Y1, G2; under the top card lie Y5, G7; no red card can be drawn.
    game = setup_position(
        "angry_birds",
        num_players=3,
        hands=[["WK", "B1", "B2"], ["Y6"], ["G9"]],
        top="B3",
        below=["Y5", "G7"],
        draw=["Y1", "G2"],
        leftover=2,
    )
    play(game, "play WK", "color red")
    events = brief(game)
    assert events[:4] == [
        ("play", 0, "WK", None),
        ("color", 0, None, 0),
        ("king_pig", 1, "Y1", None),
        ("king_pig", 2, "G2", None),
    ]
    assert events[4] == ("reshuffle", None, None, 3)
    refilled = events[5:]
    assert [(e[0], e[1]) for e in refilled] == [("king_pig", 0), ("king_pig", 1), ("king_pig", 2)]
    assert sorted(e[2] for e in refilled) == ["B3", "G7", "Y5"]
    assert game.draw_pile == [] and game.discard_pile == ["WK"]
    assert game.hands[0] == ["B1", "B2", refilled[0][2]]
    assert (game.phase, game.current_player, game.active_color) == (Phase.PLAY, 1, "red")


def test_rule_4_6_king_pig_refill_stops_at_first_declared_color() -> None:
    game = setup_position(
        "angry_birds",
        num_players=3,
        hands=[["WK", "B1", "B2"], ["Y6"], ["G9"]],
        top="R3",
        below=["R1", "R2"],
        draw=["Y1", "G2"],
        leftover=2,
    )
    play(game, "play WK", "color red")
    last = brief(game)[-1]
    assert last[:2] == ("king_pig", 0) and last[2] in ("R1", "R2", "R3")
    assert Counter(game.draw_pile) + Counter([last[2]]) == Counter(["R1", "R2", "R3"])
    assert game.discard_pile == ["WK"]
    assert game.current_player == 1


def test_rule_4_6_king_pig_player_dealt_a_card_before_uno_call() -> None:
    # Left with one card after playing King Pig, the player is dealt a second one: no UNO call.
    game = setup_position(
        "angry_birds", num_players=2, hands=[["WK", "B1"], ["Y1", "Y2"]], top="G5", draw=["Y3", "G4", "R5"]
    )
    play(game, "play WK", "color red")
    assert game.hands == [["B1", "G4"], ["Y1", "Y2", "Y3", "R5"]]
    assert (game.phase, game.current_player) == (Phase.PLAY, 1)


# ---------------------------------------------------------------------------- 4.7 Greyskull (masters_of_the_universe)
# masters_of_the_universe colors: blue, red, green, purple (B R G P)


@pytest.mark.parametrize("direction", [1, -1])
def test_rule_4_7_greyskull_every_other_player_draws_three_clockwise(direction: int) -> None:
    cards = ["R1", "R2", "R3", "G1", "G2", "G3", "P1", "P2", "P3", "B9"]
    game = setup_position(
        "masters_of_the_universe",
        hands=[["B1", "B2"], ["WG", "B3", "B4"], ["G5", "G6"], ["P5", "P6"]],
        top="R5",
        current=1,
        direction=direction,
        draw=cards,
    )
    game.step("play WG")
    assert (game.phase, game.current_player) == (Phase.CHOOSE_COLOR, 1)
    game.step("color green")
    assert brief(game) == [
        ("play", 1, "WG", None),
        ("color", 1, None, 2),
        ("greyskull", 2, None, None),
        *draws(2, ["R1", "R2", "R3"], "greyskull"),
        ("greyskull", 3, None, None),
        *draws(3, ["G1", "G2", "G3"], "greyskull"),
        ("greyskull", 0, None, None),
        *draws(0, ["P1", "P2", "P3"], "greyskull"),
    ]
    assert game.hands == [
        ["B1", "B2", "P1", "P2", "P3"],
        ["B3", "B4"],
        ["G5", "G6", "R1", "R2", "R3"],
        ["P5", "P6", "G1", "G2", "G3"],
    ]
    # The next player is not skipped.
    assert (game.phase, game.current_player, game.active_color) == (Phase.PLAY, (1 + direction) % 4, "green")
    assert game.draw_pile[0] == "B9"


def test_rule_4_7_greyskull_two_players_opponent_draws_three_then_plays() -> None:
    game = setup_position(
        "masters_of_the_universe",
        num_players=2,
        hands=[["WG", "B3", "B4"], ["G5", "G6"]],
        top="R5",
        draw=["R1", "R2", "R3"],
    )
    play(game, "play WG", "color purple")
    assert game.hands == [["B3", "B4"], ["G5", "G6", "R1", "R2", "R3"]]
    assert (game.phase, game.current_player) == (Phase.PLAY, 1)


# ---------------------------------------------------------------------------- 5.1 UNO call


def test_rule_5_1_uno_call_after_a_play_is_the_players_decision() -> None:
    game = setup_position(hands=[["R3", "G1"], ["B2", "Y3"], ["G4", "B5"], ["B7", "Y8"]], top="R5")
    game.step("play R3")
    assert (game.phase, game.current_player) == (Phase.UNO, 0)
    assert legal(game) == ["uno", "no-uno"]
    game.step("uno")
    assert brief(game) == [("play", 0, "R3", None), ("uno", 0, None, None)]
    assert game.uno_called == [True, False, False, False]
    assert (game.phase, game.current_player) == (Phase.PLAY, 1)  # called: no catch window


def test_rule_5_1_no_uno_decision_with_two_cards_left() -> None:
    game = setup_position(hands=[["R3", "G1", "G2"], ["B2", "Y3"], ["G4", "B5"], ["B7", "Y8"]], top="R5")
    game.step("play R3")
    assert (game.phase, game.current_player) == (Phase.PLAY, 1)


def test_rule_5_1_uno_call_after_a_giveaway() -> None:
    game = setup_position(
        "monster_high", num_players=3, hands=[["WU", "P3", "W"], ["G1", "G2"], ["Y1", "Y2"]], top="P5"
    )
    game.step("play WU")
    assert legal(game) == ["give pink"]
    play(game, "give pink", "color blue")
    assert game.hands[0] == ["W"]
    assert (game.phase, game.current_player) == (Phase.UNO, 0)
    game.step("uno")
    assert game.uno_called[0] is True
    assert (game.phase, game.current_player) == (Phase.PLAY, 1)


def test_rule_5_1_uno_call_comes_before_the_draw_two_effect() -> None:
    game = setup_position(num_players=3, hands=[["RD", "G1"], ["B2", "Y3"], ["G4", "B5"]], top="R5", draw=["Y7", "B9"])
    game.step("play RD")
    assert (game.phase, game.current_player) == (Phase.UNO, 0)
    assert game.hand_sizes == [1, 2, 2]  # the next player has not drawn yet
    game.step("uno")
    assert game.hands[1] == ["B2", "Y3", "Y7", "B9"]
    assert game.current_player == 2


def test_rule_5_1_uno_call_after_wild_draw_four_before_challenge() -> None:
    game = setup_position(hands=[["W4", "G1"], ["B2", "Y3"], ["G4", "B5"], ["B7", "Y8"]], top="R5")
    play(game, "play W4", "color green")
    assert (game.phase, game.current_player) == (Phase.UNO, 0)
    game.step("uno")
    assert (game.phase, game.current_player) == (Phase.CHALLENGE, 1)


# ---------------------------------------------------------------------------- 5.2 catch


def test_rule_5_2_catch_offered_in_turn_order_first_catch_draws_two() -> None:
    game = setup_position(
        hands=[["R3", "G1"], ["B2", "Y3"], ["G4", "B5"], ["B7", "Y8"]], top="R5", draw=["Y6", "B6", "G6"]
    )
    play(game, "play R3", "no-uno")
    assert (game.phase, game.current_player) == (Phase.CATCH, 1)
    assert legal(game) == ["catch", "no-catch"]
    game.step("no-catch")
    assert (game.phase, game.current_player) == (Phase.CATCH, 2)
    game.step("catch")
    assert brief(game) == [
        ("play", 0, "R3", None),
        ("no_uno", 0, None, None),
        ("no_catch", 1, None, None),
        ("catch", 2, None, 0),
        *draws(0, ["Y6", "B6"], "uno_penalty"),
    ]
    assert game.hands[0] == ["G1", "Y6", "B6"]
    # No more offers (seat 3 is not asked); the next player's turn begins.
    assert (game.phase, game.current_player) == (Phase.PLAY, 1)
    assert "catch" not in legal(game)


def test_rule_5_2_catch_window_counter_clockwise_and_closes_after_everyone() -> None:
    game = setup_position(hands=[["R3", "G1"], ["B2", "Y3"], ["G4", "B5"], ["B7", "Y8"]], top="R5", direction=-1)
    play(game, "play R3", "no-uno")
    offered = []
    while game.phase == Phase.CATCH:
        offered.append(game.current_player)
        game.step("no-catch")
    assert offered == [3, 2, 1]  # the offender is never offered
    assert game.hands[0] == ["G1"]
    assert (game.phase, game.current_player) == (Phase.PLAY, 3)
    assert legal(game) == ["draw"]  # no catch once the next turn has begun
    with pytest.raises(IllegalActionError):
        game.step("catch")


def test_rule_5_2_catch_two_players() -> None:
    game = setup_position(num_players=2, hands=[["R3", "G1"], ["B2", "Y3"]], top="R5", draw=["Y6", "B6"])
    play(game, "play R3", "no-uno")
    assert (game.phase, game.current_player) == (Phase.CATCH, 1)
    game.step("catch")
    assert game.hands[0] == ["G1", "Y6", "B6"]
    assert (game.phase, game.current_player) == (Phase.PLAY, 1)


def test_rule_5_2_catch_happens_before_the_skip_of_a_draw_two() -> None:
    game = setup_position(
        num_players=3, hands=[["RD", "G1"], ["B2", "Y3"], ["G4", "B5"]], top="R5", draw=["Y6", "B6", "Y7", "B7"]
    )
    play(game, "play RD", "no-uno")
    assert (game.phase, game.current_player) == (Phase.CATCH, 1)  # the victim of the Draw Two may catch
    game.step("catch")
    assert game.hands == [["G1", "Y6", "B6"], ["B2", "Y3", "Y7", "B7"], ["G4", "B5"]]
    assert game.current_player == 2


def test_rule_5_2_catch_after_a_giveaway() -> None:
    game = setup_position(
        "monster_high",
        num_players=3,
        hands=[["WU", "P3", "B1"], ["G1", "G2"], ["Y1", "Y2"]],
        top="P5",
        draw=["G7", "Y7"],
    )
    play(game, "play WU", "give pink", "color green", "no-uno")
    assert (game.phase, game.current_player) == (Phase.CATCH, 1)
    game.step("catch")
    assert game.hands == [["B1", "G7", "Y7"], ["G1", "G2", "P3"], ["Y1", "Y2"]]
    assert (game.phase, game.current_player, game.active_color) == (Phase.PLAY, 1, "green")


# ---------------------------------------------------------------------------- 5.3 automatic UNO


def test_rule_5_3_auto_uno_call_has_no_decisions() -> None:
    game = setup_position(hands=[["R3", "G1"], ["B2", "Y3"], ["G4", "B5"], ["B7", "Y8"]], top="R5", uno_call="auto")
    game.step("play R3")
    assert brief(game) == [("play", 0, "R3", None), ("uno", 0, None, None)]
    assert game.uno_called[0] is True
    assert (game.phase, game.current_player) == (Phase.PLAY, 1)


def test_rule_5_3_auto_uno_call_after_giveaway() -> None:
    game = setup_position(
        "monster_high", num_players=3, hands=[["WU", "P3", "B1"], ["G1", "G2"], ["Y1", "Y2"]], top="P5", uno_call="auto"
    )
    play(game, "play WU", "give pink", "color blue")
    assert game.uno_called[0] is True
    assert (game.phase, game.current_player) == (Phase.PLAY, 1)


@pytest.mark.parametrize("edition", sorted(EDITIONS))
def test_rule_5_3_auto_mode_random_games_never_offer_uno_or_catch(edition: str) -> None:
    rng = random.Random(5)
    forbidden = {"uno", "no-uno", "catch", "no-catch"}
    one_card_moments = 0
    for seed in range(4):
        game = Game(Rules(edition=edition, num_players=3, uno_call="auto"), seed=seed)
        for _ in range(400):
            if game.is_round_over:
                break
            actions = legal(game)
            assert not forbidden & set(actions)
            assert game.phase not in (Phase.UNO, Phase.CATCH)
            game.step(rng.choice(actions))
            one_card_moments += game.hand_sizes.count(1)
    assert one_card_moments > 0


# ---------------------------------------------------------------------------- 5.4 challenge


def test_rule_5_4_challenge_guilty_offender_draws_four_challenger_plays() -> None:
    game = setup_position(
        hands=[["W4", "R1", "G2"], ["B2", "Y3"], ["G4", "B5"], ["B7", "Y8"]], top="R5", draw=["Y1", "Y2", "B3", "B4"]
    )
    play(game, "play W4", "color blue")
    assert (game.phase, game.current_player) == (Phase.CHALLENGE, 1)
    game.step("challenge")
    assert brief(game)[2:] == [
        ("challenge", 1, None, 0),
        ("guilty", 0, None, 1),
        ("show", 0, "R1", 1),
        ("show", 0, "G2", 1),
        *draws(0, ["Y1", "Y2", "B3", "B4"], "challenge_guilty"),
    ]
    assert game.hands[0] == ["R1", "G2", "Y1", "Y2", "B3", "B4"]
    assert game.hands[1] == ["B2", "Y3"]
    # The challenger takes their turn normally under the chosen color.
    assert (game.phase, game.current_player, game.active_color) == (Phase.PLAY, 1, "blue")
    assert legal(game) == ["play B2", "draw"]


def test_rule_5_4_challenged_hand_shown_to_challenger_alone() -> None:
    game = setup_position(
        hands=[["W4", "R1", "G2"], ["B2", "Y3"], ["G4", "B5"], ["B7", "Y8"]], top="R5", draw=["Y1", "Y2", "B3", "B4"]
    )
    play(game, "play W4", "color blue", "challenge")
    assert game.known_cards(1, 0) == ["R1", "G2"]
    assert game.known_cards(2, 0) == [] and game.known_cards(3, 0) == []
    shows = [e for e in game.events() if e["type"] == "show"]
    assert [e["seen_by"] for e in shows] == [[1], [1]]
    assert [e["card"] for e in game.events(1) if e["type"] == "show"] == ["R1", "G2"]
    for seat in (0, 2, 3):  # the challenged player knows their hand, but the event shows it to seat 1 only
        assert [e["card"] for e in game.events(seat) if e["type"] == "show"] == [None, None]


def test_rule_5_4_challenge_innocent_challenger_draws_six_and_loses_turn() -> None:
    # G5 matches the top card's number only: holding it is not holding the active color.
    game = setup_position(
        hands=[["W4", "G5", "B2"], ["B1", "Y3"], ["G4", "B5"], ["B7", "Y8"]],
        top="R5",
        draw=["Y1", "Y2", "B3", "B4", "G7", "G8", "G9"],
    )
    play(game, "play W4", "color yellow", "challenge")
    assert brief(game)[2:] == [
        ("challenge", 1, None, 0),
        ("innocent", 0, None, 1),
        ("show", 0, "G5", 1),
        ("show", 0, "B2", 1),
        *draws(1, ["Y1", "Y2", "B3", "B4", "G7", "G8"], "challenge_innocent"),
        ("skip", 1, None, None),
    ]
    assert game.hands[0] == ["G5", "B2"]
    assert game.hands[1] == ["B1", "Y3", "Y1", "Y2", "B3", "B4", "G7", "G8"]
    assert (game.phase, game.current_player, game.active_color) == (Phase.PLAY, 2, "yellow")


def test_rule_5_4_guilt_is_judged_on_the_color_active_before_the_w4() -> None:
    # Top is a Wild whose chosen color is green: holding green is guilty, holding red is not.
    guilty = setup_position(
        hands=[["W4", "G1", "B2"], ["B1", "Y3"], ["G4", "B5"], ["B7", "Y8"]], top="W", active="green"
    )
    play(guilty, "play W4", "color red", "challenge")
    assert brief(guilty)[3] == ("guilty", 0, None, 1)
    innocent = setup_position(
        hands=[["W4", "R1", "B2"], ["B1", "Y3"], ["G4", "B5"], ["B7", "Y8"]], top="W", active="green"
    )
    play(innocent, "play W4", "color red", "challenge")
    assert brief(innocent)[3] == ("innocent", 0, None, 1)


def test_rule_5_4_holding_only_wilds_of_no_color_is_innocent() -> None:
    game = setup_position(hands=[["W4", "W", "B2"], ["B1", "Y3"], ["G4", "B5"], ["B7", "Y8"]], top="R5")
    play(game, "play W4", "color blue", "challenge")
    assert brief(game)[3] == ("innocent", 0, None, 1)
    assert game.hand_sizes == [2, 8, 2, 2]


def test_rule_5_4_only_the_next_player_may_challenge() -> None:
    game = setup_position(
        hands=[["W4", "R1", "G2"], ["B2", "Y3"], ["G4", "B5"], ["B7", "Y8"]],
        top="R5",
        direction=-1,
        draw=["Y1", "Y2", "B3", "B4"],
    )
    play(game, "play W4", "color blue")
    assert (game.phase, game.current_player) == (Phase.CHALLENGE, 3)
    assert [e for e in game.view(1)["legal_actions"]] == []
    assert game.view(3)["legal_actions"] == ["challenge", "accept"]
    game.step("accept")
    assert game.hands[3] == ["B7", "Y8", "Y1", "Y2", "B3", "B4"]
    assert (game.phase, game.current_player) == (Phase.PLAY, 2)  # nobody else is asked
    assert "challenge" not in legal(game)


def test_rule_5_4_two_players_guilty_and_innocent() -> None:
    guilty = setup_position(num_players=2, hands=[["W4", "R1", "G2"], ["B2", "Y3"]], top="R5")
    play(guilty, "play W4", "color blue", "challenge")
    assert guilty.hand_sizes == [6, 2] and guilty.current_player == 1
    innocent = setup_position(num_players=2, hands=[["W4", "G1", "G2"], ["B2", "Y3"]], top="R5")
    play(innocent, "play W4", "color blue", "challenge")
    assert innocent.hand_sizes == [2, 8] and innocent.current_player == 0


# ---------------------------------------------------------------------------- 5.5 last card effects


def test_rule_5_5_wild_draw_four_as_last_card() -> None:
    game = setup_position(
        num_players=3, hands=[["W4"], ["B2", "Y3"], ["G4", "B5"]], top="R5", draw=["Y1", "R2", "BS", "W"]
    )
    game.step("play W4")
    # No color choice, no challenge: the next player draws 4 and the round ends.
    assert brief(game) == [
        ("play", 0, "W4", None),
        *draws(1, ["Y1", "R2", "BS", "W"], "draw_four"),
        ("round_end", 0, None, 87),
    ]
    assert game.hands == [[], ["B2", "Y3", "Y1", "R2", "BS", "W"], ["G4", "B5"]]
    # (2 + 3 + 1 + 2 + 20 + 50) + (4 + 5): the four drawn cards count
    assert game.round_points == [87, 0, 0] and game.scores == [87, 0, 0]
    assert game.phase == Phase.ROUND_OVER and game.round_winner == 0


def test_rule_5_5_draw_two_as_last_card() -> None:
    game = setup_position(num_players=2, hands=[["RD"], ["B2", "Y3"]], top="R5", draw=["Y9", "GD"])
    game.step("play RD")
    assert brief(game) == [("play", 0, "RD", None), *draws(1, ["Y9", "GD"], "draw_two"), ("round_end", 0, None, 34)]
    assert game.hands[1] == ["B2", "Y3", "Y9", "GD"]
    assert game.scores == [34, 0]


def test_rule_5_5_greyskull_as_last_card_still_strikes_without_color() -> None:
    game = setup_position(
        "masters_of_the_universe",
        num_players=3,
        hands=[["WG"], ["B2"], ["G4"]],
        top="R5",
        draw=["R1", "R2", "R3", "G1", "G2", "W4"],
    )
    game.step("play WG")
    assert brief(game) == [
        ("play", 0, "WG", None),
        ("greyskull", 1, None, None),
        *draws(1, ["R1", "R2", "R3"], "greyskull"),
        ("greyskull", 2, None, None),
        *draws(2, ["G1", "G2", "W4"], "greyskull"),
        ("round_end", 0, None, 2 + 6 + 4 + 3 + 50),
    ]
    assert game.phase == Phase.ROUND_OVER and game.round_winner == 0
    assert game.scores == [65, 0, 0]


def test_rule_5_5_king_pig_as_last_card_asks_color_and_deals() -> None:
    game = setup_position(
        "angry_birds", num_players=3, hands=[["WK"], ["B2", "Y1"], ["G4", "G5"]], top="R5", draw=["Y3", "R9", "G1"]
    )
    game.step("play WK")
    assert (game.phase, game.current_player) == (Phase.CHOOSE_COLOR, 0)
    game.step("color red")
    assert brief(game) == [
        ("play", 0, "WK", None),
        ("color", 0, None, 0),
        ("king_pig", 1, "Y3", None),
        ("king_pig", 2, "R9", None),
        ("round_end", 0, None, 24),
    ]
    assert game.hands == [[], ["B2", "Y1", "Y3"], ["G4", "G5", "R9"]]
    assert game.scores == [2 + 1 + 3 + 4 + 5 + 9, 0, 0]


def test_rule_5_5_king_pig_as_last_card_deal_reaching_player_keeps_them_in() -> None:
    game = setup_position(
        "angry_birds",
        num_players=3,
        hands=[["WK"], ["B2", "Y1"], ["G4", "G5"]],
        top="R5",
        draw=["Y3", "G2", "B3", "R4"],
    )
    play(game, "play WK", "color red")
    assert game.hands == [["B3"], ["B2", "Y1", "Y3", "R4"], ["G4", "G5", "G2"]]
    assert not game.is_round_over
    assert (game.phase, game.current_player) == (Phase.UNO, 0)  # one card: the UNO call follows
    game.step("uno")
    assert (game.phase, game.current_player, game.active_color) == (Phase.PLAY, 1, "red")


def test_rule_5_5_king_pig_last_card_color_choice_survives_save_and_load() -> None:
    game = setup_position(
        "angry_birds", num_players=3, hands=[["WK"], ["B2", "Y1"], ["G4", "G5"]], top="R5", draw=["Y3", "R9", "G1"]
    )
    game.step("play WK")
    loaded = Game.from_dict(game.to_dict())
    assert (loaded.phase, loaded.current_player, loaded.hands[0]) == (Phase.CHOOSE_COLOR, 0, [])


@pytest.mark.parametrize(
    ("edition", "card"),
    [
        ("classic", "W"),
        ("monster_high", "WU"),
        ("monster_high", "W"),
        ("angry_birds", "W"),
        ("masters_of_the_universe", "W"),
    ],
)
def test_rule_5_5_plain_wild_or_urrrhhh_as_last_card_asks_no_color(edition: str, card: str) -> None:
    game = setup_position(edition, num_players=3, hands=[[card], ["B2"], ["G4"]], top="B5")
    game.step(f"play {card}")
    assert brief(game) == [("play", 0, card, None), ("round_end", 0, None, 6)]
    assert game.phase == Phase.ROUND_OVER and game.round_winner == 0 and game.scores == [6, 0, 0]
    assert game.discard_pile[-1] == card


# ---------------------------------------------------------------------------- 6.1 end of the round


def test_rule_6_1_round_ends_the_moment_a_hand_is_empty() -> None:
    game = setup_position(num_players=3, hands=[["R3"], ["B2", "Y3"], ["G4", "B5"]], top="R5")
    game.step("play R3")
    assert game.is_round_over and not game.is_game_over
    assert (game.phase, game.current_player, game.round_winner) == (Phase.ROUND_OVER, None, 0)
    assert game.legal_actions() == []
    with pytest.raises(IllegalActionError):
        game.step("draw")
    assert brief(game)[-1] == ("round_end", 0, None, 14)


def test_rule_6_1_going_out_on_a_skip_ends_round_without_skipping() -> None:
    game = setup_position(num_players=3, hands=[["RS"], ["B2", "Y3"], ["G4", "B5"]], top="R5")
    game.step("play RS")
    assert brief(game) == [("play", 0, "RS", None), ("round_end", 0, None, 14)]
    assert game.is_round_over


# ---------------------------------------------------------------------------- 6.2 card values


@pytest.mark.parametrize(
    ("edition", "special", "symbol"),
    [
        ("classic", None, 20),
        ("monster_high", "WU", 20),
        ("angry_birds", "WK", 50),
        ("masters_of_the_universe", "WG", 20),
    ],
)
def test_rule_6_2_card_values_per_edition(edition: str, special: str | None, symbol: int) -> None:
    game = setup_position(edition, num_players=2, hands=[["W"], ["W4"]], top=EDITIONS[edition].letters[0] + "5")
    letters = EDITIONS[edition].letters
    for letter in letters:
        for number in range(10):
            assert game.card_value(f"{letter}{number}") == number
        for sym in "SRD":
            assert game.card_value(f"{letter}{sym}") == symbol
    assert game.card_value("W") == 50 and game.card_value("W4") == 50
    if special:
        assert game.card_value(special) == 50


@pytest.mark.parametrize(
    ("edition", "special", "expected"),
    [
        ("classic", None, 7 + 20 * 3 + 50 * 2),
        ("monster_high", "WU", 7 + 20 * 3 + 50 * 3),
        ("angry_birds", "WK", 7 + 50 * 3 + 50 * 3),
        ("masters_of_the_universe", "WG", 7 + 20 * 3 + 50 * 3),
    ],
)
def test_rule_6_2_values_count_in_the_round_score(edition: str, special: str | None, expected: int) -> None:
    letters = EDITIONS[edition].letters
    other = [f"{letters[0]}7", f"{letters[1]}S", f"{letters[2]}R", f"{letters[3]}D", "W", "W4"] + (
        [special] if special else []
    )
    game = setup_position(edition, num_players=2, hands=[[f"{letters[0]}3"], other], top=f"{letters[0]}5")
    game.step(f"play {letters[0]}3")
    assert game.round_points == [expected, 0]


# ---------------------------------------------------------------------------- 6.3 standard scoring


def test_rule_6_3_winner_scores_opponents_hands_and_scores_carry() -> None:
    # 1 + 20 + 50 = 71 and 9 + 50 + 20 + 20 = 99
    game = setup_position(
        num_players=3, hands=[["R3"], ["R1", "GS", "W"], ["B9", "W4", "YR", "YD"]], top="R5", scores=[100, 30, 40]
    )
    game.step("play R3")
    assert game.round_points == [170, 0, 0]
    assert game.scores == [270, 30, 40]
    assert (game.phase, game.winners) == (Phase.ROUND_OVER, [])
    assert Rules().target_score == 500


@pytest.mark.parametrize("before", [330, 400])
def test_rule_6_3_reaching_the_target_wins_the_game(before: int) -> None:
    game = setup_position(
        num_players=3, hands=[["R3"], ["R1", "GS", "W"], ["B9", "W4", "YR", "YD"]], top="R5", scores=[before, 30, 40]
    )
    game.step("play R3")
    assert game.scores == [before + 170, 30, 40]
    assert game.is_game_over and game.phase == Phase.GAME_OVER and game.winners == [0]
    assert brief(game)[-2:] == [("round_end", 0, None, 170), ("game_end", 0, None, None)]
    with pytest.raises(GameFlowError):
        game.next_round()


def test_rule_6_3_custom_target() -> None:
    game = setup_position(num_players=2, hands=[["R3"], ["R1"]], top="R5", scores=[9, 0], target_score=10)
    game.step("play R3")
    assert game.winners == [0] and game.scores == [10, 0]


# ---------------------------------------------------------------------------- 6.4 lowest scoring


def test_rule_6_4_lowest_each_adds_own_hand() -> None:
    game = setup_position(
        num_players=3,
        hands=[["R3"], ["R1", "GS", "W"], ["B9", "W4", "YR", "YD"]],
        top="R5",
        scores=[5, 6, 7],
        scoring="lowest",
    )
    game.step("play R3")
    assert game.round_points == [0, 71, 99]
    assert game.scores == [5, 77, 106]
    assert (game.phase, game.winners, game.round_winner) == (Phase.ROUND_OVER, [], 0)


def test_rule_6_4_lowest_total_wins_when_anyone_reaches_target() -> None:
    # Seat 0 goes out but seat 1 has the lowest total once seat 2 passes 100.
    game = setup_position(
        num_players=3,
        hands=[["R3"], ["R5"], ["B9", "B1"]],
        top="R4",
        scores=[80, 10, 95],
        scoring="lowest",
        target_score=100,
    )
    game.step("play R3")
    assert game.scores == [80, 15, 105]
    assert game.is_game_over and game.winners == [1]
    assert [e for e in brief(game) if e[0] == "game_end"] == [("game_end", 1, None, None)]


def test_rule_6_4_lowest_ties_share_the_win() -> None:
    game = setup_position(
        num_players=3, hands=[["R3"], ["R7"], ["BD"]], top="R4", scores=[47, 40, 90], scoring="lowest", target_score=100
    )
    game.step("play R3")
    assert game.scores == [47, 47, 110]
    assert game.winners == [0, 1]
    assert [e for e in brief(game) if e[0] == "game_end"] == [("game_end", 0, None, None), ("game_end", 1, None, None)]


# ---------------------------------------------------------------------------- 6.5 next round


@pytest.mark.parametrize(("num_players", "dealer"), [(3, 0), (4, 3)])
def test_rule_6_5_next_round_full_deck_dealer_left_scores_carry(num_players: int, dealer: int) -> None:
    hands = [["R3"]] + [[f"G{seat}", f"B{seat}"] for seat in range(1, num_players)]
    game = setup_position(
        num_players=num_players,
        hands=hands,
        top="R4",
        scores=[100] + [50] * (num_players - 1),
        dealer=dealer,
        direction=-1,
    )
    game.step("play R3")
    assert game.phase == Phase.ROUND_OVER
    scores = list(game.scores)
    assert scores == [100 + sum(2 * seat for seat in range(1, num_players))] + [50] * (num_players - 1)
    game.next_round()
    assert game.round_number == 2
    assert game.dealer == (dealer + 1) % num_players
    assert game.scores == scores
    assert game.round_points == [0] * num_players and game.round_winner is None
    assert not game.is_round_over
    assert game.hand_sizes == [7] * num_players
    new_dealer = (dealer + 1) % num_players
    events = brief(game)
    round_two = events[events.index(("dealer", new_dealer, None, 2)) :]
    deal_seats = [e[1] for e in round_two if e[0] == "deal"]
    assert deal_seats == [(new_dealer + 1 + i) % num_players for i in range(7 * num_players)]
    start = next(e[2] for e in round_two if e[0] == "start")
    assert game.direction == (-1 if start.endswith("R") else 1)  # the old round's direction is gone
    every = [c for h in game.hands for c in h] + game.draw_pile + game.discard_pile
    assert Counter(every) == Counter(EDITIONS["classic"].code(k) for k in EDITIONS["classic"].deck())
    assert game.uno_called == [False] * num_players


def test_rule_6_5_next_round_is_reshuffled_and_deals_from_new_dealers_left() -> None:
    game = setup_position(num_players=3, hands=[["R3"], ["G1", "B2"], ["Y4"]], top="R4", dealer=2, scores=[0, 0, 0])
    game.step("play R3")
    twin = game.clone()
    game.next_round()
    twin.next_round()
    assert game.hands == twin.hands  # the game's own seeded generator shuffles
    canonical = [EDITIONS["classic"].code(k) for k in EDITIONS["classic"].deck()]
    assert game.draw_pile != canonical[: len(game.draw_pile)]  # not the sorted deck: reshuffled
    # A stacked deck for the next round deals starting left of the new dealer (seat 0).
    stacked = setup_position(num_players=3, hands=[["R3"], ["G1", "B2"], ["Y4"]], top="R4", dealer=2)
    stacked.step("play R3")
    deck = stacked_deck(
        "classic",
        3,
        0,
        hands={
            1: ["B1", "B2", "B3", "B4", "B5", "B6", "B7"],
            2: ["Y1", "Y2", "Y3", "Y4", "Y5", "Y6", "Y7"],
            0: ["G1", "G2", "G3", "G4", "G5", "G6", "G7"],
        },
        start=["R5"],
    )
    stacked.next_round(deck=deck)
    assert stacked.dealer == 0
    assert stacked.hands == [
        ["G1", "G2", "G3", "G4", "G5", "G6", "G7"],
        ["B1", "B2", "B3", "B4", "B5", "B6", "B7"],
        ["Y1", "Y2", "Y3", "Y4", "Y5", "Y6", "Y7"],
    ]
    assert (stacked.top_card, stacked.current_player, stacked.scores) == ("R5", 1, [1 + 2 + 4, 0, 0])


def test_rule_6_5_lowest_scoring_next_round_when_nobody_reached_target() -> None:
    game = setup_position(num_players=2, hands=[["R3"], ["GD", "W"]], top="R4", scoring="lowest", scores=[10, 20])
    game.step("play R3")
    assert game.scores == [10, 90] and game.phase == Phase.ROUND_OVER
    game.next_round()
    assert game.scores == [10, 90] and game.round_number == 2 and game.dealer == 1
