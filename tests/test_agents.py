"""Baseline agents (agents/): legality under every rule option, the documented policies, HumanAgent."""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

import numpy as np
import pytest

from agents import Agent, HumanAgent, RandomAgent, RuleAgent, SimpleRuleAgent, make_agent
from agents.registry import agent_label
from agents.tournament import evaluate
from tests.helpers import play, position
from uno_env.core import EDITIONS, Game, Rules
from uno_env.core import actions as A

# Rule options, each variant alone and some together (elimination needs a low target to end).
OPTION_SETS: list[dict[str, Any]] = [
    {}, {"uno_call": "auto"}, {"allow_bluff": False}, {"scoring": "lowest"}, {"teams": True},
    {"elimination": True, "target_score": 60}, {"stacking": True}, {"seven_zero": True},
    {"draw_until_playable": True},
    {"teams": True, "stacking": True, "seven_zero": True, "draw_until_playable": True, "uno_call": "auto"},
]
SPECS = ("random", "random-uniform", "simple", "rule")


def _mask(ids: list[int]) -> np.ndarray:
    mask = np.zeros(A.NUM_ACTIONS, np.int8)
    mask[ids] = 1
    return mask


def _play_checked(game: Game, agents: list[Agent], max_steps: int = 5000) -> int:
    """Play until the game ends (or max_steps), asserting every chosen action is unmasked."""
    steps = 0
    while not game.is_game_over and steps < max_steps:
        if game.is_round_over:
            game.next_round()
            continue
        seat = game.current_player
        assert seat is not None
        info = game.view(seat)
        mask = _mask(info["legal_action_ids"])
        action = agents[seat].act({"action_mask": mask}, info)
        assert mask[action] == 1, (agents[seat], info["phase"], action, info["legal_actions"])
        game.step(action)
        steps += 1
    return steps


@pytest.mark.parametrize("edition", sorted(EDITIONS))
@pytest.mark.parametrize("options", OPTION_SETS, ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()) or "default")
def test_agents_never_pick_a_masked_action_under_any_rule_option(edition: str, options: dict[str, Any]) -> None:
    rng = random.Random(f"{edition}{sorted(options.items())}")
    for num_players in (2, 4) if not options.get("teams") else (4, 6):
        if options.get("draw_until_playable"):  # uniform random draws forever under it
            specs = ("random", "simple", "rule")
        else:
            specs = SPECS
        agents = [make_agent(rng.choice(specs)) for _ in range(num_players)]
        agents[0] = RuleAgent()
        agents[1] = SimpleRuleAgent()
        for i, agent in enumerate(agents):
            agent.seed(i)
        rules = Rules(edition=edition, num_players=num_players, **{"target_score": 150, **options})
        game = Game(rules, seed=rng.randrange(10**6))
        steps = _play_checked(game, agents)
        assert steps > 0


# ---------------------------------------------------------------------- RandomAgent
def test_random_agent_default_plays_a_card_whenever_it_holds_one() -> None:
    game = position(hands={0: ["R2", "R9", "G4", "B1"]}, discard=["R5"])
    info = game.view(0)
    choices = Counter(RandomAgent(seed=s).act(None, info) for s in range(600))
    assert A.DRAW not in choices
    assert set(choices) == {game.parse_action("play R2"), game.parse_action("play R9")}
    # uniform over the two playable cards
    assert 240 < choices[game.parse_action("play R2")] < 360


def test_random_agent_uniform_option_is_uniform_over_every_legal_action() -> None:
    game = position(hands={0: ["R2", "R9", "G4", "B1"]}, discard=["R5"])
    info = game.view(0)
    agent = RandomAgent(seed=3, uniform=True)
    choices = Counter(agent.act(None, info) for _ in range(900))
    assert set(choices) == set(info["legal_action_ids"]) and len(choices) == 3
    assert all(240 < c < 360 for c in choices.values())


def test_random_agent_draws_only_with_nothing_playable() -> None:
    game = position(hands={0: ["G4", "B1"]}, discard=["R5"])
    assert RandomAgent(seed=0).act(None, game.view(0)) == A.DRAW


def test_random_agent_is_uniform_over_other_decisions_such_as_uno_calls() -> None:
    game = play(position(hands={0: ["R2", "R3"]}, discard=["R5"]), ["play R2"])
    info = game.view(0)
    assert info["phase"] == "uno"
    calls = Counter(RandomAgent(seed=s).act(None, info) for s in range(400))
    assert set(calls) == {A.UNO, A.NO_UNO} and 150 < calls[A.UNO] < 250


def test_random_agent_same_seed_same_choices_and_reseeding_restarts() -> None:
    game = position(hands={0: ["R2", "R9", "R4", "R1"]}, discard=["R5"])
    info = game.view(0)
    first = RandomAgent(seed=11)
    run = [first.act(None, info) for _ in range(20)]
    assert [RandomAgent(seed=11).act(None, info) for _ in range(1)] == run[:1]
    first.seed(11)
    assert [first.act(None, info) for _ in range(20)] == run


def test_random_agent_plays_from_the_action_mask_alone() -> None:
    mask = np.zeros(A.NUM_ACTIONS, np.int8)
    mask[[3, A.DRAW]] = 1
    assert RandomAgent(seed=0).act({"action_mask": mask}, None) == 3  # type: ignore[arg-type]


# ---------------------------------------------------------------------- SimpleRuleAgent
def test_simple_agent_sheds_the_highest_value_card_and_keeps_wilds() -> None:
    game = position(hands={0: ["R2", "R9", "RS", "W", "W4"]}, discard=["R5"])
    assert str(game.action(SimpleRuleAgent().act(None, game.view(0)))) == "play RS"
    game = position(hands={0: ["B2", "W", "G7"]}, discard=["R5"])
    assert str(game.action(SimpleRuleAgent().act(None, game.view(0)))) == "play W"


def test_simple_agent_names_its_most_held_color_and_never_challenges() -> None:
    game = play(position(hands={0: ["W", "G2", "G3", "B1"], 1: ["B5", "B6"]}, discard=["R5"], num_players=2),
                ["play W"])
    assert SimpleRuleAgent().act(None, game.view(0)) == A.COLOR_BASE + 2  # green
    game = play(position(hands={0: ["W4", "G2", "G3"], 1: ["B5", "B6", "R1"]}, discard=["R5"], num_players=2),
                ["play W4", "color green"])
    assert game.phase.text == "challenge" and SimpleRuleAgent().act(None, game.view(1)) == A.ACCEPT


# ---------------------------------------------------------------------- RuleAgent
def _rule_choice(game: Game, seat: int | None = None, agent: RuleAgent | None = None) -> str:
    seat = game.current_player if seat is None else seat
    assert seat is not None
    return str(game.action((agent or RuleAgent()).act(None, game.view(seat))))


def test_rule_agent_goes_out_with_its_last_card() -> None:
    assert _rule_choice(position(hands={0: ["W"]}, discard=["R5"])) == "play W"


def test_rule_agent_keeps_wilds_while_a_colored_card_plays() -> None:
    assert _rule_choice(position(hands={0: ["R2", "W", "W4", "G7"]}, discard=["R5"])) == "play R2"


def test_rule_agent_hits_a_next_player_about_to_go_out() -> None:
    game = position(hands={0: ["R9", "RD", "G7"], 1: ["B3"]}, discard=["R5"])
    assert _rule_choice(game) == "play RD"


def test_rule_agent_does_not_bluff_a_drawn_wild_draw_four() -> None:
    game = play(position(hands={0: ["G2", "B3"]}, discard=["Y5"], draw=["W4"], num_players=2), ["draw"])
    assert game.phase.text == "play_drawn" and _rule_choice(game) == "play W4"  # honest: no yellow held
    game = play(position(hands={0: ["Y2", "B3"]}, discard=["Y5"], draw=["W4"], num_players=2), ["draw"])
    assert game.phase.text == "play_drawn" and _rule_choice(game) == "keep"  # would be a bluff
    assert SimpleRuleAgent().act(None, game.view(0)) == game.parse_action("play W4")


def test_rule_agent_names_its_strongest_color() -> None:
    game = play(position(hands={0: ["W", "B1", "B2", "B7", "G3"]}, discard=["R5"]), ["play W"])
    assert _rule_choice(game) == "color blue"


def test_rule_agent_always_calls_uno_and_catches_a_rival() -> None:
    game = play(position(hands={0: ["R2", "R3"]}, discard=["R5"]), ["play R2"])
    assert _rule_choice(game) == "uno"
    game = play(position(hands={1: ["R2", "R3"]}, discard=["R5"], current=1), ["play R2", "no-uno"])
    assert game.phase.text == "catch" and game.current_player == 2
    assert _rule_choice(game) == "catch"


def test_rule_agent_never_catches_its_partner() -> None:
    game = play(position(hands={1: ["R2", "R3"]}, discard=["R5"], current=1, teams=True),
                ["play R2", "no-uno", "no-catch"])
    assert game.phase.text == "catch" and game.current_player == 3  # seat 3 is seat 1's partner
    assert _rule_choice(game) == "no-catch"
    assert str(game.action(SimpleRuleAgent().act(None, game.view(3)))) == "no-catch"


def _w4_on_seat_2(**options: Any) -> Game:
    hands = {1: ["W4", "G2", "G3", "B4", "B5"], 2: ["Y1", "Y2", "Y3"]}
    return play(position(hands=hands, discard=["R5"], current=1, **options), ["play W4", "color green"])


def test_rule_agent_challenges_when_it_has_seen_the_previous_color() -> None:
    game = _w4_on_seat_2()
    info = game.view(2)
    assert info["phase"] == "challenge" and info["w4_prev_color"] == "red"
    seen = {**info, "opponents": [dict(o, known_cards=["R8"]) if o["seat"] == 1 else o for o in info["opponents"]]}
    assert RuleAgent().act(None, seen) == A.CHALLENGE
    whole_hand = {**info, "opponents": [dict(o, known_cards=["G2", "G3", "B4", "B5"]) if o["seat"] == 1 else o
                                        for o in info["opponents"]]}
    assert RuleAgent().act(None, whole_hand) == A.ACCEPT  # seen the whole hand: no red, innocent
    assert RuleAgent(challenge=False).act(None, seen) == A.ACCEPT


def test_rule_agent_never_challenges_when_bluffs_are_forbidden() -> None:
    game = _w4_on_seat_2(allow_bluff=False)
    info = game.view(2)
    seen = {**info, "opponents": [dict(o, known_cards=["R8"]) if o["seat"] == 1 else o for o in info["opponents"]]}
    assert RuleAgent().act(None, seen) == A.ACCEPT


def test_rule_agent_gives_away_the_color_it_holds_most() -> None:
    game = play(position("monster_high", hands={0: ["WU", "B1", "B2", "B3", "G1", "P4"]}, discard=["Y5"]),
                ["play WU"])
    assert game.phase.text == "give_away" and _rule_choice(game) == "give blue"


def test_rule_agent_plays_urrrhhh_to_go_out() -> None:
    game = position("monster_high", hands={0: ["WU", "B1", "B2"]}, discard=["Y5"], num_players=3)
    assert _rule_choice(game) == "play WU"
    agent = RuleAgent()
    game.step(agent.act(None, game.view(0)))
    game.step(agent.act(None, game.view(0)))
    assert game.is_round_over and game.round_winner == 0


def test_rule_agent_unleashes_greyskull_on_a_player_about_to_go_out() -> None:
    quiet = position("masters_of_the_universe", hands={0: ["WG", "B1", "G4", "R2"]}, discard=["B5"])
    assert _rule_choice(quiet) == "play B1"
    urgent = position("masters_of_the_universe", hands={0: ["WG", "B1", "G4", "R2"], 2: ["P3"]}, discard=["B5"])
    assert _rule_choice(urgent) == "play WG"


def test_rule_agent_swaps_hands_with_the_smallest_hand_under_seven_zero() -> None:
    game = position(hands={0: ["R7", "G1", "G2", "B3", "B4"], 2: ["Y1", "Y2"]}, discard=["R5"], seven_zero=True)
    assert _rule_choice(game) == "play R7"  # gains three cards' worth
    game.step("play R7")
    assert game.phase.text == "swap" and _rule_choice(game) == "swap +2"
    assert str(game.action(SimpleRuleAgent().act(None, game.view(0)))) == "swap +2"


def test_rule_agent_stacks_a_draw_two_under_stacking() -> None:
    game = play(position(hands={0: ["RD", "G1", "G2"], 1: ["BD", "B4", "Y1"]}, discard=["R5"], stacking=True),
                ["play RD"])
    assert game.phase.text == "stack" and _rule_choice(game) == "play BD"


@pytest.mark.slow
def test_rule_agent_beats_random_agents_at_two_and_four_players() -> None:
    two = evaluate(["rule", "random"], Rules(num_players=2), games=300, seed=1)
    assert two.stats()[0].win_rate > 0.7
    four = evaluate(["rule", "random", "random", "random"], Rules(num_players=4), games=200, seed=1)
    assert four.stats()[0].ci_low > 0.25


# ---------------------------------------------------------------------- HumanAgent
def _scripted(lines: list[str]) -> tuple[HumanAgent, list[str]]:
    shown: list[str] = []
    feed = iter(lines)
    return HumanAgent(input_fn=lambda _prompt: next(feed), output_fn=shown.append), shown


def test_human_agent_reads_text_ids_and_bare_card_codes() -> None:
    game = position(hands={0: ["R2", "G4", "W"]}, discard=["R5"])
    info = game.view(0)
    agent, shown = _scripted(["play r2"])
    assert agent.act(None, info) == game.parse_action("play R2")
    assert "your hand: R2 G4 W" in shown[0] and "[55] draw" in shown[0]
    agent, _ = _scripted(["55"])
    assert agent.act(None, info) == A.DRAW
    agent, _ = _scripted(["  W "])
    assert agent.act(None, info) == game.parse_action("play W")


def test_human_agent_reprompts_on_bad_input_with_a_clear_message() -> None:
    game = position(hands={0: ["R2", "G4", "W"]}, discard=["R5"])
    agent, shown = _scripted(["", "play G4", "70", "fly away", "draw"])
    assert agent.act(None, game.view(0)) == A.DRAW
    errors = shown[1:]
    assert len(errors) == 4
    assert "'play G4' is not legal now" in errors[1] and "'70' is not legal now" in errors[2]
    assert all("type an action id or its text" in e and "55 (draw)" in e for e in errors)


# ---------------------------------------------------------------------- specs
def test_make_agent_reads_names_options_and_module_paths() -> None:
    rule = make_agent("rule:challenge=false,urrrhhh_min=3")
    assert isinstance(rule, RuleAgent) and rule.challenge is False and rule.urrrhhh_min == 3
    uniform = make_agent("random-uniform:seed=4")
    assert isinstance(uniform, RandomAgent) and uniform.uniform
    assert isinstance(make_agent("agents.rule_agent:SimpleRuleAgent", allow_import=True), SimpleRuleAgent)
    assert agent_label("agents.rule_agent:SimpleRuleAgent") == "SimpleRuleAgent"
    for bad in ("nobody", "rule:speed=9", "rule:challenge", "agents.nowhere:Thing"):
        with pytest.raises(ValueError):
            make_agent(bad)


def test_rule_agent_innocent_challenge_against_a_sure_bluffer_resets_the_belief():
    """An innocent verdict the belief called impossible must not divide by zero."""
    agent = RuleAgent()
    agent._bluffer[1] = 1.0
    agent._pending = (1, 5, 1, 1.0)  # offender 1, our hand had 5 cards, round 1, colour surely held
    agent._settle_challenge({"round": 1, "hand": ["R1"] * 7})  # we drew 6 - 4: innocent
    assert agent._bluffer[1] == agent.bluff_prior
