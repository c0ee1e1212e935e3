"""ISMCTSAgent: legal everywhere, seeded, blind to hidden cards, and it searches."""

from __future__ import annotations

import random

import pytest
from helpers import play, stacked_game

from agents import RuleAgent
from agents.belief import model_agrees
from agents.ismcts import ISMCTSAgent, heuristic_action, random_action
from uno_env.core import EDITIONS, Game, Phase, Rules
from uno_env.core import actions as A
from uno_env.core.cards import KIND_COLOR
from uno_env.core.determinize import InfoSet

CONFIGS = [
    ("classic", 2, {}),
    ("monster_high", 3, {"uno_call": "explicit"}),
    ("angry_birds", 4, {"teams": True}),
    ("masters_of_the_universe", 5, {"elimination": True, "target_score": 60}),
    ("classic", 3, {"stacking": True, "seven_zero": True, "draw_until_playable": True, "allow_bluff": False}),
    ("monster_high", 6, {"scoring": "lowest", "uno_call": "auto"}),
    ("angry_birds", 10, {}),
]


def searched_positions(game: Game, seat: int, rng: random.Random, limit: int = 400):
    """Positions of a play-first game where ``seat`` decides."""
    steps = 0
    while not game.is_game_over and steps < limit:
        if game.is_round_over:
            game.next_round()
            continue
        if game.current_player == seat:
            yield game
        if game.is_round_over:
            continue
        legal = game.legal_actions()
        plays = legal[:-1] if game.phase == Phase.PLAY and len(legal) > 1 else legal
        game.step(rng.choice(plays))
        steps += 1


@pytest.mark.parametrize(("edition", "num_players", "options"), CONFIGS)
def test_agent_plays_only_legal_actions_in_every_edition_and_variant(edition, num_players, options):
    game = Game(Rules(edition=edition, num_players=num_players, **options), seed=5)
    agent = ISMCTSAgent(iterations=6, seed=1)
    rng = random.Random(2)
    decisions = 0
    phases = set()
    while not game.is_game_over and decisions < 100:
        if game.is_round_over:
            game.next_round()
            continue
        seat = game.current_player
        if seat == 0:
            info = game.view(0)
            action = agent.act(None, info)
            assert action in info["legal_action_ids"]
            phases.add(game.phase)
            decisions += 1
            game.step(action)
        else:
            legal = game.legal_actions()
            game.step(rng.choice(legal[:-1] if game.phase == Phase.PLAY and len(legal) > 1 else legal))
    assert Phase.PLAY in phases and decisions > 5


def test_same_seed_and_iterations_same_choices():
    game = Game(Rules(num_players=3), seed=8)
    views = [g.view(1) for g in searched_positions(game, 1, random.Random(0), limit=60)]
    assert len(views) > 5
    first = ISMCTSAgent(iterations=30, seed=4)
    second = ISMCTSAgent(iterations=30, seed=4)
    assert [first.act(None, v) for v in views] == [second.act(None, v) for v in views]


@pytest.mark.parametrize("edition", list(EDITIONS))
def test_hidden_cards_cannot_change_the_choice(edition):
    """Two games differing only in cards hidden from the seat give one view and one choice."""
    rng = random.Random(3)
    game = Game(Rules(edition=edition, num_players=3), seed=21)
    checked = 0
    for position in searched_positions(game, 0, random.Random(6), limit=80):
        if len(position.legal_actions()) < 2:
            continue
        other = position.determinize(0, rng)
        assert other.hands != position.hands or other.draw_pile != position.draw_pile
        view = position.view(0)
        assert other.view(0) == view
        a = ISMCTSAgent(iterations=16, seed=99).act(None, view)
        b = ISMCTSAgent(iterations=16, seed=99).act(None, other.view(0))
        assert a == b
        checked += 1
    assert checked >= 3


def test_single_legal_action_returns_without_search():
    game = stacked_game("classic", 2, hands={1: ["B1", "B2", "B3", "B4", "B5", "B6", "B7"]}, start=["R9"])
    view = game.view(1)
    assert view["legal_action_ids"] == [A.DRAW]
    agent = ISMCTSAgent(iterations=50, seed=0)
    assert agent.act(None, view) == A.DRAW
    assert agent.last_iterations == 0


def two_card_position(uno_call: str = "explicit") -> Game:
    """Seat 1 to play holding R5 and G3 on a red 9 (two players), from an edited save."""
    game = stacked_game("classic", 2, hands={1: ["R5", "G3", "G4", "G5", "G6", "G7", "B1"]}, start=["R9"],
                        uno_call=uno_call)
    data = game.to_dict()
    data["hands"][1] = ["R5", "G3"]
    data["draw_pile"] += ["G4", "G5", "G6", "G7", "B1"]
    return Game.from_dict(data)


def test_rule_5_1_always_calls_uno_and_rule_5_2_always_catches():
    game = two_card_position()
    agent = ISMCTSAgent(iterations=50, seed=0)
    play(game, ["play R5"])
    assert game.phase == Phase.UNO
    assert agent.act(None, game.view(1)) == A.UNO
    play(game, ["no-uno"])
    assert game.phase == Phase.CATCH and game.current_player == 0
    assert agent.act(None, game.view(0)) == A.CATCH
    assert agent.last_iterations == 0


def test_search_finds_the_winning_play():
    """Rule 6.1: playing the last card wins at once; drawing instead is worse."""
    game = stacked_game("classic", 2, hands={1: ["R5", "R6", "G3", "G4", "G5", "G6", "G7"]}, start=["R9"])
    data = game.to_dict()
    data["hands"][1] = ["R5"]
    data["draw_pile"] += ["R6", "G3", "G4", "G5", "G6", "G7"]
    position = Game.from_dict(data)
    view = position.view(1)
    assert view["legal_action_ids"] == [5, A.DRAW]
    assert ISMCTSAgent(iterations=20, seed=0).act(None, view) == 5


def test_time_budget_stops_the_search():
    game = Game(Rules(num_players=2), seed=2)
    position = next(p for p in searched_positions(game, 0, random.Random(1)) if len(p.legal_actions()) > 1)
    agent = ISMCTSAgent(time_budget=0.02, seed=0)
    assert agent.act(None, position.view(0)) in position.view(0)["legal_action_ids"]
    assert agent.last_iterations >= 1


@pytest.mark.parametrize("policy", [heuristic_action, random_action])
def test_rollout_policies_finish_rounds_with_legal_actions(policy):
    rng = random.Random(0)
    for edition in EDITIONS:
        game = Game(Rules(edition=edition, num_players=4, stacking=True, seven_zero=True), seed=1)
        for _ in range(3000):
            if game.is_round_over:
                break
            action = policy(game, rng, 0.1)
            assert action in game.legal_actions()
            game.step(action)
        assert game.is_round_over


def test_bad_options_are_refused():
    with pytest.raises(ValueError):
        ISMCTSAgent(iterations=0)
    with pytest.raises(ValueError):
        ISMCTSAgent(time_budget=-1.0)
    with pytest.raises(ValueError):
        ISMCTSAgent(rollout="minimax")


def test_registered_for_the_harness_and_command_line():
    from agents import make_agent
    from agents.tournament import evaluate

    agent = make_agent("ismcts:iterations=4,seed=1")
    assert isinstance(agent, ISMCTSAgent) and agent.iterations == 4
    result = evaluate(["ismcts:iterations=4", "rule"], Rules(num_players=2), games=2, seed=3)
    assert result.games == 2 and sum(s.wins for s in result.stats()) == 2


def test_prior_choice_stands_unless_search_is_confident():
    from agents import RuleAgent

    game = Game(Rules(num_players=2), seed=4)
    views = [p.view(0) for p in searched_positions(game, 0, random.Random(3), limit=40)
             if len(p.legal_actions()) > 1 and p.phase not in (Phase.UNO, Phase.CATCH)]
    assert len(views) >= 3
    stubborn, rule = ISMCTSAgent(iterations=40, seed=1, confidence=1e9), RuleAgent()
    assert [stubborn.act(None, v) for v in views] == [rule.act(None, v) for v in views]
    for root in ("paired", "uct"):
        plain = ISMCTSAgent(iterations=40, seed=1, prior=None, root=root)
        assert all(plain.act(None, v) in v["legal_action_ids"] for v in views)


TWO_COLORS_ON_TOP = {1: ["R5", "R8", "B3", "B6", "B7", "G1", "Y7"], 0: ["G2", "G4", "G6", "Y1", "Y2", "Y4", "Y6"]}
"""Seat 1 moves first on R3 and may play red or blue; seat 0 holds no red, no blue, no 3, 5 or 8 and no wild."""


def _draw_and_keep(game: Game) -> None:
    """The seat to move draws (G9: neither red nor blue) and keeps it."""
    game.step(A.DRAW)
    if game.phase == Phase.PLAY_DRAWN:
        game.step(A.KEEP)


def test_rule_agent_told_the_move_played_infers_the_void_of_that_move():
    """``RuleAgent.played``: when a caller overrules the agent, the void it infers after the turn is the
    color of the move made, not of the move it advised."""
    game = stacked_game("classic", 2, dealer=0, hands=TWO_COLORS_ON_TOP, start=["R3"], then=["G9"])
    agent = RuleAgent()
    view = game.view(1)
    advised = agent.act(None, view)
    made = next(game.edition.kind(c) for c in ("R5", "B3") if game.edition.kind(c) != advised)
    agent.played(view, made)
    game.step(made)
    _draw_and_keep(game)
    agent.act(None, game.view(1))
    assert agent.voids == {0: frozenset({KIND_COLOR[made]})}


@pytest.mark.parametrize("belief", ["uniform", "voids"])
def test_void_belief_deals_the_seat_that_drew_on_a_color_no_card_of_it(belief, monkeypatch):
    """``belief="voids"``: every determinization after seat 0 drew on the color seat 1 played gives
    seat 0 no card of that color; uniform dealing gives it one in some."""
    game = stacked_game("classic", 2, dealer=0, hands=TWO_COLORS_ON_TOP, start=["R3"], then=["G9"])
    agent = ISMCTSAgent(iterations=200, seed=0, belief=belief)
    made = agent.act(None, game.view(1))
    assert made in [game.edition.kind(c) for c in ("R5", "R8", "B3")]
    game.step(made)
    _draw_and_keep(game)
    states = []
    sample = InfoSet.sample_state

    def recording(self, rng, lacks=None):
        state = sample(self, rng, lacks)
        states.append(state)
        return state

    monkeypatch.setattr(InfoSet, "sample_state", recording)
    assert len(game.legal_actions()) > 1
    agent.act(None, game.view(1))
    assert len(states) > 30
    held = [sum(KIND_COLOR[k] == KIND_COLOR[made] for k in state.hands[0]) for state in states]
    assert (max(held) == 0) == (belief == "voids")


def test_bad_belief_is_refused():
    with pytest.raises(ValueError, match="belief must be one of uniform, voids, rule"):
        ISMCTSAgent(belief="oracle")


def test_rule_belief_keeps_the_deals_in_which_rule_agents_make_the_moves_seen_and_reads_only_views(monkeypatch):
    """``belief="rule"``: the determinizations searched give the other players hands from which a RuleAgent
    makes the moves of the last stretch far more often than uniform deals do; fed the same views, a second
    agent with the same seed makes the same choices."""
    weighed = ISMCTSAgent._weighed
    kept: list[tuple[InfoSet, object, list]] = []

    def recording(self, infoset, rng, lacks, moves):
        state = weighed(self, infoset, rng, lacks, moves)
        kept.append((infoset, state, moves))
        return state

    monkeypatch.setattr(ISMCTSAgent, "_weighed", recording)
    views, choices = [], []
    for seed in range(6):
        game = Game(Rules(num_players=4), seed=seed)
        agent = ISMCTSAgent(iterations=12, seed=seed, belief="rule")
        others = [RuleAgent() for _ in range(3)]
        while not game.is_round_over:
            seat = game.current_player
            info = game.view(seat)
            action = agent.act(None, info) if seat == 0 else others[seat - 1].act(None, info)
            if seat == 0:
                views.append((seed, info))
                choices.append(action)
            game.step(action)
    rng = random.Random(0)

    def agreeing(states) -> float:
        return sum(all(model_agrees(s, m, RuleAgent(), rng) for m in moves) for s, moves in states) / len(states)

    assert len(kept) > 100
    searched = agreeing([(state, moves) for _, state, moves in kept])
    uniform = agreeing([(infoset.sample_state(rng), moves) for infoset, _, moves in kept])
    assert searched > 0.6 and uniform < searched / 2  # measured: 72% and 18% of 152
    replayed, agent, current = [], None, None
    for seed, info in views:
        if seed != current:
            agent, current = ISMCTSAgent(iterations=12, seed=seed, belief="rule"), seed
        replayed.append(agent.act(None, info))
    assert replayed == choices
