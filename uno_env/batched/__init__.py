"""A batched UNO engine in torch: thousands of tables advanced by one call, on CPU or GPU.

``BatchedUno`` keeps every table's position in tensors on one device and applies one action
per table with each ``step``; observations and masks come out as device tensors, so a policy
never leaves the device. It plays exactly the rules of ``uno_env.core.Game`` and the rewards of
``uno_env.uno_v0`` (proven table by table in ``tests/test_batched.py``). It imports torch, numpy
and ``uno_env.core`` only: no PettingZoo, Gymnasium or SB3.

>>> import torch
>>> from uno_env.batched import BatchedUno
>>> env = BatchedUno(num_tables=6, edition=["classic", "monster_high", "angry_birds"] * 2,
...                  num_players=[2, 4, 10, 3, 6, 8], episode="round", seed=0)
>>> state = env.reset()
>>> state.observation.shape, state.action_mask.shape, state.rewards.shape
(torch.Size([6, 1009]), torch.Size([6, 80]), torch.Size([6, 10]))
>>> noise = torch.rand(state.action_mask.shape, generator=torch.Generator().manual_seed(0))
>>> actions = torch.where(state.action_mask, noise, -1.0).argmax(1)   # a random legal action per table
>>> state = env.step(actions)
>>> bool(state.action_mask.any(1).all())   # every table has a seat to act, with a legal action
True
>>> env.to_game(1).edition.name
'monster_high'

API (pgx-like)
--------------
``BatchedUno(num_tables, edition="classic", num_players=4, *, max_players=10, episode="game",
reward="win", max_turns=None, device="cpu", seed=0, observations=True, **rule_options)``. Every
``uno_env.core.Rules`` option (``edition``, ``num_players``, ``target_score``, ``uno_call``,
``allow_bluff``, ``scoring``, ``first_dealer``, ``teams``, ``stacking``, ``seven_zero``,
``draw_until_playable``) is one value for all tables or a list with one value per table, so one
batch mixes editions, table sizes and rules. ``episode``, ``reward``, ``max_players`` and
``max_turns`` mean what they mean for ``uno_env.uno_v0`` (same defaults, ``DEFAULT_MAX_TURNS``).

* ``reset(seed=None, *, decks=None, dealers=None) -> State``: a new game at every table.
  ``decks`` deals given decks (codes, top first, as ``Game(deck=...)``; None per table to
  shuffle), ``dealers`` fixes first dealers; ``seed`` restarts the tables' generators.
* ``step(actions, final_observer=None) -> State``: ``actions`` is a ``(B,)`` integer tensor on
  the engine's device, one action id (the fixed 80-id layout of ``uno_env.core.actions``) for the
  seat to act at each table. A table whose episode ends (terminated or truncated) is dealt a new
  game in the same call (auto-reset).
* ``State`` (frozen): ``current_player`` (B,), ``observation`` (B, 1009 at ``max_players=10``)
  float32 = ``uno_env.observe(game, current_player, max_players)``, ``action_mask`` (B, 80) bool =
  ``uno_env.action_mask(game, current_player)``, ``rewards`` (B, max_players) float32 (this
  step's reward of every seat), ``terminated`` / ``truncated`` (B,) bool; for tables whose
  episode ended this step: ``ended_tables`` (K,), ``ended_observation`` (K, 1009) (the last
  position, seen from ``final_observer``: by default the seat left to decide for a truncated
  episode, the seat that made the last decision for a terminated one), and
  ``final_observation`` (B, 1009), built on first read.
* ``observe(seats)``: (B, 1009) observations of the current positions from any seats.
* ``to_game(i)`` / ``table_dict(i)``: table ``i`` as a ``Game`` / in ``Game.to_dict`` form;
  ``BatchedUno.from_games(games, ...)``: a batch from ``Game`` positions in any phase where a
  seat decides (any editions, sizes and rules).
* ``tables``: the raw state (``Tables``, below), for privileged features; read it, do not write it.

Errors: actions of the wrong type, shape, dtype or device, out of range or illegal at their
table raise ``IllegalActionError`` naming each bad table, its phase, seat and legal ids; bad
decks raise ``DeckError`` and bad options ``RulesError`` naming the table; nothing changes.

State layout (``Tables``)
-------------------------
One row per table; ``P`` is the largest table of the batch. Cards are kinds ``0..54`` (``color
* 13 + rank``, 52 ``W``, 53 ``W4``, 54 the special wild) as ``int8``: ``hands`` (B, P, 55)
counts, ``known`` (B, P, P, 55) counts of ``target``'s cards each ``observer`` has seen,
``draw`` / ``discard`` (B, 112) piles bottom first with their lengths, ``discard_count`` (B,
55); ``drew_on`` (B, P, 17) each seat's draw evidence (``PublicState.drew_on``); ``uno``,
``scores``, ``round_points``, ``winners``, ``alive`` (B, P); and (B,) scalars
mirroring ``Game``'s fields (phase, current, dealer, direction, active color, top card, pending
card and player, drawn card, ``W4`` guilt and previous color, catch window, penalty, round
number, round winner), the per-table rules, the decision count of the episode and the generator
(``rng_key``, ``rng_counter``). 10-seat tables take 6.9 kB each, 4-seat batches 1.7 kB, 2-seat
batches 0.9 kB (``nbytes_per_table``); a step's ``State`` adds 4.2 kB per table.

What is exact
-------------
Rules sections 1-6 for all four editions and 2-10 players, the ``uno_call``, ``allow_bluff``,
``scoring``, ``target_score`` and ``first_dealer`` options and every section 7 variant
(partners, elimination, stacking, seven-zero, draw until playable): every decision ``Game``
asks, in the same phase, with the same legal actions; the same hands, piles (in order), known
cards, draw evidence, scores, seats in the game and pending state after every step; the observation and mask
bit for bit; ``uno_env.uno_v0``'s rewards, terminations and truncations, whole games
(``episode="game"``) included. Randomness is the engine's own: a counter-based hash per table
(``uno_env.batched.rng``), so the same seed on the same device with the same batch and actions
gives the same trajectories, and a table's play does not depend on the other tables. Shuffles
are uniform (a sort by random keys) but not ``random.Random``'s, so a reshuffle or a new deal
differs from what ``Game`` would draw from the same seed (``rng.shuffle_order`` reproduces
them). Rule 2.1's draw for the first dealer picks each seat with probability 1/n; the engine
picks the dealer uniformly instead of drawing cards.

Not supported
-------------
``from_games`` refuses positions where no seat decides (a round or game over). There is no
event log (``to_game`` gives a game without one); use ``uno_env.uno_v0`` for logs, rendering,
infos and seat views.

Performance notes: ``step`` runs a fixed sequence of masked stages with no Python loop over
tables; rare stages (reshuffles, deals, end of round) run on the rows that need them. On a GPU
each skipped stage costs one small device-to-host synchronisation. ``observations=False``
leaves observations out (``observation`` then has width 0).
"""

from .engine import DEFAULT_MAX_TURNS, BatchedUno, State
from .tables import Tables

__all__ = ["BatchedUno", "DEFAULT_MAX_TURNS", "State", "Tables"]
