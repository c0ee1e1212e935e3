"""Scenario tests for RULES.md section 7 (partners, Challenge UNO) and the house rules of 7.4
(stacking, seven-zero, draw until playable), plus seeded random games with the options on.

Positions come from stacked decks (``stacked_deck`` + ``Game(rules, deck=..., dealer=...)``)
or from ``Game.from_dict`` on an edited ``to_dict()`` (``make_position``), which starts with an empty
log so the events of a scenario can be compared exactly.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from typing import Any

import pytest
from helpers import brief, draws, legal, table_position

from uno_env.core import (
    EDITIONS,
    Game,
    GameFlowError,
    IllegalActionError,
    Phase,
    Rules,
    RulesError,
    StateError,
    stacked_deck,
)

# Every scenario runs on the batched engine too, compared after every step (tests/batched_mirror.py).
pytestmark = pytest.mark.usefixtures("batched_mirror")

OPTIONS = ("teams", "elimination", "stacking", "seven_zero", "draw_until_playable")

# ---------------------------------------------------------------------------- helpers


def make_position(num_players: int = 4, *, edition: str = "classic", **options: Any) -> Game:
    """``helpers.table_position`` with the table size first (this file's habit)."""
    return table_position(edition, num_players, **options)


def live_deck(
    edition: str,
    live: list[int],
    dealer: int,
    hands: dict[int, list[str]] | None = None,
    start: list[str] | None = None,
    then: list[str] | None = None,
) -> list[str]:
    """``stacked_deck`` for a table where only the seats ``live`` (clockwise) are still in."""
    index = {seat: i for i, seat in enumerate(live)}
    return stacked_deck(edition, len(live), index[dealer],
                        hands={index[s]: c for s, c in (hands or {}).items()}, start=start, then=then)


def play(game: Game, *actions: str) -> None:
    """Apply actions in order (text form)."""
    for action in actions:
        game.step(action)








def value(cards: list[str], edition: str = "classic") -> int:
    ed = EDITIONS[edition]
    return sum(ed.card_value(ed.kind(c)) for c in cards)


def knowledge(game: Game) -> dict[tuple[int, int], list[str]]:
    """Every non-empty (observer, target) -> known cards."""
    n = game.num_players
    return {(o, t): game.known_cards(o, t) for o in range(n) for t in range(n)
            if o != t and game.known_cards(o, t)}


def assert_rejected(game: Game, action: str) -> None:
    """The action is illegal now and changes nothing."""
    before = game.to_dict()
    with pytest.raises(IllegalActionError):
        game.step(action)
    assert game.to_dict() == before


def test_helper_make_position_is_exact() -> None:
    game = make_position(4, hands=[["R1"], [], ["B3", "W"], ["G2"]], top="Y4", below=["Y5"], draw=["R9"],
                 leftover=3, current=2, scores=[0, 500, 10, 20], eliminated=[False, True, False, False],
                 known=((0, 2, ["W"]),), elimination=True)
    assert game.hands[:3] == [["R1"], [], ["B3", "W"]]
    assert game.eliminated == [False, True, False, False]
    assert game.known_cards(0, 2) == ["W"]
    assert (game.draw_pile, game.discard_pile, game.scores) == (["R9"], ["Y5", "Y4"], [0, 500, 10, 20])
    assert (game.current_player, game.phase, game.events()) == (2, Phase.PLAY, [])


def test_helper_live_deck_deals_the_seats_still_in() -> None:
    deck = live_deck("classic", [0, 2, 3], 3, hands={0: ["W"], 2: ["W4"]})
    # Dealing from the left of seat 3 among 0, 2, 3: seat 0 first, then 2, then 3.
    assert deck[:2] == ["W", "W4"]


# ---------------------------------------------------------------------------- 7.1 partners


@pytest.mark.parametrize("num_players", range(2, 11))
def test_rule_7_1_partners_need_an_even_table_of_four_to_ten(num_players: int) -> None:
    if num_players in (4, 6, 8, 10):
        assert Rules(num_players=num_players, teams=True).teams is True
    else:
        with pytest.raises(RulesError, match="even"):
            Rules(num_players=num_players, teams=True)


def test_rule_7_1_teams_alternate_seats() -> None:
    game = Game(Rules(num_players=6, teams=True), seed=1)
    assert [game.team_of(s) for s in range(6)] == [0, 1, 0, 1, 0, 1]
    plain = Game(Rules(num_players=4), seed=1)
    assert [plain.team_of(s) for s in range(4)] == [None] * 4


def test_rule_7_1_a_member_going_out_scores_only_the_opposing_teams_cards() -> None:
    game = make_position(hands=[["R1", "G1"], ["B3", "G2"], ["R2"], ["G7", "W"]], top="R5", current=2, teams=True)
    game.step("play R2")
    assert brief(game) == [("play", 2, "R2", None), ("round_end", 2, None, 62)]  # B3 G2 G7 W, not R1 G1
    assert (game.phase, game.round_winner, game.winners) == (Phase.ROUND_OVER, 2, [])
    assert game.round_points == [62, 0, 62, 0]
    assert game.scores == [62, 0, 62, 0]


def test_rule_7_1_six_players_odd_team_scores_the_even_seats_cards() -> None:
    hands = [["R9"], ["Y1"], ["GS"], ["R3"], ["W4"], ["B5"]]
    game = make_position(6, hands=hands, top="R5", current=3, teams=True)
    game.step("play R3")
    assert game.round_winner == 3
    assert game.scores == [0, 79, 0, 79, 0, 79]  # R9 + GS + W4; the partners' Y1 and B5 do not count


def test_rule_7_1_team_score_is_shared_and_accumulates() -> None:
    game = make_position(hands=[["R9", "G9"], ["R4"], ["B2", "B3"], ["Y5", "Y6"]], top="R5", current=1,
                 scores=[120, 40, 120, 40], teams=True)
    game.step("play R4")
    assert game.scores == [120, 63, 120, 63]  # 40 + R9 G9 B2 B3
    assert game.round_points == [0, 23, 0, 23]


def test_rule_7_1_last_draw_two_cards_count_for_the_team() -> None:
    game = make_position(hands=[["RD"], ["B3", "G2"], ["R2", "R3"], ["G7"]], top="R5", draw=["W", "Y9"], teams=True)
    game.step("play RD")
    assert game.hands[1] == ["B3", "G2", "W", "Y9"]
    assert game.scores == [71, 0, 71, 0]  # B3 G2 W Y9 + G7


@pytest.mark.parametrize("num_players, goes_out, team", [(4, 0, [0, 2]), (4, 3, [1, 3]), (6, 3, [1, 3, 5]),
                                                         (8, 6, [0, 2, 4, 6])])
def test_rule_7_1_the_whole_team_wins_the_game_at_the_target(num_players: int, goes_out: int, team: list[int]) -> None:
    hands = [["GS", "B1"], ["BS", "Y1"], ["YS", "G1"], ["GR", "B2"], ["BR", "Y2"], ["YR", "G2"],
             ["GD", "B3"], ["BD", "Y3"]][:num_players]
    hands[goes_out] = ["R3"]
    scores = [480 if s % 2 == goes_out % 2 else 300 for s in range(num_players)]
    game = make_position(num_players, hands=hands, top="R5", current=goes_out, scores=scores, teams=True)
    game.step("play R3")
    assert game.phase == Phase.GAME_OVER and game.is_game_over
    assert game.winners == team
    assert [e[1] for e in brief(game) if e[0] == "game_end"] == team
    assert all(game.scores[s] >= 500 for s in team)
    assert len({game.scores[s] for s in team}) == 1
    assert game.legal_actions() == []
    with pytest.raises(GameFlowError):
        game.next_round()


def test_rule_7_1_lowest_scoring_each_team_adds_its_members_hands() -> None:
    game = make_position(hands=[["R1", "G1"], ["B3", "G2"], ["R2"], ["G7", "W"]], top="R5", current=2,
                 teams=True, scoring="lowest")
    game.step("play R2")
    assert game.round_points == [2, 62, 2, 62]
    assert game.scores == [2, 62, 2, 62]
    assert brief(game)[-1] == ("round_end", 2, None, 0)
    assert (game.phase, game.winners) == (Phase.ROUND_OVER, [])


def test_rule_7_1_lowest_scoring_the_lowest_team_wins_when_a_team_reaches_the_target() -> None:
    # Team 0 goes out but still carries seat 0's Wild past the target: team 1 has the lower total.
    game = make_position(hands=[["W"], ["R1"], ["R2"], ["G2"]], top="R5", current=2, scores=[90, 40, 90, 40],
                 target_score=100, teams=True, scoring="lowest")
    game.step("play R2")
    assert game.scores == [140, 43, 140, 43]
    assert (game.phase, game.winners) == (Phase.GAME_OVER, [1, 3])


def test_rule_7_1_lowest_scoring_tied_teams_share_the_win() -> None:
    game = make_position(hands=[["R9", "R1"], ["G5"], ["R2"], ["B5"]], top="R5", current=2, scores=[50] * 4,
                 target_score=60, teams=True, scoring="lowest")
    game.step("play R2")
    assert game.scores == [60] * 4
    assert game.winners == [0, 1, 2, 3]


# ---------------------------------------------------------------------------- 7.2 elimination


def test_rule_7_2_each_seat_adds_its_own_hand_and_the_round_winner_adds_zero() -> None:
    game = make_position(3, hands=[["R3"], ["G9", "GS"], ["W", "B4"]], top="R5", scores=[10, 20, 30], elimination=True)
    game.step("play R3")
    assert game.round_points == [0, 29, 54]
    assert game.scores == [10, 49, 84]
    assert brief(game) == [("play", 0, "R3", None), ("round_end", 0, None, 0)]
    assert game.eliminated == [False] * 3
    assert (game.phase, game.winners) == (Phase.ROUND_OVER, [])


def eliminating_round() -> Game:
    """4 seats, target 100: seat 0 goes out; seat 1 ends exactly on 100, seat 3 over, seat 2 under."""
    game = make_position(hands=[["R3"], ["G9", "GS"], ["B9", "BS"], ["W", "R1"]], top="R5", dealer=1,
                 scores=[0, 71, 70, 50], target_score=100, elimination=True)
    game.step("play R3")
    return game


def test_rule_7_2_seats_at_or_over_the_target_are_eliminated() -> None:
    game = eliminating_round()
    assert game.scores == [0, 100, 99, 101]
    assert game.eliminated == [False, True, False, True]
    assert brief(game) == [("play", 0, "R3", None), ("round_end", 0, None, 0),
                           ("eliminated", 1, None, 100), ("eliminated", 3, None, 101)]
    assert (game.phase, game.winners) == (Phase.ROUND_OVER, [])


def test_rule_7_2_next_round_deals_only_the_seats_still_in_and_the_dealer_moves_on() -> None:
    game = eliminating_round()  # the dealer, seat 1, is out: seat 2 deals, seat 0 is left of it
    start = len(game.events())
    deck = live_deck("classic", [0, 2], 2, hands={0: ["RR", "R1", "R2", "R3", "R4", "R6", "R7"]}, start=["R5"])
    game.next_round(deck=deck)
    assert game.dealer == 2
    assert game.hands[1] == [] and game.hands[3] == []
    assert game.hands[0] == ["RR", "R1", "R2", "R3", "R4", "R6", "R7"]
    assert len(game.hands[2]) == 7 and len(game.draw_pile) == 108 - 14 - 1
    assert [e[1] for e in brief(game, start=start) if e[0] == "deal"] == [0, 2] * 7
    assert (game.current_player, game.phase) == (0, Phase.PLAY)
    # Head to head now: Reverse acts as a Skip (rule 4.2).
    game.step("play RR")
    assert brief(game)[-1] == ("skip", 2, None, None)
    assert game.current_player == 0


def test_rule_7_2_the_dealer_moves_to_the_next_seat_still_in() -> None:
    game = eliminating_round()
    game.next_round()
    assert game.dealer == 2
    rng = random.Random(3)
    while not game.is_round_over:
        legal_now = game.legal_actions()
        game.step(rng.choice(legal_now[:-1] if game.phase == Phase.PLAY and len(legal_now) > 1 else legal_now))
    assert not game.is_game_over, "pick a seed whose round does not end the game"
    game.next_round()
    assert game.dealer == 0  # seat 3 is out: from seat 2 the deal passes to seat 0
    assert game.current_player in (0, 2)


@pytest.mark.parametrize("direction, order", [(1, [0, 2, 3, 0]), (-1, [0, 3, 2, 0])])
def test_rule_7_2_turn_order_skips_eliminated_seats(direction: int, order: list[int]) -> None:
    game = make_position(hands=[["R3", "R4", "G4"], [], ["R6", "R7", "Y1"], ["R8", "R9", "Y2"]], top="R5",
                 direction=direction, scores=[0, 500, 0, 0], eliminated=[False, True, False, False],
                 elimination=True)
    seen = [game.current_player]
    for _ in range(3):
        game.step(legal(game)[0])
        seen.append(game.current_player)
    assert seen == order


def test_rule_7_2_skip_skips_the_next_seat_still_in() -> None:
    game = make_position(hands=[["RS", "R4", "G4"], [], ["R6", "R7", "Y1"], ["R8", "R9", "Y2"]], top="R5",
                 scores=[0, 500, 0, 0], eliminated=[False, True, False, False], elimination=True)
    game.step("play RS")
    assert brief(game)[-1] == ("skip", 2, None, None)
    assert game.current_player == 3


@pytest.mark.parametrize("catcher", [None, 2, 4])
def test_rule_7_2_catch_window_skips_eliminated_seats(catcher: int | None) -> None:
    game = make_position(5, hands=[["R3", "G4"], [], ["R6", "R7", "Y1"], [], ["R8", "R9", "Y2"]], top="R5",
                 scores=[0, 600, 0, 500, 0], eliminated=[False, True, False, True, False], elimination=True)
    play(game, "play R3", "no-uno")
    assert (game.phase, game.current_player) == (Phase.CATCH, 2)
    if catcher == 2:
        game.step("catch")
        assert brief(game)[-3] == ("catch", 2, None, 0)
        assert len(game.hands[0]) == 3
    else:
        game.step("no-catch")
        assert (game.phase, game.current_player) == (Phase.CATCH, 4)
        game.step("catch" if catcher == 4 else "no-catch")
        assert len(game.hands[0]) == (3 if catcher == 4 else 1)
    assert (game.phase, game.current_player) == (Phase.PLAY, 2)
    offered = [e[1] for e in brief(game) if e[0] in ("catch", "no_catch")]
    assert 1 not in offered and 3 not in offered


def test_rule_7_2_urrrhhh_gifts_skip_eliminated_seats() -> None:
    game = make_position(hands=[["WU", "P1", "P2", "P3", "B5", "B6"], ["G1", "G2"], [], ["Y1", "Y2"]], top="P9",
                 edition="monster_high", scores=[0, 0, 500, 0], eliminated=[False, False, True, False],
                 elimination=True)
    play(game, "play WU", "give pink")
    assert [e[1:] for e in brief(game) if e[0] == "give"] == [(0, "P1", 1), (0, "P2", 3), (0, "P3", 1)]
    assert game.hands[1] == ["G1", "G2", "P1", "P3"] and game.hands[3] == ["Y1", "Y2", "P2"]
    assert game.hands[2] == []
    game.step("color blue")
    assert game.current_player == 1


def test_rule_7_2_king_pig_deal_skips_eliminated_seats() -> None:
    game = make_position(hands=[["WK", "R1", "B2"], [], ["Y1", "Y2"], ["B3", "B4"]], top="R5", draw=["R2", "Y3", "G3"],
                 edition="angry_birds", scores=[0, 500, 0, 0], eliminated=[False, True, False, False],
                 elimination=True)
    play(game, "play WK", "color green")
    assert [e[1:3] for e in brief(game) if e[0] == "king_pig"] == [(2, "R2"), (3, "Y3"), (0, "G3")]
    assert game.hands[1] == []
    assert game.current_player == 2


def test_rule_7_2_greyskull_draws_skip_eliminated_seats() -> None:
    game = make_position(hands=[["WG", "R1", "B2"], ["G1", "G2"], ["P1", "P2"], []], top="R5",
                 edition="masters_of_the_universe", scores=[0, 0, 0, 500],
                 eliminated=[False, False, False, True], elimination=True)
    play(game, "play WG", "color blue")
    assert [e[1] for e in brief(game) if e[0] == "greyskull"] == [1, 2]
    assert game.hand_sizes == [2, 5, 5, 0]
    assert game.current_player == 1


def test_rule_7_2_two_left_play_two_player_rules() -> None:
    hands = [["RR", "RD", "G4", "G5"], [], ["R6", "R7", "Y1"], []]
    kwargs: dict[str, Any] = dict(scores=[0, 500, 0, 500], eliminated=[False, True, False, True], elimination=True)
    game = make_position(hands=hands, top="R5", **kwargs)
    game.step("play RR")
    assert brief(game) == [("play", 0, "RR", None), ("reverse", 0, None, -1), ("skip", 2, None, None)]
    assert game.current_player == 0
    game.step("play RD")
    assert brief(game)[-1] == ("skip", 2, None, None) and len(game.hands[2]) == 5
    assert game.current_player == 0


def test_rule_7_2_the_last_one_standing_wins() -> None:
    game = make_position(hands=[["R3"], [], ["W", "R9", "B1"], []], top="R5", scores=[300, 510, 450, 520],
                 eliminated=[False, True, False, True], elimination=True)
    game.step("play R3")
    assert game.scores == [300, 510, 510, 520]
    assert game.eliminated == [False, True, True, True]
    assert brief(game)[-3:] == [("round_end", 0, None, 0), ("eliminated", 2, None, 510), ("game_end", 0, None, None)]
    assert (game.phase, game.winners) == (Phase.GAME_OVER, [0])
    with pytest.raises(GameFlowError):
        game.next_round()


def test_rule_7_2_two_eliminated_at_once_leaves_the_round_winner() -> None:
    game = make_position(3, hands=[["R9", "R8"], ["R3"], ["W"]], top="R5", current=1, scores=[490, 10, 460],
                 elimination=True)
    game.step("play R3")
    assert game.eliminated == [True, False, True]
    assert game.winners == [1]


def test_rule_7_2_cannot_combine_with_teams_or_lowest_scoring() -> None:
    with pytest.raises(RulesError):
        Rules(teams=True, elimination=True)
    with pytest.raises(RulesError):
        Rules(elimination=True, scoring="lowest")
    assert Rules(teams=True, scoring="lowest").teams


# ---------------------------------------------------------------------------- 7.4 stacking


def test_rule_7_4_stacking_draw_two_answers_draw_two_of_any_color() -> None:
    game = make_position(hands=[["RD", "R1", "G1"], ["GD", "BD", "B2"], ["Y5", "Y6", "Y7"], ["G7", "G8", "G9"]],
                 top="R5", draw=["B8", "B9", "Y0", "Y1"], stacking=True)
    game.step("play RD")
    assert (game.phase, game.current_player, game.penalty) == (Phase.STACK, 1, 2)
    assert legal(game) == ["play GD", "play BD", "accept"]
    assert_rejected(game, "draw")
    assert_rejected(game, "play B2")
    game.step("play BD")
    # Seat 2 holds no Draw Two: it is still asked (so that holding none stays hidden), and can only accept.
    assert (game.phase, game.current_player, game.penalty) == (Phase.STACK, 2, 4)
    assert legal(game) == ["accept"]
    game.step("accept")
    assert brief(game) == [("play", 0, "RD", None), ("play", 1, "BD", None), ("accept", 2, None, None),
                           *draws(2, ["B8", "B9", "Y0", "Y1"], "draw_two"), ("skip", 2, None, None)]
    assert (game.phase, game.current_player, game.penalty) == (Phase.PLAY, 3, 0)
    assert (game.top_card, game.active_color) == ("BD", "blue")


@pytest.mark.parametrize("dealer", [0, 2])
def test_rule_7_4_stacking_a_first_card_draw_two_is_not_stackable(dealer: int) -> None:
    # Seat left of the dealer holds a Draw Two, yet draws 2 at once and is skipped: no stack phase.
    left, after = (dealer + 1) % 4, (dealer + 2) % 4
    deck = stacked_deck("classic", 4, dealer, hands={left: ["BD", "YD", "R1", "R2", "R3", "R4", "R5"]},
                        start=["GD"], then=["Y8", "B2"])
    game = Game(Rules(num_players=4, stacking=True), deck=deck, dealer=dealer)
    assert brief(game)[-3:] == [*draws(left, ["Y8", "B2"], "start_draw_two"), ("skip", left, None, None)]
    assert (game.phase, game.current_player, game.penalty, game.top_card) == (Phase.PLAY, after, 0, "GD")
    assert len(game.hands[left]) == 9


def test_rule_7_4_stacking_accept_draws_the_total_and_loses_the_turn() -> None:
    game = make_position(hands=[["RD", "R1", "G1"], ["GD", "B2", "B3"], ["YD", "Y6", "Y7"], ["G7", "G8", "G9"]],
                 top="R5", draw=["B8", "B9", "Y0", "Y1", "Y2", "Y3"], stacking=True)
    play(game, "play RD", "play GD")
    assert (game.phase, game.current_player, game.penalty) == (Phase.STACK, 2, 4)
    assert legal(game) == ["play YD", "accept"]
    game.step("accept")
    assert brief(game)[2:] == [("accept", 2, None, None), *draws(2, ["B8", "B9", "Y0", "Y1"], "draw_two"),
                               ("skip", 2, None, None)]
    assert (game.current_player, game.penalty, len(game.hands[2])) == (3, 0, 7)


def test_rule_7_4_stacking_totals_grow_around_the_table() -> None:
    game = make_position(hands=[["RD", "R1", "G1"], ["GD", "B2", "B3"], ["YD", "Y6", "Y7"], ["BD", "G8", "G9"]],
                 top="R5", stacking=True)
    penalties = []
    for card in ("RD", "GD", "YD", "BD"):
        game.step(f"play {card}")
        penalties.append(game.penalty)
    # Seat 0 holds no Draw Two any more: it can only accept, and draws all 8.
    assert legal(game) == ["accept"]
    game.step("accept")
    penalties.append(game.penalty)
    assert penalties == [2, 4, 6, 8, 0]
    assert len(game.hands[0]) == 2 + 8
    assert game.current_player == 1


def test_rule_7_4_stacking_without_a_draw_two_only_accept() -> None:
    game = make_position(hands=[["RD", "R1", "G1"], ["W4", "B2", "B3"], ["YD", "Y6", "Y7"], ["G7", "G8", "G9"]],
                 top="R5", stacking=True)
    game.step("play RD")  # a W4 does not answer a Draw Two
    assert (game.phase, game.current_player) == (Phase.STACK, 1)
    assert legal(game) == ["accept"]
    assert_rejected(game, "play W4")
    game.step("accept")
    assert (game.phase, game.current_player, len(game.hands[1])) == (Phase.PLAY, 2, 5)


def test_rule_7_4_stacking_off_draw_two_is_not_answered() -> None:
    game = make_position(hands=[["RD", "R1", "G1"], ["GD", "B2", "B3"], ["Y5", "Y6", "Y7"], ["G7", "G8", "G9"]], top="R5")
    game.step("play RD")
    assert (game.phase, game.current_player, len(game.hands[1])) == (Phase.PLAY, 2, 5)


def test_rule_7_4_stacking_no_draw_two_on_a_wild_draw_four() -> None:
    game = make_position(hands=[["W4", "R1", "G1"], ["GD", "RD", "B3"], ["Y5", "Y6", "Y7"], ["G7", "G8", "G9"]],
                 top="R5", stacking=True)
    play(game, "play W4", "color green")
    assert (game.phase, game.current_player) == (Phase.CHALLENGE, 1)
    assert legal(game) == ["challenge", "accept"]
    assert_rejected(game, "play GD")


def test_rule_7_4_stacking_stack_phase_offers_only_draw_twos() -> None:
    game = make_position(hands=[["RD", "R1", "G1"], ["W4", "GD", "R3"], ["Y5", "Y6", "Y7"], ["G7", "G8", "G9"]],
                 top="R5", stacking=True)
    game.step("play RD")
    assert legal(game) == ["play GD", "accept"]
    assert_rejected(game, "play W4")
    assert_rejected(game, "play R3")


def test_rule_7_4_stacking_wild_draw_four_on_wild_draw_four() -> None:
    game = make_position(hands=[["W4", "R1", "G1"], ["W4", "B2", "B3"], ["Y5", "Y6", "Y7"], ["G7", "G8", "G9"]],
                 top="R5", draw=["R2", "R3", "R4", "R6", "R7", "R8", "R9", "G2"], stacking=True)
    play(game, "play W4", "color green")
    assert (game.phase, game.current_player, game.penalty) == (Phase.CHALLENGE, 1, 4)
    assert legal(game) == ["play W4", "challenge", "accept"]
    play(game, "play W4", "color yellow")
    assert (game.phase, game.current_player, game.penalty) == (Phase.CHALLENGE, 2, 8)
    assert legal(game) == ["challenge", "accept"]
    game.step("accept")
    assert brief(game)[4:] == [("accept", 2, None, None),
                               *draws(2, ["R2", "R3", "R4", "R6", "R7", "R8", "R9", "G2"], "draw_four"),
                               ("skip", 2, None, None)]
    assert (game.current_player, game.penalty, game.active_color) == (3, 0, "yellow")


def test_rule_7_4_stacking_off_wild_draw_four_is_not_answered() -> None:
    game = make_position(hands=[["W4", "R1", "G1"], ["W4", "B2", "B3"], ["Y5", "Y6", "Y7"], ["G7", "G8", "G9"]], top="R5")
    play(game, "play W4", "color green")
    assert legal(game) == ["challenge", "accept"]


@pytest.mark.parametrize("holds_green, may_stack", [(True, False), (False, True)])
def test_rule_7_4_stacking_no_bluff_option_applies_to_the_stacked_wild_draw_four(holds_green: bool,
                                                                                 may_stack: bool) -> None:
    second = ["W4", "G2", "B3"] if holds_green else ["W4", "B2", "B3"]
    game = make_position(hands=[["W4", "R1", "G1"], second, ["Y5", "Y6", "Y7"], ["G7", "G8", "G9"]],
                 top="R5", active="yellow", stacking=True, allow_bluff=False)
    play(game, "play W4", "color green")
    assert ("play W4" in legal(game)) is may_stack


def test_rule_7_4_stacking_challenge_judges_the_last_wild_draw_four_guilty() -> None:
    # Seat 1 stacks holding blue, the color seat 0 named: guilty, it draws the whole 8.
    game = make_position(hands=[["W4", "R1", "G1"], ["W4", "B2", "G3"], ["Y5", "Y6", "Y7"], ["G7", "G8", "G9"]],
                 top="R5", draw=["R2", "R3", "R4", "R6", "R7", "R8", "R9", "G2"], stacking=True)
    play(game, "play W4", "color blue", "play W4", "color yellow")
    start = len(game.events())
    game.step("challenge")
    assert brief(game, start=start) == [
        ("challenge", 2, None, 1), ("guilty", 1, None, 2), ("show", 1, "B2", 2), ("show", 1, "G3", 2),
        *draws(1, ["R2", "R3", "R4", "R6", "R7", "R8", "R9", "G2"], "challenge_guilty"),
    ]
    assert (game.phase, game.current_player, game.active_color, game.penalty) == (Phase.PLAY, 2, "yellow", 0)
    assert game.hand_sizes == [2, 10, 3, 3]


def test_rule_7_4_stacking_challenge_judges_only_the_last_wild_draw_four_innocent() -> None:
    # Seat 0 bluffed (held red on red), seat 1 did not hold seat 0's green: innocent, the
    # challenger draws the total and 2 more; seat 0's bluff goes unpunished.
    game = make_position(hands=[["W4", "R1", "G1"], ["W4", "B2", "Y3"], ["Y5", "Y6", "Y7"], ["G7", "G8", "G9"]],
                 top="R5", stacking=True)
    play(game, "play W4", "color green", "play W4", "color yellow")
    start = len(game.events())
    game.step("challenge")
    events = brief(game, start=start)
    assert events[:2] == [("challenge", 2, None, 1), ("innocent", 1, None, 2)]
    assert [e[3] for e in events if e[0] == "draw"] == ["challenge_innocent"] * 10
    assert events[-1] == ("skip", 2, None, None)
    assert game.hand_sizes == [2, 2, 13, 3]
    assert (game.current_player, game.penalty) == (3, 0)


def test_rule_7_4_stacking_draw_two_as_last_card_makes_the_next_player_draw_the_total() -> None:
    game = make_position(hands=[["RD", "R1", "G1"], ["GD"], ["YD", "Y6", "Y7"], ["G7", "G8", "G9"]],
                 top="R5", draw=["B8", "B9", "Y0", "Y1"], stacking=True)
    play(game, "play RD", "play GD")
    # Seat 2 holds a Draw Two but the round is over (rules 3.7 step 3, 5.5).
    assert brief(game)[2:] == [*draws(2, ["B8", "B9", "Y0", "Y1"], "draw_two"), ("round_end", 1, None, 77)]
    assert (game.phase, game.round_winner) == (Phase.ROUND_OVER, 1)
    assert game.scores == [0, 77, 0, 0]  # R1 G1 + YD Y6 Y7 and the 4 drawn + G7 G8 G9


def test_rule_7_4_stacking_wild_draw_four_as_last_card_makes_the_next_player_draw_the_total() -> None:
    game = make_position(hands=[["W4", "R1", "G1"], ["W4"], ["Y5", "Y6", "Y7"], ["G7", "G8", "G9"]],
                 top="R5", stacking=True)
    play(game, "play W4", "color green", "play W4")
    assert (game.phase, game.round_winner) == (Phase.ROUND_OVER, 1)
    assert [e[3] for e in brief(game) if e[0] == "draw"] == ["draw_four"] * 8
    assert game.hand_sizes == [2, 0, 11, 3]


def test_rule_7_4_stacking_stacker_down_to_one_card_calls_uno_before_the_next_decision() -> None:
    game = make_position(hands=[["RD", "R1", "G1"], ["GD", "B2"], ["YD", "Y6", "Y7"], ["G7", "G8", "G9"]],
                 top="R5", stacking=True)
    play(game, "play RD", "play GD")
    assert (game.phase, game.current_player, game.penalty) == (Phase.UNO, 1, 4)
    game.step("no-uno")
    assert (game.phase, game.current_player) == (Phase.CATCH, 2)
    game.step("catch")
    assert len(game.hands[1]) == 3
    assert (game.phase, game.current_player, game.penalty) == (Phase.STACK, 2, 4)


# ---------------------------------------------------------------------------- 7.4 seven-zero


def seven_zero_table(first: list[str], direction: int = 1, **kwargs: Any) -> Game:
    hands = [first, ["B3", "G2", "B2", "Y1"], ["Y5", "Y6"], ["G7", "G8", "G9"]]
    return make_position(hands=hands, top="R5", direction=direction, seven_zero=True, **kwargs)


def test_rule_7_4_seven_opens_a_swap_decision_for_its_player() -> None:
    game = seven_zero_table(["R7", "R1", "G1"])
    game.step("play R7")
    assert (game.phase, game.current_player, game.pending_card) == (Phase.SWAP, 0, "R7")
    assert legal(game) == ["swap +1", "swap +2", "swap +3"]
    assert [int(a) for a in game.legal_actions()] == [71, 72, 73]
    assert_rejected(game, "swap +4")
    assert_rejected(game, "draw")


def test_rule_7_4_seven_swaps_hands_and_both_seats_know_the_new_hands() -> None:
    game = seven_zero_table(["R7", "R1", "G1"])
    play(game, "play R7", "swap +2")
    assert game.hands == [["Y5", "Y6"], ["B3", "G2", "B2", "Y1"], ["R1", "G1"], ["G7", "G8", "G9"]]
    assert brief(game) == [("play", 0, "R7", None), ("swap", 0, None, 2)]
    assert knowledge(game) == {(0, 2): ["R1", "G1"], (2, 0): ["Y5", "Y6"]}
    assert (game.phase, game.current_player) == (Phase.PLAY, 1)


def test_rule_7_4_seven_swap_offsets_count_clockwise_whatever_the_direction() -> None:
    game = make_position(hands=[["B3", "G2"], ["R7", "R1", "G1"], ["Y5", "Y6"], ["G7", "G8", "G9"]], top="R5",
                 current=1, direction=-1, seven_zero=True)
    play(game, "play R7", "swap +3")
    assert game.hands[0] == ["R1", "G1"] and game.hands[1] == ["B3", "G2"]
    assert game.current_player == 0  # counter-clockwise from seat 1


def test_rule_7_4_seven_swap_other_seats_knowledge_moves_with_the_hands() -> None:
    # Seat 3 saw Y5 in seat 2's hand, seat 1 saw R1 in seat 0's, seat 2 saw G1 in seat 0's.
    game = seven_zero_table(["R7", "R1", "G1"], known=((3, 2, ["Y5"]), (1, 0, ["R1"]), (2, 0, ["G1"])))
    play(game, "play R7", "swap +2")
    assert knowledge(game) == {
        (3, 0): ["Y5"],  # Y5 went to seat 0 with the hand
        (1, 2): ["R1"],
        (0, 2): ["R1", "G1"],
        (2, 0): ["Y5", "Y6"],  # seat 2's G1 is its own card now
    }


def test_rule_7_4_seven_uno_call_depends_on_the_new_hand() -> None:
    game = seven_zero_table(["R7", "R1", "G1"], known=())
    data = game.to_dict()
    data["hands"][2] = ["Y5"]
    data["hands"][3] += ["Y6"]
    game = Game.from_dict(data)
    play(game, "play R7", "swap +2")  # two cards before the swap, one after
    assert game.hands[0] == ["Y5"]
    assert (game.phase, game.current_player) == (Phase.UNO, 0)
    game.step("no-uno")
    assert (game.phase, game.current_player) == (Phase.CATCH, 1)


def test_rule_7_4_seven_down_to_one_card_then_swapped_away_needs_no_call() -> None:
    game = seven_zero_table(["R7", "R1"])
    play(game, "play R7", "swap +2")  # one card after the 7, two after the swap
    assert game.hands[0] == ["Y5", "Y6"] and game.hands[2] == ["R1"]
    assert (game.phase, game.current_player) == (Phase.PLAY, 1)
    assert game.uno_called == [False] * 4
    assert not [e for e in brief(game) if e[0] in ("uno", "no_uno", "catch", "no_catch")]


def test_rule_7_4_seven_ten_players_may_swap_with_any_seat() -> None:
    hands = [["R7", "R1", "G1"], ["G2", "G3"], ["G4", "G5"], ["G6", "G7"], ["B2", "B3"], ["B4", "B6"],
             ["B7", "B8"], ["Y2", "Y3"], ["Y4", "Y6"], ["Y7", "Y8"]]
    game = make_position(10, hands=hands, top="R5", seven_zero=True)
    game.step("play R7")
    assert [int(a) for a in game.legal_actions()] == list(range(71, 80))
    game.step("swap +9")  # seat 9 sits just right of seat 0
    assert game.hands[0] == ["Y7", "Y8"] and game.hands[9] == ["R1", "G1"]
    assert game.current_player == 1


@pytest.mark.parametrize("direction", [1, -1])
def test_rule_7_4_zero_passes_every_hand_one_seat_in_the_direction_of_play(direction: int) -> None:
    game = seven_zero_table(["R0", "R1", "G1"], direction=direction, known=((2, 3, ["G7"]), (1, 0, ["R1"])))
    before = game.hands
    before[0] = ["R1", "G1"]
    game.step("play R0")
    assert [e[:3] for e in brief(game)] == [("play", 0, "R0"), ("rotate", 0, None)]
    assert game.direction == direction
    expected = {}
    for seat in range(4):
        receiver = (seat + direction) % 4
        assert game.hands[receiver] == before[seat]
        expected[(seat, receiver)] = before[seat]  # each seat knows the hand it passed on
    # Seat 2 saw G7 in seat 3's hand and seat 1 saw R1 in seat 0's. Clockwise, seat 3's hand
    # goes to seat 0 (seat 2 still knows G7 there) and seat 0's reaches seat 1 (its own now).
    # Counter-clockwise, seat 3's hand reaches seat 2 and seat 0's goes to seat 3.
    if direction == 1:
        expected[(2, 0)] = ["G7"]
    else:
        expected[(1, 3)] = ["R1"]
    assert knowledge(game) == expected
    assert (game.phase, game.current_player) == (Phase.PLAY, (0 + direction) % 4)


@pytest.mark.parametrize("direction", [1, -1])
def test_rule_7_4_zero_rotate_event_names_the_direction(direction: int) -> None:
    game = seven_zero_table(["R0", "R1", "G1"], direction=direction)
    game.step("play R0")
    assert brief(game)[-1] == ("rotate", 0, None, direction)
    assert game.to_dict()["log"][-1] == ["rotate", 0, None, direction]


def test_rule_7_4_zero_leaving_one_card_asks_for_the_uno_call() -> None:
    game = make_position(hands=[["R0", "R1", "G1"], ["B3", "G2"], ["Y5", "Y6"], ["G7"]], top="R5", seven_zero=True)
    game.step("play R0")
    assert game.hands[0] == ["G7"]
    assert (game.phase, game.current_player) == (Phase.UNO, 0)


@pytest.mark.parametrize("card", ["R7", "R0"])
def test_rule_7_4_seven_or_zero_as_the_last_card_goes_out_without_swapping(card: str) -> None:
    game = seven_zero_table([card])
    before = game.hands
    game.step(f"play {card}")
    assert brief(game) == [("play", 0, card, None), ("round_end", 0, None, 8 + 11 + 24)]
    assert game.hands[1:] == before[1:]
    assert (game.phase, game.round_winner) == (Phase.ROUND_OVER, 0)


@pytest.mark.parametrize("card", ["R7", "R0"])
def test_rule_7_4_seven_zero_off_seven_and_zero_are_plain(card: str) -> None:
    game = make_position(hands=[[card, "R1", "G1"], ["B3", "G2"], ["Y5", "Y6"], ["G7"]], top="R5")
    before = game.hands
    game.step(f"play {card}")
    assert (game.phase, game.current_player) == (Phase.PLAY, 1)
    assert game.hands[1:] == before[1:]
    assert_rejected(game, "swap +1")


def test_rule_7_4_seven_zero_skips_eliminated_seats() -> None:
    hands = [["R7", "R0", "R1", "G1"], ["B3", "G2"], [], ["G7", "G8", "G9"]]
    kwargs: dict[str, Any] = dict(scores=[0, 0, 500, 0], eliminated=[False, False, True, False],
                                  elimination=True, seven_zero=True)
    game = make_position(hands=hands, top="R5", **kwargs)
    game.step("play R7")
    assert legal(game) == ["swap +1", "swap +3"]
    game = make_position(hands=hands, top="R5", **kwargs)
    game.step("play R0")
    assert game.hands == [["G7", "G8", "G9"], ["R7", "R1", "G1"], [], ["B3", "G2"]]


# ---------------------------------------------------------------------------- 7.4 draw until playable


def test_rule_7_4_draw_until_playable_keeps_drawing_until_a_playable_card() -> None:
    game = make_position(hands=[["G1", "B2", "Y3"], ["B3", "G2"], ["Y5", "Y6"], ["G7"]], top="R5",
                 draw=["G2", "B4", "Y9", "R8", "R9"], draw_until_playable=True)
    game.step("draw")
    assert brief(game) == draws(0, ["G2", "B4", "Y9", "R8"], "turn")
    assert (game.phase, game.current_player, game.drawn_card) == (Phase.PLAY_DRAWN, 0, "R8")
    assert legal(game) == ["play R8"]  # the playable card must be played: no keep
    saved = game.to_dict()
    with pytest.raises(IllegalActionError, match="legal: play R8"):
        game.step("keep")
    assert game.to_dict() == saved
    game.step("play R8")
    assert (game.top_card, game.current_player, len(game.hands[0])) == ("R8", 1, 6)


def test_rule_7_4_draw_until_playable_a_first_playable_card_stops_at_once() -> None:
    game = make_position(hands=[["G1", "B2", "Y3"], ["B3", "G2"], ["Y5", "Y6"], ["G7"]], top="R5",
                 draw=["W", "B4"], draw_until_playable=True)
    game.step("draw")
    assert brief(game) == draws(0, ["W"], "turn")
    assert (game.phase, legal(game)) == (Phase.PLAY_DRAWN, ["play W"])


def test_rule_7_4_draw_until_playable_off_draws_one() -> None:
    game = make_position(hands=[["G1", "B2", "Y3"], ["B3", "G2"], ["Y5", "Y6"], ["G7"]], top="R5",
                 draw=["G2", "R8"])
    game.step("draw")
    assert brief(game) == draws(0, ["G2"], "turn")
    assert (game.phase, game.current_player, legal(game)) == (Phase.PLAY_DRAWN, 0, ["keep"])
    game.step("keep")
    assert (game.phase, game.current_player) == (Phase.PLAY, 1)


def test_rule_7_4_draw_until_playable_the_turn_passes_when_the_piles_run_out() -> None:
    game = make_position(hands=[["G1", "B2", "Y3"], ["B3", "G2"], ["Y5", "Y6"], ["G7"]], top="R5",
                 below=["Y7", "G6"], draw=["G3"], leftover=3, draw_until_playable=True)
    game.step("draw")
    events = brief(game)
    assert events[0] == ("draw", 0, "G3", "turn")
    assert events[1] == ("reshuffle", None, None, 2)
    assert sorted(e[2] for e in events[2:4]) == ["G6", "Y7"]
    assert events[4:] == [("pass", 0, None, None)]
    assert (game.phase, game.current_player) == (Phase.PLAY, 1)
    assert game.draw_pile == [] and game.discard_pile == ["R5"]
    assert len(game.hands[0]) == 6


@pytest.mark.parametrize("allow_bluff, stops_at", [(True, "W4"), (False, "G5")])
def test_rule_7_4_draw_until_playable_a_forbidden_bluff_is_not_playable(allow_bluff: bool, stops_at: str) -> None:
    game = make_position(hands=[["R1", "G2", "B3"], ["B4", "G3"], ["Y5", "Y6"], ["G7"]], top="R5",
                 draw=["W4", "G5", "G6"], draw_until_playable=True, allow_bluff=allow_bluff)
    game.step("draw")
    assert (game.drawn_card, legal(game)) == (stops_at, [f"play {stops_at}"])


# ---------------------------------------------------------------------------- options and saves


@pytest.mark.parametrize("option", OPTIONS)
@pytest.mark.parametrize("bad", [1, 0, "yes", None, "True"])
def test_rule_7_options_must_be_booleans(option: str, bad: Any) -> None:
    with pytest.raises(RulesError, match=option):
        Rules(num_players=4, **{option: bad})
    with pytest.raises(RulesError):
        Rules.from_dict({**Rules(num_players=4).to_dict(), option: bad})


def test_rule_7_options_are_off_by_default_and_round_trip() -> None:
    rules = Rules()
    assert [getattr(rules, o) for o in OPTIONS] == [False] * 5
    combo = Rules(num_players=6, teams=True, stacking=True, seven_zero=True, draw_until_playable=True)
    assert Rules.from_dict(json.loads(json.dumps(combo.to_dict()))) == combo
    assert combo.replace(teams=False, elimination=True).elimination


def in_swap_phase() -> Game:
    game = seven_zero_table(["R7", "R1", "G1"], known=((3, 2, ["Y5"]),))
    game.step("play R7")
    return game


def in_stack_phase() -> Game:
    game = make_position(hands=[["RD", "R1", "G1"], ["GD", "B2", "B3"], ["YD", "Y6", "Y7"], ["G7", "G8", "G9"]],
                 top="R5", stacking=True, seven_zero=True)
    play(game, "play RD", "play GD")
    return game


def in_stacked_challenge() -> Game:
    game = make_position(hands=[["W4", "R1", "G1"], ["W4", "B2", "B3"], ["W4", "Y6", "Y7"], ["G7", "G8", "G9"]],
                 top="R5", stacking=True, draw_until_playable=True)
    play(game, "play W4", "color green", "play W4", "color yellow")
    return game


def mid_elimination() -> Game:
    game = eliminating_round()
    game.next_round()
    return game


def mid_teams() -> Game:
    game = Game(Rules(num_players=6, teams=True, stacking=True, seven_zero=True, scoring="lowest"), seed=11)
    rng = random.Random(5)
    for _ in range(25):
        game.step(rng.choice(game.legal_actions()))
    return game


def mid_draw_until_playable() -> Game:
    game = make_position(hands=[["G1", "B2", "Y3"], ["B3", "G2"], ["Y5", "Y6"], ["G7"]], top="R5",
                 draw=["G2", "B4", "Y9", "R8", "R9"], draw_until_playable=True)
    game.step("draw")
    return game


SNAPSHOTS = {"elimination_round_over": eliminating_round, "swap": in_swap_phase, "stack": in_stack_phase, "stacked_challenge": in_stacked_challenge,
             "elimination": mid_elimination, "teams": mid_teams, "draw_until_playable": mid_draw_until_playable}


@pytest.mark.parametrize("name", list(SNAPSHOTS))
def test_rule_7_options_survive_a_save_mid_game(name: str) -> None:
    game = SNAPSHOTS[name]()
    loaded = Game.from_dict(json.loads(json.dumps(game.to_dict())))
    assert loaded.rules == game.rules
    assert loaded.to_dict() == game.to_dict()
    assert (loaded.phase, loaded.penalty, loaded.eliminated) == (game.phase, game.penalty, game.eliminated)
    rng = random.Random(1)
    for _ in range(200):
        if game.is_game_over:
            break
        if game.is_round_over:
            game.next_round()
            loaded.next_round()
            continue
        action = rng.choice(game.legal_actions())
        game.step(action)
        loaded.step(action)
    assert loaded.to_dict() == game.to_dict()


def test_rule_7_saves_are_checked_against_the_options() -> None:
    data = in_swap_phase().to_dict()
    with pytest.raises(StateError, match="swap"):
        Game.from_dict({**data, "rules": {**data["rules"], "seven_zero": False}})
    data = in_stack_phase().to_dict()
    with pytest.raises(StateError, match="stack"):
        Game.from_dict({**data, "rules": {**data["rules"], "stacking": False}})
    data = mid_elimination().to_dict()
    with pytest.raises(StateError, match="eliminated"):
        Game.from_dict({**data, "rules": {**data["rules"], "elimination": False}})
    with pytest.raises(StateError, match="rules"):
        Game.from_dict({**data, "rules": {**data["rules"], "teams": "yes"}})


# ---------------------------------------------------------------------------- determinize


def test_rule_7_4_stacking_phase_hides_whether_a_draw_two_is_held() -> None:
    game = make_position(hands=[["RD", "R1", "G1"], ["GD", "B2", "B3"], ["YD", "Y6", "Y7"], ["G7", "G8", "G9"]],
                 top="R5", stacking=True)
    game.step("play RD")
    holds_draw_two = []
    for seed in range(20):
        sample = game.determinize(0, seed)
        assert (sample.phase, sample.current_player) == (Phase.STACK, 1)
        assert sample.view(0) == game.view(0)
        holds_draw_two.append(any(c.endswith("D") for c in sample.hands[1]))
        Game.from_dict(sample.to_dict())
    assert any(holds_draw_two) and not all(holds_draw_two)


def test_rule_3_4_determinize_in_play_drawn_samples_any_hidden_card() -> None:
    # Without draw until playable the seat knows nothing of the card another seat drew.
    game = make_position(2, hands=[["G1", "B2", "Y3"], ["Y5"]], top="R5", draw=["R8"], leftover=1)
    game.step("draw")
    plays = set()
    for seed in range(40):
        sample = game.determinize(1, seed)
        assert sample.view(1) == game.view(1)
        assert sample.drawn_card is not None and sample.drawn_card in sample.hands[0]
        plays.add(legal(sample)[0] != "keep")
        Game.from_dict(sample.to_dict())
    assert plays == {True, False}


def test_rule_7_4_draw_until_playable_determinize_in_play_drawn() -> None:
    game = make_position(2, hands=[["G1", "B2", "Y3"], ["Y5"]], top="R5", draw=["G4", "R8"], leftover=1,
                 draw_until_playable=True)
    game.step("draw")
    assert game.drawn_card == "R8"
    for seed in range(10):
        sample = game.determinize(1, seed)
        assert sample.drawn_card in sample.hands[0]
        assert str(sample.legal_actions()[0]) == f"play {sample.drawn_card}"


# ---------------------------------------------------------------------------- random games


COMBOS: list[dict[str, Any]] = [
    dict(teams=True),
    dict(teams=True, scoring="lowest"),
    dict(elimination=True),
    dict(stacking=True),
    dict(seven_zero=True),
    dict(draw_until_playable=True),
    dict(stacking=True, seven_zero=True, draw_until_playable=True),
    dict(teams=True, stacking=True, seven_zero=True),
    dict(elimination=True, stacking=True),
    dict(elimination=True, seven_zero=True, draw_until_playable=True),
]
SAVE_AT = frozenset({13, 150, 900})  # steps after which a JSON save is taken and later replayed


def check_state(game: Game, deck: list[str]) -> None:
    """Card conservation and the invariants of the variants, after every step."""
    hands = game.hands
    assert sorted(game.draw_pile + game.discard_pile + [c for h in hands for c in h]) == deck
    rules = game.rules
    n = game.num_players
    if rules.teams:
        assert game.scores == [game.scores[s % 2] for s in range(n)]
    if not rules.elimination:
        assert game.eliminated == [False] * n
    if game.is_round_over:
        return
    seat = game.current_player
    assert seat is not None and not game.eliminated[seat]
    for s in range(n):
        assert (not hands[s]) == game.eliminated[s] or game.pending_card == "WK"
    ids = [int(a) for a in game.legal_actions()]
    ed = game.edition
    if game.phase == Phase.SWAP:
        assert seat == game.pending_player and game.pending_card is not None and game.pending_card[1] == "7"
        assert ids == [70 + k for k in range(1, n) if not game.eliminated[(seat + k) % n]]
    elif game.phase == Phase.STACK:
        assert game.penalty >= 2 and game.pending_card is not None and game.pending_card.endswith("D")
        assert ids == sorted({ed.kind(c) for c in hands[seat] if c.endswith("D")}) + [66]
    elif game.phase == Phase.CHALLENGE:
        assert game.penalty >= 4 and game.penalty % 4 == 0
        assert ids[-2:] == [65, 66] and ids[:-2] in ([], [53])
        assert ids[:-2] == [] or rules.stacking
    elif game.phase in (Phase.PLAY, Phase.PLAY_DRAWN, Phase.CHOOSE_COLOR, Phase.GIVE_AWAY):
        assert game.penalty == 0 or game.phase == Phase.CHOOSE_COLOR and game.pending_card == "W4"
    assert all(i < 71 for i in ids) or game.phase == Phase.SWAP


def check_round_end(game: Game, hands: list[list[str]], before: list[int], alive: list[bool]) -> None:
    """Scores of a finished round under teams / elimination, and the game's end."""
    ed = game.edition
    points = [sum(ed.card_value(ed.kind(c)) for c in h) for h in hands]
    n = game.num_players
    winner = game.round_winner
    assert winner is not None and hands[winner] == []
    rules = game.rules
    if rules.elimination:
        assert [game.scores[s] - before[s] for s in range(n)] == points
        assert game.eliminated == [not alive[s] or game.scores[s] >= rules.target_score for s in range(n)]
        assert not game.eliminated[winner]
        live = [s for s in range(n) if not game.eliminated[s]]
        assert game.winners == (live if len(live) == 1 else [])
    elif rules.teams:
        team = [sum(points[s] for s in range(t, n, 2)) for t in (0, 1)]
        if rules.scoring == "standard":
            gained = [team[1 - winner % 2] if s % 2 == winner % 2 else 0 for s in range(n)]
            assert game.winners == ([s for s in range(n) if s % 2 == winner % 2]
                                    if game.scores[winner] >= rules.target_score else [])
        else:
            gained = [team[s % 2] for s in range(n)]
            low = min(game.scores)
            assert game.winners == ([s for s in range(n) if game.scores[s] == low]
                                    if max(game.scores) >= rules.target_score else [])
        assert [game.scores[s] - before[s] for s in range(n)] == gained


def random_game(combo: dict[str, Any], index: int) -> tuple[int, int, list[tuple[str, Any]]]:
    """Play one seeded game with save/load checks; returns (steps, rounds, phases seen)."""
    edition = list(EDITIONS)[index % 4]
    if combo.get("teams"):
        num_players = (4, 6)[index % 2]
    else:
        num_players = (2, 3, 4, 5)[index % 4]
    rules = Rules(edition=edition, num_players=num_players, target_score=(150, 250)[index % 2],
                  uno_call=("explicit", "auto")[index % 2], allow_bluff=index % 3 != 2, **combo)
    seed = 7919 * index + 31 * len(COMBOS) + sum(ord(c) for c in "".join(combo))
    game = Game(rules, seed=seed)
    rng = random.Random(seed)
    deck = sorted(EDITIONS[edition].code(k) for k in EDITIONS[edition].deck())
    actions: list[Any] = []
    saves: list[tuple[int, Game]] = []
    phases: Counter[str] = Counter()
    steps = rounds = 0
    check_state(game, deck)
    while not game.is_game_over:
        assert steps < 30_000, f"game {combo} #{index} does not end"
        if game.is_round_over:
            game.next_round()
            actions.append(None)
            rounds += 1
        else:
            legal_now = game.legal_actions()
            phases[game.phase.text] += 1
            if game.phase == Phase.PLAY and len(legal_now) > 1 and rng.random() < 0.9:
                action = rng.choice(legal_now[:-1])
            else:
                action = rng.choice(legal_now)
            before, alive = list(game.scores), [not e for e in game.eliminated]
            game.step(action)
            actions.append(int(action))
            steps += 1
            if game.is_round_over:
                check_round_end(game, game.hands, before, alive)
                phases["eliminated"] += sum(game.eliminated) - (len(alive) - sum(alive))
        check_state(game, deck)
        if steps in SAVE_AT and not game.is_round_over and actions[-1] is not None:
            saves.append((len(actions), Game.from_dict(json.loads(json.dumps(game.to_dict())))))
    final = game.to_dict()
    for at, loaded in saves:
        for action in actions[at:]:
            if action is None:
                loaded.next_round()
            else:
                loaded.step(action)
        assert loaded.to_dict() == final
    return steps, rounds, list(phases.items())


@pytest.mark.parametrize("combo", COMBOS, ids=["+".join(k if v is True else f"{k}={v}" for k, v in c.items())
                                               for c in COMBOS])
def test_rule_7_random_games_with_variants_conserve_cards_end_and_reload(combo: dict[str, Any]) -> None:
    seen: Counter[str] = Counter()
    for index in range(8):
        _, _, phases = random_game(combo, index)
        seen.update(dict(phases))
    if combo.get("stacking"):
        assert seen["stack"] > 0
    if combo.get("seven_zero"):
        assert seen["swap"] > 0
    if combo.get("elimination"):
        assert seen["eliminated"] > 0
