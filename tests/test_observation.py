"""The observation encoder (uno_env.observation): layout, bounds, mask, information sets."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from collections.abc import Iterator

import numpy as np
import pytest

from tests.helpers import position
from uno_env.core import EDITIONS, Game, Phase, Rules
from uno_env.observation import (
    DEFAULT_MAX_PLAYERS,
    NUM_ACTIONS,
    OBSERVATION_VERSION,
    RULE_FLAGS,
    action_mask,
    observation_bounds,
    observation_fields,
    observation_size,
    observation_slices,
    observe,
    split_observation,
)

KINDS = 55
PHASES = list(Phase)
EDITION_ORDER = list(EDITIONS)

# (edition, num_players, rule options): every edition at several table sizes, and each variant.
CONFIGS = [
    *[(ed, n, {}) for ed in EDITIONS for n in (2, 3, 4, 10)],
    ("classic", 4, {"teams": True, "seven_zero": True}),
    ("monster_high", 6, {"teams": True, "stacking": True}),
    ("angry_birds", 3, {"elimination": True, "target_score": 60}),
    ("masters_of_the_universe", 3, {"draw_until_playable": True, "uno_call": "auto"}),
    ("classic", 5, {"scoring": "lowest", "allow_bluff": False, "stacking": True, "seven_zero": True}),
]


def reference(view: dict, max_players: int = DEFAULT_MAX_PLAYERS) -> np.ndarray:
    """The documented layout, built slowly from ``game.view(seat)`` alone."""
    ed = EDITIONS[view["edition"]]
    sl = observation_slices(max_players)
    v = np.zeros(observation_size(max_players), np.float32)

    def at(name: str, i: int = 0) -> int:
        return sl[name].start + i

    for code in view["hand"]:
        v[at("hand", ed.kind(code))] += 1
    v[at("top_card", ed.kind(view["top_card"]))] = 1
    if view["active_color"] is not None:
        v[at("active_color", view["colors"].index(view["active_color"]))] = 1
    v[at("phase", PHASES.index(Phase.from_text(view["phase"])))] = 1
    v[at("direction")] = view["direction"]
    if view["drawn_card"] is not None:
        v[at("drawn_card", ed.kind(view["drawn_card"]))] = 1
    for code in view["discard_pile"]:
        v[at("discard", ed.kind(code))] += 1
    v[at("draw_pile_size")] = view["draw_pile_size"]
    v[at("penalty")] = view["penalty"]
    if view["w4_prev_color"] is not None:
        v[at("w4_prev_color", view["colors"].index(view["w4_prev_color"]))] = 1
    v[at("edition", EDITION_ORDER.index(view["edition"]))] = 1
    for i, (name, value) in enumerate(RULE_FLAGS):
        v[at("rules", i)] = view["rules"][name] == value
    n, seat = view["num_players"], view["seat"]
    for offset in range(n):
        other = (seat + offset) % n
        v[at("present", offset)] = 1
        v[at("hand_size", offset)] = view["hand_sizes"][other]
        v[at("score", offset)] = min(view["scores"][other] / view["target_score"], 1.0)
        v[at("uno_called", offset)] = view["uno_called"][other]
        v[at("eliminated", offset)] = view["eliminated"][other]
        same_team = view["teams"][other] is not None and view["teams"][other] == view["team"]
        v[at("teammate", offset)] = offset == 0 or same_team
    if view["current_player"] is not None:
        v[at("to_act", (view["current_player"] - seat) % n)] = 1
        if view["pending_player"] is not None:
            v[at("pending_player", (view["pending_player"] - seat) % n)] = 1
    v[at("dealer", (view["dealer"] - seat) % n)] = 1
    for opp in view["opponents"]:
        for code in opp["known_cards"]:
            v[at("known", (opp["offset"] - 1) * KINDS + ed.kind(code))] += 1
    for offset in range(n):
        other = (seat + offset) % n
        for j, count in enumerate(view["drew_on"][other]):
            if count:
                v[at("drew_on", offset * 17 + j)] = count / view["hand_sizes"][other]
    return v


def random_positions(edition: str, n: int, options: dict, seed: int, steps: int) -> Iterator[Game]:
    """Positions along a seeded random game (new rounds dealt as needed)."""
    game = Game(Rules(edition=edition, num_players=n, **options), seed=seed)
    rng = random.Random(seed)
    for _ in range(steps):
        if game.is_round_over:
            yield game
            if game.is_game_over:
                return
            game.next_round()
        yield game
        game.step(rng.choice(game.legal_actions()))


# ---------------------------------------------------------------- layout
def test_layout_documented_sizes_and_order() -> None:
    m = 10
    fields = observation_fields(m)
    assert [name for name, _ in fields] == [
        "hand", "top_card", "active_color", "phase", "direction", "drawn_card", "discard",
        "draw_pile_size", "penalty", "w4_prev_color", "edition", "rules", "present", "to_act",
        "pending_player", "dealer", "hand_size", "score", "uno_called", "teammate", "eliminated", "known",
        "drew_on",
    ]
    sizes = dict(fields)
    assert sizes["phase"] == len(Phase) == 11
    assert sizes["known"] == (m - 1) * KINDS
    assert sizes["drew_on"] == m * 17
    assert observation_size(10) == 1009  # the figure the module docstring gives
    assert observation_size(10, version=2) == 839  # the layout before drew_on: a prefix
    slices = observation_slices(m)
    assert slices["hand"].start == 0 and slices["drew_on"].stop == observation_size(m)
    assert slices["known"].stop == observation_size(m, version=2)
    assert all(slices[a].stop == slices[b].start for (a, _), (b, _) in zip(fields, fields[1:], strict=False))
    assert isinstance(OBSERVATION_VERSION, int) and OBSERVATION_VERSION >= 1


def test_size_depends_only_on_max_players() -> None:
    sizes = set()
    for edition in EDITIONS:
        for n in (2, 3, 4, 10):
            game = Game(Rules(edition=edition, num_players=n), seed=n)
            sizes.add(observe(game, 0).shape)
            assert observe(game, 0, max_players=10).dtype == np.float32
    assert sizes == {(observation_size(10),)}
    game = Game(Rules(num_players=3), seed=1)
    assert observe(game, 1, max_players=3).shape == (observation_size(3),)
    assert observation_size(2) < observation_size(3) < observation_size(10)


def test_table_larger_than_max_players_is_refused() -> None:
    game = Game(Rules(num_players=5), seed=1)
    with pytest.raises(ValueError, match="max_players"):
        observe(game, 0, max_players=4)
    with pytest.raises(ValueError):
        observe(game, 0, max_players=11)
    with pytest.raises(ValueError):
        observe(game, 5)


def test_split_observation_names_every_slice() -> None:
    game = Game(Rules(edition="angry_birds", num_players=4), seed=3)
    vec = observe(game, 2)
    parts = split_observation(vec)
    assert parts["known"].shape == (9, KINDS)
    assert parts["hand"].sum() == 7 and parts["present"].tolist() == [1] * 4 + [0] * 6
    assert parts["edition"].tolist() == [0, 0, 1, 0]
    with pytest.raises(ValueError):
        split_observation(vec[:-1])


# ---------------------------------------------------------------- every slice, against the view
@pytest.mark.parametrize(("edition", "n", "options"), CONFIGS, ids=[f"{c[0]}-{c[1]}-{sorted(c[2])}" for c in CONFIGS])
def test_observation_matches_documented_layout_and_bounds(edition: str, n: int, options: dict) -> None:
    low, high = observation_bounds(DEFAULT_MAX_PLAYERS)
    checked = 0
    for i, game in enumerate(random_positions(edition, n, options, seed=n, steps=500)):
        if i % 3:
            continue
        for seat in range(n):
            obs = observe(game, seat)
            assert np.array_equal(obs, reference(game.view(seat))), (seat, game)
            assert (obs >= low).all() and (obs <= high).all()
        checked += 1
    assert checked > 50


@pytest.mark.slow  # 2.75 s alone here
def test_encoder_cache_is_safe_across_interleaved_games_and_copies() -> None:
    """The discard-pile cache must never leak between games, clones, saves and reshuffles."""
    rules = Rules(edition="monster_high", num_players=3)
    games = [Game(rules, seed=s) for s in range(3)]
    rng = random.Random(5)
    reshuffles = 0
    for _ in range(600):
        game = rng.choice(games)
        if game.is_round_over:
            if game.is_game_over:
                continue
            game.next_round()
        copies = [game.clone(), Game.from_dict(json.loads(json.dumps(game.to_dict())))]
        for seat in range(3):
            expected = reference(game.view(seat))
            assert np.array_equal(observe(game, seat), expected)
            for copy in copies:
                assert np.array_equal(observe(copy, seat), expected)
        copies[0].step(rng.choice(copies[0].legal_actions()))  # a copy moving on changes nothing here
        assert np.array_equal(observe(game, 0), reference(game.view(0)))
        before = len(game.state.public.discard_pile)
        game.step(rng.choice(game.legal_actions()))
        reshuffles += len(game.state.public.discard_pile) < before
    assert reshuffles > 0


def test_out_buffer_is_filled_in_place() -> None:
    game = Game(Rules(num_players=4), seed=2)
    out = np.full(observation_size(), 7.0, np.float32)
    result = observe(game, 1, out=out)
    assert result is out and np.array_equal(out, observe(game, 1))


# ---------------------------------------------------------------- mask
def test_mask_is_legal_actions_for_the_deciding_seat_and_zero_for_others() -> None:
    seen_phases = set()
    for edition in EDITIONS:
        for game in random_positions(edition, 3, {"seven_zero": True, "stacking": True}, seed=11, steps=400):
            for seat in range(3):
                mask = action_mask(game, seat)
                assert mask.dtype == np.int8 and mask.shape == (NUM_ACTIONS,)
                if seat == game.current_player:
                    assert np.flatnonzero(mask).tolist() == [int(a) for a in game.legal_actions()]
                    assert mask.sum() >= 1
                    seen_phases.add(game.phase)
                else:
                    assert not mask.any()
    assert {Phase.PLAY, Phase.PLAY_DRAWN, Phase.CHOOSE_COLOR, Phase.UNO} <= seen_phases


def test_mask_is_all_zero_once_the_round_is_over() -> None:
    for game in random_positions("monster_high", 2, {"target_score": 1}, seed=4, steps=5000):
        if game.is_round_over:
            assert all(not action_mask(game, s).any() for s in range(2))
            obs = split_observation(observe(game, 0))
            assert not obs["to_act"].any() and obs["phase"][PHASES.index(game.phase)] == 1
            return
    pytest.fail("no round ended")


# ---------------------------------------------------------------- information sets
@pytest.mark.parametrize("edition", list(EDITIONS))
def test_determinize_never_changes_the_seat_observation_and_does_change_hidden_cards(edition: str) -> None:
    rng = random.Random(3)
    hidden_changed = others_changed = checked = 0
    options = {"seven_zero": True} if edition == "classic" else {}
    for i, game in enumerate(random_positions(edition, 4, options, seed=9, steps=400)):
        if i % 7 or game.is_round_over:
            continue
        for seat in range(4):
            copy = game.determinize(seat, rng)
            assert np.array_equal(observe(copy, seat), observe(game, seat))
            assert np.array_equal(action_mask(copy, seat), action_mask(game, seat))
            hidden = [h for s, h in enumerate(game.hands) if s != seat] + [game.draw_pile]
            hidden_copy = [h for s, h in enumerate(copy.hands) if s != seat] + [copy.draw_pile]
            hidden_changed += hidden != hidden_copy
            others_changed += any(
                not np.array_equal(observe(copy, s), observe(game, s)) for s in range(4) if s != seat
            )
            checked += 1
    assert checked > 20
    assert hidden_changed >= checked * 0.9
    assert others_changed >= checked * 0.5  # other seats' observations do see those cards


def test_determinize_with_another_seat_deciding_on_its_drawn_card_and_empty_draw_pile() -> None:
    """Was an engine bug (no playable card left in the resampled pool); fixed in determinize."""
    game = position("classic", hands={0: ["B1", "B2"]}, discard=["R7"], draw=["R3"], current=0, rest_to=1)
    game.step("draw")
    assert game.phase == Phase.PLAY_DRAWN and game.draw_pile == []
    for seed in range(5):
        copy = game.determinize(2, seed)
        assert np.array_equal(observe(copy, 2), observe(game, 2))
        assert copy.phase == Phase.PLAY_DRAWN and copy.drawn_card is not None


def test_knowledge_from_random_play_shows_up_in_known_slice() -> None:
    """Gifts, King Pig deals and challenges all occur in random play and are encoded."""
    for edition in ("monster_high", "angry_birds", "classic"):
        found = False
        for game in random_positions(edition, 4, {}, seed=21, steps=3000):
            if any(split_observation(observe(game, s))["known"].any() for s in range(4)):
                found = True
                break
        assert found, edition


def test_rule_4_5_urrrhhh_gifts_known_to_giver_only() -> None:
    game = position(
        "monster_high",
        hands={0: ["B1", "B2"], 1: ["WU", "PD", "P7", "B4", "P0", "PS", "P3", "W"], 2: ["G1", "G2"], 3: ["Y1", "Y2"]},
        discard=["P5"], current=1,
    )
    for action in ("play WU", "give pink"):
        game.step(action)
    ed = EDITIONS["monster_high"]
    giver = split_observation(observe(game, 1))["known"]
    # Offsets from seat 1: seat 2 is +1, seat 3 is +2, seat 0 is +3.
    assert sorted(ed.code(k) for k in np.flatnonzero(giver[0])) == ["P0", "PS"]
    assert sorted(ed.code(k) for k in np.flatnonzero(giver[1])) == ["P3", "PD"]
    assert [ed.code(k) for k in np.flatnonzero(giver[2])] == ["P7"]
    for seat in (0, 2, 3):
        assert not split_observation(observe(game, seat))["known"].any()
    receiver = split_observation(observe(game, 2))["hand"]
    assert receiver[ed.kind("P0")] == 1 and receiver[ed.kind("PS")] == 1


def test_rule_4_6_king_pig_deals_are_known_to_everyone() -> None:
    game = position(
        "angry_birds", num_players=3,
        hands={0: ["Y1", "Y2"], 1: ["WK", "B1", "B2"], 2: ["G1", "G2"]},
        discard=["G5"], current=1, draw=["W", "Y3", "B7", "R7"],
    )
    for action in ("play WK", "color red"):
        game.step(action)
    ed = EDITIONS["angry_birds"]
    dealt = {2: ["R7", "W"], 0: ["Y3"], 1: ["B7"]}
    for observer in range(3):
        known = split_observation(observe(game, observer))["known"]
        for target, cards in dealt.items():
            if target != observer:
                row = known[(target - observer) % 3 - 1]
                assert sorted(ed.code(k) for k in np.flatnonzero(row)) == sorted(cards)


def test_rule_5_4_challenged_hand_is_shown_to_the_challenger_alone() -> None:
    game = position("classic", hands={0: ["W4", "R1", "G2"]}, discard=["R7"], current=0)
    for action in ("play W4", "color blue"):
        game.step(action)
    assert game.phase == Phase.CHALLENGE
    before = split_observation(observe(game, 1))
    assert before["w4_prev_color"].tolist() == [1, 0, 0, 0]  # red was active before the W4
    assert before["penalty"][0] == 4 and before["pending_player"][3] == 1
    game.step("challenge")
    ed = EDITIONS["classic"]
    challenger = split_observation(observe(game, 1))["known"]
    assert sorted(ed.code(k) for k in np.flatnonzero(challenger[2])) == ["G2", "R1"]  # seat 0 is +3 from 1
    for seat in (2, 3):
        assert not split_observation(observe(game, seat))["known"].any()


def test_drawn_card_is_seen_only_by_the_drawer() -> None:
    game = position("classic", hands={0: ["B1"]}, discard=["R7"], draw=["R3"], current=0)
    game.step("draw")
    assert game.phase == Phase.PLAY_DRAWN
    assert split_observation(observe(game, 0))["drawn_card"][EDITIONS["classic"].kind("R3")] == 1
    for seat in (1, 2, 3):
        assert not split_observation(observe(game, seat))["drawn_card"].any()


def test_encoder_imports_no_rl_framework() -> None:
    code = (
        "import sys, uno_env.observation, uno_env\n"
        "uno_env.observe, uno_env.action_mask\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('pettingzoo', 'gymnasium', 'torch')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
