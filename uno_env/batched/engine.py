"""``BatchedUno``: many tables of ``uno_env.core.Game`` advanced by one call (see ``uno_env.batched``)."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import torch

from ..core import actions as A
from ..core.actions import action_texts
from ..core.cards import DREW_ON_SIZE, EDITIONS, NUM_KINDS, deck_from_codes
from ..core.errors import DeckError, IllegalActionError, RulesError
from ..core.game import GAME_OVER, ROUND_OVER, STATE_FORMAT, STATE_VERSION, Game, Phase
from ..core.rules import Rules
from . import rng
from .observe import Observer
from .rules import EDITION_NAMES, BatchedRules
from .tables import MAX_DECK, Tables

__all__ = ["BatchedUno", "State", "DEFAULT_MAX_TURNS", "EPISODE_MODES", "REWARD_MODES"]

EPISODE_MODES = ("game", "round")
REWARD_MODES = ("win", "score")
DEFAULT_MAX_TURNS = {"round": 10_000, "game": 100_000}  # as uno_env.uno_v0 (a test keeps them equal)
_PHASES = tuple(Phase)
_INTEGER_DTYPES = (torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8)


@dataclass(frozen=True)
class State:
    """What ``reset`` and ``step`` return; every field is a tensor on the engine's device, one row per table."""

    current_player: torch.Tensor
    """(B,) int64: the seat that decides now (after an auto-reset: in the new episode)."""
    observation: torch.Tensor
    """(B, observation_size) float32: ``uno_env.observe(game, current_player, max_players)``."""
    action_mask: torch.Tensor
    """(B, 80) bool: ``uno_env.action_mask(game, current_player)``, the legal action ids (a copy: ``step`` checks
    actions against the engine's own, so writing to this tensor changes nothing)."""
    rewards: torch.Tensor
    """(B, max_players) float32: this step's reward of every seat (``uno_env.uno_v0``'s rules); 0 past the table size."""
    terminated: torch.Tensor
    """(B,) bool: the episode ended this step (its table has already been dealt a new one)."""
    truncated: torch.Tensor
    """(B,) bool: the episode reached ``max_turns`` this step (and was replaced by a new one)."""
    final_observer: torch.Tensor
    """(B,) int64: whose seat ``final_observation`` is seen from: by default the seat left to decide when
    the episode was truncated, the seat that made the last decision when it terminated; ``current_player``
    where no episode ended."""
    ended_tables: torch.Tensor
    """(K,) int64: the tables whose episode ended this step (``terminated | truncated``), in order."""
    ended_observation: torch.Tensor
    """(K, observation_size) float32: their last positions' observations, from ``final_observer``'s seat."""

    @cached_property
    def final_observation(self) -> torch.Tensor:
        """(B, observation_size) float32: ``ended_observation`` at the ended tables, ``observation`` elsewhere.

        Built on first read (a copy of ``observation``), so a learner that does not read it pays nothing.
        """
        if self.ended_tables.numel() == 0:
            return self.observation
        final = self.observation.clone()
        final[self.ended_tables] = self.ended_observation
        return final


class BatchedUno:
    """``num_tables`` tables of UNO as tensors, every one advanced by each ``step(actions)``.

    Rule options are those of ``uno_env.core.Rules``; each may be one value for every table or a
    list with one value per table (so one batch mixes editions, table sizes and variants).
    ``episode``, ``reward``, ``max_players`` and ``max_turns`` mean what they mean for
    ``uno_env.uno_v0``. ``seed`` seeds every table's generator.
    """

    def __init__(
        self,
        num_tables: int,
        edition: str | Sequence[str] = "classic",
        num_players: int | Sequence[int] = 4,
        *,
        max_players: int = 10,
        episode: str = "game",
        reward: str = "win",
        max_turns: int | None = None,
        device: str | torch.device = "cpu",
        seed: int = 0,
        observations: bool = True,
        **rule_options: Any,
    ) -> None:
        if isinstance(num_tables, bool) or not isinstance(num_tables, int) or num_tables < 1:
            raise ValueError(f"num_tables must be a positive int, got {num_tables!r}")
        if episode not in EPISODE_MODES:
            raise ValueError(f"episode must be one of {', '.join(EPISODE_MODES)}, got {episode!r}")
        if reward not in REWARD_MODES:
            raise ValueError(f"reward must be one of {', '.join(REWARD_MODES)}, got {reward!r}")
        if max_turns is None:
            max_turns = DEFAULT_MAX_TURNS[episode]
        if isinstance(max_turns, bool) or not isinstance(max_turns, int) or max_turns < 1:
            raise ValueError(f"max_turns must be a positive int, got {max_turns!r}")
        if isinstance(seed, bool) or not isinstance(seed, int):
            raise ValueError(f"seed must be an int, got {seed!r}")
        if not isinstance(observations, bool):
            raise ValueError(f"observations must be True or False, got {observations!r}")
        self.num_tables = num_tables
        self.observations = observations
        self.rules = _table_rules(num_tables, {"edition": edition, "num_players": num_players, **rule_options})
        largest = max(r.num_players for r in self.rules)
        if isinstance(max_players, bool) or not isinstance(max_players, int) or not largest <= max_players <= 10:
            raise ValueError(f"max_players must be an int from the largest table ({largest}) to 10, got {max_players!r}")
        self.device = torch.empty(0, device=device).device  # canonical: "cuda" becomes "cuda:0"
        self.max_players = max_players
        self.episode = episode
        self.reward = reward
        self.max_turns = max_turns
        # Per-seat tensors are as wide as the largest table; observations and rewards as max_players.
        self.num_seats = largest
        self._rules = BatchedRules(largest, self.device)
        self._observer = Observer(max_players, self.device)
        self.observation_size = self._observer.size
        self.tables = Tables.empty(num_tables, largest, self.device)
        self._load_rules(self.rules)
        self.seed = seed
        self.tables.rng_key = rng.table_keys(seed, num_tables, self.device)
        self._state: State | None = None
        self._legal = torch.zeros(0, A.NUM_ACTIONS, dtype=torch.bool)  # the legal mask the engine checks against

    # ------------------------------------------------------------------ construction helpers
    def _load_rules(self, rules: list[Rules]) -> None:
        t = self.tables

        def column(values: list[Any], dtype: torch.dtype = torch.int64) -> torch.Tensor:
            return torch.tensor(values, dtype=dtype, device=self.device)

        t.edition = column([EDITION_NAMES.index(r.edition) for r in rules])
        t.num_players = column([r.num_players for r in rules])
        t.target_score = column([r.target_score for r in rules])
        t.uno_auto = column([r.uno_call == "auto" for r in rules], torch.bool)
        t.allow_bluff = column([r.allow_bluff for r in rules], torch.bool)
        t.lowest = column([r.scoring == "lowest" for r in rules], torch.bool)
        t.first_dealer = column([-1 if r.first_dealer is None else r.first_dealer for r in rules])
        t.teams = column([r.teams for r in rules], torch.bool)
        t.stacking = column([r.stacking for r in rules], torch.bool)
        t.seven_zero = column([r.seven_zero for r in rules], torch.bool)
        t.until_playable = column([r.draw_until_playable for r in rules], torch.bool)
        t.elimination = column([r.elimination for r in rules], torch.bool)
        self._rules.rings = any(r.elimination for r in rules)

    @classmethod
    def from_games(
        cls,
        games: Sequence[Game],
        *,
        max_players: int = 10,
        episode: str = "game",
        reward: str = "win",
        max_turns: int | None = None,
        device: str | torch.device = "cpu",
        seed: int = 0,
        observations: bool = True,
    ) -> BatchedUno:
        """One table per ``Game``, each at its position (any phase where a seat decides, any rules).

        Each table then goes on with its own generator (seeded from ``seed``), not the game's.
        Raises ``ValueError`` naming a game it cannot represent (a finished round, a table larger
        than ``max_players``, not a ``Game``).
        """
        if not isinstance(games, Sequence) or not games:
            raise ValueError("from_games needs a non-empty list of uno_env.core.Game")
        datas = []
        for i, game in enumerate(games):
            if not isinstance(game, Game):
                raise ValueError(f"game {i}: expected a uno_env.core.Game, got {type(game).__name__}")
            if game.is_round_over:
                raise ValueError(f"game {i}: its round is over (phase {game.phase.text}); "
                                 "a table needs a position where a seat decides (call next_round() first)")
            datas.append(game.to_dict(include_log=False))
        options: dict[str, list[Any]] = {}
        for data in datas:
            for name, value in data["rules"].items():
                options.setdefault(name, []).append(value)
        env = cls(len(games), max_players=max_players, episode=episode, reward=reward, max_turns=max_turns,
                  device=device, seed=seed, observations=observations, **options)
        env._load_positions(datas)
        return env

    def _load_positions(self, datas: list[dict[str, Any]]) -> None:
        b, p = self.num_tables, self.num_seats
        cols: dict[str, list[Any]] = {}
        # Counts and piles are gathered as Python lists and made tensors once (element writes cost more).
        hands = [[[0] * NUM_KINDS for _ in range(p)] for _ in range(b)]
        known = [[[[0] * NUM_KINDS for _ in range(p)] for _ in range(p)] for _ in range(b)]
        drew_on = [[[0] * DREW_ON_SIZE for _ in range(p)] for _ in range(b)]
        draw = [[0] * MAX_DECK for _ in range(b)]
        discard = [[0] * MAX_DECK for _ in range(b)]
        phases = [ph.text for ph in _PHASES]

        def put(name: str, value: Any) -> None:
            cols.setdefault(name, []).append(value)

        for i, data in enumerate(datas):
            ed = EDITIONS[data["rules"]["edition"]]
            n = data["rules"]["num_players"]
            pad = [0] * (p - n)
            for seat, hand in enumerate(data["hands"]):
                counts = hands[i][seat]
                for code in hand:
                    counts[ed.kind(code)] += 1
            for entry in data["known"]:
                counts = known[i][entry["observer"]][entry["target"]]
                for code in entry["cards"]:
                    counts[ed.kind(code)] += 1
            for seat, counts in enumerate(data.get("drew_on", ())):  # a version 1 save has none
                drew_on[i][seat] = list(counts)
            pile = [ed.kind(c) for c in reversed(data["draw_pile"])]
            draw[i][:len(pile)] = pile
            below = [ed.kind(c) for c in data["discard_pile"]]
            discard[i][:len(below)] = below
            pending = data["pending"]

            def kind_or_none(code: str | None, ed: Any = ed) -> int:
                return -1 if code is None else int(ed.kind(code))

            def color_or_none(name: str | None, ed: Any = ed) -> int:
                return -1 if name is None else int(ed.color_index(name))

            put("round_number", data["round"])
            put("scores", list(data["scores"]) + pad)
            put("round_points", list(data["round_points"]) + pad)
            put("round_winner", -1 if data["round_winner"] is None else data["round_winner"])
            put("winners", [s in data["winners"] for s in range(p)])
            put("dealer", data["dealer"])
            put("direction", data["direction"])
            put("phase", phases.index(data["phase"]))
            put("current", data["current_player"])
            put("active", color_or_none(data["active_color"]))
            put("top", below[-1])
            put("played", kind_or_none(pending["card"]))
            put("player", -1 if pending["player"] is None else pending["player"])
            put("drawn", kind_or_none(pending["drawn"]))
            put("w4_guilty", pending["w4_guilty"])
            put("w4_prev", color_or_none(pending["w4_prev_color"]))
            put("catch_index", pending["catch_index"])
            put("penalty", pending["penalty"])
            put("uno", list(data["uno_called"]) + [False] * (p - n))
            put("alive", [not e for e in data["eliminated"]] + [False] * (p - n))
            put("draw_len", len(pile))
            put("discard_len", len(below))
            put("discard_count", [below.count(k) for k in range(NUM_KINDS)])
        t = self.tables
        dev = self.device
        for name, values in cols.items():
            dtype = getattr(t, name).dtype
            setattr(t, name, torch.tensor(values, dtype=dtype, device=dev))
        t.hands, t.known, t.drew_on, t.draw, t.discard = (torch.tensor(v, dtype=torch.int8, device=dev)
                                                          for v in (hands, known, drew_on, draw, discard))
        t.turns = torch.zeros(b, dtype=torch.int64, device=dev)
        self._state = self._fresh_state()

    # ------------------------------------------------------------------ episodes
    def reset(
        self,
        seed: int | None = None,
        *,
        decks: Sequence[Sequence[str] | None] | None = None,
        dealers: Sequence[int | None] | None = None,
    ) -> State:
        """Start a new game at every table and return the first state.

        ``seed`` restarts every table's generator (default: they go on from where they are);
        ``decks`` gives a table its first deal as ``Game(deck=...)`` does (codes, top first;
        None: shuffled), ``dealers`` its first dealer (None: drawn, or ``first_dealer``).
        """
        b = self.num_tables
        given, deck_rows = self._check_decks(decks)
        dealer = self._check_dealers(dealers)
        if seed is not None:
            if isinstance(seed, bool) or not isinstance(seed, int):
                raise ValueError(f"seed must be an int, got {seed!r}")
            self.seed = seed
            self.tables.rng_key = rng.table_keys(seed, b, self.device)
            self.tables.rng_counter = torch.zeros_like(self.tables.rng_counter)
        everyone = torch.ones(b, dtype=torch.bool, device=self.device)
        self._new_games(self.tables, everyone, dealer, deck_rows, given)
        self._state = self._fresh_state()
        return self._state

    def _check_decks(self, decks: Sequence[Sequence[str] | None] | None) -> tuple[torch.Tensor | None, torch.Tensor | None]:
        if decks is None:
            return None, None
        if isinstance(decks, (str, bytes)) or not isinstance(decks, Sequence) or len(decks) != self.num_tables:
            raise DeckError(f"decks must be a list of {self.num_tables} decks (codes, top first) or None per table")
        given = torch.zeros(self.num_tables, dtype=torch.bool)
        rows = torch.zeros(self.num_tables, MAX_DECK, dtype=torch.int64)
        for i, deck in enumerate(decks):
            if deck is None:
                continue
            rules = self.rules[i]
            try:
                kinds = deck_from_codes(EDITIONS[rules.edition], deck)
            except ValueError as err:
                raise DeckError(f"table {i} ({rules.edition}): {err}") from None
            given[i] = True
            rows[i, :len(kinds)] = torch.tensor(kinds)
        return given.to(self.device), rows.to(self.device)

    def _check_dealers(self, dealers: Sequence[int | None] | None) -> torch.Tensor:
        seats = [-1] * self.num_tables
        if dealers is not None:
            if not isinstance(dealers, Sequence) or len(dealers) != self.num_tables:
                raise RulesError(f"dealers must be a list of {self.num_tables} seats (or None per table)")
            for i, dealer in enumerate(dealers):
                n = self.rules[i].num_players
                if dealer is None:
                    continue
                if isinstance(dealer, bool) or not isinstance(dealer, int) or not 0 <= dealer < n:
                    raise RulesError(f"table {i}: dealer must be a seat 0..{n - 1} or None, got {dealer!r}")
                seats[i] = dealer
        return torch.tensor(seats, dtype=torch.int64, device=self.device)

    def _new_games(self, t: Tables, m: torch.Tensor, dealer: torch.Tensor, deck: torch.Tensor | None = None,
                   given: torch.Tensor | None = None) -> None:
        """A new game at the selected tables: scores cleared, a dealer chosen, the first round dealt."""
        dealer = torch.where(dealer.lt(0), t.first_dealer, dealer)
        drawn = m & dealer.lt(0)
        # Rule 2.1's draw for the first dealer treats every seat alike, so it picks each with
        # probability 1/n: the engine picks uniformly instead of simulating the cards.
        pick = rng.uniform_ints(t.rng_key, t.rng_counter, t.num_players)
        t.rng_counter = t.rng_counter + drawn.long()
        dealer = torch.where(drawn, pick, dealer)
        mm = m[:, None]
        t.scores = torch.where(mm, 0, t.scores)
        t.winners = t.winners & ~mm
        t.alive = torch.where(mm, self._rules.seats[None, :].lt(t.num_players[:, None]), t.alive)
        t.round_number = torch.where(m, 0, t.round_number)
        t.turns = torch.where(m, 0, t.turns)
        self._rules.deal(t, m, dealer, deck, given)

    def _observe(self, t: Tables, seat: torch.Tensor) -> torch.Tensor:
        """Observations of ``seat`` at the tables ``t`` ((rows, 0) when observations are off)."""
        if self.observations:
            return self._observer.observe(t, seat)
        return torch.zeros(seat.shape[0], 0, dtype=torch.float32, device=self.device)

    def _fresh_state(self) -> State:
        t = self.tables
        obs = self._observe(t, t.current)
        zeros = torch.zeros(self.num_tables, dtype=torch.bool, device=self.device)
        rewards = torch.zeros(self.num_tables, self.max_players, dtype=torch.float32, device=self.device)
        none = torch.zeros(0, dtype=torch.int64, device=self.device)
        current = t.current.clone()
        self._legal = self._rules.action_mask(t)
        return State(current, obs, self._legal.clone(), rewards, zeros, zeros.clone(), current, none,
                     obs[:0])

    @property
    def state(self) -> State:
        """The last ``State`` returned (reset first)."""
        if self._state is None:
            raise RuntimeError("call reset() first")
        return self._state

    # ------------------------------------------------------------------ stepping
    def step(self, actions: torch.Tensor, final_observer: torch.Tensor | None = None) -> State:
        """Apply one action id per table (the seat to act's), then auto-reset finished tables.

        ``final_observer`` (B,) optionally names the seat each ended table's ``final_observation``
        is seen from. Illegal input raises ``IllegalActionError`` and changes no table.
        """
        state = self.state
        action = self._check_actions(actions, state)
        if final_observer is not None:
            final_observer = self._check_seats(final_observer, "final_observer")
        t = self.tables
        b = self.num_tables
        actor = t.current
        out = self._rules.apply(t, action)
        t.turns = t.turns + 1
        rewards = torch.zeros(b, self.max_players, dtype=torch.float32, device=self.device)
        terminated = torch.zeros_like(out)
        truncated = torch.zeros_like(out)
        # Rounds that ended and episodes that ran out of turns: handled on those rows only.
        special = out | t.turns.ge(self.max_turns)
        ended_tables = torch.zeros(0, dtype=torch.int64, device=self.device)
        ended_observation = torch.zeros(0, self.observation_size if self.observations else 0, device=self.device)
        observer_all = None
        if self._rules.any(special):
            index = special.nonzero()[:, 0]
            rows = t.select(index)
            row_rewards = torch.zeros(index.shape[0], self.max_players, dtype=torch.float64, device=self.device)
            row_terminated = self._end_round(rows, out[index], row_rewards)
            row_truncated = ~row_terminated & rows.turns.ge(self.max_turns)
            ended = row_terminated | row_truncated
            if self._rules.any(ended):
                if final_observer is None:
                    observer = torch.where(row_truncated, rows.current, actor[index])
                else:
                    observer = final_observer[index]
                ended_tables = index[ended]
                observer_all = t.current.clone()
                observer_all[ended_tables] = observer[ended]
                ended_observation = self._observe(rows.select(ended.nonzero()[:, 0]), observer[ended])
                self._new_games(rows, ended, torch.full_like(index, -1))
            t.assign(index, rows)
            rewards[index] = row_rewards.float()
            terminated[index] = row_terminated
            truncated[index] = row_truncated
        current = t.current.clone()
        if observer_all is None:
            observer_all = current
        self._legal = self._rules.action_mask(t)  # the engine's own copy: a caller's writes to the state's change nothing
        self._state = State(current, self._observe(t, current), self._legal.clone(), rewards, terminated,
                            truncated, observer_all, ended_tables, ended_observation)
        return self._state

    def _end_round(self, t: Tables, out: torch.Tensor, rewards: torch.Tensor) -> torch.Tensor:
        """``Game._end_round`` (6.1-6.4) and ``uno_env.uno_v0``'s rewards; deals the next round where the game goes on.

        Returns the tables whose episode ended.
        """
        seats = self._rules.seats[None, :]
        present = seats.lt(t.num_players[:, None])
        winner = t.player.clamp(min=0)
        went_out = seats.eq(winner[:, None])
        hand_points = (t.hands.long() * self._rules.values[t.edition][:, None, :]).sum(-1)
        total = hand_points.sum(1)
        standard = ~t.lowest & ~t.elimination  # otherwise each seat adds its own hand (6.4, 7.2)
        points = torch.where(standard[:, None], went_out.long() * total[:, None], hand_points)
        # 7.1 partners: a team's points are its members' hands; the winning team scores the other team's.
        teams = t.teams[:, None]
        even = seats.remainder(2).eq(0)
        on_team = torch.where(even, (hand_points * even).sum(1, keepdim=True), (hand_points * ~even).sum(1, keepdim=True))
        other_team = total[:, None] - on_team
        partner = seats.remainder(2).eq(winner[:, None].remainder(2)) & present  # on the winner's team
        team_points = torch.where(standard[:, None], torch.where(partner, other_team, 0), on_team) * present
        points = torch.where(teams, team_points, points)
        mo = out[:, None]
        t.scores = torch.where(mo, t.scores + points, t.scores)
        t.round_points = torch.where(mo, points, t.round_points)
        t.round_winner = torch.where(out, winner, t.round_winner)
        scores = t.scores
        won_std = present & scores.ge(t.target_score[:, None]) & (went_out | teams)
        won_standard = standard & won_std.any(1)
        reached = torch.where(present, scores, -1).amax(1).ge(t.target_score)
        low = torch.where(present, scores, torch.iinfo(torch.int64).max).amin(1)
        won_lowest = t.lowest & reached
        winners = torch.where(won_standard[:, None], won_std, present & scores.eq(low[:, None]))
        # 7.2 elimination: seats at or over the target leave; the last one standing wins.
        in_round = t.alive & present
        t.alive = torch.where(mo & t.elimination[:, None], t.alive & scores.lt(t.target_score[:, None]), t.alive)
        won_eliminating = t.elimination & t.alive.sum(1).le(1)
        winners = torch.where(won_eliminating[:, None], t.alive, winners)
        over = out & (won_standard | won_lowest | won_eliminating)
        t.winners = torch.where(over[:, None], winners, t.winners)
        t.phase = torch.where(over, GAME_OVER, torch.where(out, ROUND_OVER, t.phase))
        n = t.num_players.double()[:, None]
        if self.reward == "score":
            hands = hand_points.double()
            standard_rewards = torch.where(went_out, total.double()[:, None] - hands, -hands)
            gain = other_team.double() / (n / 2)
            standard_rewards = torch.where(teams, torch.where(partner, gain, -hands), standard_rewards)
            dealt = in_round.double()  # the seats dealt into this round
            mean = (hands * dealt).sum(1, keepdim=True) / dealt.sum(1, keepdim=True)
            lowest_rewards = torch.where(in_round, mean - hands, 0.0)
            values = torch.where(standard[:, None], standard_rewards, lowest_rewards)
            sharing = out
        else:
            sharing = out if self.episode == "round" else over
            share = went_out if self.episode == "round" else t.winners
            share = torch.where(teams & share.sum(1, keepdim=True).eq(1), partner, share)  # partners share a win
            k = share.sum(1, keepdim=True).double()
            values = torch.where(share, 1.0 / k, -1.0 / (n - k))
            values = torch.where(k.eq(n), 0.0, values)
        p = t.hands.shape[1]
        rewards[:, :p] += torch.where(sharing[:, None] & present, values, 0.0)
        terminated = out if self.episode == "round" else over
        going_on = out & ~terminated
        if self._rules.any(going_on):
            self._rules.deal(t, going_on, self._rules.seat_after(t, t.dealer))
        return terminated

    def _check_actions(self, actions: Any, state: State) -> torch.Tensor:
        b = self.num_tables
        if not isinstance(actions, torch.Tensor):
            raise IllegalActionError(f"actions must be a torch.Tensor of {b} action ids (int64), "
                                     f"got {type(actions).__name__}")
        if tuple(actions.shape) != (b,):
            raise IllegalActionError(f"actions must have shape ({b},), one id per table; got {tuple(actions.shape)}")
        if actions.dtype not in _INTEGER_DTYPES:
            raise IllegalActionError(f"actions must be integer action ids (int64), got dtype {actions.dtype}")
        if actions.device != self.device:
            raise IllegalActionError(f"actions must be on the engine's device {self.device}, got {actions.device}")
        action = actions.long()
        in_range = action.ge(0) & action.lt(A.NUM_ACTIONS)
        legal = self._legal.gather(1, action.clamp(0, A.NUM_ACTIONS - 1)[:, None])[:, 0] & in_range
        if bool(legal.all()):
            return action
        bad = (~legal).nonzero()[:, 0].tolist()
        lines = [self._refusal(i, int(action[i])) for i in bad[:5]]
        more = f" (and {len(bad) - 5} more tables)" if len(bad) > 5 else ""
        raise IllegalActionError(f"illegal actions at {len(bad)} table(s){more}; no table was changed:\n"
                                 + "\n".join(lines))

    def _refusal(self, i: int, action: int) -> str:
        mask = self._legal[i]
        legal = mask.nonzero()[:, 0].tolist()
        texts = action_texts(EDITIONS[self.rules[i].edition])
        what = f"action {action} ({texts[action]})" if 0 <= action < A.NUM_ACTIONS else (
            f"action {action} (ids are 0..{A.NUM_ACTIONS - 1})")
        phase = _PHASES[int(self.tables.phase[i])].text
        return (f"  table {i} (phase {phase}, seat {int(self.tables.current[i])}): {what} is not legal; "
                f"legal ids: {legal} ({', '.join(texts[a] for a in legal)})")

    def _check_seats(self, seats: Any, name: str) -> torch.Tensor:
        b = self.num_tables
        if (not isinstance(seats, torch.Tensor) or tuple(seats.shape) != (b,) or seats.dtype not in _INTEGER_DTYPES
                or seats.device != self.device):
            raise ValueError(f"{name} must be an integer tensor of shape ({b},) on {self.device}")
        seats = seats.long()
        bad = (seats.lt(0) | seats.ge(self.tables.num_players)).nonzero()[:, 0].tolist()
        if bad:
            i = bad[0]
            raise ValueError(f"{name}: table {i} has seats 0..{self.rules[i].num_players - 1}, got {int(seats[i])}")
        checked: torch.Tensor = seats
        return checked

    # ------------------------------------------------------------------ views and conversions
    def observe(self, seats: torch.Tensor) -> torch.Tensor:
        """(B, observation_size) float32: each table's current position seen from ``seats`` (B,)."""
        return self._observer.observe(self.tables, self._check_seats(seats, "seats"))

    def to_game(self, i: int) -> Game:
        """Table ``i`` as a ``uno_env.core.Game`` (its generator seeded from the table's; no event log)."""
        if isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < self.num_tables:
            raise IndexError(f"table index must be 0..{self.num_tables - 1}, got {i!r}")
        return Game.from_dict(self.table_dict(i))

    def table_dict(self, i: int) -> dict[str, Any]:
        """Table ``i`` in the ``Game.to_dict`` format (what ``to_game`` loads)."""
        t = self.tables
        row = {name: value[i].tolist() for name, value in vars(t).items()}
        rules = self.rules[i]
        ed = EDITIONS[rules.edition]
        n = rules.num_players
        code = ed.code

        def cards(counts: list[int]) -> list[str]:
            return [code(k) for k, c in enumerate(counts) for _ in range(c)]

        def color(slot: int) -> str | None:
            return None if slot < 0 else ed.colors[slot]

        state = random.Random((row["rng_key"] << 32) | (row["rng_counter"] & rng.MASK32)).getstate()
        played = row["played"]
        return {
            "format": STATE_FORMAT,
            "version": STATE_VERSION,
            "rules": rules.to_dict(),
            "round": row["round_number"],
            "dealer": row["dealer"],
            "direction": row["direction"],
            "phase": _PHASES[row["phase"]].text,
            "current_player": row["current"],
            "active_color": color(row["active"]),
            "hands": [cards(row["hands"][s]) for s in range(n)],
            "draw_pile": [code(k) for k in reversed(row["draw"][:row["draw_len"]])],
            "discard_pile": [code(k) for k in row["discard"][:row["discard_len"]]],
            "scores": row["scores"][:n],
            "round_points": row["round_points"][:n],
            "round_winner": None if row["round_winner"] < 0 else row["round_winner"],
            "winners": [s for s in range(n) if row["winners"][s]],
            "uno_called": row["uno"][:n],
            "eliminated": [not a for a in row["alive"][:n]],
            "drew_on": row["drew_on"][:n],
            "known": [
                {"observer": o, "target": target, "cards": cards(row["known"][o][target])}
                for target in range(n) for o in range(n) if any(row["known"][o][target])
            ],
            "pending": {
                "card": None if played < 0 else code(played),
                "player": None if row["player"] < 0 else row["player"],
                "drawn": None if row["drawn"] < 0 else code(row["drawn"]),
                "w4_guilty": row["w4_guilty"],
                "w4_prev_color": color(row["w4_prev"]),
                "catch_index": row["catch_index"],
                "penalty": row["penalty"],
            },
            "rng_state": [state[0], list(state[1]), state[2]],
        }

    def nbytes_per_table(self) -> int:
        """Bytes of state per table (``Tables``), not counting the last ``State``'s tensors."""
        return self.tables.nbytes_per_table()

    def __repr__(self) -> str:
        editions = sorted({r.edition for r in self.rules})
        sizes = sorted({r.num_players for r in self.rules})
        return (f"BatchedUno({self.num_tables} tables, editions {editions}, players {sizes}, "
                f"episode={self.episode!r}, reward={self.reward!r}, device={self.device})")


def _table_rules(num_tables: int, options: dict[str, Any]) -> list[Rules]:
    """One validated ``Rules`` per table from options given once or per table."""
    columns: dict[str, list[Any]] = {}
    for name, value in options.items():
        if isinstance(value, (list, tuple)):
            if len(value) != num_tables:
                raise RulesError(f"{name}: a list needs one value per table ({num_tables}), got {len(value)}")
            columns[name] = list(value)
        else:
            columns[name] = [value] * num_tables
    cache: dict[tuple[Any, ...], Rules] = {}
    rules = []
    for i in range(num_tables):
        chosen = {name: values[i] for name, values in columns.items()}
        key = tuple(sorted((k, repr(v)) for k, v in chosen.items()))
        if key not in cache:
            try:
                cache[key] = Rules(**chosen)
            except RulesError as err:
                raise RulesError(f"table {i}: {err}") from None
        rules.append(cache[key])
    return rules
