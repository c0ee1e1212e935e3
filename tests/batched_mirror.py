"""The rule scenarios as the specification of both engines: the ``batched_mirror`` fixture.

A scenario module opts in with ``pytestmark = pytest.mark.usefixtures("batched_mirror")``
(``tests/conftest.py`` defines the fixture). While such a test runs, every
``uno_env.core.Game`` it deals or steps gets a twin, a one-table ``uno_env.batched.BatchedUno``,
and the two are compared as the scenario goes:

* **a first deal** (``Game(rules, seed=..., deck=..., dealer=...)``): the twin is
  ``BatchedUno(1, **rules).reset(decks=[deck], dealers=[game.dealer])``, its shuffle (when no
  deck is given) the one the game's ``random.Random(seed)`` made;
* **every** ``Game.step``: the same action id goes to the twin, then the whole positions
  (``Game.to_dict`` against ``BatchedUno.table_dict``: hands, piles in order, known cards,
  scores, phase, pending card ...) and the legal action ids are compared. When the game
  refuses an action id (or a text that names one), the twin must refuse it too, unchanged;
* **the end of a round**: the batched engine deals the next round (or a new game) inside the
  same step, so the twin is compared as it was just before that deal, in the ``round_over`` /
  ``game_over`` phase, and its deal is compared after ``Game.next_round()``.

Shuffles. Each engine shuffles with its own generator, so at a reshuffle (3.6) or the next
round's deal the twin would draw other cards. During a mirrored step (or deal) the batched
engine's ``rng.shuffle_keys`` is replaced by sort keys that give the permutation ``random.shuffle``
makes from a copy of the game's generator, taken just before the step: both engines shuffle
alike, and the game's own generator is not touched.

Nothing is skipped silently. A twin is rebuilt from the game (``BatchedUno.from_games``) when
the test changed the game other than by ``step`` / ``next_round`` (an edited position); what
cannot be compared is recorded with its reason (``MirrorRecord.unchecked``), and a test that
dealt or stepped no game at all (a scenario that checks a refusal of ``Rules``) is recorded as
"not mirrored: ...". The records go into each test's ``user_properties`` and ``pytest`` prints
their totals at the end of the run (``tests/conftest.py``). ``NOT_MIRRORED`` is the documented
skip list (one entry today, with its reason).

Cost. A one-table batched step costs about a millisecond, so a scenario that plays whole rounds
at random (thousands of steps) would take tens of seconds mirrored step by step. The scenarios
in ``SAMPLED`` (node ids without parameters -> k) are mirrored on a sample instead: every k-th
step, every step that reshuffles (3.6) and every step that ends a round are replayed on a twin
rebuilt from the position just before that step (``Game.to_dict`` is kept before every step,
which is cheap), then compared as above, and so are the next round's deal after such a step and
every k-th first deal. ``MirrorRecord.sampled_out`` counts the steps left out.
A disagreement raises ``MirrorDivergence`` naming the fields that differ.
"""

from __future__ import annotations

import operator
import random
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from uno_env.core import Game, IllegalActionError
from uno_env.core.actions import parse_action
from uno_env.core.errors import ActionTextError
from uno_env.core.game import GAME_OVER

__all__ = ["NOT_MIRRORED", "SAMPLED", "Mirror", "MirrorDivergence", "MirrorRecord", "normalised"]

# node id (without parameters) -> why the scenario cannot run on the batched engine (it then runs on Game alone).
NOT_MIRRORED: dict[str, str] = {
    "tests/test_rules_sections_7.py::test_rule_7_random_games_with_variants_conserve_cards_end_and_reload":
        "too slow to mirror even sampled (8 whole games per case with save/reload replays: 149 s for the 10 cases "
        "sampled every 25th step, against about 6 s on Game alone); the batched engine's variants are proven "
        "by tests/test_batched.py::test_section_7_variants_match",
}
# node id (without parameters) -> k: whole rounds of random play, mirrored on a sample (see the module docstring).
SAMPLED: dict[str, int] = {
    "tests/test_rules_sections_1_3.py::test_rule_1_3_every_card_of_the_deck_is_in_play_after_a_round": 25,
    "tests/test_rules_sections_1_3.py::test_rule_2_1_highest_number_deals_symbols_count_zero_ties_draw_again": 10,
    "tests/test_rules_sections_1_3.py::test_rule_2_1_next_round_deals_from_the_seat_left_of_the_previous_dealer": 25,
    "tests/test_rules_sections_1_3.py::test_rule_2_1_next_round_with_a_stacked_deck": 25,
    "tests/test_rules_sections_4_6.py::test_rule_5_3_auto_mode_random_games_never_offer_uno_or_catch": 25,
}


class MirrorDivergence(AssertionError):
    """The batched engine and ``Game`` disagree on a mirrored scenario."""


@dataclass
class MirrorRecord:
    """What one test's mirror compared, and what it could not (with reasons)."""

    steps: int = 0
    """``Game.step`` calls replayed on a twin."""
    compared: int = 0
    """Positions compared (after steps, round ends and deals)."""
    deals: int = 0
    """Deals compared: first deals and next rounds."""
    refusals: int = 0
    """Illegal actions both engines refused."""
    rebuilt: int = 0
    """Twins rebuilt because the test changed a game outside ``step`` / ``next_round``."""
    sampled_out: int = 0
    """Steps and first deals of a ``SAMPLED`` scenario not replayed."""
    unchecked: list[str] = field(default_factory=list)
    """What was not compared, each with its reason."""
    not_mirrored: str | None = None
    """Why nothing of the test ran on the batched engine (None: it did)."""

    def note(self, what: str) -> None:
        """Record something not compared (once per distinct reason)."""
        if what not in self.unchecked:
            self.unchecked.append(what)

    def as_property(self) -> dict[str, Any]:
        """Plain data for ``item.user_properties`` (travels from pytest-xdist workers)."""
        return {"steps": self.steps, "compared": self.compared, "deals": self.deals, "refusals": self.refusals,
                "rebuilt": self.rebuilt, "sampled_out": self.sampled_out, "unchecked": list(self.unchecked), "not_mirrored": self.not_mirrored}


def normalised(data: dict[str, Any]) -> dict[str, Any]:
    """A ``Game.to_dict`` without generator and log; hands and known cards as sorted multisets."""
    data = {k: v for k, v in data.items() if k not in ("rng_state", "log")}
    data["hands"] = [sorted(h) for h in data["hands"]]
    data["known"] = sorted((k["observer"], k["target"], tuple(sorted(k["cards"]))) for k in data["known"])
    return data


def _differences(game: dict[str, Any], batched: dict[str, Any]) -> str:
    return "; ".join(f"{k}: Game {game[k]!r}, batched {batched.get(k)!r}" for k in game if game[k] != batched.get(k))


class GameShuffles:
    """Sort keys for the batched engine that reproduce ``random.Random.shuffle`` of one game's generator."""

    def __init__(self, rng_state: Any) -> None:
        self.rng = random.Random()
        self.rng.setstate(rng_state)

    def keys(self, torch: Any, length: Any, width: int, device: Any) -> Any:
        """``rng.shuffle_keys``' result: ``argsort`` of row ``b`` is the game's next shuffle of ``length[b]`` cards.

        ``random.shuffle`` of a list leaves at position ``j`` the item that was at ``order[j]``, and
        the engine gathers its pile by ``argsort(keys)``, so position ``order[j]`` gets key ``j``;
        positions beyond the pile get keys above every card's.
        """
        rows = []
        for n in length.tolist():
            order = list(range(n))
            self.rng.shuffle(order)
            row = [width + p for p in range(width)]  # beyond the pile: above every card's key
            for j, source in enumerate(order):
                row[source] = j
            rows.append(row)
        return torch.tensor(rows, dtype=torch.int64, device=device)


@dataclass
class Twin:
    """One game and its one-table batched engine."""

    game: Game
    env: Any
    expected: dict[str, Any]
    """The normalised position both were last seen to agree on (the game's)."""
    dealt: bool = False
    """The twin has dealt the next round already; the game waits in ``round_over``."""
    rng_after: Any = None
    """The game's generator state when the twin dealt ahead (``next_round`` must start from it)."""


class Mirror:
    """Replays every ``Game`` of a test on the batched engine while installed (see the module docstring)."""

    def __init__(self, record: MirrorRecord, every: int = 1) -> None:
        import torch

        from uno_env.batched import BatchedUno
        from uno_env.batched import rng as batched_rng
        from uno_env.batched.rules import BatchedRules

        self.torch = torch
        # The twins' tensors never need autograd: inference mode skips its bookkeeping (a step costs
        # about a quarter less). Every twin is built and stepped in it, so no tensor crosses modes.
        self.engine_calls = torch.inference_mode
        self.BatchedUno = BatchedUno
        self.batched_rng = batched_rng
        self.BatchedRules = BatchedRules
        self.record = record
        self.every = every
        self.seen = 0  # steps and first deals met (a SAMPLED scenario replays every k-th)
        self.twins: dict[int, Twin] = {}
        self.dealers: dict[str, Any] = {}  # rules -> the one-table engine that replays first deals
        self.stepping: Twin | None = None
        self.snapshot: dict[str, Any] | None = None
        self.shuffles: GameShuffles | None = None

    # ------------------------------------------------------------------ installing
    def install(self, monkeypatch: Any) -> None:
        """Wrap ``Game``'s construction, ``step`` and ``next_round`` and the engine's shuffles (undone by ``monkeypatch``)."""
        init, step, next_round = Game.__init__, Game.step, Game.next_round
        original_keys = self.batched_rng.shuffle_keys
        deal = self.BatchedRules.deal
        new_games = self.BatchedUno._new_games
        mirror = self

        def game_init(game: Game, *args: Any, **kwargs: Any) -> None:
            init(game, *args, **kwargs)
            mirror.first_deal(game, *args, **kwargs)

        def game_step(game: Game, action: Any) -> None:
            mirror.step(step, game, action)

        def game_next_round(game: Game, deck: Any = None) -> None:
            mirror.next_round(next_round, game, deck)

        def shuffle_keys(key: Any, counter: Any, length: Any, width: int) -> Any:
            if mirror.shuffles is None:
                return original_keys(key, counter, length, width)
            return mirror.shuffles.keys(mirror.torch, length, width, key.device)

        def rules_deal(rules: Any, t: Any, *args: Any, **kwargs: Any) -> None:
            mirror.before_deal(t)
            deal(rules, t, *args, **kwargs)

        def env_new_games(env: Any, t: Any, *args: Any, **kwargs: Any) -> None:
            mirror.before_deal(t)
            new_games(env, t, *args, **kwargs)

        monkeypatch.setattr(Game, "__init__", game_init)
        monkeypatch.setattr(Game, "step", game_step)
        monkeypatch.setattr(Game, "next_round", game_next_round)
        monkeypatch.setattr(self.batched_rng, "shuffle_keys", shuffle_keys)
        monkeypatch.setattr(self.BatchedRules, "deal", rules_deal)
        monkeypatch.setattr(self.BatchedUno, "_new_games", env_new_games)

    @contextmanager
    def _game_shuffles(self, rng_state: Any, twin: Twin | None = None) -> Iterator[None]:
        self.shuffles = GameShuffles(rng_state)
        self.stepping = twin
        self.snapshot = None
        try:
            yield
        finally:
            self.shuffles = None
            self.stepping = None

    def before_deal(self, t: Any) -> None:
        """The batched engine is about to deal (a next round or a new game): keep the ended round's position."""
        twin = self.stepping
        if twin is None or self.snapshot is not None:
            return
        env = twin.env
        whole = env.tables
        env.tables = t  # the one row being dealt, as the table to read
        try:
            self.snapshot = normalised(env.table_dict(0))
        finally:
            env.tables = whole

    # ------------------------------------------------------------------ comparing
    def compare(self, game: Game, twin: Twin, what: str) -> dict[str, Any]:
        """The game's position and legal ids against the twin's; returns the game's normalised position."""
        expected = normalised(game.to_dict(include_log=False))
        got = normalised(twin.env.table_dict(0))
        if expected != got:
            raise MirrorDivergence(f"{what}: the batched engine differs from Game: {_differences(expected, got)}")
        legal = [int(a) for a in game.legal_actions()]
        mask = twin.env.state.action_mask[0].nonzero()[:, 0].tolist()
        if legal != mask:
            raise MirrorDivergence(f"{what}: legal ids: Game {legal}, batched {mask}")
        self.record.compared += 1
        twin.expected = expected
        return expected

    def twin_of(self, game: Game) -> Twin | None:
        """The game's twin, rebuilt by ``from_games`` if there is none or the game changed outside ``step``."""
        twin = self.twins.get(id(game))
        position = normalised(game.to_dict(include_log=False))
        if twin is not None and twin.game is game and not twin.dealt and twin.expected == position:
            return twin
        if twin is not None and twin.game is game:
            self.record.rebuilt += 1
        try:
            with self.engine_calls():
                env = self.BatchedUno.from_games([game], observations=False)
        except ValueError as err:
            self.record.note(f"a position from_games refuses: {err}")
            self.twins.pop(id(game), None)
            return None
        twin = self.twins[id(game)] = Twin(game, env, position)
        return twin

    # ------------------------------------------------------------------ the wrapped Game methods
    def first_deal(self, game: Game, rules: Any = None, seed: Any = None, *, deck: Any = None,
                   dealer: Any = None, log_limit: Any = None) -> None:
        """After ``Game(...)`` dealt: deal the same cards on a new twin and compare."""
        if deck is None and seed is None:
            self.record.note("the first deal of an unseeded Game (nothing to replay its shuffle from)")
            return
        self.seen += 1
        if self.seen % self.every:
            self.record.sampled_out += 1
            return
        rng = random.Random(seed)
        if deck is None:  # rule 2.1's draw for the dealer shuffled first: one deck per deck_size cards drawn
            if game.state.log_start:
                self.record.note("a first deal whose log was trimmed (the dealer draw's shuffles are unknown)")
                return
            size = game.edition.deck_size
            drawn = sum(1 for event in game.state.log if event[0] == "dealer_draw")
            for _ in range(-(-drawn // size)):
                rng.shuffle(list(range(size)))
        rules = game.rules.to_dict()
        key = repr(sorted(rules.items()))
        env = self.dealers.get(key)
        with self.engine_calls():
            if env is None:  # one batched table per set of rules deals every first deal of the test
                env = self.dealers[key] = self.BatchedUno(1, observations=False, **rules)
            with self._game_shuffles(rng.getstate()):
                env.reset(decks=None if deck is None else [list(deck)], dealers=[game.dealer])
        self.compare(game, Twin(game, env, {}), "the first deal")
        self.record.deals += 1

    def step(self, step: Callable[[Game, Any], None], game: Game, action: Any) -> None:
        """``Game.step``, then the same action on the twin, then the comparison."""
        if self.every > 1:
            self.sampled_step(step, game, action)
            return
        twin = None if game.is_round_over else self.twin_of(game)
        rng_state = game.state.rng.getstate()
        try:
            step(game, action)
        except IllegalActionError:
            if twin is not None:
                self.refuse(twin, game, action)
            raise
        if twin is not None:
            self.replay(twin, game, action, rng_state)

    def sampled_step(self, step: Callable[[Game, Any], None], game: Game, action: Any) -> None:
        """``Game.step`` in a ``SAMPLED`` scenario: replayed from the position before it when it is sampled."""
        if game.is_round_over:
            step(game, action)
            return
        before = game.clone()  # cheaper than to_dict, and from_games reads it directly
        rng_state = game.state.rng.getstate()
        logged = game.log_length
        step(game, action)
        self.seen += 1
        new = game.log_length - logged
        reshuffled = new > 0 and any(event[0] == "reshuffle" for event in game.state.log[-new:])
        self.twins.pop(id(game), None)
        if self.seen % self.every and not reshuffled and not game.is_round_over:
            self.record.sampled_out += 1
            return
        with self.engine_calls():
            env = self.BatchedUno.from_games([before], observations=False)
        twin = self.twins[id(game)] = Twin(game, env, normalised(before.to_dict(include_log=False)))
        self.replay(twin, game, action, rng_state)

    def replay(self, twin: Twin, game: Game, action: Any, rng_state: Any) -> None:
        """The action ``game`` just took, on its twin (with the game's shuffles), then the comparison."""
        self.record.steps += 1
        action_id = self.action_id(game, action)
        if action_id is None:
            self.record.note(f"an action given as {type(action).__name__} (no id to replay)")
            self.twins.pop(id(game), None)
            return
        with self.engine_calls(), self._game_shuffles(rng_state, twin):
            twin.env.step(self.torch.tensor([action_id]))
        ended = self.snapshot
        self.snapshot = None
        if game.is_round_over:
            expected = normalised(game.to_dict(include_log=False))
            if ended is None:
                raise MirrorDivergence(f"step {action!r}: Game's round ended ({game.phase.text}), the batched one did not")
            if expected != ended:
                raise MirrorDivergence(f"step {action!r} ended the round: the batched engine differs from Game: "
                                       + _differences(expected, ended))
            self.record.compared += 1
            if game.phase == GAME_OVER:
                self.twins.pop(id(game), None)  # the twin has started a new game; nothing more to follow
            else:
                twin.dealt, twin.expected, twin.rng_after = True, expected, game.state.rng.getstate()
            return
        if ended is not None:
            raise MirrorDivergence(f"step {action!r}: the batched engine ended the round ({ended['phase']}), Game did not")
        self.compare(game, twin, f"after step {action!r}")

    def refuse(self, twin: Twin, game: Game, action: Any) -> None:
        """Game refused ``action``: the twin must refuse its id too and stay as it was."""
        action_id = self.plain_id(game, action)
        if action_id is None:
            return
        before = normalised(twin.env.table_dict(0))
        try:
            with self.engine_calls():
                twin.env.step(self.torch.tensor([action_id]))
        except IllegalActionError:
            pass
        else:
            raise MirrorDivergence(f"Game refused action {action!r} (id {action_id}), the batched engine took it")
        after = normalised(twin.env.table_dict(0))
        if after != before:
            raise MirrorDivergence(f"the batched engine's refusal of {action!r} changed: {_differences(before, after)}")
        self.record.refusals += 1

    def next_round(self, next_round: Callable[[Game, Any], None], game: Game, deck: Any) -> None:
        """``Game.next_round``, then its deal against the one the twin made at the round's end."""
        twin = self.twins.get(id(game))
        position = normalised(game.to_dict(include_log=False)) if twin is not None else None
        rng_state = game.state.rng.getstate()
        next_round(game, deck)
        if twin is None or twin.game is not game:
            return
        if not twin.dealt or position != twin.expected or rng_state != twin.rng_after:
            self.twins.pop(id(game), None)  # the game was changed since: the next step rebuilds its twin
            self.record.rebuilt += 1
            return
        if deck is not None:
            self.record.note("a next round dealt from a given deck (the batched engine deals its own at the "
                             "round's end): the twin restarts from the dealt position")
            self.twins.pop(id(game), None)
            return
        twin.dealt = False
        self.compare(game, twin, "the next round's deal")
        self.record.deals += 1

    # ------------------------------------------------------------------ action ids
    @staticmethod
    def action_id(game: Game, action: Any) -> int | None:
        """The id of an action ``Game.step`` accepted (an Action, an id or a text)."""
        if isinstance(action, str):
            return int(parse_action(game.edition, action))
        try:
            return operator.index(action)
        except TypeError:
            return None

    @staticmethod
    def plain_id(game: Game, action: Any) -> int | None:
        """The id a refused action names, if it names one the batched engine can be given."""
        if isinstance(action, bool):
            return None
        if isinstance(action, str):
            try:
                return int(parse_action(game.edition, action))
            except ActionTextError:
                return None
        if isinstance(action, int) and -(2**62) < action < 2**62:
            return int(action)
        return None


def start(record: MirrorRecord, nodeid: str, monkeypatch: Any) -> Mirror | None:
    """The mirror for one test (None, with the reason recorded, where it cannot run)."""
    test = nodeid.split("[")[0]
    if test in NOT_MIRRORED:
        record.not_mirrored = NOT_MIRRORED[test]
        return None
    try:
        mirror = Mirror(record, SAMPLED.get(test, 1))
    except ImportError as err:
        record.not_mirrored = f"the batched engine cannot be imported ({err}); install torch"
        return None
    mirror.install(monkeypatch)
    return mirror


def done(record: MirrorRecord) -> None:
    """At teardown: "not mirrored" for a test that dealt and stepped no game."""
    if record.not_mirrored is None and not (record.steps or record.deals or record.refusals):
        record.not_mirrored = "no Game was dealt or stepped (a scenario on Rules, cards or refusals alone)"
