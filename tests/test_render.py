"""The narrator (``uno_env.render.Narrator``): one wording for the env's renderer and the terminal game."""

from __future__ import annotations

import doctest
import random

import pytest

import uno_env.render as render
from tests.helpers import play, position
from uno_env.core import EDITIONS, Game, Rules
from uno_env.render import Narrator, plain, render_table


def told(game: Game, seat: int | None, start: int = 0) -> list[str]:
    return [plain(line) for line in Narrator(game.edition, seat).lines(game.events(seat), start)]


def test_render_module_docstring_example_runs() -> None:
    result = doctest.testmod(render)
    assert result.attempted >= 3 and result.failed == 0


def _challenged(guilty: bool) -> Game:
    """Player 1 plays W4 on player 2, who challenges; player 0 watches (issue 16 item 8)."""
    hand1 = ["W4", "R2", "R3"] if guilty else ["W4", "B2", "G3"]
    game = position("classic", 4, hands={1: hand1}, discard=["R7"], current=1)
    play(game, ["play W4", "color blue", "challenge"])
    return game


@pytest.mark.parametrize("guilty", [False, True])
def test_rule_5_4_a_shown_hand_is_told_from_each_seats_point_of_view(guilty: bool) -> None:
    game = _challenged(guilty)
    cards = "R2 R3" if guilty else "B2 G3"
    onlooker = told(game, 0)
    assert "Player 1 shows player 2 their hand" in onlooker
    assert all("shows you" not in line and "a card a card" not in line for line in onlooker)
    assert "Player 2 challenges the Wild Draw Four of player 1" in onlooker
    assert f"Player 1 shows you their hand: {cards}" in told(game, 2)
    assert "You show player 2 your hand" in told(game, 1)  # the shown cards are the challenger's to see
    assert f"Player 1 shows player 2 their hand: {cards}" in told(game, None)  # an onlooker who sees all
    verdict = "Player 1 was bluffing!" if guilty else "Player 1 was not bluffing"
    assert verdict in onlooker
    assert ("You were bluffing!" if guilty else "You were not bluffing") in told(game, 1)


def test_no_line_ever_says_a_card_twice_and_hidden_cards_are_counted() -> None:
    import re

    for edition in EDITIONS:
        game = Game(Rules(edition=edition, num_players=4), seed=5)
        rng = random.Random(5)
        while not game.is_round_over:
            legal = game.legal_actions()
            plays = [a for a in legal if str(a).startswith("play ")]
            game.step(rng.choice(plays or legal))
        for seat in range(4):
            lines = told(game, seat)
            assert lines and not [line for line in lines if "a card a card" in line]
            for line in lines:
                if re.match(r"Player \d draws", line):  # another seat's draw: counted, never listed
                    assert re.fullmatch(r"Player \d draws (a card|\d+ cards)( \(.*\))?", line), line
        assert any(re.match(r"Player \d draws [RGBYP]", line) for line in told(game, None))


def test_draws_are_grouped_and_listed_only_for_the_drawer() -> None:
    game = position("classic", 3, hands={0: ["RD", "G1", "G2"]}, discard=["R7"], draw=["Y1", "Y2"])
    play(game, ["play RD"])
    assert "Player 1 draws 2 cards (Draw Two)" in told(game, 0)
    assert "You draw Y1 Y2 (Draw Two)" in told(game, 1)
    assert "Player 1 draws Y1 Y2 (Draw Two)" in told(game, None)


SPECIAL_EDITIONS = sorted(name for name, ed in EDITIONS.items() if ed.special)


@pytest.mark.parametrize("edition", SPECIAL_EDITIONS)
def test_every_special_wild_is_told_with_its_records_flavour(edition: str) -> None:
    special = EDITIONS[edition].special
    assert special is not None
    top = EDITIONS[edition].letters[0] + "5"
    game = position(edition, 3, hands={0: [special.code, "W", "W4"]}, discard=[top])
    game.step(f"play {special.code}")
    line = next(x for x in told(game, 1) if x.startswith("Player 0 plays"))
    assert line == f"Player 0 plays {special.code} - {special.flavour}"


def test_render_table_tells_events_with_the_narrator() -> None:
    game = position("classic", 3, hands={0: ["RD", "G1", "G2"]}, discard=["R7"], draw=["Y1", "Y2"])
    play(game, ["play RD"])
    text = render_table(game, 2)
    assert "What happened:" in text
    assert "  Seat 0 plays RD" in text and "  Seat 1 draws 2 cards (Draw Two)" in text
    assert "Y1" not in text.split("What happened:")[1]  # seat 2 never saw seat 1's cards
    assert render_table(game, 2, since=len(game.log)).count("What happened:") == 0


def test_render_table_keeps_only_the_last_lines() -> None:
    game = Game(Rules(num_players=2), seed=3)
    rng = random.Random(3)
    for _ in range(40):
        game.step(rng.choice(game.legal_actions()))  # uniform: draws often, so the round lasts
    text = render_table(game, 0)
    said = text.split("What happened:\n")[1].split("\nYour options")[0].splitlines()
    assert len(told(game, 0)) > render.MAX_EVENT_LINES
    assert said[0] == f"  ... ({len(told(game, 0)) - render.MAX_EVENT_LINES} earlier events)"
    assert len(said) == render.MAX_EVENT_LINES + 1
