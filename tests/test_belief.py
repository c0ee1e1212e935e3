"""``agents.belief.VoidTracker``: what a seat infers from its views about the cards others lack."""

from __future__ import annotations

import random
from dataclasses import astuple

import pytest
from helpers import stacked_game

from agents import RandomAgent, RuleAgent
from agents.belief import VoidTracker, model_agrees
from uno_env.core import Game, Phase, Rules
from uno_env.core import actions as A
from uno_env.core.cards import KIND_COLOR, KIND_RANK


def watch(rules: Rules, rounds: int, opponents: type = RuleAgent) -> tuple[int, int, int]:
    """Seat 0 (a RuleAgent) with a tracker at tables of ``opponents``: (beliefs held, false ones, cards covered).

    A belief (kinds, count) is false when the player holds fewer than ``count`` cards of other kinds.
    """
    held = false = covered = 0
    for seed in range(rounds):
        game = Game(rules, seed=seed)
        agents = [RuleAgent(), *(opponents() for _ in range(rules.num_players - 1))]
        tracker = VoidTracker()
        while not game.is_round_over:
            seat = game.current_player
            info = game.view(seat)
            if seat == 0:
                tracker.observe(info)
                for other, (kinds, count) in tracker.lacks.items():
                    held += 1
                    covered += count
                    false += sum(k not in kinds for k in game.state.hands[other]) < count
            action = agents[seat].act(None, info)
            if seat == 0:
                tracker.played(info, action)
            game.step(action)
    return held, false, covered


@pytest.mark.parametrize("options", [
    {"num_players": 2}, {"num_players": 4}, {"num_players": 4, "uno_call": "explicit"},
    {"num_players": 4, "seven_zero": True}, {"num_players": 4, "stacking": True, "draw_until_playable": True},
    {"num_players": 6, "teams": True}, {"num_players": 4, "edition": "monster_high"},
    {"num_players": 3, "edition": "angry_birds"}, {"num_players": 4, "edition": "masters_of_the_universe"},
], ids=lambda options: "-".join(f"{k}={v}" for k, v in options.items()))
def test_beliefs_are_true_at_tables_of_players_who_play_when_they_can(options):
    """Against RuleAgents (who draw only when no colored card plays) no belief is ever false, and there are many."""
    held, false, covered = watch(Rules(**options), rounds=40)
    assert false == 0
    assert held > 40 and covered > held


def test_beliefs_about_players_who_draw_at_will_can_be_false():
    """The belief assumes players play when they can; uniformly random players do not, and it shows."""
    held, false, _ = watch(Rules(num_players=2), rounds=40, opponents=RandomAgent)
    assert held > 0 and false > 0


def _kinds(color: int, rank: int) -> set[int]:
    return {k for k in range(52) if KIND_COLOR[k] == color or KIND_RANK[k] == rank}


def test_a_player_who_drew_lacks_the_color_and_number_it_drew_on_until_it_plays_from_that_hand():
    game = stacked_game("classic", 2, dealer=0, start=["R3"], then=["G9", "Y8"],
                        hands={1: ["R5", "R8", "B3", "B6", "B7", "G1", "Y7"],
                               0: ["G2", "G4", "G6", "Y1", "Y2", "Y4", "Y6"]})
    tracker = VoidTracker()

    def seat_1_plays(card: str) -> None:
        view = game.view(1)
        tracker.observe(view)
        tracker.played(view, game.edition.kind(card))
        game.step(f"play {card}")

    seat_1_plays("R5")
    assert tracker.lacks == {}
    game.step(A.DRAW)  # seat 0 draws G9 on R5 and keeps it
    if game.phase == Phase.PLAY_DRAWN:
        game.step(A.KEEP)
    seat_1_plays("R8")
    assert tracker.lacks == {0: (_kinds(0, 5), 8)}  # the seven it held and the G9 it kept
    game.step(A.DRAW)  # seat 0 draws Y8 on R8 and plays it: a new belief replaces the old
    game.step("play Y8")
    seat_1_plays("Y7")
    assert tracker.lacks == {0: (_kinds(0, 8), 8)}
    game.step("play Y6")  # from the hand it held: one card fewer is covered
    tracker.observe(game.view(1))
    assert tracker.lacks == {0: (_kinds(0, 8), 7)}


def test_a_new_round_forgets_every_belief():
    tracker = VoidTracker()
    game = Game(Rules(num_players=2), seed=3)
    agents = [RuleAgent(), RuleAgent()]
    while not tracker.lacks and not game.is_round_over:
        seat = game.current_player
        info = game.view(seat)
        if seat == 0:
            tracker.observe(info)
        action = agents[seat].act(None, info)
        if seat == 0:
            tracker.played(info, action)
        game.step(action)
    assert tracker.lacks
    view = dict(game.view(0))
    view["round"] = int(view["round"]) + 1
    tracker.observe(view)
    assert tracker.lacks == {}


def _moves_beside_the_truth(rules: Rules, rounds: int):
    """Seat 0 (a RuleAgent) with a tracker at RuleAgent tables: per turn of seat 0 whose stretch was read,
    (the tracker's moves, the moves the others made in it as (seat, action, kept), the true state)."""
    for seed in range(rounds):
        game = Game(rules, seed=seed)
        agents = [RuleAgent() for _ in range(rules.num_players)]
        tracker = VoidTracker()
        made: list[tuple[int, int, bool]] = []
        while not game.is_round_over:
            seat = game.current_player
            info = game.view(seat)
            action = agents[seat].act(None, info)
            if seat == 0:
                tracker.observe(info)
                if info["phase"] == "play":
                    if tracker.moves:
                        yield tracker.moves, made, game.state
                    made = []
                tracker.played(info, action)
            elif info["phase"] == "play":
                made.append((seat, action if action < A.NUM_PLAY_ACTIONS else A.DRAW, False))
            elif info["phase"] == "play_drawn" and action == A.KEEP:
                made[-1] = (seat, A.DRAW, True)
            game.step(action)


@pytest.mark.parametrize("num_players", [2, 4])
def test_the_moves_read_from_a_plain_stretch_are_the_moves_the_others_made(num_players):
    """``VoidTracker.moves``: in order, who played which card and who drew (and kept the card drawn),
    with the hand sizes and active color each player faced."""
    read = 0
    for moves, made, state in _moves_beside_the_truth(Rules(num_players=num_players), rounds=30):
        assert [(m.seat, m.action, m.kept) for m in moves] == made
        for m in moves:
            assert m.after == state.public.hand_sizes[m.seat]
            assert m.sizes[m.seat] == m.after + (1 if m.action != A.DRAW else -1 if m.kept else 0)
        read += 1
    assert read > 50


def test_rule_agents_true_hands_make_their_moves_and_the_state_is_untouched():
    """``model_agrees`` with the true state: a RuleAgent dealt the hand it really moved from makes the
    move it made nearly always (its memory of earlier turns, which the model lacks, explains the rest)."""
    rng = random.Random(0)
    agree = total = 0
    for moves, _, state in _moves_beside_the_truth(Rules(num_players=4), rounds=30):
        before = state.copy()
        for move in moves:
            total += 1
            agree += model_agrees(state, move, RuleAgent(), rng)
        assert state.hands == before.hands and astuple(state.public) == astuple(before.public)
    assert total > 200 and agree / total > 0.95
