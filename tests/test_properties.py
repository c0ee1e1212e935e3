"""Properties that must hold in every game, checked over many seeded random games.

Two random players drive the games:

* ``play_first``: plays a uniformly chosen playable card whenever it can and draws only when
  it cannot; uniform over every other decision (color, give, uno/no-uno, catch/no-catch,
  challenge/accept, play/keep, stack/accept, swap target). Its rounds end in tens to a few
  hundred decisions (Masters of the Universe at 7-10 players: up to a few thousand).
* ``uniform``: uniform over all legal actions, voluntary draws included. Its rounds can last
  tens of thousands of decisions, so those games are capped by a decision limit.

Over the four editions, the table sizes 2, 3, 4, 7 and 10 and an option mix (``uno_call``
explicit/auto, ``allow_bluff`` on/off, ``scoring`` standard/lowest, target 1 for one-round
games or 100-200 for whole games, and the section 7 variants: partners, elimination,
stacking, seven-zero, draw until playable), the tests check:

* after every step: the cards are conserved (hands + draw pile + discard pile = the deck),
  the phase, seat and hands are consistent, and the legal actions equal the ones recomputed
  here from the cards (rules 3.2-3.4, 4.5, 7.4); at every round end the scoring of rules
  6.3/6.4/7.1/7.2; every game ends (play_first: about a thousand games per edition, each
  edition and size getting ``PLAY_FIRST_BUDGET`` decisions);
* at every decision that is not a plain play (and every eighth play) of dozens of games:
  every legal action applies, as an Action, an id or its text, all alike; every other id and
  its text is rejected with ``IllegalActionError`` and changes nothing;
* the same seed gives the same game; a JSON save taken mid-game (in every phase) continues
  identically; ``clone()`` is independent; ``determinize(seat)`` keeps the seat's view,
  hand sizes and known cards and resamples the hidden cards; a seat's ``view`` does not
  change when cards hidden from it change.

The whole module takes about a minute on one core.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import Callable

import pytest
from helpers import position

from uno_env.core import (
    EDITIONS,
    NUM_ACTIONS,
    ActionTextError,
    Game,
    IllegalActionError,
    Phase,
    Rules,
    StateError,
    stacked_deck,
)

EDITION_NAMES = list(EDITIONS)
TABLE_SIZES = [2, 3, 4, 7, 10]
DRAW, ACCEPT, W4_ID = 55, 66, 53
FIXED_LEGAL = {
    Phase.CHOOSE_COLOR: [57, 58, 59, 60],
    Phase.UNO: [67, 68],
    Phase.CATCH: [69, 70],
}
SWAP_BASE = 70  # `swap +k` is id 70 + k

Policy = Callable[[Game, random.Random], object]


def play_first(game: Game, rng: random.Random) -> object:
    """Play a random playable card when possible, draw only when not; uniform otherwise."""
    legal = game.legal_actions()
    if game.phase == Phase.PLAY and len(legal) > 1:
        return rng.choice(legal[:-1])  # the last legal action in the play phase is `draw`
    return rng.choice(legal)


def uniform(game: Game, rng: random.Random) -> object:
    """Uniform over every legal action, voluntary draws included."""
    return rng.choice(game.legal_actions())


VARIANTS: list[dict[str, bool]] = [
    {}, {}, {}, {"stacking": True}, {"seven_zero": True}, {"draw_until_playable": True}, {"teams": True},
    {"elimination": True}, {"stacking": True, "seven_zero": True, "draw_until_playable": True},
]


def rules_for(edition: str, num_players: int, index: int, targets: tuple[int, ...] = (100, 150, 200)) -> Rules:
    """The option mix of game ``index``: base options drawn by a seeded generator, plus a variant."""
    pick = random.Random(index)
    variant = dict(VARIANTS[index % len(VARIANTS)])
    if variant.get("teams") and (num_players < 4 or num_players % 2):
        variant = {}
    scoring = "standard" if variant.get("elimination") else pick.choice(["standard", "lowest"])
    return Rules(
        edition=edition,
        num_players=num_players,
        target_score=pick.choice(targets),
        uno_call=pick.choice(["explicit", "auto"]),
        allow_bluff=pick.choice([True, False]),
        scoring=scoring,
        **variant,
    )


def seed_for(edition: str, num_players: int, index: int, salt: int = 0) -> int:
    return salt * 10_000_000 + EDITION_NAMES.index(edition) * 1_000_000 + num_players * 10_000 + index


# ---------------------------------------------------------------------------- invariants
def expected_legal_ids(game: Game, hand: list[str]) -> list[int]:
    """The legal action ids, recomputed from the current player's cards (rules 3.2-3.4, 4.5, 7.4)."""
    ed = game.edition
    rules = game.rules
    phase = game.phase
    seat = game.current_player
    assert seat is not None
    if phase in FIXED_LEGAL:
        return FIXED_LEGAL[phase]
    if phase == Phase.GIVE_AWAY:
        return sorted({61 + ed.letters.index(c[0]) for c in hand if not c.startswith("W")})
    if phase == Phase.SWAP:
        n = game.num_players
        return [SWAP_BASE + k for k in range(1, n) if not game.eliminated[(seat + k) % n]]
    if phase == Phase.STACK:
        return sorted({ed.kind(c) for c in hand if c.endswith("D") and len(c) == 2}) + [ACCEPT]
    assert game.active_color is not None
    active_letter = ed.letters[ed.colors.index(game.active_color)]
    holds_active = any(c[0] == active_letter and not c.startswith("W") for c in hand)
    if phase == Phase.CHALLENGE:
        stack_w4 = rules.stacking and "W4" in hand and (rules.allow_bluff or not holds_active)
        return ([W4_ID] if stack_w4 else []) + [65, 66]
    top = game.top_card
    top_symbol = None if top.startswith("W") else top[1:]

    def playable(code: str) -> bool:
        if code == "W4":
            return rules.allow_bluff or not holds_active
        if code.startswith("W"):
            return True
        return code[0] == active_letter or code[1:] == top_symbol

    if phase == Phase.PLAY_DRAWN:  # rule 3.4, and 7.4's draw until playable
        drawn = game.drawn_card
        assert drawn is not None and drawn in hand
        if not playable(drawn):
            assert not rules.draw_until_playable
            return [56]
        return [ed.kind(drawn)] if rules.draw_until_playable else [ed.kind(drawn), 56]
    assert phase == Phase.PLAY, phase
    return sorted({ed.kind(c) for c in hand if playable(c)}) + [DRAW]


def check_invariants(game: Game, deck: list[str]) -> None:
    """Conservation of cards and the consistency of phase, seat and legal actions."""
    hands = game.hands
    draw_pile = game.draw_pile
    discard = game.discard_pile
    assert sorted(draw_pile + discard + [c for hand in hands for c in hand]) == deck, "cards not conserved"
    assert game.hand_sizes == [len(h) for h in hands]
    assert discard and discard[-1] == game.top_card
    assert game.direction in (1, -1)
    for seat, called in enumerate(game.uno_called):
        assert not called or len(hands[seat]) == 1
    if game.rules.uno_call == "auto":
        assert game.phase not in (Phase.UNO, Phase.CATCH)
    if not game.rules.elimination:
        assert not any(game.eliminated)
    if game.is_round_over:
        assert game.current_player is None
        assert game.legal_actions() == []
        assert game.round_winner is not None and hands[game.round_winner] == []
        assert game.is_game_over == bool(game.winners)
        return
    assert not game.winners and game.round_winner is None
    out = game.eliminated
    assert all(not hands[s] for s in range(game.num_players) if out[s]), "an eliminated seat holds cards"
    empty = [seat for seat, hand in enumerate(hands) if not hand and not out[seat]]
    if empty:  # rule 5.5: King Pig as the last card still asks for a color, then deals
        assert game.phase == Phase.CHOOSE_COLOR and game.pending_card == "WK", "a seat without cards in play"
        assert empty == [game.current_player] == [game.pending_player]
    seat = game.current_player
    assert seat is not None and 0 <= seat < game.num_players and not out[seat]
    assert game.active_color is not None or game.phase == Phase.CHOOSE_COLOR
    legal = [int(a) for a in game.legal_actions()]
    assert legal, "no legal action in a decision phase"
    assert legal == expected_legal_ids(game, hands[seat])


def check_round_scoring(game: Game, scores_before: list[int], out_before: list[bool]) -> None:
    """Rules 6.3 / 6.4 / 7.1 / 7.2 at the end of a round, and the game's end by the target."""
    rules = game.rules
    n = game.num_players
    hand_points = [sum(game.card_value(c) for c in hand) for hand in game.hands]
    winner = game.round_winner
    target = rules.target_score
    standard = rules.scoring == "standard" and not rules.elimination
    if rules.teams:
        team_hands = [sum(hand_points[s] for s in range(team, n, 2)) for team in (0, 1)]
        if standard:
            expected = [team_hands[1 - winner % 2] if s % 2 == winner % 2 else 0 for s in range(n)]
        else:
            expected = [team_hands[s % 2] for s in range(n)]
    elif standard:
        expected = [0] * n
        expected[winner] = sum(hand_points)
    else:
        expected = hand_points
    assert game.round_points == expected
    scores = game.scores
    assert scores == [a + b for a, b in zip(scores_before, expected, strict=True)]
    if rules.elimination:
        out = [out_before[s] or scores[s] >= target for s in range(n)]
        assert game.eliminated == out
        alive = [s for s in range(n) if not out[s]]
        assert winner in alive
        assert game.winners == (alive if len(alive) == 1 else [])
    elif standard:
        team = [s for s in range(n) if s % 2 == winner % 2] if rules.teams else [winner]
        assert game.winners == (team if scores[winner] >= target else [])
    elif max(scores) >= target:
        assert game.winners == [s for s, v in enumerate(scores) if v == min(scores)]
    else:
        assert game.winners == []


def rejection(game: Game, action: object) -> Exception:
    """The error ``game.step(action)`` raises (it must raise)."""
    try:
        game.step(action)
    except (IllegalActionError, ActionTextError) as error:
        return error
    raise AssertionError(f"{action!r} was accepted")


def check_every_action(game: Game) -> None:
    """Every legal action applies (Action, id and text alike); every other one is rejected."""
    before = game.to_dict(include_log=False)
    log_length = len(game.log)
    legal = game.legal_actions()
    legal_ids = {int(a) for a in legal}
    deck = sorted(game.edition.code(k) for k in game.edition.deck())
    for action in legal:
        results = []
        for form in (action, int(action), str(action)):
            copy = game.clone()
            copy.step(form)
            results.append(copy.to_dict(include_log=False))
        assert results[0] == results[1] == results[2]
        check_invariants(copy, deck)
    for action_id in range(NUM_ACTIONS):
        if action_id in legal_ids:
            continue
        error = rejection(game, action_id)
        assert type(error) is IllegalActionError and "not legal" in str(error)
        text = str(game.action(action_id))
        error = rejection(game, text)
        if text == "play -":  # classic has no special wild; its id has no readable text
            assert type(error) is ActionTextError
        else:
            assert type(error) is IllegalActionError and "not legal" in str(error)
    for out_of_range in (-1, NUM_ACTIONS):
        assert type(rejection(game, out_of_range)) is IllegalActionError
    assert game.to_dict(include_log=False) == before
    assert len(game.log) == log_length
    assert game.legal_actions() == legal


# ---------------------------------------------------------------------------- driver
class Stats:
    """What the random games went through, to show the checks reached every phase."""

    def __init__(self) -> None:
        self.games = 0
        self.games_over = 0
        self.rounds = 0
        self.decisions = 0
        self.max_round_decisions = 0
        self.phases: Counter[str] = Counter()
        self.events: Counter[str] = Counter()


def play_game(
    game: Game,
    policy: Policy,
    rng: random.Random,
    stats: Stats,
    max_decisions: int,
    sweep: Callable[[Game, int], bool] = lambda game, step: False,
) -> list[object]:
    """Play until the game ends or ``max_decisions``, checking invariants after every step."""
    deck = sorted(game.edition.code(k) for k in game.edition.deck())
    check_invariants(game, deck)
    actions: list[object] = []
    round_decisions = 0
    stats.games += 1
    while not game.is_game_over and len(actions) < max_decisions:
        if game.is_round_over:
            previous_dealer, previous_round = game.dealer, game.round_number
            game.next_round()
            # The dealer moves left (2.1), past seats out of the game (7.2).
            left = [(previous_dealer + k) % game.num_players for k in range(1, game.num_players + 1)]
            assert game.dealer == next(s for s in left if not game.eliminated[s])
            assert game.round_number == previous_round + 1
            assert game.round_points == [0] * game.num_players and game.round_winner is None
            check_invariants(game, deck)
            actions.append("next_round")
            round_decisions = 0
            continue
        stats.phases[game.phase.text] += 1
        if sweep(game, len(actions)):
            check_every_action(game)
        action = policy(game, rng)
        scores_before, out_before = list(game.scores), game.eliminated
        game.step(action)
        actions.append(action)
        round_decisions += 1
        stats.decisions += 1
        check_invariants(game, deck)
        assert all(game.eliminated[s] for s in range(game.num_players) if out_before[s])
        if game.is_round_over:
            stats.rounds += 1
            stats.max_round_decisions = max(stats.max_round_decisions, round_decisions)
            check_round_scoring(game, scores_before, out_before)
    stats.games_over += game.is_game_over
    events = Counter(e[0] for e in game.log)
    stats.events.update(events)
    if not game.rules.allow_bluff:
        assert events["guilty"] == 0, "a bluff was possible with allow_bluff=False"
    return actions


def replay(game: Game, actions: list[object]) -> None:
    """Apply recorded actions (``next_round`` markers included)."""
    for action in actions:
        if action == "next_round":
            game.next_round()
        else:
            game.step(action)


# ---------------------------------------------------------------------------- the tests
PLAY_FIRST_BUDGET = 36_000  # decisions per edition and table size
SHORT_AND_LONG = (1, 1, 1, 1, 1, 1, 100, 200)  # target scores: mostly one-round games, some long ones


@pytest.mark.slow
@pytest.mark.parametrize("num_players", TABLE_SIZES)
@pytest.mark.parametrize("edition", EDITION_NAMES)
def test_play_first_games_conserve_cards_end_and_score(edition, num_players):
    stats = Stats()
    index = 0
    while stats.decisions < PLAY_FIRST_BUDGET or index < 2 * len(VARIANTS):
        seed = seed_for(edition, num_players, index)
        game = Game(rules_for(edition, num_players, index, SHORT_AND_LONG), seed=seed)
        play_game(game, play_first, random.Random(seed), stats, max_decisions=100_000)
        assert game.is_game_over, f"seed {seed}: game not over after 100,000 decisions"
        index += 1
    assert stats.games_over == stats.games == index
    assert stats.rounds >= stats.games
    assert stats.max_round_decisions < 20_000
    assert stats.phases["play_drawn"] > 0 and stats.phases["choose_color"] > 0
    assert stats.events["round_end"] == stats.rounds and stats.events["game_end"] >= stats.games
    assert stats.events["eliminated"] > 0


SWEEPS = 500  # per edition


@pytest.mark.slow
@pytest.mark.parametrize("edition", EDITION_NAMES)
def test_every_legal_action_applies_and_every_other_is_rejected(edition):
    # Tried at every decision that is not a plain play, and at every eighth play.
    stats = Stats()
    swept = Counter()

    def sweep(game: Game, step: int) -> bool:
        chosen = game.phase != Phase.PLAY or step % 8 == 0
        swept[game.phase.text] += chosen
        return chosen

    index = 0
    while sum(swept.values()) < SWEEPS:
        num_players = TABLE_SIZES[index % len(TABLE_SIZES)]
        seed = seed_for(edition, num_players, index, salt=5)
        game = Game(rules_for(edition, num_players, index, targets=(1,)), seed=seed)
        play_game(game, play_first, random.Random(seed), stats, max_decisions=150, sweep=sweep)
        index += 1
    expected = {"play", "play_drawn", "choose_color", "challenge", "uno", "catch", "swap", "stack"}
    assert {phase for phase, n in swept.items() if n} >= expected | ({"give_away"} if edition == "monster_high" else set())
    special_event = {"angry_birds": "king_pig", "masters_of_the_universe": "greyskull", "monster_high": "give"}
    if edition in special_event:
        assert stats.events[special_event[edition]] > 0
    assert stats.events["rotate"] > 0


UNIFORM_GAMES = 3  # per edition and table size
UNIFORM_CAP = 4000


@pytest.mark.parametrize("num_players", TABLE_SIZES)
@pytest.mark.parametrize("edition", EDITION_NAMES)
def test_uniform_random_games_keep_invariants(edition, num_players):
    stats = Stats()
    for index in range(UNIFORM_GAMES):
        seed = seed_for(edition, num_players, index, salt=1)
        game = Game(rules_for(edition, num_players, index + num_players), seed=seed)
        actions = play_game(game, uniform, random.Random(seed), stats, max_decisions=UNIFORM_CAP,
                            sweep=lambda game, step: step % 500 == 0)
        assert game.is_game_over or len(actions) == UNIFORM_CAP
    assert stats.phases["play_drawn"] > 0


def test_uniform_random_games_refill_and_exhaust_the_draw_pile():
    # Rule 3.6: voluntary draws pile cards into hands; the discard pile is reshuffled, and at
    # ten players it happens that nothing is left to draw at all.
    stats = Stats()
    for index in range(3):
        game = Game(Rules(edition="masters_of_the_universe", num_players=10, target_score=100), seed=index)
        play_game(game, uniform, random.Random(index), stats, max_decisions=1500,
                  sweep=lambda game, step: step % 300 == 0)
    assert stats.events["reshuffle"] > 0
    assert stats.events["pass"] > 0


@pytest.mark.parametrize("edition", EDITION_NAMES)
def test_same_seed_same_game(edition):
    for num_players, index in ((2, 5), (4, 6), (7, 8)):
        runs = []
        for _ in range(2):
            game = Game(rules_for(edition, num_players, index), seed=123)
            play_game(game, play_first, random.Random(9), Stats(), max_decisions=100_000)
            runs.append((game.log, game.to_dict()))
        assert runs[0] == runs[1]
        other = Game(rules_for(edition, num_players, index), seed=124)
        play_game(other, play_first, random.Random(9), Stats(), max_decisions=100_000)
        assert other.log != runs[0][0]


def snapshots_in_every_phase(edition: str, num_players: int, index: int, make: Callable[[Game], Game],
                             max_decisions: int = 100_000):
    """Play one game; at the first decision of each phase (and a few more), call ``make``.

    Returns the game, its actions, and (position in actions, made copy, to_dict at that time).
    """
    seed = seed_for(edition, num_players, index, salt=2)
    game = Game(rules_for(edition, num_players, index), seed=seed)
    rng = random.Random(seed)
    actions: list[object] = []
    taken: list[tuple[int, Game, dict]] = []
    seen: set[str] = set()
    while not game.is_game_over and len(actions) < max_decisions:
        key = game.phase.text
        if key not in seen or rng.random() < 0.004:
            seen.add(key)
            taken.append((len(actions), make(game), game.to_dict()))
        if game.is_round_over:
            game.next_round()
            actions.append("next_round")
        else:
            action = play_first(game, rng)
            game.step(action)
            actions.append(action)
    return game, actions, taken


def save_and_load(game: Game) -> Game:
    return Game.from_dict(json.loads(json.dumps(game.to_dict())))


@pytest.mark.slow
@pytest.mark.parametrize("edition", EDITION_NAMES)
def test_json_save_mid_game_continues_identically(edition):
    phases: set[str] = set()
    for num_players in (2, 3, 4, 10):
        for index in range(len(VARIANTS)):
            game, actions, taken = snapshots_in_every_phase(edition, num_players, index, save_and_load, 1500)
            final = game.to_dict()
            for at, loaded, at_save in taken:
                assert loaded.to_dict() == at_save
                phases.add(loaded.phase.text)
                replay(loaded, actions[at:])
                assert loaded.to_dict() == final
                assert loaded.log == game.log
    expected = {"play", "play_drawn", "choose_color", "challenge", "uno", "catch", "swap", "stack", "round_over"}
    assert phases >= expected | ({"give_away"} if edition == "monster_high" else set())


@pytest.mark.parametrize("edition", EDITION_NAMES)
def test_json_save_without_log_continues_identically(edition):
    def load_without_log(game: Game) -> Game:
        return Game.from_dict(json.loads(json.dumps(game.to_dict(include_log=False))))

    game, actions, taken = snapshots_in_every_phase(edition, 3, 7, load_without_log)
    final = game.to_dict(include_log=False)
    for at, loaded, _ in taken:
        replay(loaded, actions[at:])
        assert loaded.to_dict(include_log=False) == final


def test_rule_5_5_json_save_while_king_pig_goes_out_and_asks_for_a_color():
    deck = stacked_deck("angry_birds", 2, 0, hands={1: ["RS", "RS", "YS", "YS", "GS", "GS", "WK"]}, start=["R5"])
    game = Game(Rules(edition="angry_birds", num_players=2, uno_call="auto"), deck=deck, dealer=0)
    for action in ("play RS", "play RS", "play YS", "play YS", "play GS", "play GS", "play WK"):
        game.step(action)
    assert game.phase == Phase.CHOOSE_COLOR and game.hands[1] == []
    loaded = save_and_load(game)
    assert loaded.to_dict() == game.to_dict()


def clone_twice_with(rng: random.Random) -> Callable[[Game], Game]:
    def clone_twice(game: Game) -> Game:
        """Play one clone on at once (the original must not move); return another."""
        before = game.to_dict()
        busy = game.clone()
        for _ in range(40):
            if busy.is_game_over:
                break
            if busy.is_round_over:
                busy.next_round()
            else:
                busy.step(uniform(busy, rng))
        assert game.to_dict() == before, "playing a clone changed the original"
        return game.clone()

    return clone_twice


@pytest.mark.slow
@pytest.mark.parametrize("edition", EDITION_NAMES)
def test_clone_is_independent(edition):
    for num_players in (2, 4, 7):
        for index in range(3):
            make = clone_twice_with(random.Random(index))
            game, actions, taken = snapshots_in_every_phase(edition, num_players, index, make, 3000)
            final = game.to_dict()
            for at, kept, at_clone in taken:
                assert kept.to_dict() == at_clone, "playing the original changed a clone"
                replay(kept, actions[at:])
                assert kept.to_dict() == final


def hidden_from(game: Game, seat: int) -> tuple[list[list[str]], list[str]]:
    """The other seats' hands (sorted) and the draw pile: what determinize may change."""
    hands = [sorted(h) if s != seat else [] for s, h in enumerate(game.hands)]
    return hands, game.draw_pile


@pytest.mark.slow
@pytest.mark.parametrize("edition", EDITION_NAMES)
def test_determinize_keeps_what_the_seat_knows_and_resamples_the_rest(edition):
    tally = Counter()
    for num_players in (2, 3, 4, 7):
        for index in range(len(VARIANTS)):
            seed = seed_for(edition, num_players, index, salt=3)
            game = Game(rules_for(edition, num_players, index), seed=seed)
            rng = random.Random(seed)
            deck = sorted(game.edition.code(k) for k in game.edition.deck())
            step = 0
            while not game.is_game_over and step < 150:
                if game.is_round_over:
                    game.next_round()
                    continue
                rare = game.phase not in (Phase.PLAY, Phase.CHOOSE_COLOR)
                if step % 25 == 0 or rare and rng.random() < 0.3:
                    before = game.to_dict()
                    for seat in sorted({game.current_player, rng.randrange(num_players)}):
                        tally.update(check_determinize(game, seat, rng, 4, deck))
                    assert game.to_dict() == before, "determinize changed the game"
                game.step(play_first(game, rng))
                step += 1
    assert tally["checked"] > 1000
    # Hidden cards are resampled: whenever they could differ, they (almost always) do.
    assert tally["changed"] >= 0.95 * tally["changeable"] and tally["changeable"] > 200


def check_determinize(game: Game, seat: int, rng: random.Random, samples: int, deck: list[str]) -> Counter[str]:
    """Check ``samples`` determinizations from ``seat``; count what was checked."""
    view = game.view(seat)
    known = {t: sorted(game.known_cards(seat, t)) for t in range(game.num_players)}
    hidden = hidden_from(game, seat)
    # Where hidden cards lie: the draw pile, and the unseen part of each other hand.
    places = [Counter(game.draw_pile)]
    for t, hand in enumerate(game.hands):
        if t != seat:
            places.append(Counter(hand) - Counter(known[t]))
    everything = sum(places, Counter())
    changeable = len(everything) >= 2 and (
        len(set(game.draw_pile)) >= 2 or sum(1 for place in places if place) >= 2)
    changed = 0
    tally: Counter[str] = Counter()
    for number in range(samples):
        sample_seed = rng.getrandbits(32)
        sample = game.determinize(seat, random.Random(sample_seed))
        tally["checked"] += 1
        assert sample.view(seat) == view
        assert sample.hand_sizes == game.hand_sizes
        assert sample.hands[seat] == game.hands[seat]
        assert sample.discard_pile == game.discard_pile
        for t in range(game.num_players):
            assert sorted(sample.known_cards(seat, t)) == known[t]
            assert Counter(sample.hands[t]) >= Counter(sample.known_cards(seat, t))
        check_invariants(sample, deck)
        if game.current_player == seat:
            assert sample.legal_actions() == game.legal_actions()
        changed += hidden_from(sample, seat) != hidden
        if number == 0:
            # Other seats' knowledge stays consistent: the sample saves and loads.
            saved = sample.to_dict(include_log=False)
            assert Game.from_dict(saved).to_dict(include_log=False) == saved
            # The same generator seed gives the same sample.
            assert game.determinize(seat, random.Random(sample_seed)).to_dict(include_log=False) == saved
    if changeable and tally["checked"]:
        tally["changeable"] += 1
        tally["changed"] += changed > 0
    return tally


def test_rule_4_5_determinize_keeps_a_colored_card_for_the_giver():
    game = position("monster_high", 2, hands={1: ["WU", "B1"]}, discard=["G5"], current=1)
    game.step("play WU")
    assert game.phase == Phase.GIVE_AWAY
    for sample_seed in range(100):
        sample = game.determinize(0, sample_seed)
        assert sample.legal_actions(), f"determinize(0, {sample_seed}) gave seat 1 {sample.hands[1]}"


def test_rule_7_4_determinize_in_the_stack_phase_keeps_the_view_and_loads():
    # The stack decision is offered with or without a Draw Two, so a sample may hold none.
    game = position("classic", 2, hands={1: ["RD", "R1", "R2"], 0: ["BD", "B1"]}, discard=["R9"], current=1,
                    stacking=True)
    game.step("play RD")
    assert game.phase == Phase.STACK and game.current_player == 0
    holds_draw_two = set()
    for sample_seed in range(40):
        sample = game.determinize(1, sample_seed)
        assert sample.view(1) == game.view(1)
        assert save_and_load(sample).to_dict() == sample.to_dict()
        assert sample.legal_actions()[-1] == 66  # accept
        holds_draw_two.add(any(c.endswith("D") for c in sample.hands[0]))
    assert holds_draw_two == {True, False}


@pytest.mark.parametrize("until_playable", [False, True])
def test_rule_3_4_determinize_while_another_seat_holds_a_drawn_card(until_playable):
    # The drawn card was the last of the draw pile. Seat 0 sees only that seat 1 drew: without
    # draw until playable the drawn card is any hidden card (rule 3.4: keeping looks the same
    # whether or not it plays); with it, the drawn card plays (7.4), and R1 is the only hidden
    # card that plays on R9.
    game = position("classic", 2, hands={1: ["B2"]}, discard=["R9"], draw=["R1"], current=1, rest_to=0,
                    draw_until_playable=until_playable)
    game.step("draw")
    assert game.phase == Phase.PLAY_DRAWN and game.drawn_card == "R1" and game.draw_pile == []
    drawn = set()
    for sample_seed in range(20):
        sample = game.determinize(0, sample_seed)
        assert sorted(sample.hands[1]) == ["B2", "R1"] and sample.view(0) == game.view(0)
        drawn.add(sample.drawn_card)
        assert [str(a) for a in sample.legal_actions()] == (
            ["play R1"] if sample.drawn_card == "R1" and until_playable
            else ["play R1", "keep"] if sample.drawn_card == "R1" else ["keep"])
    assert drawn == ({"R1"} if until_playable else {"R1", "B2"})


@pytest.mark.slow
def test_a_determinized_game_plays_on_like_a_real_one():
    stats = Stats()
    for index in range(20):
        game = Game(rules_for("monster_high", 4, index), seed=index)
        rng = random.Random(index)
        for _ in range(25 + index):
            if game.is_round_over:
                break
            game.step(play_first(game, rng))
        if game.is_round_over:
            continue
        sample = game.determinize(index % 4, rng)
        play_game(sample, play_first, rng, stats, max_decisions=300,
                  sweep=lambda g, step: step < 3 or g.phase != Phase.PLAY)
    assert stats.decisions > 1000


def swap_hidden_cards(data: dict, seat: int, rng: random.Random) -> bool:
    """Change cards hidden from ``seat`` in a saved game; False when nothing changed."""
    n = len(data["hands"])
    known_by_anyone = {(e["target"], c) for e in data["known"] for c in e["cards"]}
    drawn = data["pending"]["drawn"]
    movable = [
        (t, i) for t in range(n) if t != seat for i, c in enumerate(data["hands"][t])
        if (t, c) not in known_by_anyone and not (t == data["current_player"] and c == drawn)
    ]
    draw_pile = data["draw_pile"]
    before = [sorted(hand) for hand in data["hands"]]
    for _ in range(3):
        if not movable or not draw_pile:
            break
        t, i = rng.choice(movable)
        j = rng.randrange(len(draw_pile))
        data["hands"][t][i], draw_pile[j] = draw_pile[j], data["hands"][t][i]
    rng.shuffle(draw_pile)
    return [sorted(hand) for hand in data["hands"]] != before


@pytest.mark.slow
@pytest.mark.parametrize("edition", EDITION_NAMES)
def test_view_ignores_cards_hidden_from_the_seat(edition):
    rng = random.Random(EDITION_NAMES.index(edition))
    compared = 0
    for num_players in (2, 4, 7):
        for index in range(len(VARIANTS)):
            game = Game(rules_for(edition, num_players, index), seed=seed_for(edition, num_players, index, 4))
            step = 0
            while not game.is_game_over and step < 200:
                if game.is_round_over:
                    game.next_round()
                    continue
                if step % 5 == 0 or game.phase != Phase.PLAY:
                    for seat in {game.current_player, rng.randrange(num_players)}:
                        data = game.to_dict(include_log=False)
                        if not swap_hidden_cards(data, seat, rng):
                            continue
                        try:
                            altered = Game.from_dict(data)
                        except StateError:
                            continue  # the swap broke a public constraint (a stack phase's Draw Two, ...)
                        assert altered.view(seat) == game.view(seat)
                        compared += 1
                        # The check can see a difference: the owner of a changed hand sees it.
                        owners = [t for t in range(num_players) if sorted(altered.hands[t]) != sorted(game.hands[t])]
                        assert owners and all(altered.view(t) != game.view(t) for t in owners)
                game.step(play_first(game, rng))
                step += 1
    assert compared > 300
