"""What a seat can infer about the other hands from the views it sees: the cards a player lacks.

``VoidTracker`` watches one seat's views (``game.view(seat)``, the env's ``infos[agent]``) and
the moves it makes, and infers, for every other player, card kinds that player does not hold:
a player who draws instead of playing is taken to hold no card matching the color or the number
it drew on (wild cards aside: a player may keep a wild for later). Under the official rules a
player may draw while holding a playable card; few do, and none of the project's heuristic
agents does, so this is a belief, not a certainty, and a search that uses it
(``ISMCTSAgent(belief="voids")``) plays worse against a player who draws at random.

How it reads the table (between two of the seat's turns, from two views): when the seat's turn
ended with a number card, a draw, or a color named after a plain Wild, and every card played
before its next turn is a number card (no Skip, Reverse, Draw Two or wild-type card, no 7 or 0
under the 7-0 rule, no reshuffle, no player out), every other player had exactly one turn, in
order, and each player's hand size tells what that turn was: one card fewer, it played from its
hand; one more, it drew and kept the card; the same, it drew and played the card drawn. The cards
played and the color and number each player faced then follow; anything else (a penalty, a count
that does not add up) and the tracker infers nothing new from that stretch.

A belief covers the cards the player held when it drew (and the card it kept), not the cards it
gained since: it is a count, "at least ``n`` of this hand lack these kinds", and every card played
since that could have been one of them lowers the count (``n`` never exceeds the hand). A new
inference about the player replaces it; a reshuffle, a new round or a card that moves hands (7-0,
the editions' special wilds) clears every belief.

The moves themselves are kept too (``VoidTracker.moves``, one ``Move`` per other player of the
last stretch read, for as long as that player holds the hand it moved from), so that a search can
weigh a deal of the hidden cards by how likely a model of the players makes those moves from it:
``model_agrees(state, move, model, rng)`` seats the model with the hand the deal gives that
player then and asks whether it makes the move (``ISMCTSAgent(belief="rule")``, RuleAgent as
the model).
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from uno_env.core import Game, GameState, Phase
from uno_env.core import actions as A
from uno_env.core.cards import EDITIONS, KIND_COLOR, KIND_RANK, SPECIAL_WILD, WILD, Edition

from .base import Agent

__all__ = ["Move", "VoidTracker", "model_agrees"]

PLAIN_WILD = "W"


@dataclass(frozen=True)
class _TurnEnd:
    """The table as the seat's turn left it: discard pile, active color, hand sizes, direction (``observe``
    forgets it at a new round)."""

    discard: tuple[str, ...]
    active: int
    sizes: tuple[int, ...]
    direction: int


class VoidTracker:
    """One seat's inferences about the card kinds each other player lacks (module docstring).

    Call ``observe(info)`` with every view the seat decides at, and ``played(info, action)`` with
    the action it took there; ``lacks`` is seat -> (card kinds, how many of its cards lack them).
    """

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        """Forget everything (a new game)."""
        self._lacks: dict[int, tuple[frozenset[int], int]] = {}
        self._end: _TurnEnd | None = None
        self._last: tuple[int, tuple[str, ...]] | None = None  # (round, discard pile) at the last view
        self._mine = 0  # cards the seat played since its last view
        self._moves: list[Move] = []  # the other players' turns in the last stretch read

    @property
    def lacks(self) -> dict[int, tuple[frozenset[int], int]]:
        """Seat -> (card kinds, how many of its cards are believed to lack them): ``InfoSet.sample_state``'s
        ``lacks``."""
        return dict(self._lacks)

    @property
    def moves(self) -> list[Move]:
        """The other players' turns between the seat's last two turns, read from a plain stretch, for
        players who have not gained or lost a card since (``Move``); empty when the stretch was not read."""
        return list(self._moves)

    def observe(self, info: Mapping[str, Any]) -> None:
        """Read a view the seat decides at: age the beliefs by the cards played since, infer anew at its turn."""
        round_number, pile = int(info["round"]), tuple(info["discard_pile"])
        last, self._last = self._last, (round_number, pile)
        mine, self._mine = self._mine, 0
        sizes = [int(s) for s in info["hand_sizes"]]
        turn = info["phase"] == "play" and info["current_player"] == info["seat"]
        # a move stays readable while its player holds the cards it moved from (a new stretch replaces them)
        self._moves = [] if turn else [m for m in self._moves if sizes[m.seat] == m.after]
        if last is None or last[0] != round_number or pile[:len(last[1])] != last[1]:
            self._lacks.clear()  # a new round or a reshuffle: nothing carries over
            self._moves = []
            self._end = None
            return
        kind = EDITIONS[info["rules"]["edition"]].kind
        added = [kind(code) for code in pile[len(last[1]):]]
        if any(_moves_hands(k, info) for k in added):
            self._lacks.clear()
            self._moves = []
            self._end = None
            return
        found: dict[int, tuple[frozenset[int], int]] | None = None
        if turn and self._end is not None:
            found = self._infer(info, self._end)
            self._end = None
        for seat, (kinds, count) in list(self._lacks.items()):
            if found is not None:  # each player had one turn, as read: a play lowers the count by one
                count -= 0 if seat in found else 1
            else:  # any of the cards played since could have been this player's
                count -= max(0, len(added) - mine)
            count = min(count, sizes[seat])
            if count > 0:
                self._lacks[seat] = (kinds, count)
            else:
                del self._lacks[seat]
        if found:
            self._lacks.update(found)

    def played(self, info: Mapping[str, Any], action: int) -> None:
        """Note the seat's ``action`` at ``info``: where it ends the seat's turn simply, how the table stood."""
        phase = info["phase"]
        discard = tuple(info["discard_pile"])
        edition = EDITIONS[info["rules"]["edition"]]
        end_color: int | None = None
        if phase in ("play", "play_drawn") and 0 <= action < A.NUM_PLAY_ACTIONS:
            self._mine += 1
        if phase in ("play", "play_drawn") and 0 <= action < WILD and _plain(action, info):
            if len(info["hand"]) == 2 and info["rules"].get("uno_call") == "explicit":
                self._end = None  # the UNO call comes next; noted there
                return
            discard, end_color = (*discard, str(edition.code(action))), KIND_COLOR[action]
        elif (phase == "play" and action == A.DRAW) or (phase == "play_drawn" and action == A.KEEP):
            end_color = _active(info, edition)  # a play of the drawn card, if it comes, replaces this
        elif phase == "choose_color" and info["pending_card"] == PLAIN_WILD and A.COLOR_BASE <= action < A.COLOR_BASE + 4:
            end_color = action - A.COLOR_BASE
        elif phase == "uno" and info["pending_card"] is not None and _plain(edition.kind(info["pending_card"]), info):
            end_color = _active(info, edition)
        if end_color is None or end_color < 0:
            self._end = None
            return
        self._end = _TurnEnd(discard, end_color, tuple(int(s) for s in info["hand_sizes"]),
                             int(info["direction"]))

    def _infer(self, info: Mapping[str, Any], end: _TurnEnd) -> dict[int, tuple[frozenset[int], int]] | None:
        """From the table as the seat's last turn left it to its turn now: who drew on what (None: unread).
        Keeps the stretch's moves in ``moves``."""
        moves = _read_stretch(info, end)
        if moves is None:
            return None
        self._moves = moves
        edition = EDITIONS[info["rules"]["edition"]]
        pile = tuple(info["discard_pile"])
        found: dict[int, tuple[frozenset[int], int]] = {}
        for move in moves:
            if move.action == A.DRAW and move.after:  # drew on (active, top): the whole hand lacks what matched
                top = edition.kind(pile[move.pile - 1]) if move.pile else -1
                rank = KIND_RANK[top] if 0 <= top < WILD else -1
                kinds = frozenset(k for k in range(WILD) if KIND_COLOR[k] == move.active or KIND_RANK[k] == rank)
                found[move.seat] = (kinds, move.after)
        return found


@dataclass(frozen=True)
class Move:
    """One other player's turn, read from a plain stretch (``VoidTracker.moves``).

    ``action``: the card kind it played from its hand, or ``actions.DRAW`` (it drew; ``kept``: and kept
    the card, else it played the card drawn). ``pile``: the discard pile's length when it moved (the
    pile then is the current pile's first ``pile`` cards); ``active``: the active color slot then;
    ``sizes``: every hand size then; ``after``: its hand size after the turn (while it still holds
    that many cards, its hand is the hand it moved from, less the card played or plus the card kept).
    """

    seat: int
    action: int
    kept: bool
    pile: int
    active: int
    sizes: tuple[int, ...]
    after: int


def model_agrees(state: GameState, move: Move, model: Agent, rng: random.Random) -> bool:
    """Whether ``model``, seated as ``move``'s player with the hand ``state`` deals it, would have made
    ``move``. The hand then is the state's hand plus the card played, or less one of its cards
    (drawn by ``rng``) for a card drawn and kept; the table then is the move's pile, active color and
    hand sizes. ``state`` is not changed; ``model`` is reset first (it sees that one view)."""
    table = state.copy()
    hand = table.hands[move.seat]
    if move.kept:
        if hand:
            hand.pop(rng.randrange(len(hand)))
    elif move.action != A.DRAW:
        hand.append(move.action)
    public = table.public
    del public.discard_pile[move.pile:]
    public.active_color = move.active
    public.current = move.seat
    public.phase = Phase.PLAY
    public.pending_card = public.pending_player = -1
    public.penalty = 0
    public.hand_sizes = list(move.sizes)
    table.drawn_card = -1
    model.reset()
    return model.act(None, Game.from_state(table, check=False, log_limit=0).view(move.seat)) == move.action


def _read_stretch(info: Mapping[str, Any], end: _TurnEnd) -> list[Move] | None:
    """Every other player's turn between the seat's last turn (``end``) and its turn now, in order;
    None unless the stretch is plain (module docstring) and adds up."""
    if int(info["direction"]) != end.direction:
        return None
    pile = tuple(info["discard_pile"])
    if pile[:len(end.discard)] != end.discard:
        return None  # reshuffled
    kind = EDITIONS[info["rules"]["edition"]].kind
    added = [kind(code) for code in pile[len(end.discard):]]
    if not all(k < WILD and _plain(k, info) for k in added):
        return None
    seat, n = int(info["seat"]), int(info["num_players"])
    eliminated = list(info["eliminated"])
    order = [(seat + i * end.direction) % n for i in range(1, n)]
    order = [s for s in order if not eliminated[s]]
    now = [int(s) for s in info["hand_sizes"]]
    sizes = list(end.sizes)
    active = end.active
    top = kind(end.discard[-1]) if end.discard else -1
    played = 0
    moves: list[Move] = []
    for player in order:
        change = now[player] - end.sizes[player]
        if change not in (-1, 0, 1):
            return None
        if change <= 0:  # played a card: from the hand (-1) or the one just drawn (0)
            if played >= len(added):
                return None
            card = added[played]
            if not (KIND_COLOR[card] == active or (0 <= top < WILD and KIND_RANK[card] == KIND_RANK[top])):
                return None  # not playable where we think it was played: the order is not what we read
        moves.append(Move(player, added[played] if change < 0 else A.DRAW, change > 0,
                          len(end.discard) + played, active, tuple(sizes), now[player]))
        sizes[player] = now[player]
        if change <= 0:
            active, top = KIND_COLOR[added[played]], added[played]
            played += 1
    return moves if played == len(added) else None


def _plain(kind: int, info: Mapping[str, Any]) -> bool:
    """A number card whose play touches no other hand or the turn order."""
    rank = KIND_RANK[kind] if 0 <= kind < WILD else -1
    return 0 <= rank <= 9 and not (info["rules"].get("seven_zero") and rank in (0, 7))


def _moves_hands(kind: int, info: Mapping[str, Any]) -> bool:
    """A card whose play moves cards between hands: a 7 or 0 under the 7-0 rule, an edition's special wild."""
    return kind == SPECIAL_WILD or (bool(info["rules"].get("seven_zero")) and 0 <= kind < WILD and KIND_RANK[kind] in (0, 7))


def _active(info: Mapping[str, Any], edition: Edition) -> int:
    color = info["active_color"]
    return -1 if color is None else edition.color_index(color)

