"""Cursors over the bounded event log (``Game(log_limit=...)``, ``game.log_length``,
``game.events(seat, since=...)``): the narrator, the env's renderers and the web app's payloads
tell every event once, in a game far longer than its kept log, as they would with the whole log."""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest

import uno_env
from uno_env.core import Game, Rules
from uno_env.render import CONTEXT_EVENTS, Narrator, plain, render_table
from uno_env.single_agent import SingleAgentEnv

LIMIT = 300  # events kept: far fewer than the games below log


def twin_games(edition: str, num_players: int, seed: int) -> tuple[Game, Game]:
    """A new game with a short log, and its twin keeping every event."""
    rules = Rules(edition=edition, num_players=num_players, target_score=10_000)
    return Game(rules, seed=seed, log_limit=LIMIT), Game(rules, seed=seed, log_limit=None)


def play_twins(short: Game, whole: Game, steps: int, seed: int) -> Iterator[int]:
    """Take the same ``steps`` seeded random actions in both (new rounds dealt as needed), yielding
    after each."""
    rng = random.Random(seed)
    for step in range(steps):
        if short.is_round_over:
            short.next_round()
            whole.next_round()
        action = rng.choice(short.legal_actions())
        short.step(action)
        whole.step(action)
        yield step


def twins(edition: str, steps: int, seed: int = 3) -> tuple[Game, Game, list[int]]:
    """The twins after ``steps`` random actions, and the log length after each."""
    short, whole = twin_games(edition, 4, seed)
    cursors = [0] + [short.log_length for _ in play_twins(short, whole, steps, seed)]
    return short, whole, cursors


@pytest.mark.parametrize("edition", ["classic", "angry_birds", "monster_high", "masters_of_the_universe"])
@pytest.mark.parametrize("seat", [0, None])
def test_tell_game_follows_a_bounded_log_as_the_whole_log_tells_it(edition: str, seat: int | None) -> None:
    short, whole = twin_games(edition, 4, seed=3)
    narrator, reference = Narrator(short.edition, seat), Narrator(short.edition, seat)
    told: list[str] = []
    cursor = 0
    for _ in play_twins(short, whole, 800, seed=3):
        told += [plain(line) for _, line in narrator.tell_game(short, cursor)]
        cursor = short.log_length
    assert short.log_length == whole.log_length > 2 * LIMIT + CONTEXT_EVENTS  # many events were dropped
    assert len(short.log) <= LIMIT * 5 // 4 < len(whole.log)
    everything = whole.events(seat)
    assert told == [plain(line) for line in reference.lines(everything)]
    # Lines that need earlier events for context were told, and told right.
    assert any(" accept" in line and "the Wild Draw Four" in line for line in told)
    if edition == "angry_birds":
        assert any(line.endswith(": the deal stops") for line in told)


def test_tell_game_tells_from_any_event_number() -> None:
    short, whole, cursors = twins("angry_birds", 700)
    narrator = Narrator(short.edition, 1)
    everything = whole.events(1)
    first_kept = short.log_length - len(short.log)
    assert first_kept > CONTEXT_EVENTS
    for since in (first_kept + CONTEXT_EVENTS, short.log_length - 40, short.log_length - 1, short.log_length):
        expected = narrator.tell(everything, since)
        assert narrator.tell_game(short, since) == expected
    assert narrator.tell_game(short, short.log_length + 5) == []


def test_render_table_tells_events_from_an_event_number() -> None:
    short, whole, cursors = twins("classic", 400)
    since = cursors[-3]
    text = render_table(short, 2, since)
    assert text == render_table(whole, 2, since)
    assert "What happened:" in text


def test_the_envs_render_cursor_follows_a_bounded_log() -> None:
    short, whole, _ = twins("classic", 600)
    assert short.log_length > len(short.log)
    for start in (short, whole):
        if start.is_round_over:
            start.next_round()
    texts = []
    for start in (short, whole):
        env = uno_env.raw_env(num_players=4, target_score=10_000, render_mode="ansi")
        env.reset(options={"game": start})
        assert env.game is not None and env.game.log_limit == start.log_limit
        env.render()  # the first render tells every event kept; the ones after it only what is new
        rng = random.Random(5)
        rendered = []
        for _ in range(60):
            if env.terminations[env.agent_selection]:
                break
            mask = env.observe(env.agent_selection)["action_mask"]
            env.step(int(rng.choice([i for i, m in enumerate(mask) if m])))
            rendered.append(env.render())
        texts.append(rendered)
    assert texts[0] == texts[1]
    assert all("What happened:" in text for text in texts[0])


def test_the_single_agent_envs_render_cursor_is_the_log_length() -> None:
    env = SingleAgentEnv(num_players=2, render_mode="ansi")
    env.reset(seed=2)
    env.render()
    assert env.game is not None
    assert env._render_from == env.game.log_length > 0
    text = env.render()
    assert text is not None and "What happened:" not in text  # nothing new since the last render


def test_the_web_payloads_send_each_event_once_in_a_game_longer_than_its_log() -> None:
    pytest.importorskip("pydantic")
    from uno_app.web.sessions import full_payload, seat_payload

    sent: dict[int | None, list[dict]] = {1: [], None: []}
    cursors: dict[int | None, int] = {1: 0, None: 0}
    short, whole = twin_games("classic", 3, seed=8)
    for _ in play_twins(short, whole, 900, seed=8):
        payload, cursors[1] = seat_payload(short, 1, cursors[1])
        sent[1] += payload["events"]
        payload, cursors[None] = full_payload(short, cursors[None])
        sent[None] += payload["events"]
    assert short.log_length > 3 * LIMIT and cursors[1] == cursors[None] == short.log_length
    assert sent[1] == whole.events(1)
    assert sent[None] == whole.events()
