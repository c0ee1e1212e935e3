"""The ``batched_mirror`` fixture (``tests/batched_mirror.py``) fails when the two engines diverge.

The rule scenarios run mirrored on the batched engine; these tests show that the mirror is not
a check that cannot fail: a batched table perturbed once, a batched engine shuffling with its
own generator, or a refusal the twin does not share each raise ``MirrorDivergence``; what is
not mirrored is recorded with its reason.
"""

from __future__ import annotations

import random

import pytest

pytest.importorskip("torch", reason="the batched engine needs torch: pip install torch==2.13.0")

from tests.batched_mirror import NOT_MIRRORED, Mirror, MirrorDivergence, MirrorRecord, done, start
from tests.helpers import play_out_round, position, stacked_game
from uno_env.batched import rng as batched_rng
from uno_env.core import Game, IllegalActionError, Rules
from uno_env.core.game import Phase

RESHUFFLED = ["B1", "B2", "B3", "G4", "G5", "Y6", "Y7", "B8", "G9"]


def mirrored(monkeypatch: pytest.MonkeyPatch, every: int = 1) -> tuple[Mirror, MirrorRecord]:
    record = MirrorRecord()
    mirror = Mirror(record, every)
    mirror.install(monkeypatch)
    return mirror, record


def a_game() -> Game:
    return stacked_game(hands={1: ["R7", "G7", "Y2", "B3", "W", "G1", "R2"]}, start=["R5"], then=["B9"])


def test_a_scenario_runs_on_both_engines_step_by_step(monkeypatch):
    mirror, record = mirrored(monkeypatch)
    game = a_game()  # the first deal is compared
    game.step("play R7")
    game.step("draw")
    assert (record.deals, record.steps, record.compared) == (1, 2, 3)
    assert sorted(mirror.twins[id(game)].env.to_game(0).hands[2]) == sorted(game.hands[2])
    assert record.not_mirrored is None and record.unchecked == []


def test_a_perturbed_batched_table_makes_the_next_step_fail(monkeypatch):
    mirror, _ = mirrored(monkeypatch)
    game = a_game()
    game.step("play R7")
    twin = mirror.twins[id(game)]
    with mirror.engine_calls():  # the twins' tensors are inference tensors: edited in that mode
        twin.env.tables.scores[0, 2] += 1  # once, on the batched side only
    with pytest.raises(MirrorDivergence, match="scores"):
        game.step("draw")


def test_a_perturbed_draw_pile_is_caught_when_a_card_is_drawn(monkeypatch):
    mirror, _ = mirrored(monkeypatch)
    game = a_game()
    game.step("play R7")
    tables = mirror.twins[id(game)].env.tables
    top = int(tables.draw_len[0]) - 1
    other = int(tables.draw[0, top - 1])
    with mirror.engine_calls():
        tables.draw[0, top - 1], tables.draw[0, top] = tables.draw[0, top].item(), other  # swap the top two cards
    with pytest.raises(MirrorDivergence, match="hands"):
        game.step("draw")


def test_both_engines_reshuffle_alike_only_with_the_games_generator(monkeypatch):
    original = batched_rng.shuffle_keys
    _, record = mirrored(monkeypatch)
    game = position(hands={0: ["R1", "G2", "B4"]}, discard=RESHUFFLED + ["Y0"], draw=[], rest_to=3)
    game.step("draw")  # rule 3.6: the discards under the top card are shuffled into a new draw pile
    assert record.steps == 1 and len(game.draw_pile) == len(RESHUFFLED) - 1
    # The same reshuffle with the batched engine's own generator: the mirror must notice.
    monkeypatch.setattr(batched_rng, "shuffle_keys", original)
    again = position(hands={0: ["R1", "G2", "B4"]}, discard=RESHUFFLED + ["Y0"], draw=[], rest_to=3)
    with pytest.raises(MirrorDivergence):
        again.step("draw")


def test_a_round_end_and_the_next_deal_are_compared_and_a_bad_score_is_caught(monkeypatch):
    mirror, record = mirrored(monkeypatch)
    game = Game(Rules(num_players=2, target_score=10**6), seed=3)
    play_out_round(game, seed=1)
    assert game.phase == Phase.ROUND_OVER
    game.next_round()
    assert record.deals == 2 and record.steps > 10  # the first deal and the next round's
    # A round that ends with a score the batched engine gets wrong:
    game = Game(Rules(num_players=2, target_score=10**6), seed=3)
    original = Mirror.replay

    def perturbed(self, twin, game, action, rng_state):
        if game.is_round_over:
            with self.engine_calls():
                twin.env.tables.scores[0, 0] += 7  # before the batched step: its round-end position differs
        original(self, twin, game, action, rng_state)

    monkeypatch.setattr(Mirror, "replay", perturbed)
    with pytest.raises(MirrorDivergence, match="ended the round"):
        play_out_round(game, seed=1)
    assert game.phase == Phase.ROUND_OVER  # the game itself ended its round as before


def test_a_refusal_must_be_shared(monkeypatch):
    mirror, record = mirrored(monkeypatch)
    game = a_game()
    with pytest.raises(IllegalActionError):
        game.step("play Y2")  # not playable on R5
    assert record.refusals == 1
    # A twin that would take the card: the mirror says so instead of the game's refusal.
    tables = mirror.twins[id(game)].env.tables
    with mirror.engine_calls():
        tables.top[0] = int(game.edition.kind("Y5"))
        tables.active[0] = game.edition.color_index("yellow")
    monkeypatch.setattr(type(mirror.twins[id(game)].env), "_check_actions", lambda self, a, s: a.long())
    with pytest.raises(MirrorDivergence, match="took it"):
        game.step("play Y2")


def test_a_sampled_scenario_replays_every_kth_step_and_every_round_end(monkeypatch):
    _, record = mirrored(monkeypatch, every=5)
    game = Game(Rules(num_players=2, target_score=10**6), seed=3)  # a first deal: 1 of 5 is compared
    choices = random.Random(1)
    steps = 0
    while not game.is_round_over:
        game.step(choices.choice(game.legal_actions()))
        steps += 1
    game.next_round()
    assert record.steps + record.sampled_out == steps + 1
    assert steps // 5 <= record.steps < steps  # every 5th step, the round-ending one and any reshuffle
    assert record.deals == 1  # the next round's deal, after the replayed round-ending step


def test_what_is_not_mirrored_is_recorded_with_its_reason(monkeypatch):
    record = MirrorRecord()
    assert start(record, "tests/test_x.py::test_rules_only[2]", monkeypatch) is not None
    Rules(num_players=3)  # no game dealt or stepped
    done(record)
    assert record.not_mirrored is not None and "no Game was dealt or stepped" in record.not_mirrored
    monkeypatch.setitem(NOT_MIRRORED, "tests/test_x.py::test_listed", "a feature the engine refuses")
    listed = MirrorRecord()
    assert start(listed, "tests/test_x.py::test_listed[a]", monkeypatch) is None
    done(listed)
    assert listed.not_mirrored == "a feature the engine refuses"


def test_an_unseeded_first_deal_is_noted_not_compared(monkeypatch):
    _, record = mirrored(monkeypatch)
    game = Game(Rules(num_players=3))
    game.step(game.legal_actions()[0])
    assert record.deals == 0 and record.steps == 1
    assert record.unchecked == ["the first deal of an unseeded Game (nothing to replay its shuffle from)"]
