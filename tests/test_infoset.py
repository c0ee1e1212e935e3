"""Sampling full games from one seat's view (``uno_env.core.infoset``): the determinizations
a search agent plays out must look exactly like the real game to that seat."""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest
from helpers import play, stacked_game

from uno_env.core import EDITIONS, Game, Phase, Rules
from uno_env.core.cards import KIND_COLOR, NUM_KINDS
from uno_env.core.infoset import InfoSet, sample_game

EDITION_NAMES = list(EDITIONS)
TABLES = (2, 3, 4, 6, 10)
VARIANTS: list[dict[str, bool]] = [
    {}, {"stacking": True}, {"seven_zero": True}, {"draw_until_playable": True}, {"teams": True},
    {"elimination": True}, {"stacking": True, "seven_zero": True, "draw_until_playable": True},
]


def rules_for(edition: str, num_players: int, index: int) -> Rules:
    """Game ``index``'s options: base options from a seeded generator, plus a variant in turn."""
    pick = random.Random(index)
    variant = dict(VARIANTS[index % len(VARIANTS)])
    if variant.get("teams") and (num_players < 4 or num_players % 2):
        variant = {}
    return Rules(
        edition=edition, num_players=num_players, target_score=pick.choice([100, 200]),
        uno_call=pick.choice(["explicit", "auto"]), allow_bluff=pick.choice([True, False]),
        scoring="standard" if variant.get("elimination") else pick.choice(["standard", "lowest"]), **variant,
    )


def play_first(game: Game, rng: random.Random) -> object:
    """A random playable card when one plays (draw only when none does); uniform otherwise."""
    legal = game.legal_actions()
    if game.phase == Phase.PLAY and len(legal) > 1:
        return rng.choice(legal[:-1])
    return rng.choice(legal)


def positions(edition: str, num_players: int, games: int = 7, rate: float = 0.03) -> Iterator[Game]:
    """Positions of play-first games (every variant mix in turn), round-over positions included."""
    for index in range(games):
        game = Game(rules_for(edition, num_players, index), seed=1000 + index)
        rng = random.Random(index)
        decisions = 0
        while not game.is_game_over and decisions < 400:
            if game.is_round_over:
                yield game
                game.next_round()
                continue
            if rng.random() < rate:
                yield game
            game.step(play_first(game, rng))
            decisions += 1


@pytest.mark.parametrize("edition", EDITION_NAMES)
@pytest.mark.parametrize("num_players", TABLES)
def test_sampled_game_gives_the_same_view_and_loads(edition, num_players):
    rng = random.Random(7)
    checked = 0
    for game in positions(edition, num_players):
        for seat in range(num_players):
            view = game.view(seat)
            sample = sample_game(view, rng)
            assert sample.view(seat) == view
            loaded = Game.from_dict(sample.to_dict())
            assert loaded.view(seat) == view
            pending, real = sample.to_dict()["pending"], game.to_dict()["pending"]
            for key in ("card", "player", "catch_index", "penalty"):
                assert pending[key] == real[key], key
            if game.pending_card == "W4" and not game.is_round_over:
                assert pending["w4_prev_color"] == real["w4_prev_color"]
                if game.pending_player == seat:
                    assert pending["w4_guilty"] == real["w4_guilty"]
            checked += 1
    assert checked > 50


@pytest.mark.parametrize("edition", EDITION_NAMES)
def test_hidden_cards_vary_between_samples(edition):
    game = Game(Rules(edition=edition, num_players=4), seed=3)
    view = game.view(0)
    infoset = InfoSet(view)
    rng = random.Random(0)
    samples = [infoset.sample(rng) for _ in range(20)]
    assert all(s.hands[0] == samples[0].hands[0] for s in samples)  # the seat's own hand is fixed
    assert len({tuple(sorted(s.hands[1])) for s in samples}) > 1
    assert len({tuple(s.draw_pile) for s in samples}) > 1
    assert all(s.view(0) == view for s in samples)


def test_sample_game_is_seeded():
    game = Game(Rules(num_players=3), seed=11)
    view = game.view(1)
    a, b = sample_game(view, 5), sample_game(view, 5)
    assert a.to_dict() == b.to_dict()
    assert a.to_dict() != sample_game(view, 6).to_dict()


def test_rule_4_5_cards_given_away_stay_known_in_samples():
    game = stacked_game("monster_high", 3, hands={1: ["WU", "B1", "B2", "G5", "G6", "P7", "Y8"]}, start=["B9"])
    play(game, ["play WU", "give blue"])
    view = game.view(1)
    assert view["opponents"][0]["known_cards"] == ["B1"]
    for seed in range(10):
        sample = sample_game(view, seed)
        assert "B1" in sample.hands[2] and "B2" in sample.hands[0]
        assert sample.view(1) == view


def test_rule_5_4_own_bluff_is_kept_and_others_bluff_is_sampled():
    game = stacked_game("classic", 2, hands={1: ["W4", "R1", "G2", "G3", "G4", "B5", "B6"]}, start=["R9"])
    play(game, ["play W4", "color green"])
    assert game.phase.text == "challenge"
    mine = sample_game(game.view(1), 0)
    assert mine.to_dict()["pending"]["w4_guilty"] is True  # seat 1 held red: a bluff it knows of
    guilt = {sample_game(game.view(0), seed).to_dict()["pending"]["w4_guilty"] for seed in range(30)}
    assert guilt == {True, False}  # seat 0 cannot know; samples of seat 1's hand decide


@pytest.mark.parametrize("until_playable", [False, True])
def test_rule_3_4_card_another_seat_just_drew_is_a_hidden_card_playable_only_under_draw_until_playable(
        until_playable):
    game = stacked_game("classic", 2, hands={1: ["B1", "B2", "B3", "B4", "B5", "B6", "B7"]}, start=["R9"],
                        then=["R3"], draw_until_playable=until_playable)
    play(game, ["draw"])
    assert game.phase.text == "play_drawn" and game.current_player == 1
    view = game.view(0)
    playable = set()
    for seed in range(30):
        sample = sample_game(view, seed)
        assert sample.view(0) == view
        drawn = sample.drawn_card
        assert drawn is not None and drawn in sample.hands[1]
        plays = any(a.text == f"play {drawn}" for a in sample.legal_actions())
        playable.add(plays)
        assert [a.text for a in sample.legal_actions()] == (
            [f"play {drawn}"] if until_playable else [f"play {drawn}", "keep"] if plays else ["keep"])
    # Rule 3.4: seat 0 cannot know whether the card plays; rule 7.4: it must, and is played.
    assert playable == ({True} if until_playable else {True, False})


def test_rule_5_2_catch_window_position_is_derived():
    rng = random.Random(1)
    game = Game(Rules(num_players=4, uno_call="explicit"), seed=1)
    while not (game.phase == Phase.CATCH and game.to_dict()["pending"]["catch_index"] == 2):
        if game.is_round_over:
            game.next_round()
        elif game.phase in (Phase.UNO, Phase.CATCH):
            game.step("no-uno" if game.phase == Phase.UNO else "no-catch")
        else:
            game.step(play_first(game, rng))
    after = game.clone()
    after.step("no-catch")
    for seat in range(4):
        sample = sample_game(game.view(seat), seat)
        assert sample.to_dict()["pending"]["catch_index"] == 2
        sample.step("no-catch")
        assert sample.current_player == after.current_player and sample.phase == after.phase


@pytest.mark.parametrize("drawer", [False, True])
def test_a_belief_deals_a_seat_none_of_the_kinds_it_lacks_and_changes_nothing_the_seat_sees(drawer):
    """``sample_state(rng, lacks)``: the believed seat's hidden cards avoid its kinds; every sample
    still gives the observer's view exactly, holds the same cards, and other seats still get them."""
    game = Game(Rules(num_players=4), seed=11)
    rng = random.Random(3)
    while game.current_player == 0 or drawer != (game.phase == Phase.PLAY_DRAWN):  # another seat just drew
        game.step(play_first(game, rng) if game.phase != Phase.PLAY or not drawer else game.legal_actions()[-1])
    assert not game.is_round_over
    view = game.view(0)
    infoset = InfoSet(view)
    believed = 1 if game.current_player != 1 else 2
    red = [k for k in range(NUM_KINDS) if KIND_COLOR[k] == 0]
    lacks = {believed: (red, 99), 0: (list(range(NUM_KINDS)), 5), 9: (red, 1)}  # the observer and unknown seats: ignored
    red_elsewhere = 0
    for i in range(200):
        state = infoset.sample_state(random.Random(i), lacks)
        sample = Game.from_state(state)
        assert sample.view(0) == view
        assert not set(state.hands[believed]) & set(red)
        red_elsewhere += sum(k in red for s in (2, 3) if s != believed for k in state.hands[s])
        assert sorted([*sum(state.hands, []), *state.draw_pile, *state.public.discard_pile]) == sorted(
            [*sum(game.state.hands, []), *game.state.draw_pile, *game.state.public.discard_pile])
    assert red_elsewhere > 0


def test_a_belief_the_unseen_cards_cannot_satisfy_is_dropped_and_sampling_stays_seeded():
    game = Game(Rules(num_players=3), seed=5)
    infoset = InfoSet(game.view(game.current_player))
    seat = (game.current_player + 1) % 3
    everything = {seat: (list(range(NUM_KINDS)), 7)}
    state = infoset.sample_state(random.Random(1), everything)
    assert len(state.hands[seat]) == game.hand_sizes[seat]
    assert state.hands == infoset.sample_state(random.Random(1)).hands  # dropped: the uniform deal
    some = {seat: ([k for k in range(NUM_KINDS) if KIND_COLOR[k] == 2], 3)}
    assert infoset.sample_state(random.Random(7), some).hands == infoset.sample_state(random.Random(7), some).hands
