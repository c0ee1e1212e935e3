"""Scenario tests for RULES.md sections 1-3: seats and notation, the setup of a round, a turn.

Each test names the numbered rule it pins. Positions come from stacked decks
(``cards.stacked_deck``) or from ``Game.from_dict`` (``helpers.position``); the assertions are
on exact hands, piles, current player, phase, direction and events.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
from helpers import play, play_out_round, position, stacked_game

from uno_env.core import EDITIONS, Game, IllegalActionError, Phase, Rules, RulesError, stacked_deck

# Every scenario runs on the batched engine too, compared after every step (tests/batched_mirror.py).
pytestmark = pytest.mark.usefixtures("batched_mirror")

EDITION_NAMES = ["classic", "monster_high", "angry_birds", "masters_of_the_universe"]
SPECIAL = {"monster_high": "WU", "angry_birds": "WK", "masters_of_the_universe": "WG"}


def trail(game: Game, start: int = 0) -> list[tuple[Any, ...]]:
    """Events from index ``start`` as (type, seat, card, extra); extra is a draw's reason,
    a color event's color name, else ``other``."""
    out = []
    for e in game.events()[start:]:
        extra = e.get("reason", e.get("color", e["other"]))
        out.append((e["type"], e["seat"], e["card"], extra))
    return out


def types(game: Game, start: int = 0) -> list[str]:
    """The event types from index ``start`` on."""
    return [e["type"] for e in game.events()[start:]]


def texts(game: Game) -> list[str]:
    """The legal actions as texts, in id order."""
    return [str(a) for a in game.legal_actions()]


def after_start(game: Game) -> list[tuple[Any, ...]]:
    """Events after the ``start`` event of the current round."""
    log = types(game)
    return trail(game, len(log) - log[::-1].index("start"))


def codes(ed_name: str, *cards: str) -> list[str]:
    """Cards written with color slots: ``"0:5"`` is slot 0's 5 in the edition's letters."""
    letters = EDITIONS[ed_name].letters
    return [letters[int(c[0])] + c[2:] if ":" in c else c for c in cards]


# ---------------------------------------------------------------------------------------- 1.1
@pytest.mark.parametrize("num_players", [1, 11, 0])
def test_rule_1_1_tables_outside_2_to_10_are_refused(num_players):
    with pytest.raises(RulesError):
        Rules(num_players=num_players)


@pytest.mark.parametrize("num_players", range(2, 11))
def test_rule_1_1_seats_are_0_to_n_minus_1(num_players):
    game = Game(Rules(num_players=num_players), seed=num_players)
    assert len(game.hands) == len(game.hand_sizes) == num_players
    assert sum(game.hand_sizes) in (7 * num_players, 7 * num_players + 2)  # + 2: a Draw Two turned first
    assert 0 <= game.dealer < num_players
    assert game.current_player in range(num_players)


@pytest.mark.parametrize("num_players", [2, 3, 4, 7, 10])
def test_rule_1_1_play_starts_clockwise_from_the_left_of_the_dealer(num_players):
    dealer = num_players - 1  # left of the last seat is seat 0 (wrap-around)
    game = stacked_game(
        num_players=num_players, dealer=dealer, start=["G5"],
        hands={0: ["G3", "B1", "B2", "B3", "B4", "B6", "B8"], 1: ["G9", "Y1", "Y2", "Y3", "Y4", "Y6", "Y8"]},
    )
    assert (game.direction, game.current_player, game.phase) == (1, 0, Phase.PLAY)
    game.step("play G3")
    assert (game.direction, game.current_player) == (1, 1)
    game.step("play G9")
    assert (game.direction, game.current_player) == (1, 2 % num_players)
    assert game.discard_pile == ["G5", "G3", "G9"]


@pytest.mark.parametrize("num_players", [3, 4, 10])
def test_rule_1_1_reverse_flips_the_direction(num_players):
    last = num_players - 1
    game = stacked_game(
        num_players=num_players, dealer=last, start=["G5"],
        hands={0: ["GR", "B1", "B2", "B3", "B4", "B6", "B8"],
               last: ["G9", "Y1", "Y2", "Y3", "Y4", "Y6", "Y8"],
               last - 1: ["GR", "Y9", "B9", "Y5", "B5", "Y7", "B7"]},
    )
    game.step("play GR")
    assert (game.direction, game.current_player) == (-1, last)
    game.step("play G9")
    assert (game.direction, game.current_player) == (-1, last - 1)
    game.step("play GR")
    assert (game.direction, game.current_player) == (1, last)
    reverses = [(e[1], e[3]) for e in trail(game) if e[0] == "reverse"]
    assert reverses == [(0, -1), (last - 1, 1)]


# ---------------------------------------------------------------------------------------- 1.2
@pytest.mark.parametrize("slot", range(4))
@pytest.mark.parametrize("edition", EDITION_NAMES)
def test_rule_1_2_colors_are_named_and_lettered_by_the_edition(edition, slot):
    ed = EDITIONS[edition]
    other = (slot + 1) % 4
    hand = codes(edition, f"{slot}:1", f"{other}:5", f"{other}:1", "W", f"{other}:2", f"{other}:3", f"{other}:4")
    game = stacked_game(edition, hands={1: hand}, start=codes(edition, f"{slot}:5"))
    assert game.active_color == ed.colors[slot]
    # Matching the color slot, or the number; the other color's 1 does not match.
    assert set(texts(game)) == {f"play {hand[0]}", f"play {hand[1]}", "play W", "draw"}
    game.step("play W")
    assert texts(game) == [f"color {c}" for c in ed.colors]
    game.step(f"color {ed.colors[other]}")
    assert game.active_color == ed.colors[other]
    assert game.view(2)["active_color"] == ed.colors[other]


# ---------------------------------------------------------------------------------------- 1.3
def rule_1_3_deck(edition: str) -> Counter[str]:
    """Rule 1.3 spelled out in the edition's letters."""
    ed = EDITIONS[edition]
    deck: Counter[str] = Counter()
    for letter in ed.letters:
        deck[letter + "0"] = 1
        for symbol in "123456789SRD":
            deck[letter + symbol] = 2
    deck["W"] = deck["W4"] = 4
    if edition in SPECIAL:
        deck[SPECIAL[edition]] = 4
    return deck


@pytest.mark.parametrize("edition", EDITION_NAMES)
def test_rule_1_3_every_card_of_the_deck_is_in_play_after_a_round(edition):
    game = Game(Rules(edition=edition, num_players=3, target_score=10**6), seed=11)
    assert Counter(sum(game.hands, []) + game.draw_pile + game.discard_pile) == rule_1_3_deck(edition)
    play_out_round(game, seed=5)
    cards = Counter(sum(game.hands, []) + game.draw_pile + game.discard_pile)
    assert cards == rule_1_3_deck(edition)
    per_color = Counter(c[0] for c in cards.elements() if not c.startswith("W"))
    assert per_color == {letter: 25 for letter in EDITIONS[edition].letters}
    assert sum(cards.values()) == (108 if edition == "classic" else 112)


# ---------------------------------------------------------------------------------------- 1.4
def test_rule_1_4_codes_spell_hands_inputs_and_the_log():
    game = stacked_game(hands={1: ["R7", "GS", "YR", "BD", "W", "W4", "G1"]}, start=["G5"], then=["B9"])
    assert game.hands[1] == ["R7", "GS", "YR", "BD", "W", "W4", "G1"]
    assert set(texts(game)) == {"play GS", "play G1", "play W", "play W4", "draw"}
    game.step("play gs")  # input is read case-insensitively
    assert game.top_card == "GS"
    assert trail(game)[-2:] == [("play", 1, "GS", None), ("skip", 2, None, None)]
    game.step("draw")
    assert trail(game)[-1] == ("draw", 3, "B9", "turn")
    assert game.events(seat=0)[-1]["card"] is None  # a drawn card is spelled only for its owner


@pytest.mark.parametrize("edition", EDITION_NAMES)
def test_rule_1_4_wild_codes_per_edition(edition):
    wilds = ["W", "W4"] + ([SPECIAL[edition]] if edition in SPECIAL else [])
    hand = wilds + codes(edition, "1:1", "1:2", "1:3", "1:4", "1:6")[: 7 - len(wilds)]
    game = stacked_game(edition, hands={1: hand}, start=codes(edition, "0:5"))
    assert game.hands[1] == hand
    assert {t for t in texts(game) if t.startswith("play W")} == {f"play {w}" for w in wilds}
    for other, code in SPECIAL.items():
        if other != edition:
            with pytest.raises(ValueError):
                game.step(f"play {code}")


# ---------------------------------------------------------------------------------------- 2.1
def is_number(code: str) -> bool:
    """Whether a card code is a number card."""
    return not code.startswith("W") and code[1].isdigit()


def dealer_draw_value(code: str) -> int:
    """Rule 2.1: a number card counts its number; symbols and wild-type cards count 0."""
    return int(code[1]) if is_number(code) else 0


@pytest.mark.parametrize(("edition", "num_players"), [
    ("classic", 2), ("classic", 3), ("classic", 4), ("monster_high", 5), ("angry_birds", 10),
    ("masters_of_the_universe", 2),
])
def test_rule_2_1_highest_number_deals_symbols_count_zero_ties_draw_again(edition, num_players):
    ties = zero_ties = 0
    for seed in range(150):
        game = Game(Rules(edition=edition, num_players=num_players), seed=seed)
        draws = [e for e in game.events() if e["type"] == "dealer_draw"]
        attempts = sorted({e["other"] for e in draws})
        assert attempts == list(range(len(attempts)))
        contenders = list(range(num_players))
        for attempt in attempts:
            group = [e for e in draws if e["other"] == attempt]
            assert [e["seat"] for e in group] == contenders
            values = {e["seat"]: dealer_draw_value(e["card"]) for e in group}
            best = max(values.values())
            tied = [s for s in contenders if values[s] == best]
            if attempt < attempts[-1]:
                assert len(tied) > 1
                ties += 1
                if best == 0 and any(not is_number(e["card"]) for e in group if e["seat"] in tied):
                    zero_ties += 1
            contenders = tied
        assert contenders == [game.dealer]
        dealer_events = [e for e in game.events() if e["type"] == "dealer"]
        assert [(e["seat"], e["other"]) for e in dealer_events] == [(game.dealer, 1)]
        assert types(game).index("dealer") == len(draws)  # every draw comes before the choice
    assert ties > 0
    if num_players == 2:
        assert zero_ties > 0  # a symbol or wild tied with a 0 (or another symbol) and drew again


@pytest.mark.parametrize("num_players", [2, 4])
def test_rule_2_1_an_option_fixes_the_first_dealer(num_players):
    game = Game(Rules(num_players=num_players, first_dealer=1), seed=3)
    assert game.dealer == 1
    assert "dealer_draw" not in types(game)
    assert [e["seat"] for e in game.events() if e["type"] == "deal"][:2] == [(1 + 1) % num_players, (1 + 2) % num_players]


@pytest.mark.parametrize("num_players", [2, 3, 5])
def test_rule_2_1_next_round_deals_from_the_seat_left_of_the_previous_dealer(num_players):
    game = Game(Rules(num_players=num_players, target_score=10**6), seed=4)
    dealer = game.dealer
    for round_number in range(2, num_players + 3):
        play_out_round(game, seed=round_number)
        seen = len(game.log)
        game.next_round()
        dealer = (dealer + 1) % num_players
        assert (game.dealer, game.round_number) == (dealer, round_number)
        new = game.events()[seen:]
        assert (new[0]["type"], new[0]["seat"], new[0]["other"]) == ("dealer", dealer, round_number)
        assert "dealer_draw" not in [e["type"] for e in new]
        deal_seats = [e["seat"] for e in new if e["type"] == "deal"]
        assert deal_seats == [(dealer + 1 + i) % num_players for i in range(7 * num_players)]
    assert dealer == (Game(Rules(num_players=num_players), seed=4).dealer + num_players + 1) % num_players


def test_rule_2_1_next_round_with_a_stacked_deck():
    game = Game(Rules(num_players=3, target_score=10**6), seed=2)
    first = game.dealer
    play_out_round(game, seed=1)
    dealer = (first + 1) % 3
    hand = ["G3", "B1", "B2", "B3", "B4", "B6", "B8"]
    game.next_round(deck=stacked_deck("classic", 3, dealer, hands={(dealer + 1) % 3: hand}, start=["G5"]))
    assert game.dealer == dealer
    assert game.hands[(dealer + 1) % 3] == hand
    assert (game.current_player, game.top_card, game.direction) == ((dealer + 1) % 3, "G5", 1)


# ---------------------------------------------------------------------------------------- 2.2
@pytest.mark.parametrize(("num_players", "dealer"), [(2, 0), (2, 1), (3, 2), (5, 1), (10, 9)])
def test_rule_2_2_seven_cards_one_at_a_time_from_the_left_of_the_dealer(num_players, dealer):
    deck = [EDITIONS["classic"].code(k) for k in EDITIONS["classic"].deck()]  # canonical order
    game = Game(Rules(num_players=num_players), deck=deck, dealer=dealer)
    dealt = 7 * num_players
    expected = [[] for _ in range(num_players)]
    for i, card in enumerate(deck[:dealt]):
        expected[(dealer + 1 + i) % num_players].append(card)
    deal_events = [e for e in game.events() if e["type"] == "deal"]
    assert [(e["seat"], e["card"]) for e in deal_events] == [
        ((dealer + 1 + i) % num_players, card) for i, card in enumerate(deck[:dealt])
    ]
    assert game.discard_pile == [deck[dealt]]
    assert game.draw_pile == deck[dealt + 1:]
    if deck[dealt][1] != "D":
        assert game.hands == expected


def test_rule_2_2_the_deck_is_shuffled_by_the_games_own_generator():
    rules = Rules(num_players=4, first_dealer=0)
    one, same, other = Game(rules, seed=1), Game(rules, seed=1), Game(rules, seed=2)
    assert one.hands == same.hands and one.draw_pile == same.draw_pile
    assert one.hands != other.hands
    canonical = [EDITIONS["classic"].code(k) for k in EDITIONS["classic"].deck()]
    assert sum(one.hands, []) != canonical[:28]
    assert one.hand_sizes == [7, 7, 7, 7] or one.top_card[1] == "D"
    assert Counter(sum(one.hands, []) + one.draw_pile + one.discard_pile) == Counter(canonical)


# ---------------------------------------------------------------------------------------- 2.3
def returned_w4_pile(deck: list[str], dealt: int) -> tuple[list[str], str, int]:
    """Rule 2.3 on a stacked deck: the draw pile, the first card and how many W4 went back."""
    pile = deck[dealt:]
    returned = 0
    while pile[0] == "W4":
        card = pile.pop(0)
        pile.insert(len(pile) // 2, card)
        returned += 1
    return pile[1:], pile[0], returned


@pytest.mark.parametrize("start", [["W4", "R5"], ["W4", "W4", "G5"], ["W4", "W4", "W4", "W4", "B2"]])
@pytest.mark.parametrize(("num_players", "dealer"), [(2, 1), (4, 0), (5, 3)])
def test_rule_2_3_first_card_w4_goes_back_to_the_middle_and_the_next_is_turned(num_players, dealer, start):
    deck = stacked_deck("classic", num_players, dealer, start=start)
    game = Game(Rules(num_players=num_players), deck=deck, dealer=dealer)
    pile, first, returned = returned_w4_pile(deck, 7 * num_players)
    assert (first, returned) == (start[-1], len(start) - 1)
    assert game.draw_pile == pile
    assert game.discard_pile == [first]
    assert types(game)[-(returned + 1):] == ["return_w4"] * returned + ["start"]
    assert all(e["card"] == "W4" for e in game.events() if e["type"] == "return_w4")
    assert (game.phase, game.current_player, game.active_color) == (Phase.PLAY, (dealer + 1) % num_players,
                                                                    {"R": "red", "G": "green", "B": "blue"}[first[0]])
    assert game.hand_sizes == [7] * num_players


def test_rule_2_3_w4_position_is_half_of_the_remaining_draw_pile():
    # 4 players: 108 - 28 = 80 cards left; the W4 is turned, 79 remain; it goes back at 79 // 2 = 39
    # from the top, then the next card (the old top) is turned, so it is 38th from the top.
    deck = stacked_deck("classic", 4, 0, start=["W4", "Y6"], then=["B1", "B2"])
    game = Game(Rules(num_players=4), deck=deck, dealer=0)
    assert game.draw_pile[38] == "W4"
    assert game.draw_pile[:2] == ["B1", "B2"]
    assert len(game.draw_pile) == 79
    assert game.draw_pile.count("W4") == 4  # the three others lie at the bottom of the stacked deck
    assert game.draw_pile[:38] == deck[30:68]


def test_rule_2_3_w4_then_a_draw_two_still_acts():
    deck = stacked_deck("classic", 4, 2, start=["W4", "GD"], then=["Y1", "Y2"])
    game = Game(Rules(num_players=4), deck=deck, dealer=2)
    assert game.discard_pile == ["GD"]
    assert game.hands[3][-2:] == ["Y1", "Y2"]
    assert after_start(game) == [("draw", 3, "Y1", "start_draw_two"), ("draw", 3, "Y2", "start_draw_two"),
                                 ("skip", 3, None, None)]
    assert game.current_player == 0
    assert "W4" not in game.hands[3]


WILD_STARTS = [("classic", "W"), ("monster_high", "W"), ("monster_high", "WU"), ("angry_birds", "WK"),
               ("angry_birds", "W"), ("masters_of_the_universe", "WG")]


@pytest.mark.parametrize("num_players", [2, 4])
@pytest.mark.parametrize(("edition", "card"), WILD_STARTS)
def test_rule_2_3_first_card_wild_or_special_wild_acts_as_a_plain_wild(edition, card, num_players):
    ed = EDITIONS[edition]
    dealer = 1
    left = (dealer + 1) % num_players
    hand = codes(edition, "3:3", "0:3", "1:3", "2:4", "0:8", "1:9", "2:2")
    game = stacked_game(edition, num_players=num_players, dealer=dealer, hands={left: hand}, start=[card])
    draw_before = game.draw_pile
    hands_before = game.hands
    assert (game.phase, game.current_player, game.active_color) == (Phase.CHOOSE_COLOR, left, None)
    assert game.discard_pile == [card]
    assert texts(game) == [f"color {c}" for c in ed.colors]
    game.step(f"color {ed.colors[3]}")
    # No give-away, no King Pig deal, no Greyskull draws: only the color was chosen.
    assert after_start(game) == [("color", left, None, ed.colors[3])]
    assert game.hands == hands_before and game.draw_pile == draw_before
    assert (game.phase, game.current_player, game.active_color, game.direction) == (Phase.PLAY, left, ed.colors[3], 1)
    # The chooser takes the first turn; a wild on top matches by color only (no number).
    assert texts(game) == [f"play {hand[0]}", "draw"]
    game.step(f"play {hand[0]}")
    assert game.current_player == (left + 1) % num_players


@pytest.mark.parametrize(("num_players", "dealer"), [(2, 0), (2, 1), (4, 3), (5, 1)])
def test_rule_2_3_first_card_draw_two_left_of_dealer_draws_two_and_is_skipped(num_players, dealer):
    left = (dealer + 1) % num_players
    hand = ["B1", "B2", "B3", "B4", "B5", "B6", "B7"]
    game = stacked_game(num_players=num_players, dealer=dealer, hands={left: hand}, start=["GD"], then=["Y8", "B2"])
    assert game.hands[left] == hand + ["Y8", "B2"]
    assert after_start(game) == [("draw", left, "Y8", "start_draw_two"), ("draw", left, "B2", "start_draw_two"),
                                 ("skip", left, None, None)]
    assert (game.phase, game.current_player, game.direction, game.active_color) == (
        Phase.PLAY, (dealer + 2) % num_players, 1, "green")
    assert game.discard_pile == ["GD"]
    assert sorted(game.hand_sizes) == sorted([7] * (num_players - 1) + [9])


@pytest.mark.parametrize(("num_players", "dealer"), [(2, 0), (2, 1), (3, 1), (4, 1), (6, 0)])
def test_rule_2_3_first_card_reverse_dealer_starts_counter_clockwise(num_players, dealer):
    hand = ["Y4", "B1", "B2", "B3", "B4", "B6", "B7"]
    game = stacked_game(num_players=num_players, dealer=dealer, hands={dealer: hand}, start=["YR"])
    assert after_start(game) == [("reverse", None, None, -1)]
    assert (game.phase, game.current_player, game.direction) == (Phase.PLAY, dealer, -1)
    assert game.hand_sizes == [7] * num_players
    game.step("play Y4")
    assert game.current_player == (dealer - 1) % num_players
    assert game.direction == -1


@pytest.mark.parametrize(("num_players", "dealer"), [(2, 0), (2, 1), (3, 2), (4, 1)])
def test_rule_2_3_first_card_skip_left_of_dealer_is_skipped(num_players, dealer):
    game = stacked_game(num_players=num_players, dealer=dealer, start=["BS"])
    left = (dealer + 1) % num_players
    assert after_start(game) == [("skip", left, None, None)]
    assert (game.phase, game.current_player, game.direction, game.active_color) == (
        Phase.PLAY, (dealer + 2) % num_players, 1, "blue")
    assert game.hand_sizes == [7] * num_players


@pytest.mark.parametrize("start", ["R0", "B9", "Y5"])
@pytest.mark.parametrize(("num_players", "dealer"), [(2, 1), (4, 2)])
def test_rule_2_3_first_card_number_left_of_dealer_starts(num_players, dealer, start):
    game = stacked_game(num_players=num_players, dealer=dealer, start=[start])
    assert after_start(game) == []
    assert types(game)[-1] == "start"
    assert (game.phase, game.current_player, game.direction, game.top_card) == (
        Phase.PLAY, (dealer + 1) % num_players, 1, start)
    assert game.hand_sizes == [7] * num_players


# ---------------------------------------------------------------------------------------- 3.1
def test_rule_3_1_active_color_follows_the_top_card_or_the_chosen_color():
    game = stacked_game(
        start=["G5"],
        hands={1: ["Y5", "R1", "R2", "R3", "R4", "R6", "R8"],
               2: ["W", "G1", "G2", "G3", "G4", "G6", "G8"],
               3: ["B2", "Y7", "YS", "RR", "W4", "GD", "G5"]},
    )
    assert game.active_color == "green"
    game.step("play Y5")
    assert (game.top_card, game.active_color) == ("Y5", "yellow")
    play(game, ["play W", "color blue"])
    assert (game.top_card, game.active_color) == ("W", "blue")
    assert set(texts(game)) == {"play B2", "play W4", "draw"}
    game.step("play B2")
    assert (game.top_card, game.active_color) == ("B2", "blue")


@pytest.mark.parametrize("edition", EDITION_NAMES)
def test_rule_3_1_chosen_color_may_differ_from_every_card_in_play(edition):
    ed = EDITIONS[edition]
    hand = codes(edition, "0:1", "1:1", "2:1", "3:1")
    game = position(edition, hands={0: hand}, discard=["W"], active_color=ed.colors[2])
    assert set(texts(game)) == {f"play {hand[2]}", "draw"}


# ---------------------------------------------------------------------------------------- 3.2
@pytest.mark.parametrize(("top", "hand", "playable"), [
    ("R7", ["R2", "G7", "BS", "W", "Y3", "GD", "W4"], {"R2", "G7", "W", "W4"}),
    ("GS", ["BS", "RD", "GD", "Y1", "RR", "B7", "R0"], {"BS", "GD"}),
    ("RD", ["YD", "R3", "G3", "BS", "B4", "YR", "G9"], {"YD", "R3"}),
    ("YR", ["BR", "Y0", "G0", "BD", "RS", "B1", "G2"], {"BR", "Y0"}),
    ("B0", ["R0", "B5", "G1", "Y2", "RS", "GR", "YD"], {"R0", "B5"}),
    ("G5", ["R1", "B2", "Y3", "RS", "BR", "YD", "R9"], set()),
])
def test_rule_3_2_playable_by_color_number_symbol_or_wild(top, hand, playable):
    game = position(hands={0: hand}, discard=[top])
    assert set(texts(game)) == {f"play {c}" for c in playable} | {"draw"}
    saved = game.to_dict()
    for card in set(hand) - playable:
        with pytest.raises(IllegalActionError):
            game.step(f"play {card}")
    assert game.to_dict() == saved


@pytest.mark.parametrize("edition", list(SPECIAL))
def test_rule_3_2_special_wild_is_always_playable(edition):
    special = SPECIAL[edition]
    hand = [special] + codes(edition, "1:1", "2:2", "3:3")
    game = position(edition, hands={0: hand}, discard=codes(edition, "0:5"))
    assert set(texts(game)) == {f"play {special}", "draw"}


# ---------------------------------------------------------------------------------------- 3.3
def test_rule_3_3_no_bluff_option_forbids_w4_while_holding_the_active_color():
    game = position(hands={0: ["W4", "R2", "G7", "B1"]}, discard=["R7"], allow_bluff=False)
    assert texts(game) == ["play R2", "play G7", "draw"]
    saved = game.to_dict()
    with pytest.raises(IllegalActionError):
        game.step("play W4")
    assert game.to_dict() == saved


@pytest.mark.parametrize("allow_bluff", [True, False])
@pytest.mark.parametrize(("top", "match"), [("R7", "G7"), ("RS", "GS"), ("RD", "YD")])
def test_rule_3_3_number_or_symbol_match_does_not_count_as_the_color(allow_bluff, top, match):
    game = position(hands={0: ["W4", match, "B1"]}, discard=[top], allow_bluff=allow_bluff)
    assert set(texts(game)) == {"play W4", f"play {match}", "draw"}
    play(game, ["play W4", "color blue"])
    assert (game.phase, game.current_player) == (Phase.CHALLENGE, 1)
    pending = game.to_dict()["pending"]
    assert (pending["w4_guilty"], pending["w4_prev_color"]) == (False, "red")


def test_rule_3_3_bluff_is_legal_by_default_and_recorded_for_a_challenge():
    game = position(hands={0: ["W4", "R2", "G7"]}, discard=["R7"])
    assert game.rules.allow_bluff is True
    assert set(texts(game)) == {"play W4", "play R2", "play G7", "draw"}
    play(game, ["play W4", "color green"])
    assert (game.phase, game.current_player, game.active_color) == (Phase.CHALLENGE, 1, "green")
    pending = game.to_dict()["pending"]
    assert (pending["w4_guilty"], pending["w4_prev_color"]) == (True, "red")
    assert game.hands[0] == ["R2", "G7"]


@pytest.mark.parametrize("allow_bluff", [True, False])
def test_rule_3_3_wild_cards_in_hand_are_not_the_color(allow_bluff):
    game = position(hands={0: ["W4", "W", "R1", "Y3"]}, discard=["W"], active_color="blue", allow_bluff=allow_bluff)
    assert texts(game) == ["play W", "play W4", "draw"]


@pytest.mark.parametrize("edition", EDITION_NAMES)
def test_rule_3_3_no_bluff_uses_the_edition_active_color(edition):
    hand = ["W4"] + codes(edition, "2:1", "1:5")
    game = position(edition, hands={0: hand}, discard=codes(edition, "2:5"), allow_bluff=False)
    assert set(texts(game)) == {f"play {hand[1]}", f"play {hand[2]}", "draw"}
    game = position(edition, hands={0: hand}, discard=codes(edition, "3:5"), allow_bluff=False)
    assert set(texts(game)) == {"play W4", f"play {hand[2]}", "draw"}


@pytest.mark.parametrize("allow_bluff", [True, False])
def test_rule_3_3_drawn_w4_follows_the_bluff_option(allow_bluff):
    game = position(hands={0: ["R2", "G1"]}, discard=["R7"], draw=["W4"], allow_bluff=allow_bluff)
    game.step("draw")
    assert game.hands[0] == ["R2", "G1", "W4"]
    if allow_bluff:
        assert (game.phase, game.current_player, texts(game)) == (Phase.PLAY_DRAWN, 0, ["play W4", "keep"])
    else:  # the drawn W4 is not playable (red in hand): a forced keep (rule 3.4)
        assert (game.phase, game.current_player, texts(game)) == (Phase.PLAY_DRAWN, 0, ["keep"])


# ---------------------------------------------------------------------------------------- 3.4
NO_MATCH = ["G1", "B2", "Y3"]  # nothing here matches R7


def test_rule_3_4_without_a_playable_card_the_player_must_draw():
    game = position(hands={0: list(NO_MATCH)}, discard=["R7"], draw=["R3"])
    assert texts(game) == ["draw"]


def test_rule_3_4_drawn_playable_card_may_be_played_at_once():
    game = position(hands={0: list(NO_MATCH)}, discard=["R7"], draw=["R3", "B5"])
    game.step("draw")
    assert (game.phase, game.current_player, game.drawn_card) == (Phase.PLAY_DRAWN, 0, "R3")
    assert texts(game) == ["play R3", "keep"]
    assert game.hands[0] == NO_MATCH + ["R3"]
    game.step("play R3")
    assert game.hands[0] == NO_MATCH
    assert game.discard_pile == ["R7", "R3"]
    assert (game.phase, game.current_player, game.draw_pile[0]) == (Phase.PLAY, 1, "B5")
    assert trail(game) == [("draw", 0, "R3", "turn"), ("play", 0, "R3", None)]


def test_rule_3_4_drawn_playable_card_may_be_kept_and_the_turn_ends():
    game = position(hands={0: list(NO_MATCH)}, discard=["R7"], draw=["R3"])
    play(game, ["draw", "keep"])
    assert game.hands[0] == NO_MATCH + ["R3"]
    assert game.discard_pile == ["R7"]
    assert (game.phase, game.current_player, game.drawn_card) == (Phase.PLAY, 1, None)
    assert trail(game) == [("draw", 0, "R3", "turn"), ("keep", 0, None, None)]


def test_rule_3_4_drawn_unplayable_card_is_a_forced_keep_then_the_turn_ends():
    game = position(hands={0: list(NO_MATCH)}, discard=["R7"], draw=["B9"])
    game.step("draw")
    assert game.hands[0] == NO_MATCH + ["B9"]
    assert (game.phase, game.current_player, game.drawn_card, texts(game)) == (Phase.PLAY_DRAWN, 0, "B9", ["keep"])
    with pytest.raises(IllegalActionError, match="legal: keep"):
        game.step("play B9")
    game.step("keep")
    assert (game.phase, game.current_player, game.top_card) == (Phase.PLAY, 1, "R7")
    assert trail(game) == [("draw", 0, "B9", "turn"), ("keep", 0, None, None)]


@pytest.mark.parametrize("observer", [1, 2, 3])
def test_rule_3_4_other_seats_cannot_tell_a_kept_playable_card_from_an_unplayable_one(observer):
    """The phase, the log, the view and the observation look the same either way."""
    from uno_env.observation import observe

    seen = []
    for drawn in ("Y7", "B9"):  # Y7 plays on R7, B9 does not (neither is in a filler hand)
        game = position(hands={0: list(NO_MATCH)}, discard=["R7"], draw=[drawn])
        game.step("draw")
        during = (game.phase, game.current_player, game.events(observer), game.view(observer),
                  observe(game, observer).tolist())
        game.step("keep")
        after = (game.events(observer), game.view(observer), observe(game, observer).tolist())
        seen.append((during, after))
    assert seen[0] == seen[1]
    assert seen[0][0][:2] == (Phase.PLAY_DRAWN, 0)


@pytest.mark.parametrize(("drawn", "playable"), [("Y7", True), ("B9", False)])
def test_rule_3_4_a_player_may_draw_while_holding_a_playable_card(drawn, playable):
    hand = ["R1", "G7", "W", "B2"]
    game = position(hands={0: list(hand)}, discard=["R7"], draw=[drawn])
    assert set(texts(game)) == {"play R1", "play G7", "play W", "draw"}
    game.step("draw")
    assert game.hands[0] == hand + [drawn]
    if not playable:  # no other card may be played either: a forced keep
        assert (game.phase, game.current_player, texts(game)) == (Phase.PLAY_DRAWN, 0, ["keep"])
        return
    assert texts(game) == [f"play {drawn}", "keep"]
    saved = game.to_dict()
    for other in ("play R1", "play G7", "play W", "draw"):  # no other card may be played after drawing
        with pytest.raises(IllegalActionError):
            game.step(other)
    assert game.to_dict() == saved
    game.step(f"play {drawn}")
    assert (game.top_card, game.active_color, game.current_player) == (drawn, "yellow", 1)
    assert game.hands[0] == hand


def test_rule_3_4_a_drawn_wild_may_be_played_and_its_color_chosen():
    game = position(hands={0: list(NO_MATCH)}, discard=["R7"], draw=["W"])
    play(game, ["draw", "play W"])
    assert (game.phase, game.current_player) == (Phase.CHOOSE_COLOR, 0)
    game.step("color red")
    assert (game.phase, game.current_player, game.active_color) == (Phase.PLAY, 1, "red")


@pytest.mark.parametrize("num_players", [3, 4])
def test_rule_3_4_after_drawing_the_turn_passes_in_the_direction_of_play(num_players):
    last = num_players - 1
    game = position(num_players=num_players, hands={0: list(NO_MATCH)}, discard=["R7"], draw=["R3"], direction=-1)
    play(game, ["draw", "keep"])
    assert game.current_player == last


# ---------------------------------------------------------------------------------------- 3.5
@pytest.mark.parametrize("slot", range(4))
@pytest.mark.parametrize("card", ["W", "W4"])
@pytest.mark.parametrize("edition", EDITION_NAMES)
def test_rule_3_5_wild_player_chooses_any_of_the_four_colors(edition, card, slot):
    ed = EDITIONS[edition]
    game = position(edition, hands={0: [card] + codes(edition, "1:1", "2:2")}, discard=codes(edition, "0:5"))
    game.step(f"play {card}")
    assert (game.phase, game.current_player, game.active_color) == (Phase.CHOOSE_COLOR, 0, ed.colors[0])
    assert texts(game) == [f"color {c}" for c in ed.colors]
    game.step(f"color {ed.colors[slot]}")  # slot 0 is the color already active: allowed
    assert (game.top_card, game.active_color) == (card, ed.colors[slot])
    assert trail(game)[1] == ("color", 0, None, ed.colors[slot])
    assert game.phase == (Phase.PLAY if card == "W" else Phase.CHALLENGE)
    assert game.current_player == 1


@pytest.mark.parametrize("edition", list(SPECIAL))
def test_rule_3_5_special_wild_player_chooses_the_color_too(edition):
    ed = EDITIONS[edition]
    special = SPECIAL[edition]
    game = position(edition, hands={0: [special] + codes(edition, "1:1", "2:2", "2:3")},
                    discard=codes(edition, "0:5"), draw=codes(edition, "0:9"))
    game.step(f"play {special}")
    if special == "WU":
        assert texts(game) == [f"give {ed.colors[1]}", f"give {ed.colors[2]}"]
        game.step(f"give {ed.colors[1]}")
    assert (game.phase, game.current_player) == (Phase.CHOOSE_COLOR, 0)
    assert texts(game) == [f"color {c}" for c in ed.colors]
    game.step(f"color {ed.colors[0]}")
    assert (game.top_card, game.active_color) == (special, ed.colors[0])
    assert (game.phase, game.current_player) == (Phase.PLAY, 1)


# ---------------------------------------------------------------------------------------- 3.6
RESHUFFLED = ["B1", "B2", "G3", "Y4", "Y8"]  # none of them matches R7


def test_rule_3_6_empty_draw_pile_reshuffles_the_discards_under_the_top_card():
    game = position(hands={0: list(NO_MATCH)}, discard=RESHUFFLED + ["R7"], draw=[], rest_to=3)
    twin = Game.from_dict(game.to_dict())
    assert game.draw_pile == []
    game.step("draw")
    events = trail(game)
    assert events[0] == ("reshuffle", None, None, len(RESHUFFLED))
    assert events[1][:2] == ("draw", 0) and events[1][3] == "turn"
    drawn = events[1][2]
    assert len(events) == 2
    assert game.discard_pile == ["R7"]
    assert sorted(game.draw_pile + [drawn]) == sorted(RESHUFFLED)
    assert game.hands[0] == NO_MATCH + [drawn]
    assert (game.phase, game.current_player, texts(game)) == (Phase.PLAY_DRAWN, 0, ["keep"])  # none plays on R7
    twin.step("draw")  # the reshuffle uses the game's own generator: same state, same order
    assert twin.draw_pile == game.draw_pile and twin.hands == game.hands


def test_rule_3_6_a_draw_two_reshuffles_in_the_middle_of_its_draws():
    game = position(hands={0: ["RD", "G2", "G3"]}, discard=["B1", "B2", "R7"], draw=["Y9"], rest_to=3)
    game.step("play RD")
    events = trail(game)
    assert events[:3] == [("play", 0, "RD", None), ("draw", 1, "Y9", "draw_two"), ("reshuffle", None, None, 3)]
    assert events[3][:2] == ("draw", 1) and events[3][2] in {"B1", "B2", "R7"}
    assert events[4:] == [("skip", 1, None, None)]
    assert game.discard_pile == ["RD"]
    assert sorted(game.draw_pile + [events[3][2]]) == ["B1", "B2", "R7"]
    assert game.hands[1][-2:] == ["Y9", events[3][2]]
    assert game.current_player == 2


@pytest.mark.parametrize("hand", [list(NO_MATCH), ["R1", "G2"]])
def test_rule_3_6_with_nothing_left_to_draw_the_draw_is_skipped_and_the_turn_passes(hand):
    game = position(hands={0: hand}, discard=["R7"], draw=[], rest_to=3)
    hands = game.hands
    if hand == NO_MATCH:
        assert texts(game) == ["draw"]  # a forced turn
    game.step("draw")
    assert trail(game) == [("pass", 0, None, None)]
    assert game.hands == hands
    assert (game.draw_pile, game.discard_pile) == ([], ["R7"])
    assert (game.phase, game.current_player) == (Phase.PLAY, 1)


def test_rule_3_6_a_draw_two_draws_what_there_is_and_then_passes():
    game = position(hands={0: ["RD", "G2", "G3"]}, discard=["R7"], draw=[], rest_to=3)
    game.step("play RD")
    assert trail(game) == [
        ("play", 0, "RD", None), ("reshuffle", None, None, 1), ("draw", 1, "R7", "draw_two"),
        ("pass", 1, None, None), ("skip", 1, None, None),
    ]
    assert (game.draw_pile, game.discard_pile) == ([], ["RD"])
    assert game.hands[1][-1] == "R7"
    assert (game.phase, game.current_player) == (Phase.PLAY, 2)


# ---------------------------------------------------------------------------------------- 3.7
DRAWS = ["Y1", "Y2", "B3", "B4", "B5", "B6"]


@pytest.mark.parametrize("catcher", [1, 2, 3])
def test_rule_3_7_catch_comes_before_the_draw_two_victim_draws(catcher):
    game = position(hands={0: ["RD", "G2"]}, discard=["R7"], draw=DRAWS)
    game.step("play RD")
    assert (game.phase, game.current_player) == (Phase.UNO, 0)
    game.step("no-uno")
    for seat in range(1, catcher):  # offered in turn order, starting with the victim
        assert (game.phase, game.current_player) == (Phase.CATCH, seat)
        game.step("no-catch")
    assert (game.phase, game.current_player) == (Phase.CATCH, catcher)
    game.step("catch")
    assert trail(game) == (
        [("play", 0, "RD", None), ("no_uno", 0, None, None)]
        + [("no_catch", s, None, None) for s in range(1, catcher)]
        + [("catch", catcher, None, 0), ("draw", 0, "Y1", "uno_penalty"), ("draw", 0, "Y2", "uno_penalty"),
           ("draw", 1, "B3", "draw_two"), ("draw", 1, "B4", "draw_two"), ("skip", 1, None, None)]
    )
    assert game.hands[0] == ["G2", "Y1", "Y2"]
    assert game.hands[1][-2:] == ["B3", "B4"]
    assert (game.phase, game.current_player) == (Phase.PLAY, 2)


def test_rule_3_7_uncaught_missed_call_then_the_draw_two_acts():
    game = position(hands={0: ["RD", "G2"]}, discard=["R7"], draw=DRAWS)
    play(game, ["play RD", "no-uno", "no-catch", "no-catch", "no-catch"])
    assert types(game) == ["play", "no_uno", "no_catch", "no_catch", "no_catch", "draw", "draw", "skip"]
    assert game.hands[0] == ["G2"]
    assert game.hands[1][-2:] == ["Y1", "Y2"]
    assert game.current_player == 2


@pytest.mark.parametrize("uno_call", ["explicit", "auto"])
def test_rule_3_7_uno_call_comes_after_the_color_choice(uno_call):
    game = position(hands={0: ["W", "G2"]}, discard=["R7"], uno_call=uno_call)
    game.step("play W")
    assert (game.phase, game.current_player) == (Phase.CHOOSE_COLOR, 0)
    game.step("color green")
    if uno_call == "explicit":
        assert (game.phase, game.current_player) == (Phase.UNO, 0)
        game.step("uno")
    assert trail(game) == [("play", 0, "W", None), ("color", 0, None, "green"), ("uno", 0, None, None)]
    assert (game.phase, game.current_player, game.uno_called[0]) == (Phase.PLAY, 1, True)


def test_rule_3_7_w4_color_then_call_then_catch_window_then_the_challenge_decision():
    game = position(hands={0: ["W4", "G2"]}, discard=["R7"], draw=DRAWS)
    play(game, ["play W4", "color green", "no-uno"])
    for seat in (1, 2):
        assert (game.phase, game.current_player) == (Phase.CATCH, seat)
        game.step("no-catch")
    game.step("catch")  # seat 3
    assert (game.phase, game.current_player) == (Phase.CHALLENGE, 1)
    game.step("accept")
    assert trail(game) == [
        ("play", 0, "W4", None), ("color", 0, None, "green"), ("no_uno", 0, None, None),
        ("no_catch", 1, None, None), ("no_catch", 2, None, None), ("catch", 3, None, 0),
        ("draw", 0, "Y1", "uno_penalty"), ("draw", 0, "Y2", "uno_penalty"), ("accept", 1, None, None),
        ("draw", 1, "B3", "draw_four"), ("draw", 1, "B4", "draw_four"), ("draw", 1, "B5", "draw_four"),
        ("draw", 1, "B6", "draw_four"), ("skip", 1, None, None),
    ]
    assert (game.phase, game.current_player, game.active_color) == (Phase.PLAY, 2, "green")


@pytest.mark.parametrize("num_players", [3, 4])
def test_rule_3_7_reverse_turns_before_the_catch_window(num_players):
    last = num_players - 1
    game = position(num_players=num_players, hands={0: ["RR", "G2"]}, discard=["R7"])
    play(game, ["play RR", "no-uno"])
    assert game.direction == -1
    order = []
    while game.phase == Phase.CATCH:
        order.append(game.current_player)
        game.step("no-catch")
    assert order == list(range(last, 0, -1))
    assert types(game) == ["play", "reverse", "no_uno"] + ["no_catch"] * last
    assert (game.phase, game.current_player) == (Phase.PLAY, last)


def test_rule_3_7_skip_catch_window_comes_before_the_skip():
    game = position(hands={0: ["RS", "G2"]}, discard=["R7"], draw=DRAWS)
    play(game, ["play RS", "no-uno"])
    assert (game.phase, game.current_player) == (Phase.CATCH, 1)  # the seat about to be skipped
    play(game, ["no-catch", "catch"])
    assert types(game) == ["play", "no_uno", "no_catch", "catch", "draw", "draw", "skip"]
    assert trail(game)[-1] == ("skip", 1, None, None)
    assert (game.phase, game.current_player) == (Phase.PLAY, 2)


@pytest.mark.parametrize(("card", "drawn"), [("RD", 2), ("W4", 4)])
def test_rule_3_7_going_out_the_victim_draws_then_the_round_ends_without_a_call(card, drawn):
    game = position(hands={0: [card]}, discard=["R7"], draw=DRAWS)
    game.step(f"play {card}")
    reason = "draw_two" if card == "RD" else "draw_four"
    assert trail(game) == (
        [("play", 0, card, None)]
        + [("draw", 1, c, reason) for c in DRAWS[:drawn]]
        + [("round_end", 0, None, game.round_points[0])]
    )
    assert game.phase == Phase.ROUND_OVER and game.round_winner == 0
    assert game.hands[1][-drawn:] == DRAWS[:drawn]


def test_rule_3_7_greyskull_draws_come_before_the_uno_call():
    edition = "masters_of_the_universe"
    draws = ["B1", "B3", "B4", "B5", "B6", "B7", "G1", "G2", "G3"]
    game = position(edition, hands={0: ["WG", "B2"]}, discard=["R7"], draw=draws)
    play(game, ["play WG", "color green"])
    assert (game.phase, game.current_player) == (Phase.UNO, 0)
    game.step("uno")
    expected = [("play", 0, "WG", None), ("color", 0, None, "green")]
    cards = iter(draws)
    for seat in (1, 2, 3):
        expected += [("greyskull", seat, None, None)] + [("draw", seat, next(cards), "greyskull") for _ in range(3)]
    assert trail(game) == expected + [("uno", 0, None, None)]
    assert (game.phase, game.current_player) == (Phase.PLAY, 1)


def test_rule_3_7_giveaway_then_color_then_uno_call():
    game = position("monster_high", hands={0: ["WU", "B2", "G3"]}, discard=["P7"])
    play(game, ["play WU", "give green", "color pink"])
    assert (game.phase, game.current_player) == (Phase.UNO, 0)
    game.step("uno")
    assert trail(game) == [("play", 0, "WU", None), ("give", 0, "G3", 1), ("color", 0, None, "pink"),
                           ("uno", 0, None, None)]
    assert game.hands[0] == ["B2"]
    assert (game.phase, game.current_player) == (Phase.PLAY, 1)


def test_rule_3_7_king_pig_color_then_deal_then_uno_call():
    game = position("angry_birds", hands={0: ["WK", "R2"]}, discard=["G7"], draw=["B5", "Y5"])
    play(game, ["play WK", "color yellow"])
    assert (game.phase, game.current_player) == (Phase.UNO, 0)
    game.step("no-uno")
    assert trail(game)[:5] == [("play", 0, "WK", None), ("color", 0, None, "yellow"),
                               ("king_pig", 1, "B5", None), ("king_pig", 2, "Y5", None), ("no_uno", 0, None, None)]
    assert (game.phase, game.current_player) == (Phase.CATCH, 1)
