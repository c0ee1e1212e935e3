"""``uno_env.batched.BatchedUno`` is ``uno_env.core.Game`` and ``uno_env.uno_v0``, table by table.

The lockstep runs (``tests/batched_reference.py``) step every table of a batch and a reference
``raw_env`` with the same actions and compare them after every step: observation and mask bit
for bit, seat to act, rewards, termination, truncation, and whole positions. The reference
shuffles exactly as the table does, so reshuffles and new deals are compared too; the resync
test instead lets the reference use its own generator and continues through ``to_game``.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="the batched engine needs torch: pip install torch==2.13.0")
# ruff: noqa: E402  (the imports below need torch, so they follow the skip)

from tests.batched_reference import EngineShuffle, Lockstep, normalised
from tests.helpers import table_position
from uno_env.batched import BatchedUno
from uno_env.batched import rng as batched_rng
from uno_env.core import EDITIONS, Game, Rules, stacked_deck
from uno_env.core.game import Phase
from uno_env.observation import action_mask, observe

torch.set_num_threads(1)

EDITION_NAMES = list(EDITIONS)
SIZES = list(range(2, 11))
SPECIAL_EVENT = {"monster_high": "give", "angry_birds": "king_pig", "masters_of_the_universe": "greyskull"}
# What every long run must have exercised: the rules whose code paths a table can take.
EXERCISED = {"play", "draw", "keep", "color", "skip", "reverse", "challenge", "guilty", "innocent", "accept",
             "uno", "no_uno", "catch", "no_catch", "reshuffle", "round_end", "terminated"}


def options_per_table(count: int) -> dict[str, list[Any]]:
    """Rule options varied across the tables of one batch."""
    return {
        "uno_call": ["auto" if i % 3 == 2 else "explicit" for i in range(count)],
        "allow_bluff": [i % 4 != 3 for i in range(count)],
        "scoring": ["lowest" if i % 5 == 4 else "standard" for i in range(count)],
    }


def lockstep(edition: str | list[str], episode: str, reward: str, tables_per_size: int = 2, seed: int = 0,
             max_turns: int = 600, random_every: int = 2, **options: Any) -> Lockstep:
    count = tables_per_size * len(SIZES)
    players = [SIZES[i % len(SIZES)] for i in range(count)]
    env = BatchedUno(count, edition=edition, num_players=players, episode=episode, reward=reward, seed=seed,
                     max_turns=max_turns, **{**options_per_table(count), **options})
    # Tables of every size get both policies (uniform random at one in ``random_every``).
    policy = ["random" if (i // len(SIZES)) % random_every == 1 else "plays-first" for i in range(count)]
    run = Lockstep(env, policy, seed=seed, full_every=16)
    run.start()
    return run


@pytest.mark.slow
@pytest.mark.parametrize("edition", EDITION_NAMES)
def test_rounds_match_the_engine_and_env_step_by_step(edition):
    run = lockstep(edition, "round", "win", tables_per_size=6, seed=EDITION_NAMES.index(edition), max_turns=150,
                   random_every=4)
    seen = run.run(1200)
    assert EXERCISED | {"truncated"} <= set(seen), EXERCISED - set(seen)
    if edition in SPECIAL_EVENT:
        assert seen[SPECIAL_EVENT[edition]] > 0
    assert seen["terminated"] >= 100 and seen["truncated"] >= 100


@pytest.mark.slow
def test_whole_games_with_score_rewards_match_mixed_editions():
    editions = [EDITION_NAMES[i % 4] for i in range(54)]
    run = lockstep(editions, "game", "score", tables_per_size=6, seed=11, max_turns=5000, target_score=150,
                   random_every=4)
    seen = run.run(800)
    assert EXERCISED | {"game_end", "give", "king_pig", "greyskull"} <= set(seen)
    assert seen["round_end"] > seen["game_end"] > 10  # later rounds dealt by the table's own shuffles


@pytest.mark.slow
def test_whole_games_with_win_rewards_match():
    editions = [EDITION_NAMES[(i * 3) % 4] for i in range(36)]
    run = lockstep(editions, "game", "win", tables_per_size=4, seed=5, max_turns=5000, target_score=100,
                   random_every=4)
    seen = run.run(700)
    assert seen["game_end"] > 5 and seen["round_end"] > seen["game_end"]


def test_a_short_lockstep_run():
    """The fast subset's lockstep: a few hundred decisions over every edition and table size."""
    editions = [EDITION_NAMES[i % 4] for i in range(18)]
    run = lockstep(editions, "round", "win", tables_per_size=2, seed=3)
    seen = run.run(40)
    assert seen["decisions"] == 40 * 18 and seen["play"] > 0 and seen["draw"] > 0


VARIANTS = [
    {"teams": True}, {"stacking": True}, {"seven_zero": True}, {"draw_until_playable": True}, {"elimination": True},
    {"stacking": True, "seven_zero": True, "draw_until_playable": True},
    {"teams": True, "stacking": True, "seven_zero": True, "scoring": "lowest"},
    {"elimination": True, "stacking": True, "seven_zero": True},
]


@pytest.mark.slow
@pytest.mark.parametrize("episode, reward", [("round", "win"), ("game", "score"), ("game", "win")])
def test_section_7_variants_match(episode, reward):
    """Partners, elimination, stacking, seven-zero and draw until playable, alone and together, every edition."""
    tables = [(EDITION_NAMES[(i // len(VARIANTS)) % 4], n, VARIANTS[i % len(VARIANTS)])
              for i, n in enumerate([4, 6, 8, 10, 3, 5, 4, 6] * 6)]
    columns: dict[str, list[Any]] = {}
    for name in ("teams", "stacking", "seven_zero", "draw_until_playable", "elimination"):
        columns[name] = [variant.get(name, False) for _, _, variant in tables]
    columns["scoring"] = [variant.get("scoring", "standard") for _, _, variant in tables]
    env = BatchedUno(len(tables), edition=[e for e, _, _ in tables], num_players=[n for _, n, _ in tables],
                     episode=episode, reward=reward, target_score=120, max_turns=400, seed=13, **columns)
    run = Lockstep(env, ["random" if i % 3 == 2 else "plays-first" for i in range(len(tables))], seed=13,
                   full_every=8)
    run.start()
    seen = run.run(300)
    assert {"swap", "rotate", "phase stack", "phase swap", "round_end", "challenge"} <= set(seen)
    if episode == "game":
        assert seen["eliminated"] > 0
    assert seen["round_end"] >= 20


# ---------------------------------------------------------------------------- exact deals
FIRST_CARDS = {
    "number": ["R5"], "skip": ["RS"], "reverse": ["RR"], "draw_two": ["RD"], "wild": ["W"],
    "wild_draw_four_returned": ["W4", "G3"], "two_wild_draw_fours": ["W4", "W4", "B9"],
}


@pytest.mark.parametrize("first", list(FIRST_CARDS))
def test_rule_2_3_first_card_deals_as_the_engine(first):
    editions = ["classic", "angry_birds", "monster_high", "masters_of_the_universe", "classic"]
    players = [2, 3, 4, 7, 10]
    decks, dealers = [], []
    for i, (edition, n) in enumerate(zip(editions, players, strict=True)):
        ed = EDITIONS[edition]
        start = [c if c.startswith("W") else ed.letters[0] + c[1:] for c in FIRST_CARDS[first]]
        dealers.append(i % n)
        decks.append(stacked_deck(edition, n, i % n, start=start))
    env = BatchedUno(len(editions), edition=editions, num_players=players, episode="round")
    run = Lockstep(env, ["random"] * len(editions), full_every=1)
    run.start(decks=decks, dealers=dealers)  # compares every table with Game(deck=..., dealer=...)
    run.run(15)


def test_special_wild_turned_first_acts_as_a_plain_wild():
    editions = ["monster_high", "angry_birds", "masters_of_the_universe"]
    decks = [stacked_deck(e, 4, 1, start=[EDITIONS[e].special_code or "W"]) for e in editions]
    env = BatchedUno(3, edition=editions, num_players=4, episode="round")
    run = Lockstep(env, ["plays-first"] * 3, full_every=1)
    run.start(decks=decks, dealers=[1, 1, 1])
    assert all(Phase.from_text(p) is Phase.CHOOSE_COLOR for p in [ref.game.phase.text for ref in run.refs])
    run.run(10)


# ---------------------------------------------------------------------------- scenarios through a refill
def scripted(games: list[Game], *script: list[str]) -> Lockstep:
    """``games`` as a batch, stepped by action texts (one list per step, one text per table), compared each step."""
    env = BatchedUno.from_games(games, episode="round", seed=17)
    run = Lockstep(env, ["random"] * len(games), full_every=1)
    run.attach(games)
    for texts in script:
        run.step(torch.tensor([int(g.parse_action(text)) for g, text in zip(run_games(run), texts, strict=True)]))
    return run


def run_games(run: Lockstep) -> list[Game]:
    games = [ref.game for ref in run.refs]
    assert all(g is not None for g in games)
    return games  # type: ignore[return-value]


def test_rule_4_6_king_pig_deals_on_through_a_reshuffle_and_every_seat_sees_the_cards():
    below = ["Y1", "Y2", "Y3", "B4", "B5", "G6", "G7", "R8", "B8", "Y9"]
    game = table_position("angry_birds", 3, hands=[["WK", "G1", "G2"], ["B1", "B2"], ["Y4", "Y5"]], top="G5",
                          below=below, draw=["Y6", "B6"], leftover=2)
    run = scripted([game], ["play WK"], ["color red"])
    seen = run.seen
    events = [e["type"] for e in run_games(run)[0].events()]
    assert events.count("king_pig") >= 3 and "reshuffle" in events  # the deal went on after the refill
    assert seen["decisions"] == 2


def test_rule_4_7_greyskull_draws_through_a_reshuffle_and_runs_out():
    below = ["B1", "B2", "R3", "R4", "G5"]
    game = table_position("masters_of_the_universe", 4, hands=[["WG", "G1"], ["B3"], ["R5"], ["P2"]], top="G2",
                          below=below, draw=["G3", "G4"], leftover=3)
    run = scripted([game], ["play WG"], ["color green"])
    events = [e["type"] for e in run_games(run)[0].events()]
    assert "reshuffle" in events and "pass" in events  # 2 + 5 cards for 9 draws: the last seat runs dry


def test_rule_4_5_giver_left_without_cards_goes_out():
    game = table_position("monster_high", 3, hands=[["WU", "B1", "B2"], ["G1", "G2"], ["Y3"]], top="B5")
    run = scripted([game], ["play WU"], ["give blue"])
    assert run_games(run)[0].round_winner is None  # the reference went out, then the batch dealt a new round
    assert run.seen["terminated"] == 1


# ---------------------------------------------------------------------------- to_game / from_games
@pytest.mark.slow
def test_resync_through_to_game_after_a_reshuffle():
    """The reference keeps its own generator; after each reshuffle it continues from ``to_game``."""
    count = 18
    players = [SIZES[i % 9] for i in range(count)]
    editions = [EDITION_NAMES[i % 4] for i in range(count)]
    env = BatchedUno(count, edition=editions, num_players=players, episode="round", seed=8, max_turns=100_000)
    state = env.reset()
    games = [env.to_game(i) for i in range(count)]
    generator = torch.Generator().manual_seed(8)
    resyncs = 0
    for step in range(300):
        noise = torch.rand(state.action_mask.shape, generator=generator)
        actions = torch.where(state.action_mask, noise, -1.0).argmax(1)
        counters = env.tables.rng_counter.clone()
        state = env.step(actions)
        for i, game in enumerate(games):
            before = len(game.log)
            game.step(int(actions[i]))
            reshuffled = any(e[0] == "reshuffle" for e in game.log[before:])
            ended = bool(state.terminated[i] or state.truncated[i])
            if reshuffled or ended:
                # The table reshuffled too (its own generator: one counter step per refill).
                assert reshuffled <= bool(env.tables.rng_counter[i] > counters[i])
                games[i] = env.to_game(i)
                resyncs += reshuffled
                continue
            if (step + i) % 4 == 0:
                assert normalised(game.to_dict()) == normalised(env.table_dict(i))
            seat = game.current_player
            assert np.array_equal(observe(game, seat), state.observation[i].numpy())
    assert resyncs >= 10


def snapshots_in_every_phase(seed: int) -> list[Game]:
    """Positions from random Python games, several in each decision phase, every edition, 2-10 seats."""
    rng = random.Random(seed)
    want = [Phase.PLAY, Phase.PLAY_DRAWN, Phase.CHOOSE_COLOR, Phase.CHALLENGE, Phase.UNO, Phase.CATCH]
    found: list[Game] = []
    variants = {"stacking": True, "seven_zero": True, "draw_until_playable": True}
    for edition, options in [(e, {}) for e in EDITION_NAMES] + [("classic", variants)]:
        phases = want + ([Phase.GIVE_AWAY] if edition == "monster_high" else [])
        phases += [Phase.STACK, Phase.SWAP] if options else []
        need = Counter({p: 2 for p in phases})
        for attempt in range(40):
            n = 2 + (attempt % 9)
            game = Game(Rules(edition=edition, num_players=n, **options), seed=rng.getrandbits(32))
            for _ in range(3000):
                if game.is_round_over:
                    break
                if need[game.phase] > 0 and rng.random() < 0.3:
                    need[game.phase] -= 1
                    found.append(game.clone())
                game.step(rng.choice(game.legal_actions()))
            if not +need:
                break
        assert not +need, f"{edition}: no position found for {sorted(+need)}"
    return found


def test_from_games_in_every_phase_continue_identically():
    games = snapshots_in_every_phase(seed=21)
    env = BatchedUno.from_games(games, episode="round", seed=4)
    for i, game in enumerate(games):
        assert normalised(game.to_dict()) == normalised(env.table_dict(i))
    run = Lockstep(env, ["random" if i % 2 else "plays-first" for i in range(len(games))], full_every=2)
    run.attach(games)
    run.run(30)


def test_to_game_and_from_games_round_trip():
    env = BatchedUno(12, edition=[EDITION_NAMES[i % 4] for i in range(12)], num_players=[2, 3, 5, 10] * 3, seed=2)
    state = env.reset()
    generator = torch.Generator().manual_seed(2)
    for _ in range(60):
        noise = torch.rand(state.action_mask.shape, generator=generator)
        state = env.step(torch.where(state.action_mask, noise, -1.0).argmax(1))
    games = [env.to_game(i) for i in range(12)]
    again = BatchedUno.from_games(games, seed=2)
    for name, value in vars(env.tables).items():
        if name not in ("turns", "rng_counter", "draw", "discard"):  # (the piles' unused entries differ)
            assert torch.equal(value, getattr(again.tables, name)), name
    for i in range(12):
        assert normalised(env.table_dict(i)) == normalised(again.table_dict(i))
    assert torch.equal(state.observation, again.state.observation)
    assert torch.equal(state.action_mask, again.state.action_mask)
    for i, game in enumerate(games):
        assert normalised(again.to_game(i).to_dict()) == normalised(game.to_dict())


# ---------------------------------------------------------------------------- determinism
def trajectory(env: BatchedUno, steps: int, seed: int) -> list[torch.Tensor]:
    state = env.reset()
    generator = torch.Generator().manual_seed(seed)
    out = []
    for _ in range(steps):
        noise = torch.rand(state.action_mask.shape, generator=generator)
        state = env.step(torch.where(state.action_mask, noise, -1.0).argmax(1))
        out.append(torch.cat([state.observation, state.rewards], 1))
    return out


def test_same_seed_same_device_same_batch_same_trajectories():
    def make(seed: int, tables: int = 16) -> BatchedUno:
        return BatchedUno(tables, edition=[EDITION_NAMES[i % 4] for i in range(tables)],
                          num_players=[2 + i % 9 for i in range(tables)], episode="round", seed=seed)

    first, second, other = trajectory(make(7), 150, 1), trajectory(make(7), 150, 1), trajectory(make(8), 150, 1)
    assert all(torch.equal(a, b) for a, b in zip(first, second, strict=True))
    assert not all(torch.equal(a, b) for a, b in zip(first, other, strict=True))


def test_a_table_does_not_depend_on_the_rest_of_the_batch():
    """Table keys depend on the seed and table index only: the first tables of a larger batch replay."""
    small = BatchedUno(4, edition="angry_birds", num_players=3, episode="round", seed=9)
    large = BatchedUno(12, edition="angry_birds", num_players=3, episode="round", seed=9)
    s, big = small.reset(), large.reset()
    generator = torch.Generator().manual_seed(0)
    for _ in range(120):
        noise = torch.rand(big.action_mask.shape, generator=generator)
        actions = torch.where(big.action_mask, noise, -1.0).argmax(1)
        s, big = small.step(actions[:4]), large.step(actions)
        assert torch.equal(s.observation, big.observation[:4])


# ---------------------------------------------------------------------------- observe, final_observer
def test_observe_any_seat_matches_the_encoder():
    env = BatchedUno(9, edition=[EDITION_NAMES[i % 4] for i in range(9)], num_players=SIZES, seed=3, max_players=10)
    state = env.reset()
    generator = torch.Generator().manual_seed(3)
    for step in range(80):
        noise = torch.rand(state.action_mask.shape, generator=generator)
        state = env.step(torch.where(state.action_mask, noise, -1.0).argmax(1))
        seats = (state.current_player + 1 + step) % env.tables.num_players
        views = env.observe(seats)
        for i in range(9):
            assert np.array_equal(observe(env.to_game(i), int(seats[i])), views[i].numpy())


def test_final_observer_chooses_whose_final_observation():
    env = BatchedUno(6, num_players=[2, 3, 4, 5, 6, 10], episode="round", max_turns=3, seed=1)
    state = env.reset()
    for _ in range(2):
        state = env.step(state.action_mask.float().argmax(1))
    games = [env.to_game(i) for i in range(6)]
    actions = state.action_mask.float().argmax(1)
    seats = torch.tensor([1, 2, 3, 4, 5, 9])
    state = env.step(actions, final_observer=seats)
    assert bool(state.truncated.all()) and not bool(state.terminated.any())
    for i, game in enumerate(games):
        game.step(int(actions[i]))
        assert np.array_equal(observe(game, int(seats[i])), state.final_observation[i].numpy())
    assert torch.equal(state.final_observer, seats)
    assert not torch.equal(state.observation, state.final_observation)  # every table started a new round
    assert int(env.tables.turns.max()) == 0


def test_max_players_pads_observations_and_rewards():
    env = BatchedUno(3, num_players=[2, 3, 4], max_players=6, episode="round", reward="score")
    state = env.reset()
    assert state.observation.shape == (3, 6 * 9 + 254 + 5 * 55 + 6 * 17) and state.rewards.shape == (3, 6)
    assert env.num_seats == 4 and env.tables.hands.shape == (3, 4, 55)
    for i in range(3):
        game = env.to_game(i)
        assert np.array_equal(observe(game, game.current_player, 6), state.observation[i].numpy())
        assert np.array_equal(action_mask(game, game.current_player).astype(bool), state.action_mask[i].numpy())


# ---------------------------------------------------------------------------- bad input
def small_env() -> BatchedUno:
    env = BatchedUno(4, edition=["classic", "monster_high", "angry_birds", "masters_of_the_universe"],
                     num_players=[2, 3, 4, 5], seed=6)
    env.reset()
    return env


def assert_unchanged(env: BatchedUno, before: Any, state: Any) -> None:
    for name, value in vars(before).items():
        assert torch.equal(value, getattr(env.tables, name)), name
    assert env.state is state


@pytest.mark.parametrize("bad, message", [
    (torch.zeros(5, dtype=torch.int64), "shape (4,)"),
    (torch.zeros(4, 1, dtype=torch.int64), "shape (4,)"),
    (torch.zeros(4, dtype=torch.float32), "integer action ids"),
    (torch.zeros(4, dtype=torch.bool), "integer action ids"),
    (torch.zeros(4, dtype=torch.int64, device="meta"), "device cpu"),
    ([55, 55, 55, 55], "torch.Tensor"),
])
def test_malformed_actions_are_refused_and_change_nothing(bad, message):
    from uno_env.core import IllegalActionError

    env = small_env()
    before, state = env.tables.clone(), env.state
    with pytest.raises(IllegalActionError, match=message.replace("(", r"\(").replace(")", r"\)")):
        env.step(bad)
    assert_unchanged(env, before, state)


def test_illegal_and_out_of_range_ids_name_the_table_and_its_legal_ids():
    from uno_env.core import IllegalActionError

    env = small_env()
    state = env.state
    before = env.tables.clone()
    actions = state.action_mask.float().argmax(1)
    legal_2 = state.action_mask[2].nonzero()[:, 0].tolist()
    illegal = next(a for a in range(80) if a not in legal_2)
    for table, value in ((2, illegal), (1, 80), (3, -1)):
        bad = actions.clone()
        bad[table] = value
        with pytest.raises(IllegalActionError) as info:
            env.step(bad)
        text = str(info.value)
        legal = state.action_mask[table].nonzero()[:, 0].tolist()
        assert f"table {table} " in text and f"legal ids: {legal}" in text and "no table was changed" in text
        assert_unchanged(env, before, state)
    env.step(actions)  # a legal batch still steps afterwards


def test_writing_to_the_handed_out_mask_changes_nothing_the_engine_checks_its_own_copy():
    from uno_env.core import IllegalActionError

    env = small_env()
    state = env.state
    before = env.tables.clone()
    legal_2 = state.action_mask[2].nonzero()[:, 0].tolist()
    illegal = next(a for a in range(80) if a not in legal_2)
    actions = state.action_mask.float().argmax(1)
    state.action_mask[2, illegal] = True  # a caller's write to the tensor it was handed
    state.action_mask[2, legal_2] = False
    bad = actions.clone()
    bad[2] = illegal
    with pytest.raises(IllegalActionError, match=re.escape(f"legal ids: {legal_2}")):
        env.step(bad)
    assert_unchanged(env, before, state)
    env.step(actions)  # the legal batch still steps, and every table holds its 108 cards
    for table in range(env.num_tables):
        env.to_game(table)


def test_bad_decks_and_dealers_are_refused_naming_the_table():
    from uno_env.core import DeckError, RulesError

    env = small_env()
    before, state = env.tables.clone(), env.state
    good = stacked_deck("classic", 2, 0)
    with pytest.raises(DeckError, match="table 1"):
        env.reset(decks=[good, good, None, None])  # a classic deck for a monster_high table
    with pytest.raises(DeckError, match="table 0"):
        env.reset(decks=[good[:-1], None, None, None])
    with pytest.raises(DeckError, match="4 decks"):
        env.reset(decks=[good])
    with pytest.raises(RulesError, match=r"table 3: dealer must be a seat 0..4"):
        env.reset(dealers=[0, 0, 0, 5])
    assert_unchanged(env, before, state)


def test_bad_construction_is_refused():
    from uno_env.core import RulesError

    with pytest.raises(RulesError, match="unknown rule option"):
        BatchedUno(2, colour="red")
    with pytest.raises(RulesError, match="one value per table"):
        BatchedUno(3, edition=["classic", "monster_high"])
    with pytest.raises(RulesError, match="table 1: num_players"):
        BatchedUno(2, num_players=[4, 11])
    with pytest.raises(ValueError, match="max_players must be an int from the largest table"):
        BatchedUno(2, num_players=[4, 8], max_players=6)
    with pytest.raises(ValueError, match="episode"):
        BatchedUno(2, episode="match")
    with pytest.raises(ValueError, match="num_tables"):
        BatchedUno(0)
    with pytest.raises(RuntimeError, match="reset"):
        BatchedUno(2).step(torch.zeros(2, dtype=torch.int64))


def test_from_games_refuses_what_it_cannot_represent():
    game = Game(Rules(num_players=3), seed=1)
    while not game.is_round_over:
        game.step(game.legal_actions()[0])
    with pytest.raises(ValueError, match="game 1: its round is over"):
        BatchedUno.from_games([Game(Rules(num_players=3)), game])
    with pytest.raises(ValueError, match="game 0: expected a uno_env.core.Game"):
        BatchedUno.from_games(["not a game"])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="max_players"):
        BatchedUno.from_games([Game(Rules(num_players=8))], max_players=4)


# ---------------------------------------------------------------------------- odds and ends
def test_default_max_turns_are_the_envs():
    from uno_env.batched import DEFAULT_MAX_TURNS
    from uno_env.uno_v0 import DEFAULT_MAX_TURNS as ENV_DEFAULT

    assert DEFAULT_MAX_TURNS == ENV_DEFAULT


def test_shuffle_order_in_python_is_the_engines():
    keys = batched_rng.table_keys(123, 5, torch.device("cpu"))
    counters = torch.tensor([0, 1, 7, 1000, 2**31 - 1])
    lengths = torch.tensor([112, 108, 50, 1, 0])
    order = batched_rng.shuffle_keys(keys, counters, lengths, 112).argsort(1)
    for b in range(5):
        n = int(lengths[b])
        assert order[b, :n].tolist() == batched_rng.shuffle_order(int(keys[b]), int(counters[b]), n)
    shuffle = EngineShuffle(int(keys[0]), 0)
    cards = list(range(112))
    shuffle.shuffle(cards)
    assert cards == order[0].tolist() and shuffle.counter == 1


def test_state_is_small_integers_of_the_documented_size():
    """The module docstring's figures: 6.9 / 1.7 / 0.9 kB per table at 10 / 4 / 2 seats, 4.2 kB of State."""
    sizes = {}
    for n in (2, 4, 10):
        env = BatchedUno(2, num_players=n)
        state = env.reset()
        t = env.tables
        assert t.hands.dtype == t.known.dtype == t.draw.dtype == t.discard.dtype == torch.int8
        sizes[n] = round(env.nbytes_per_table() / 1000, 1)
        output = [state.observation, state.action_mask, state.rewards, state.current_player, state.terminated,
                  state.truncated, state.final_observer]
        assert round(sum(x[0].numel() * x.element_size() for x in output) / 1000, 1) == 4.2
    assert sizes == {2: 0.9, 4: 1.7, 10: 6.9}


def test_the_module_docstring_runs():
    import doctest

    import uno_env.batched

    result = doctest.testmod(uno_env.batched, optionflags=doctest.ELLIPSIS)
    assert result.attempted >= 8 and result.failed == 0


# ---------------------------------------------------------------------------- layering
ISOLATION_CHILD = r"""
import json, sys
BANNED = {"pettingzoo", "gymnasium", "stable_baselines3", "sb3_contrib", "rlcard", "agents", "training", "uno_app"}
attempts = []

class Refuse:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BANNED:
            attempts.append(name)
            raise ImportError("blocked: " + name)
        return None

sys.meta_path.insert(0, Refuse())
import torch
import uno_env
from uno_env.batched import BatchedUno
env = BatchedUno(3, edition=["classic", "monster_high", "angry_birds"], num_players=[2, 4, 10], max_turns=50)
state = env.reset()
for _ in range(60):
    state = env.step(state.action_mask.float().argmax(1))
env.to_game(0)
BatchedUno.from_games([env.to_game(1)])
loaded = sorted(m for m in sys.modules if m.split(".")[0] in BANNED or m == "uno_env.uno_v0")
print(json.dumps({"attempts": attempts, "loaded": loaded}))
"""


def test_the_batched_engine_needs_torch_and_numpy_only():
    import json
    import subprocess
    import sys

    result = subprocess.run([sys.executable, "-c", ISOLATION_CHILD], capture_output=True, text=True, timeout=120,
                            check=False)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout.strip().splitlines()[-1]) == {"attempts": [], "loaded": []}


def test_engines_alike_share_their_rule_constants_as_plain_tensors():
    """BatchedRules' constants are built once per (seats, device), also from inside inference mode, as plain tensors."""
    with torch.inference_mode():
        first = BatchedUno(1, num_players=7, observations=False)
    second = BatchedUno(3, num_players=[7, 3, 2], observations=False)
    assert first._rules.playable is second._rules.playable and first._rules.others is second._rules.others
    assert not first._rules.playable.is_inference()  # usable (even written to) outside inference mode
    assert BatchedUno(1, num_players=3)._rules.others.shape == (3, 3)  # another seat count: its own set


def test_drew_on_follows_the_core_through_swaps_give_aways_and_draws_until_playable():
    """``Tables.drew_on`` against ``PublicState.drew_on`` step by step on random tables with seven_zero,
    draw_until_playable and Urrrhhh (monster_high): before each step the twin is rebuilt from the game
    (``from_games`` reads the rows), both take the same action, and the rows must agree. Only the
    evidence is compared (a reshuffle draws other cards in each engine; the rows do not depend on them)."""
    rng = random.Random(5)
    seen: Counter[str] = Counter()
    for attempt in range(4):
        n = 3 + attempt % 4
        rules = Rules(edition="monster_high", num_players=n, seven_zero=True, draw_until_playable=True)
        game = Game(rules, seed=rng.getrandbits(32))
        for _ in range(250):
            if game.is_round_over:
                break
            action = rng.choice(game.legal_actions())
            seat = game.current_player
            assert seat is not None
            before = [list(row) for row in game.state.public.drew_on]
            phase = game.phase
            twin = BatchedUno.from_games([game.clone()], episode="round")
            assert twin.table_dict(0)["drew_on"] == before
            game.step(action)
            twin.step(torch.tensor([int(action)]))
            after = [list(row) for row in game.state.public.drew_on]
            if not game.is_round_over:  # the twin has dealt the next round at a round's end
                assert twin.table_dict(0)["drew_on"] == after
            if any(before[seat]) and after[seat] != before[seat]:
                seen[phase.name] += 1
    # The paths this test is for, each taken with evidence in the row.
    assert seen["GIVE_AWAY"] and seen["SWAP"] and seen["PLAY"], seen
