"""The web app in a real browser: Playwright drives Chromium against ``uno-env serve`` on loopback.

Playwright cannot download its own browser here, so these tests use the distribution's Chromium
(``apt-get install -y chromium``, at /usr/bin/chromium or ``UNO_CHROMIUM``) and skip, saying so,
where it is missing. ``UNO_WEB_SCREENSHOTS=DIR`` also writes the table of each edition to
``DIR/web_<edition>.jpg`` (the README's pictures: ``UNO_WEB_SCREENSHOTS=docs pytest -k screenshot``).
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.web_helpers import served

pytestmark = [pytest.mark.slow, pytest.mark.browser]
pytest.importorskip("fastapi", reason="the web app needs the web extra: pip install -e '.[web]'")

CHROMIUM = os.environ.get("UNO_CHROMIUM", "/usr/bin/chromium")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]
# Deals whose first hand holds the edition's special wild (the README's pictures show it).
SCREENSHOT_SEEDS = {"classic": 2, "monster_high": 8, "angry_birds": 8, "masters_of_the_universe": 8}


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    """``uno-env serve`` (the module's ``main``) in a subprocess."""
    with served() as (address, _):
        yield f"http://{address}/"


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not Path(CHROMIUM).exists():
        pytest.skip(f"no Chromium at {CHROMIUM}: install it with `apt-get install -y chromium` "
                    "(or set UNO_CHROMIUM) to run the browser tests")
    sync_api = pytest.importorskip("playwright.sync_api", reason="pip install -e '.[web]' for Playwright")
    with sync_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        yield launched
        launched.close()


@pytest.fixture
def page(browser: Any, url: str) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1280, "height": 820}, accept_downloads=True)
    new_page = context.new_page()
    errors: list[str] = []
    new_page.on("pageerror", lambda err: errors.append(str(err)))
    new_page.goto(url)
    new_page.wait_for_selector("#play-edition option", state="attached")
    yield new_page
    context.close()
    assert not errors, errors


def version(page: Any) -> int:
    return int(page.evaluate("Number(document.body.dataset.version || 0)"))


def wait_for_move(page: Any, after: int) -> None:
    """Wait until the page re-rendered after ``after`` and shows a decision of ours or a summary."""
    page.wait_for_function(
        """after => Number(document.body.dataset.version || 0) > after && document.body.dataset.busy === '0'
             && (document.body.dataset.myTurn === '1' || document.querySelector('#summary').open)""",
        arg=after, timeout=30_000)


def start(page: Any, edition: str, seed: int, players: int = 3, opponents: tuple[str, ...] = ("ppo", "rule"),
          target: int = 500) -> None:
    page.click("#nav-play")
    page.select_option("#play-edition", edition)
    page.fill("#play-form input[name=players]", str(players))
    page.fill("#play-form input[name=seed]", str(seed))
    page.fill("#play-form input[name=target_score]", str(target))
    for k, spec in enumerate(opponents, 1):
        page.select_option(f"#opponent-list select[name=opponent{k}]", spec)
    before = version(page)
    page.click("#start-btn")
    wait_for_move(page, before)


def test_a_whole_game_against_the_ai_with_clicks_and_keys_then_its_replay(page: Any) -> None:
    page.select_option("#speed", "0")  # opponents' moves shown at once
    start(page, "classic", seed=4, players=3, opponents=("ppo", "rule"), target=100)
    counts = {"click": 0, "key": 0, "color": 0, "uno": 0, "draw": 0, "rounds": 0}
    for _ in range(2000):
        if page.evaluate("document.querySelector('#summary').open"):
            if page.locator("#next-round").count() == 0:
                break  # game over
            counts["rounds"] += 1
            before = version(page)
            page.keyboard.press("Enter")
            wait_for_move(page, before)
            continue
        phase = page.evaluate("document.body.dataset.phase")
        before = version(page)
        playable = page.locator("#hand .card.playable")
        if phase == "uno":
            assert page.locator("#controls .uno-btn").is_visible()
            page.keyboard.press("u")
            counts["uno"] += 1
        elif phase == "choose_color":
            page.locator("#controls button.colorbtn").first.click()
            counts["color"] += 1
        elif phase in ("play", "stack") and playable.count():
            if (counts["click"] + counts["key"]) % 2:
                page.keyboard.press("ArrowRight")
                page.keyboard.press("Enter")
                counts["key"] += 1
            else:
                playable.first.click()
                counts["click"] += 1
        elif phase in ("play", "stack"):
            page.click("#draw-pile")
            counts["draw"] += 1
        elif phase == "play_drawn":
            page.keyboard.press("p" if page.locator("#controls button[data-action^='play ']").count() else "k")
        else:
            page.locator("#controls button").first.click()
        wait_for_move(page, before)
    else:
        pytest.fail(f"the game did not end: {counts}")
    summary = page.locator("#summary-body").inner_text()
    assert "the game!" in summary, summary
    assert counts["color"] and counts["uno"] and counts["click"] and counts["key"] and counts["draw"], counts
    talk = page.locator("#log-list").inner_text()
    assert "You call UNO!" in talk and "You name" in talk
    # The replay: every hand shown, a step slider, each move with its agent.
    before = version(page)
    page.click("#replay-game")
    page.wait_for_function("after => Number(document.body.dataset.version) > after", arg=before)
    position = page.locator("#rp-pos").inner_text()
    done, total = (int(x) for x in position.split("·")[0].split("/"))
    assert done == total > 50
    assert page.locator("#seats .seat .hand .card").count() > 0
    for key, expected in (("Home", 0), ("ArrowRight", 1), ("ArrowRight", 2), ("End", total), ("ArrowLeft", total - 1)):
        before = version(page)
        page.keyboard.press(key)
        page.wait_for_function("after => Number(document.body.dataset.version) > after", arg=before)
        assert page.evaluate("Number(document.body.dataset.index)") == expected
    assert page.locator("#rp-move").inner_text().startswith("Player ")
    assert page.locator("#seats .seat").count() == 3


def test_save_load_and_a_bad_file_in_the_browser(page: Any, tmp_path: Path) -> None:
    start(page, "masters_of_the_universe", seed=2, players=4, opponents=("rule", "simple", "random"))
    with page.expect_download() as info:
        page.click("#save-btn")
    path = tmp_path / "save.json"
    info.value.save_as(path)
    data = json.loads(path.read_text())
    assert data["format"] == "uno_env.play" and data["game"]["rules"]["edition"] == "masters_of_the_universe"
    hand = page.locator("#hand").inner_text()
    page.click("#nav-play")
    before = version(page)
    page.set_input_files("#load-file", str(path))
    wait_for_move(page, before)
    assert page.locator("#hand").inner_text() == hand
    page.click("#nav-play")
    page.set_input_files("#load-file", files=[{"name": "bad.json", "mimeType": "application/json",
                                               "buffer": b'{"format": "nope"}'}])
    # The save's toast may still show: wait for this message (a timeout if it never comes).
    page.locator("#toast.show", has_text="this file is not a saved game").wait_for()
    assert "this file is not a saved game" in page.locator("#toast").inner_text()


def test_watch_ai_against_ai(page: Any) -> None:
    page.click("#nav-watch")
    page.fill("#watch-form input[name=seed]", "3")
    page.fill("#watch-form input[name=delay]", "0.05")
    page.click("#watch-btn")
    page.wait_for_function("Number(document.body.dataset.index || 0) >= 5")
    assert page.locator("#seats .seat .hand .card").count() > 4  # every hand face up
    page.click("#w-pause")
    page.wait_for_function("document.querySelector('#w-pause').textContent === 'Resume'")
    assert "Player " in page.locator("#w-move").inner_text()


@pytest.mark.parametrize("edition", list(SCREENSHOT_SEEDS))
def test_table_screenshot(page: Any, edition: str, tmp_path: Path) -> None:
    start(page, edition, seed=SCREENSHOT_SEEDS[edition], players=4, opponents=("ppo", "rule", "ismcts"))
    special = {"classic": "W4", "monster_high": "WU", "angry_birds": "WK", "masters_of_the_universe": "WG"}[edition]
    assert page.locator(f"#hand .card[data-code='{special}']").count() >= 1
    shot = tmp_path / f"web_{edition}.jpg"
    page.screenshot(path=str(shot), type="jpeg", quality=80)
    assert shot.stat().st_size > 20_000
    target = os.environ.get("UNO_WEB_SCREENSHOTS")
    if target:
        shutil.copy(shot, Path(target) / shot.name)


def load_position(page: Any, game: Any) -> None:
    """Open a ``tests.helpers.position`` game (a bare ``Game.to_dict``) through the page's Load."""
    page.click("#nav-play")
    before = version(page)
    page.set_input_files("#load-file", files=[{"name": "position.json", "mimeType": "application/json",
                                               "buffer": json.dumps(game.to_dict()).encode()}])
    wait_for_move(page, before)


def test_the_round_summary_offers_save_and_leave(page: Any, tmp_path: Path) -> None:
    from tests.helpers import position

    load_position(page, position("classic", 3, hands={0: ["R5"]}, discard=["R7"], target_score=500))
    page.select_option("#speed", "0")
    before = version(page)
    page.locator("#hand .card.playable").first.click()  # R5: the last card goes out
    wait_for_move(page, before)
    assert page.evaluate("document.querySelector('#summary').open")
    assert page.locator("#next-round").is_visible()
    with page.expect_download() as info:
        page.click("#summary-save")
    path = tmp_path / "save.json"
    info.value.save_as(path)
    data = json.loads(path.read_text())
    assert data["format"] == "uno_env.play" and data["game"]["phase"] == "round_over"
    page.click("#summary-leave")
    page.wait_for_function("document.querySelector('#table').hidden && !document.querySelector('#summary').open")
    assert page.locator("#setup").is_visible() and not page.locator("#leave-btn").is_visible()


WILD_OVERLAPS = """() => {
  const out = [];
  const cards = [...document.querySelectorAll('.card.wild')];
  for (const card of cards) {
    const boxes = [...card.querySelectorAll('.corner, .tag, .big')]
      .filter((e) => getComputedStyle(e).display !== 'none' && e.innerHTML !== '')
      .map((e) => [e.className, e.getBoundingClientRect()]);
    for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) {
      const [a, b] = [boxes[i][1], boxes[j][1]];
      if (a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom)
        out.push(`${card.dataset.code}: ${boxes[i][0]} / ${boxes[j][0]}`);
    }
  }
  return [cards.map((c) => c.dataset.code + (c.closest('#hand') ? ':hand' : c.classList.contains('small') ? ':small' : ':other')),
          out];
}"""


def test_wild_captions_do_not_overlap_the_corner_index_in_the_hand_or_on_the_pile(page: Any) -> None:
    """The caption, the corner index and the middle mark of every wild, in the hand, on the pile and on the
    small face-up cards of the Watch page (seed 2 deals a Wild Draw Four and a Wild face up)."""
    from tests.helpers import position

    load_position(page, position("classic", 3, hands={0: ["W4", "W", "R5"]}, discard=["R7", "W4"],
                                 active_color="red"))
    shown, clashes = page.evaluate(WILD_OVERLAPS)
    assert "W4:hand" in shown and "W:hand" in shown and "W4:other" in shown
    assert clashes == []
    page.click("#leave-btn")
    page.click("#nav-watch")
    page.fill("#watch-form input[name=seed]", "2")
    page.fill("#watch-form input[name=delay]", "10")
    page.click("#watch-btn")
    page.wait_for_selector("#table .card.small.wild", timeout=30_000)
    shown, clashes = page.evaluate(WILD_OVERLAPS)
    assert "W4:small" in shown and "W:small" in shown
    assert clashes == []


def test_the_watch_page_has_one_pace_control(page: Any) -> None:
    page.click("#nav-watch")
    assert page.locator("#watch-form input[name=delay]").is_visible()
    assert not page.locator("#speed").is_visible()
    page.click("#nav-play")
    assert page.locator("#speed").is_visible()


def test_the_log_says_you_as_an_object_in_lower_case(page: Any) -> None:
    from tests.helpers import position

    load_position(page, position("classic", 3, hands={0: ["R5", "G1"]}, discard=["R7"], target_score=500))
    page.select_option("#speed", "0")
    before = version(page)
    page.locator("#hand .card[data-code='R5']").click()
    wait_for_move(page, before)
    assert page.evaluate("document.body.dataset.phase") == "uno"
    before = version(page)
    page.keyboard.press("n")  # don't call UNO: rule 5.1, the next seat catches it
    wait_for_move(page, before)
    talk = page.locator("#log-list").inner_text()
    assert "catches you: 2 cards!" in talk and "catches You" not in talk
