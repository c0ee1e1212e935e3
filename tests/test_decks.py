"""Decks, card codes, card values and the action layout, per edition (RULES.md 1.2-1.4, 6.2)."""

from __future__ import annotations

from collections import Counter

import pytest

from uno_env.core import EDITIONS, NUM_ACTIONS, ActionTextError, CardCodeError, Game, Rules, action_texts
from uno_env.core.actions import action_table, parse_action

EDITION_NAMES = list(EDITIONS)

# RULES.md 1.2, written out independently of cards.py.
EXPECTED = {
    "classic": (("red", "yellow", "green", "blue"), "RYGB", None, 108),
    "monster_high": (("blue", "green", "pink", "yellow"), "BGPY", "WU", 112),
    "angry_birds": (("red", "yellow", "green", "blue"), "RYGB", "WK", 112),
    "masters_of_the_universe": (("blue", "red", "green", "purple"), "BRGP", "WG", 112),
}
SYMBOLS = "0123456789SRD"


def expected_deck_codes(edition: str) -> Counter[str]:
    """Rule 1.3 spelled out: per color one 0 and two each of 1-9, S, R, D; 4 W, 4 W4, 4 special."""
    _, letters, special, _ = EXPECTED[edition]
    cards: Counter[str] = Counter()
    for letter in letters:
        cards[letter + "0"] += 1
        for symbol in SYMBOLS[1:]:
            cards[letter + symbol] += 2
    cards["W"] += 4
    cards["W4"] += 4
    if special:
        cards[special] += 4
    return cards


def test_editions_are_the_four_of_rule_1_2():
    assert sorted(EDITIONS) == sorted(EXPECTED)


@pytest.mark.parametrize("edition", EDITION_NAMES)
def test_rule_1_2_edition_colors_letters_and_special_wild(edition):
    colors, letters, special, size = EXPECTED[edition]
    ed = EDITIONS[edition]
    assert ed.colors == colors
    assert ed.letters == letters
    assert ed.special_code == special
    assert ed.deck_size == size


@pytest.mark.parametrize("edition", EDITION_NAMES)
def test_rule_1_3_deck_composition(edition):
    ed = EDITIONS[edition]
    deck = Counter(ed.code(k) for k in ed.deck())
    assert deck == expected_deck_codes(edition)
    assert sum(deck.values()) == EXPECTED[edition][3]
    for letter in EXPECTED[edition][1]:
        per_color = {code: n for code, n in deck.items() if code[0] == letter and code not in ("W", "W4")}
        assert sum(per_color.values()) == 25


@pytest.mark.parametrize("edition", EDITION_NAMES)
@pytest.mark.parametrize("num_players", [2, 4, 10])
def test_rule_1_3_a_dealt_game_holds_exactly_the_deck(edition, num_players):
    game = Game(Rules(edition=edition, num_players=num_players), seed=num_players)
    cards = Counter(game.draw_pile + game.discard_pile)
    for hand in game.hands:
        cards.update(hand)
    assert cards == expected_deck_codes(edition)


@pytest.mark.parametrize("edition", EDITION_NAMES)
def test_rule_1_4_card_codes_use_the_edition_letters(edition):
    _, letters, special, _ = EXPECTED[edition]
    ed = EDITIONS[edition]
    expected = [letter + s for letter in letters for s in SYMBOLS] + ["W", "W4"] + ([special] if special else [])
    assert ed.all_codes() == expected
    for code in expected:
        kind = ed.kind(code)
        assert ed.code(kind) == code
        assert ed.kind(code.lower()) == kind  # codes are read case-insensitively
    for slot, letter in enumerate(letters):
        for rank, symbol in enumerate(SYMBOLS):
            assert ed.kind(letter + symbol) == slot * 13 + rank


@pytest.mark.parametrize("edition", EDITION_NAMES)
def test_rule_1_4_codes_of_other_editions_are_rejected(edition):
    ed = EDITIONS[edition]
    foreign_letters = set("RYGBP") - set(EXPECTED[edition][1])
    for letter in foreign_letters:
        with pytest.raises(CardCodeError, match="is not a card of edition"):
            ed.kind(letter + "7")
    for special in {"WU", "WK", "WG"} - {EXPECTED[edition][2]}:
        with pytest.raises(CardCodeError, match="W4"):
            ed.kind(special)
    for bad in ("", "R", "7", "RX", "R10", "W5", "WW", "X1"):
        if bad in ed.all_codes():
            continue
        with pytest.raises(CardCodeError):
            ed.kind(bad)


@pytest.mark.parametrize("edition", EDITION_NAMES)
def test_rule_6_2_card_values(edition):
    ed = EDITIONS[edition]
    symbol_value = 50 if edition == "angry_birds" else 20
    game = Game(Rules(edition=edition, num_players=2), seed=0)
    for code in ed.all_codes():
        if code[0] in EXPECTED[edition][1] and code[1:].isdigit():
            expected = int(code[1:])
        elif code.startswith("W"):
            expected = 50
        else:
            expected = symbol_value
        assert ed.card_value(ed.kind(code)) == expected, code
        assert game.card_value(code) == expected, code


def test_rule_6_2_angry_birds_every_non_number_card_is_50():
    ed = EDITIONS["angry_birds"]
    for code in ("RS", "YR", "GD", "BS", "W", "W4", "WK"):
        assert ed.card_value(ed.kind(code)) == 50
    assert ed.card_value(ed.kind("B9")) == 9
    assert ed.card_value(ed.kind("R0")) == 0


def test_rule_6_2_full_deck_totals():
    # numbers: 4 colors x 2 x (1+...+9) = 360; symbols 4 x 6 cards; wilds 8 or 12 at 50.
    totals = {name: sum(ed.card_value(k) for k in ed.deck()) for name, ed in EDITIONS.items()}
    assert totals == {
        "classic": 360 + 24 * 20 + 8 * 50,
        "monster_high": 360 + 24 * 20 + 12 * 50,
        "angry_birds": 360 + 24 * 50 + 12 * 50,
        "masters_of_the_universe": 360 + 24 * 20 + 12 * 50,
    }


# ---------------------------------------------------------------------------- action layout
SIMPLE = {55: "draw", 56: "keep", 65: "challenge", 66: "accept", 67: "uno", 68: "no-uno", 69: "catch",
          70: "no-catch"}


def test_action_layout_has_80_ids():
    assert NUM_ACTIONS == 80
    for ed in EDITIONS.values():
        assert len(action_texts(ed)) == 80
        assert [int(a) for a in action_table(ed)] == list(range(80))


@pytest.mark.parametrize("edition", EDITION_NAMES)
def test_action_layout_table(edition):
    colors, letters, special, _ = EXPECTED[edition]
    texts = action_texts(EDITIONS[edition])
    for slot, letter in enumerate(letters):
        for rank, symbol in enumerate(SYMBOLS):
            assert texts[slot * 13 + rank] == f"play {letter}{symbol}"
    assert texts[52] == "play W"
    assert texts[53] == "play W4"
    if special:
        assert texts[54] == f"play {special}"
    for slot, color in enumerate(colors):
        assert texts[57 + slot] == f"color {color}"
        assert texts[61 + slot] == f"give {color}"
    for action_id, text in SIMPLE.items():
        assert texts[action_id] == text
    assert texts[71:] == [f"swap +{k}" for k in range(1, 10)]
    assert len(set(texts)) == 80


@pytest.mark.parametrize("edition", EDITION_NAMES)
def test_action_text_round_trip(edition):
    ed = EDITIONS[edition]
    game = Game(Rules(edition=edition, num_players=3), seed=1)
    for action in action_table(ed):
        if edition == "classic" and action == 54:
            continue  # no special wild in classic: see the test below
        assert str(action) == action.text
        assert parse_action(ed, str(action)) == action
        assert str(parse_action(ed, str(action))) == str(action)
        assert parse_action(ed, "  " + str(action).upper() + " ") == action
        assert game.parse_action(str(action)) == action
        assert game.action(int(action)) == action
        assert str(game.action(int(action))) == str(action)


def test_classic_special_wild_id_has_a_placeholder_text_that_is_never_legal():
    ed = EDITIONS["classic"]
    assert action_texts(ed)[54] == "play -"
    with pytest.raises(ActionTextError):
        parse_action(ed, "play -")
    for special in ("WU", "WK", "WG"):
        with pytest.raises(ActionTextError, match="W4"):
            parse_action(ed, f"play {special}")

