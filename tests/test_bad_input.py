"""Bad input raises the typed error whose message says what is allowed, and changes nothing.

Covers ``Game.step`` (illegal, out-of-range, wrongly typed and unreadable actions), ``Rules``
options, stacked decks, the dealer, the round/game flow, and ``Game.from_dict``.
"""

from __future__ import annotations

import copy
import json
import random

import pytest

from uno_env.core import (
    EDITIONS,
    NUM_ACTIONS,
    ActionTextError,
    CardCodeError,
    DeckError,
    Game,
    GameFlowError,
    IllegalActionError,
    Phase,
    Rules,
    RulesError,
    StateError,
    UnknownOptionError,
    stacked_deck,
)


def raises_exactly(error: type[Exception], call, *args, match: str, **kwargs) -> Exception:
    """Call and require exactly ``error`` (not a subclass or parent) with a matching message."""
    with pytest.raises(error, match=match) as info:
        call(*args, **kwargs)
    assert info.type is error, f"{info.type.__name__} raised, {error.__name__} expected"
    return info.value


def play_until(game: Game, done, seed: int = 0, limit: int = 20_000) -> Game:
    """Random legal play (next_round included) until ``done(game)``."""
    rng = random.Random(seed)
    for _ in range(limit):
        if done(game):
            return game
        if game.is_round_over:
            game.next_round()
        else:
            game.step(rng.choice(game.legal_actions()))
    raise AssertionError("condition never reached")


@pytest.fixture
def game() -> Game:
    """Classic, 4 players, in the play phase (seed 1: seat 1 holds R3 and RR on R5, and draw)."""
    game = Game(Rules(num_players=4), seed=1)
    assert game.phase == Phase.PLAY
    return game


# ---------------------------------------------------------------------------- actions
def test_seed_1_fixture_position(game):
    # The position the illegal-action tests below rely on.
    assert game.current_player == 1 and game.top_card == "R5"
    assert [str(a) for a in game.legal_actions()] == ["play R3", "play RR", "draw"]


@pytest.mark.parametrize("action", ["challenge", "accept", "uno", "no-uno", "catch", "no-catch", "keep",
                                    "color red", "give blue", "swap +1", "play W4", "play G4", "play R7"])
def test_legal_text_not_legal_now_is_rejected_and_changes_nothing(game, action):
    before = game.to_dict()
    raises_exactly(IllegalActionError, game.step, action,
                   match=r"not legal now \(phase play, seat 1\); legal: play R3, play RR, draw$")
    action_id = int(game.parse_action(action))
    raises_exactly(IllegalActionError, game.step, action_id, match="legal: play R3, play RR, draw")
    raises_exactly(IllegalActionError, game.step, game.action(action_id), match="legal: play R3, play RR, draw")
    assert game.to_dict() == before
    game.step("play R3")  # the game goes on normally
    assert game.current_player == 2


@pytest.mark.parametrize("action_id", [NUM_ACTIONS, -1, 10**9, -(10**9)])
def test_action_id_out_of_range_is_rejected(game, action_id):
    before = game.to_dict()
    raises_exactly(IllegalActionError, game.step, action_id, match=rf"action ids are 0\.\.{NUM_ACTIONS - 1}")
    raises_exactly(IllegalActionError, game.action, action_id, match=rf"action ids are ints 0\.\.{NUM_ACTIONS - 1}")
    assert game.to_dict() == before


@pytest.mark.parametrize("action", [3.5, None, True, False, b"draw", [55], {"id": 55}, 55.0])
def test_action_of_a_wrong_type_is_rejected(game, action):
    before = game.to_dict()
    raises_exactly(ActionTextError, game.step, action, match="an action is an Action, an int id or its text")
    assert game.to_dict() == before


def _foreign_scalars() -> list[tuple[str, object, bool]]:
    """(label, value, is an integer scalar) for numpy's and, where installed, torch's spellings of an id."""
    import numpy as np

    cases: list[tuple[str, object, bool]] = [
        ("np.int64", np.int64(0), True), ("np.array(0)", np.array(0), True),
        ("np.array([0])", np.array([0]), False), ("np.array(0.0)", np.array(0.0), False),
        ("np.float32", np.float32(0), False), ("np.array([0, 1])", np.array([0, 1]), False),
        ("np.bool_", np.bool_(True), False), ("np.array(True)", np.array(True), False)]
    try:
        import torch
    except ImportError:
        return cases
    return cases + [("torch.tensor(0)", torch.tensor(0), True), ("torch.tensor(0.0)", torch.tensor(0.0), False),
                    ("torch.tensor([0])", torch.tensor([0]), False), ("torch.tensor([0, 1])", torch.tensor([0, 1]), False),
                    ("torch.tensor(True)", torch.tensor(True), False)]


@pytest.mark.parametrize(("label", "value", "integral"), _foreign_scalars(), ids=[c[0] for c in _foreign_scalars()])
def test_an_integer_scalar_of_numpy_or_torch_is_an_id_and_anything_else_is_refused(game, label, value, integral):
    """One rule for every library's numbers: an integer scalar (operator.index accepts it) is an action id;
    a float, a bool or an array of ids is refused with ActionTextError, the game unchanged."""
    legal = [int(a) for a in game.legal_actions()]
    before = game.to_dict()
    if integral:
        as_id = legal[0]  # the same spelling, with a legal id
        game.step(type(value)(as_id) if label == "np.int64" else (value * 0 + as_id))
        assert game.to_dict() != before
    else:
        raises_exactly(ActionTextError, game.step, value, match="an action is an Action, an int id or its text")
        assert game.to_dict() == before


def test_the_probes_spellings_of_id_55_get_one_typed_answer():
    """Issue 27.7: ``np.array([55])``, ``np.array(55.0)`` and ``torch.tensor(55.0)`` raised TypeError while
    ``torch.tensor(55)`` was accepted. Now every array of ids (numpy or torch, any length) and every float
    is an ActionTextError that changes nothing, and every integer scalar is id 55 (``draw``)."""
    import numpy as np

    game = Game(Rules(num_players=2), seed=1)
    drawn = game.clone()
    drawn.step(55)
    refused: list[object] = [np.array([55]), np.array(55.0), np.float64(55.0), np.array([[55]])]
    as_id: list[object] = [55, np.int64(55), np.array(55), np.uint8(55)]
    try:
        import torch
    except ImportError:
        pass
    else:
        refused += [torch.tensor(55.0), torch.tensor([55])]
        as_id += [torch.tensor(55), torch.tensor(55, dtype=torch.uint8)]
    before = game.to_dict()
    for value in refused:
        raises_exactly(ActionTextError, game.step, value, match="an action is an Action, an int id or its text")
    assert game.to_dict() == before
    for value in as_id:
        twin = game.clone()
        twin.step(value)  # type: ignore[arg-type]
        assert twin.to_dict() == drawn.to_dict(), value


@pytest.mark.parametrize("action", [True, 1.0, "1", None])
def test_game_action_takes_only_int_ids(game, action):
    raises_exactly(IllegalActionError, game.action, action, match=r"action ids are ints 0\.\.")


@pytest.mark.parametrize(
    ("text", "allowed"),
    [
        ("play", r"actions are: play <card> \(e\.g\. play R7, play W4\), draw, keep, color <red\|yellow\|green\|blue>"),
        ("", "actions are: play <card>"),
        ("   ", "actions are: play <card>"),
        ("colour red", "actions are: play <card>"),
        ("draw draw", "actions are: play <card>"),
        ("play R7 now", "actions are: play <card>"),
        ("give", "actions are: play <card>"),
        ("pass", "actions are: .*uno, no-uno, catch, no-catch"),
        ("play X9", r"cards are a color letter \(R, Y, G, B\) then 0-9, S, R or D, or W, W4"),
        ("play WU", r"cards are a color letter \(R, Y, G, B\)"),
        ("play R10", "cards are a color letter"),
        ("color orange", "classic colors are red, yellow, green, blue"),
        ("give purple", "classic colors are red, yellow, green, blue"),
        ("swap +0", r"swap takes a seat offset \+1\.\.\+9"),
        ("swap +10", r"swap takes a seat offset \+1\.\.\+9"),
        ("swap left", r"swap takes a seat offset \+1\.\.\+9"),
    ],
)
def test_unparsable_action_text_says_what_is_allowed(game, text, allowed):
    before = game.to_dict()
    raises_exactly(ActionTextError, game.step, text, match=allowed)
    raises_exactly(ActionTextError, game.parse_action, text, match=allowed)
    assert game.to_dict() == before
    assert [str(a) for a in game.legal_actions()] == ["play R3", "play RR", "draw"]


def test_unparsable_text_names_the_edition_colors_and_letters():
    game = Game(Rules(edition="monster_high", num_players=3), seed=0)
    raises_exactly(ActionTextError, game.step, "color red", match="monster_high colors are blue, green, pink, yellow")
    raises_exactly(ActionTextError, game.step, "play R7", match=r"\(B, G, P, Y\) then 0-9, S, R or D, or W, W4, WU")
    raises_exactly(ActionTextError, game.step, "play", match=r"e\.g\. play B7")


# ---------------------------------------------------------------------------- rules
@pytest.mark.parametrize(
    ("options", "allowed"),
    [
        ({"edition": "uno_flip"}, "unknown edition 'uno_flip'; editions are classic, monster_high, angry_birds, "
                                  "masters_of_the_universe"),
        ({"edition": None}, "editions are classic"),
        ({"players": 4}, "unknown rule option.* players; options are edition, num_players, target_score"),
        ({"house_rules": True, "stack": True}, "unknown rule option.*house_rules, stack; options are"),
        ({"num_players": 1}, "num_players must be an int from 2 to 10, got 1"),
        ({"num_players": 11}, "num_players must be an int from 2 to 10, got 11"),
        ({"num_players": "4"}, "num_players must be an int from 2 to 10, got '4'"),
        ({"num_players": True}, "num_players must be an int from 2 to 10, got True"),
        ({"num_players": 4.0}, "num_players must be an int from 2 to 10"),
        ({"target_score": 0}, "target_score must be an int from 1 to 1,000,000, got 0"),
        ({"target_score": -500}, "target_score must be an int from 1 to 1,000,000"),
        ({"target_score": True}, "target_score must be an int from 1 to 1,000,000, got True"),
        ({"target_score": "500"}, "target_score must be an int from 1 to 1,000,000"),
        ({"uno_call": "sometimes"}, "uno_call must be one of explicit, auto, got 'sometimes'"),
        ({"uno_call": True}, "uno_call must be one of explicit, auto"),
        ({"scoring": "highest"}, "scoring must be one of standard, lowest, got 'highest'"),
        ({"allow_bluff": "yes"}, "allow_bluff must be True or False, got 'yes'"),
        ({"allow_bluff": 1}, "allow_bluff must be True or False, got 1"),
        ({"allow_bluff": None}, "allow_bluff must be True or False"),
        ({"first_dealer": 4}, r"first_dealer must be None or a seat 0\.\.3, got 4"),
        ({"first_dealer": True}, r"first_dealer must be None or a seat 0\.\.3"),
        ({"stacking": "on"}, "stacking must be True or False"),
        ({"teams": 1}, "teams must be True or False"),
        ({"teams": True, "num_players": 5}, "teams needs an even number of players from 4 to 10, got 5"),
        ({"teams": True, "num_players": 2}, "teams needs an even number of players from 4 to 10"),
        ({"teams": True, "elimination": True}, "teams and elimination cannot be combined"),
        ({"elimination": True, "scoring": "lowest"}, "leave scoring 'standard'"),
    ],
)
def test_bad_rule_option_says_what_is_allowed(options, allowed):
    # An unknown keyword is also a TypeError, Python's error for an unexpected argument.
    expected = UnknownOptionError if allowed.startswith("unknown rule option") else RulesError
    raises_exactly(expected, Rules, match=allowed, **options)


def test_rules_from_dict_needs_a_mapping_of_known_options():
    raises_exactly(RulesError, Rules.from_dict, ["classic"], match="rules must be a mapping of options")
    raises_exactly(UnknownOptionError, Rules.from_dict, {"edition": "classic", "colour": "red"}, match="options are")
    assert Rules.from_dict(Rules(num_players=3).to_dict()) == Rules(num_players=3)


def test_rules_replace_validates_again():
    rules = Rules(num_players=4)
    raises_exactly(RulesError, rules.replace, match="num_players must be an int from 2 to 10", num_players=12)
    assert rules.num_players == 4


def test_game_needs_a_rules_object():
    with pytest.raises(TypeError, match="rules must be a uno_env.core.Rules, got str"):
        Game("classic")
    with pytest.raises(TypeError, match="got dict"):
        Game({"edition": "classic"})


# ---------------------------------------------------------------------------- decks and dealer
def classic_deck() -> list[str]:
    return stacked_deck("classic", 4, 0)


def test_a_stacked_deck_with_a_bad_card_code_names_the_edition_cards():
    deck = classic_deck()
    deck[5] = "X1"
    raises_exactly(CardCodeError, Game, Rules(), deck=deck, dealer=0,
                   match=r"'X1' is not a card of edition 'classic'; cards are a color letter \(R, Y, G, B\)")
    deck[5] = "WU"  # a Monster High card in a classic deck
    raises_exactly(CardCodeError, Game, Rules(), deck=deck, dealer=0, match="'WU' is not a card of edition 'classic'")


@pytest.mark.parametrize(
    ("change", "allowed"),
    [
        (lambda d: d[:-1], r"exactly the 108 cards of 'classic' \(got 107\); wrong counts: "),
        (lambda d: d + ["R1"], r"\(got 109\); wrong counts: R1 x3 \(want 2\)"),
        (lambda d: [c if c != "B0" else "B1" for c in d], r"\(got 108\); wrong counts: B0 x0 \(want 1\), B1 x3 \(want 2\)"),
        (lambda d: [], r"\(got 0\)"),
    ],
)
def test_a_stacked_deck_with_a_wrong_count_or_missing_card_is_rejected(change, allowed):
    raises_exactly(DeckError, Game, Rules(), deck=change(classic_deck()), dealer=0, match=allowed)


def test_a_stacked_deck_must_be_a_list_of_codes():
    raises_exactly(DeckError, Game, Rules(), deck="R1 R2 R3", dealer=0, match="a deck is a list of card codes, top first")


def test_a_special_edition_deck_needs_its_special_wilds():
    deck = stacked_deck("classic", 4, 0)
    # Angry Birds shares classic's letters, so a classic deck reads but lacks the 4 King Pigs.
    raises_exactly(DeckError, Game, Rules(edition="angry_birds"), deck=deck, dealer=0,
                   match=r"exactly the 112 cards of 'angry_birds' \(got 108\); wrong counts: WK x0 \(want 4\)")


def test_stacked_deck_asking_for_too_many_copies():
    raises_exactly(DeckError, stacked_deck, "classic", 4, 0, hands={1: ["R0", "R0"]},
                   match="asks for more R0 cards than the deck holds")


@pytest.mark.parametrize("dealer", [4, -1, True, "0", 1.0])
def test_dealer_out_of_range_says_which_seats(dealer):
    with pytest.raises(RulesError, match=r"dealer must be a seat 0\.\.3, got "):
        Game(Rules(num_players=4), deck=classic_deck(), dealer=dealer)


# ---------------------------------------------------------------------------- flow
def test_next_round_mid_round_is_a_flow_error_and_changes_nothing(game):
    before = game.to_dict()
    raises_exactly(GameFlowError, game.next_round,
                   match=r"next_round\(\) is allowed only when a round is over and the game is not \(phase is play\)")
    raises_exactly(GameFlowError, game.next_round, deck=classic_deck(), match="phase is play")
    assert game.to_dict() == before


def test_step_when_the_round_is_over_asks_for_next_round():
    game = play_until(Game(Rules(num_players=3, target_score=5000), seed=2), lambda g: g.is_round_over)
    assert not game.is_game_over
    before = game.to_dict()
    for action in ("draw", 55, "play R1", "uno"):
        raises_exactly(IllegalActionError, game.step, action, match=r"the round is over; call next_round\(\)")
    assert game.to_dict() == before
    # A bad deck for the next round changes nothing either.
    raises_exactly(DeckError, game.next_round, deck=classic_deck()[:-1], match="exactly the 108 cards")
    assert game.to_dict() == before
    game.next_round()
    assert game.round_number == 2 and game.phase != Phase.ROUND_OVER


def test_step_and_next_round_after_the_game_is_over():
    game = play_until(Game(Rules(num_players=2, target_score=1), seed=3), lambda g: g.is_game_over)
    before = game.to_dict()
    assert game.legal_actions() == []
    for action in ("draw", 55, "play W", "accept"):
        raises_exactly(IllegalActionError, game.step, action, match="is not legal: the game is over")
    raises_exactly(GameFlowError, game.next_round, match=r"\(the game is over\)")
    assert game.to_dict() == before


def test_determinize_needs_a_seat(game):
    before = game.to_dict()
    for seat in (4, -1, True, "0"):
        with pytest.raises(ValueError, match=r"seat must be 0\.\.3"):
            game.determinize(seat, 0)
    assert game.to_dict() == before


# ---------------------------------------------------------------------------- from_dict
@pytest.fixture
def saved(game) -> dict:
    return json.loads(json.dumps(game.to_dict()))


def load_fails(data, match: str) -> None:
    kept = copy.deepcopy(data)
    raises_exactly(StateError, Game.from_dict, data, match=match)
    assert data == kept, "from_dict changed its input"


@pytest.mark.parametrize("data", [[], None, "{}", 5, ("format", "version")])
def test_from_dict_needs_a_mapping(data):
    load_fails(data, "invalid saved game: top level: must be a mapping, got ")


def test_from_dict_names_a_missing_key(saved):
    for key in list(saved):
        if key == "log":
            continue
        data = {k: v for k, v in saved.items() if k != key}
        load_fails(data, rf"keys: missing \['{key}'\], unknown \[\]; expected \['format', 'version'")
    Game.from_dict({k: v for k, v in saved.items() if k != "log"})  # the log is optional


def test_from_dict_names_an_unknown_key(saved):
    load_fails({**saved, "colour": "red"}, r"keys: missing \[\], unknown \['colour'\]")


@pytest.mark.parametrize(("key", "value"), [("version", 3), ("version", "1"), ("format", "uno_env.save")])
def test_from_dict_wrong_format_or_version(saved, key, value):
    load_fails({**saved, key: value}, "format/version: expected 'uno_env.game' version 1")


def test_from_dict_a_card_duplicated_or_missing(saved):
    duplicated = copy.deepcopy(saved)
    hand = duplicated["hands"][0]
    hand[0] = next(c for c in duplicated["hands"][1] if c != hand[0])
    load_fails(duplicated, r"cards: hands and piles must hold exactly the 108 cards of the deck, once each")
    missing = copy.deepcopy(saved)
    missing["draw_pile"].pop()
    load_fails(missing, "exactly the 108 cards of the deck")
    extra = copy.deepcopy(saved)
    extra["discard_pile"].insert(0, "R1")
    load_fails(extra, "exactly the 108 cards of the deck")
    bad_code = copy.deepcopy(saved)
    bad_code["hands"][2][0] = "R11"
    load_fails(bad_code, r"hands\[2\]: 'R11' is not a card of edition 'classic'")


@pytest.mark.parametrize("phase", ["thinking", "PLAY", None, 0])
def test_from_dict_bad_phase(saved, phase):
    load_fails({**saved, "phase": phase}, r"phase: must be one of \['play', 'play_drawn', 'choose_color'")


@pytest.mark.parametrize("seat", [4, -1, None, "1", True, 1.0])
def test_from_dict_current_player_out_of_range(saved, seat):
    load_fails({**saved, "current_player": seat}, r"current_player: must be a seat 0\.\.3, got ")


def test_from_dict_pending_card_not_on_top(saved):
    data = copy.deepcopy(saved)
    data["pending"].update(card=data["hands"][0][0], player=0)
    assert data["pending"]["card"] != data["discard_pile"][-1]
    load_fails(data, "pending.card: must be the top card of the discard pile")
    data = copy.deepcopy(saved)
    data["pending"].update(card=data["discard_pile"][-1], player=None)
    load_fails(data, "pending: card and player must both be set or both be null")


@pytest.mark.parametrize("state", [[3, [1, 2, 3], None], "abc", None, [3, "x", None], [3, [0] * 625], []])
def test_from_dict_bad_rng_state(saved, state):
    load_fails({**saved, "rng_state": state}, "rng_state: not a random.Random state")


def test_from_dict_catch_phase_inconsistent():
    game = play_until(Game(Rules(num_players=4), seed=5), lambda g: g.phase == Phase.CATCH)
    good = json.loads(json.dumps(game.to_dict()))
    assert Game.from_dict(good).to_dict() == game.to_dict()
    offender = good["pending"]["player"]
    wrong_seat = {**good, "current_player": offender}
    load_fails(wrong_seat, "phase catch: needs an uncalled one-card player and the seat offered the catch")
    called = copy.deepcopy(good)
    called["uno_called"][offender] = True
    load_fails(called, "phase catch: needs an uncalled one-card player")
    not_started = copy.deepcopy(good)
    not_started["pending"]["catch_index"] = 0
    load_fails(not_started, "phase catch: needs an uncalled one-card player")
    no_card = copy.deepcopy(good)
    no_card["pending"].update(card=None, player=None)
    load_fails(no_card, "phase catch")


def test_from_dict_known_cards_not_in_the_targets_hand(saved):
    data = copy.deepcopy(saved)
    absent = next(c for c in data["hands"][1] if c not in data["hands"][0])
    data["known"] = [{"observer": 1, "target": 0, "cards": [absent]}]
    load_fails(data, rf"known: seat 1's knowledge of seat 0: {absent} is not \(often enough\) in seat 0's hand")
    twice = copy.deepcopy(saved)
    card = twice["hands"][0][0]
    twice["known"] = [{"observer": 2, "target": 0, "cards": [card] * (twice["hands"][0].count(card) + 1)}]
    load_fails(twice, "is not \\(often enough\\) in seat 0's hand")
    itself = copy.deepcopy(saved)
    itself["known"] = [{"observer": 0, "target": 0, "cards": [itself["hands"][0][0]]}]
    load_fails(itself, "observer and target must differ")


def test_from_dict_real_known_cards_load():
    # The same check passes on knowledge the engine made itself (a shown hand in a challenge).
    game = play_until(Game(Rules(num_players=3), seed=11), lambda g: any(e[0] == "show" for e in g.log))
    data = json.loads(json.dumps(game.to_dict()))
    assert data["known"]
    assert Game.from_dict(data).to_dict() == data


@pytest.mark.parametrize(
    ("key", "value", "allowed"),
    [
        ("rules", {"edition": "classic", "num_players": 11}, "rules: num_players must be an int from 2 to 10"),
        ("rules", "classic", "rules: rules must be a mapping"),
        ("direction", 0, "direction: must be 1 or -1, got 0"),
        ("active_color", "orange", r"active_color: must be one of \['red', 'yellow', 'green', 'blue'\] or null"),
        ("hands", "R1 R2", "hands: must be a list of 4 hands"),
        ("scores", [0, 0, -1, 0], "scores: must be a list of 4 non-negative ints"),
        ("uno_called", [True, False, False, False], "uno_called: only a seat holding exactly one card"),
        ("dealer", 9, r"dealer: must be a seat 0\.\.3"),
        ("round", 0, "round: must be an int >= 1"),
        ("log", [["nonsense", 0, None, None]], r"log\[0\]: must be \[type, seat, card, other\]"),
        ("known", {"observer": 1}, "known: must be a list"),
        ("pending", {}, "pending: must be a mapping with keys"),
        ("eliminated", [True, False, False, False], "seats leave only under the elimination rule"),
    ],
)
def test_from_dict_other_fields_name_the_field(saved, key, value, allowed):
    load_fails({**saved, key: value}, allowed)


def test_from_dict_of_every_edition_rejects_another_editions_cards():
    for name in EDITIONS:
        game = Game(Rules(edition=name, num_players=3), seed=4)
        data = json.loads(json.dumps(game.to_dict()))
        assert Game.from_dict(data).to_dict() == data
        other = "WG" if name != "masters_of_the_universe" else "WU"
        data["hands"][0][0] = other
        load_fails(data, rf"hands\[0\]: '{other}' is not a card of edition '{name}'")
