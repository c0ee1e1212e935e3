"""The rules of ``uno_env.core.Game`` as masked tensor operations on every table at once.

Each function here mirrors a method of ``uno_env.core.game.Game`` (named in its docstring)
and applies it to the tables selected by a boolean mask ``m`` (shape ``(B,)``), leaving the
others unchanged. Nothing loops over tables in Python. A turn's automatic consequences (draws,
skips, the special wilds, the catch window, the end of the round) run as a fixed sequence of
stages in the order of rule 3.7, every table passing through the stages its action leads to
(``BatchedRules.apply``). Draws take cards from the top of the pile in one gather and refill
the pile at most once per draw, which is all a draw can need (3.6): after a refill nothing is
added to the discard pile until the drawing ends.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from ..core import actions as A
from ..core.cards import (
    DRAW_TWO,
    DREW_ON_SIZE,
    EDITIONS,
    HAND_SIZE,
    KIND_COLOR,
    KIND_RANK,
    NO_RANK,
    NUM_COLORS,
    NUM_KINDS,
    PLAYABLE,
    RANKS_PER_COLOR,
    REVERSE,
    SKIP,
    SPECIAL_WILD,
    WILD,
    WILD_DRAW_FOUR,
    SpecialEffect,
    top_rank,
)
from ..core.game import (  # the phases as plain ints, the core's own (Phase members)
    CATCH_PHASE,
    CHALLENGE,
    CHOOSE_COLOR,
    GIVE_AWAY,
    PLAY,
    PLAY_DRAWN,
    STACK_PHASE,
    SWAP_PHASE,
    UNO_PHASE,
    Phase,
)
from . import rng
from .tables import MAX_DECK, Tables

EDITION_NAMES: tuple[str, ...] = tuple(EDITIONS)


def _edition_with(effect: SpecialEffect) -> int:
    """The index in ``EDITION_NAMES`` of the edition whose special wild has ``effect`` (the core's data)."""
    (index,) = [i for i, name in enumerate(EDITION_NAMES)
                if (special := EDITIONS[name].special) is not None and special.effect == effect]
    return index


URRRHHH = _edition_with("give_away")  # 4.5
KING_PIG = _edition_with("king_pig_deal")  # 4.6
GREYSKULL = _edition_with("greyskull_draws")  # 4.7

_NO_STOP = 1 << 20  # a draw count no pile reaches


def per_seat_row(values: torch.Tensor, seat: torch.Tensor) -> torch.Tensor:
    """``values[b, seat[b]]`` for every table ``b`` (a row copy per table; faster than advanced indexing)."""
    b, p = values.shape[0], values.shape[1]
    rows = torch.arange(b, device=seat.device) * p + seat
    return values.reshape(b * p, *values.shape[2:]).index_select(0, rows)


_CONSTANTS: dict[tuple[int, torch.device], dict[str, torch.Tensor]] = {}  # (seats, device) -> BatchedRules' constants


def _constants(seats: int, device: torch.device) -> dict[str, torch.Tensor]:
    """The constant tensors of ``BatchedRules`` for tables of ``seats`` seats on ``device``."""
    dev = device

    def const(values: object, dtype: torch.dtype = torch.int64) -> torch.Tensor:
        return torch.tensor(values, dtype=dtype, device=dev)

    c: dict[str, torch.Tensor] = {}
    c["kind_color"] = const(KIND_COLOR)
    c["kind_rank"] = const([top_rank(k) for k in range(NUM_KINDS)])  # NO_RANK for wild-type cards
    # playable[color * (NO_RANK + 1) + top_rank, kind]: the core's rule 3.2 table, flattened.
    c["playable"] = const([row for by_rank in PLAYABLE for row in by_rank], torch.bool)
    c["values"] = const([[EDITIONS[name].card_value(k) for k in range(NUM_KINDS)] for name in EDITION_NAMES])
    # 5.5: whether a special wild played as the last card still names a color (King Pig), per edition.
    c["color_when_last"] = const([(special := EDITIONS[name].special) is not None and special.color_when_last
                                  for name in EDITION_NAMES], torch.bool)
    decks = [EDITIONS[name].deck() for name in EDITION_NAMES]
    c["deck_size"] = const([len(d) for d in decks])
    c["decks"] = const([d + [0] * (MAX_DECK - len(d)) for d in decks])
    # Actions offered by each phase apart from cards and colors held (filled in by action_mask).
    base = [[False] * A.NUM_ACTIONS for _ in range(len(Phase))]
    base[PLAY][A.DRAW] = True
    base[PLAY_DRAWN][A.KEEP] = True
    for color in range(NUM_COLORS):
        base[CHOOSE_COLOR][A.COLOR_BASE + color] = True
    base[CHALLENGE][A.CHALLENGE] = base[CHALLENGE][A.ACCEPT] = True
    base[UNO_PHASE][A.UNO] = base[UNO_PHASE][A.NO_UNO] = True
    base[CATCH_PHASE][A.CATCH] = base[CATCH_PHASE][A.NO_CATCH] = True
    base[STACK_PHASE][A.ACCEPT] = True
    c["phase_actions"] = const(base, torch.bool)
    c["draw_twos"] = const([k < WILD and KIND_RANK[k] == DRAW_TWO for k in range(NUM_KINDS)], torch.bool)
    c["swap_offsets"] = const(list(range(1, A.NUM_ACTIONS - A.SWAP_BASE)))
    c["others"] = 1 - torch.eye(seats, dtype=torch.int8, device=dev)  # [observer, target]: 0 on the diagonal
    # The cards of one color in rank order (4.5), from the core's deck (1.3): slot -> (rank, copy).
    first_color = [k for k in sorted(EDITIONS[EDITION_NAMES[0]].deck()) if KIND_COLOR[k] == 0]
    slots = [(KIND_RANK[k], first_color[:i].count(k)) for i, k in enumerate(first_color)]
    c["give_rank"] = const([r for r, _ in slots])
    c["give_copy"] = const([n for _, n in slots])
    c["pile_pos"] = torch.arange(MAX_DECK, device=dev)
    c["seats"] = torch.arange(seats, device=dev)
    c["kinds"] = torch.arange(NUM_KINDS, device=dev)
    c["colors"] = torch.arange(NUM_COLORS, device=dev)
    c["drew_on_entries"] = torch.arange(DREW_ON_SIZE, device=dev)
    return c


class BatchedRules:
    """Constant tables on one device and the rule stages that use them."""

    def __init__(self, seats: int, device: torch.device) -> None:
        self.num_seats = seats  # the tables' seat dimension: the largest table of the batch
        self.device = device
        self.rings = False  # set when some table plays elimination: seats are then walked round the live ones
        # The constants depend on the seat count and device alone and are never written to, so engines
        # built alike share one set (a one-table engine per position, as the tests build, costs less).
        key = (seats, device)
        constants = _CONSTANTS.get(key)
        if constants is None:
            with torch.inference_mode(False):  # plain tensors, also when first built inside inference mode
                constants = _CONSTANTS[key] = _constants(seats, device)
        c = constants
        self.kind_color = c["kind_color"]
        self.kind_rank = c["kind_rank"]  # NO_RANK for wild-type cards
        self.playable = c["playable"]  # playable[color * (NO_RANK + 1) + top_rank, kind]: rule 3.2's table
        self.values = c["values"]
        self.color_when_last = c["color_when_last"]  # 5.5: a special wild played last still names a color
        self.deck_size = c["deck_size"]
        self.decks = c["decks"]
        self.phase_actions = c["phase_actions"]  # actions of each phase apart from cards and colors held
        self.draw_twos = c["draw_twos"]
        self.swap_offsets = c["swap_offsets"]
        self.others = c["others"]  # [observer, target]: 0 on the diagonal
        self.give_rank = c["give_rank"]  # 4.5: the cards of one color in rank order, slot -> (rank, copy)
        self.give_copy = c["give_copy"]
        self.pile_pos = c["pile_pos"]
        self.seats = c["seats"]
        self.kinds = c["kinds"]
        self.colors = c["colors"]
        self.drew_on_entries = c["drew_on_entries"]

    # ------------------------------------------------------------------ small helpers
    def any(self, mask: torch.Tensor) -> bool:
        """Whether any table is selected (a stage with none selected is skipped)."""
        return bool(mask.any())

    @staticmethod
    def rows(t: Tables) -> torch.Tensor:
        return torch.arange(t.phase.shape[0], device=t.phase.device)

    def next_seat(self, t: Tables, seat: torch.Tensor, steps: int | torch.Tensor = 1) -> torch.Tensor:
        """``Game.next_seat``: ``steps`` seats still in the game on, in the direction of play."""
        return self.clockwise(t, seat, t.direction * steps)

    def live(self, t: Tables) -> torch.Tensor:
        """(B,) seats still in the game (``Game._live``)."""
        return t.alive.sum(1) if self.rings else t.num_players

    def clockwise(self, t: Tables, seat: torch.Tensor, steps: int | torch.Tensor) -> torch.Tensor:
        """The seat ``steps`` places clockwise (negative: counter-clockwise) among the seats still in the game.

        ``seat`` is (B,) or (B, K) and must be in the game; ``steps`` broadcasts against it. Without
        elimination in the batch this is ``(seat + steps) % num_players``; with it, a walk round
        the ring of live seats (``Game._succ`` / ``Game._pred``).
        """
        per_table = isinstance(steps, torch.Tensor) and steps.dim() == 2
        flat = seat.dim() == 1 and not per_table
        seat2 = seat[:, None] if seat.dim() == 1 else seat
        steps2 = steps[:, None] if isinstance(steps, torch.Tensor) and steps.dim() == 1 else steps
        if not self.rings:
            out = (seat2 + steps2) % t.num_players[:, None]
        else:
            alive = t.alive.long()
            before = alive.cumsum(1) - alive  # live seats before each seat
            ring = torch.where(t.alive, self.seats[None, :], self.seats[None, :] + self.num_seats).argsort(1)
            # (rows a stage does not select may carry placeholder seats such as -1: clamped, their result unused)
            at = (before.gather(1, seat2.clamp(0, self.num_seats - 1)) + steps2) % alive.sum(1, keepdim=True).clamp(min=1)
            out = ring.gather(1, at)
        return out[:, 0] if flat else out

    def seat_after(self, t: Tables, seat: torch.Tensor) -> torch.Tensor:
        """``Game._succ[seat]``: the next live seat clockwise, also after a seat no longer in the game."""
        if not self.rings:
            return (seat + 1) % t.num_players
        alive = t.alive.long()
        seat = seat.clamp(0, self.num_seats - 1)
        before = (alive.cumsum(1) - alive).gather(1, seat[:, None])[:, 0]
        ring = torch.where(t.alive, self.seats[None, :], self.seats[None, :] + self.num_seats).argsort(1)
        step = t.alive.gather(1, seat[:, None])[:, 0].long()
        return ring.gather(1, ((before + step) % alive.sum(1).clamp(min=1))[:, None])[:, 0]

    @staticmethod
    def hand_of(t: Tables, seat: torch.Tensor) -> torch.Tensor:
        """(B, 55) the hand of ``seat`` at each table."""
        return per_seat_row(t.hands, seat)

    @staticmethod
    def color_counts(hand: torch.Tensor) -> torch.Tensor:
        """(B, 4) colored cards per color slot."""
        return hand[:, :WILD].reshape(-1, NUM_COLORS, RANKS_PER_COLOR).sum(-1)

    def holds_active(self, t: Tables, hand: torch.Tensor) -> torch.Tensor:
        """``Game._holds_active``: the hand holds a card of the active color."""
        counts = self.color_counts(hand)
        return counts.gather(1, t.active.clamp(min=0)[:, None])[:, 0].gt(0) & t.active.ge(0)

    def playable_kinds(self, t: Tables, hand: torch.Tensor) -> torch.Tensor:
        """(B, 55) the kinds the holder of ``hand`` could play now (rules 3.2, 3.3), held or not."""
        rank_on_top = self.kind_rank[t.top]
        playable = self.playable[t.active.clamp(min=0) * (NO_RANK + 1) + rank_on_top]
        bluff_ok = t.allow_bluff | ~self.holds_active(t, hand)
        playable[:, WILD_DRAW_FOUR] &= bluff_ok  # indexing made a copy
        return playable

    def playable_cards(self, t: Tables, hand: torch.Tensor) -> torch.Tensor:
        """(B, 55) kinds of ``hand`` the holder may play now (rules 3.2, 3.3)."""
        return self.playable_kinds(t, hand) & hand.gt(0)

    @staticmethod
    def set_uno(t: Tables, m: torch.Tensor, seat: torch.Tensor, value: torch.Tensor | bool) -> None:
        """``uno[seat] = value`` where ``m``."""
        old = t.uno.gather(1, seat[:, None])[:, 0]
        t.uno.scatter_(1, seat[:, None], torch.where(m, value, old)[:, None])

    def begin_turn(self, t: Tables, m: torch.Tensor, seat: torch.Tensor) -> None:
        """``Game._begin_turn``."""
        t.phase = torch.where(m, PLAY, t.phase)
        t.current = torch.where(m, seat, t.current)
        t.played = torch.where(m, -1, t.played)
        t.player = torch.where(m, -1, t.player)
        t.drawn = torch.where(m, -1, t.drawn)

    # ------------------------------------------------------------------ drawing
    def refill(self, t: Tables, need: torch.Tensor) -> None:
        """``Game._refill``: the discard pile but its top card, shuffled, becomes the draw pile."""
        need = need & t.discard_len.gt(1)
        if not self.any(need):
            return
        index = need.nonzero()[:, 0]
        length = t.discard_len[index] - 1
        keys = rng.shuffle_keys(t.rng_key[index], t.rng_counter[index], length, MAX_DECK)
        order = keys.argsort(dim=1)
        t.draw[index] = t.discard[index].gather(1, order)
        t.draw_len[index] = length
        top = t.top[index]
        t.discard[index, 0] = top.to(torch.int8)
        t.discard_len[index] = 1
        t.discard_count[index] = (self.kinds[None, :] == top[:, None]).to(torch.int8)
        t.rng_counter[index] += 1

    def take(self, t: Tables, count: torch.Tensor, first: torch.Tensor, first_seat: torch.Tensor,
             per_seat: torch.Tensor | None, public: torch.Tensor | None) -> torch.Tensor:
        """Move ``count`` cards from the top of the pile to hands (no refill); returns the last one.

        Without ``per_seat`` every card goes to ``first_seat``; with it, card ``i`` of the draw
        (``first`` counts cards taken before) goes to seat ``first_seat + i // per_seat``.
        ``public`` tables deal face up (King Pig): every other seat learns the card.
        """
        width = int(count.max())
        if width <= 0:
            return torch.full_like(count, -1)
        b = count.shape[0]
        length = t.draw_len
        depth = self.pile_pos[None, :width]  # 0 for the top card
        taken = depth.lt(count[:, None])
        kinds = t.draw.gather(1, (length[:, None] - 1 - depth).clamp(min=0)).long()
        moved = taken.to(torch.int8)
        if per_seat is None:
            t.hands.view(b, -1).scatter_add_(1, first_seat[:, None] * NUM_KINDS + kinds, moved)
            self.set_uno(t, count.gt(0), first_seat, False)
        else:
            seat = self.clockwise(t, first_seat, (first[:, None] + depth) // per_seat[:, None])
            flat = seat * NUM_KINDS + kinds
            t.hands.view(b, -1).scatter_add_(1, flat, moved)
            received = torch.zeros(t.uno.shape, dtype=torch.int16, device=t.uno.device)
            received.scatter_add_(1, seat, taken.to(torch.int16))
            t.uno &= received.eq(0)
            if public is not None:
                dealt = torch.zeros(t.hands.shape, dtype=torch.int8, device=t.hands.device)
                dealt.view(b, -1).scatter_add_(1, flat, moved * public.to(torch.int8)[:, None])
                watching = self.seats[None, :].lt(t.num_players[:, None]).to(torch.int8)  # observers at the table
                t.known += dealt[:, None, :, :] * (self.others[None, :, :] * watching[:, :, None])[..., None]
        last = kinds.gather(1, (count - 1).clamp(0, width - 1)[:, None])[:, 0]
        t.draw_len = length - count
        return torch.where(count.gt(0), last, -1)

    def draw(self, t: Tables, m: torch.Tensor, count: torch.Tensor, first_seat: torch.Tensor,
             per_seat: torch.Tensor | None = None, stop: Callable[[torch.Tensor], torch.Tensor] | None = None,
             stopping: torch.Tensor | None = None,
             public: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """``Game._draw_cards`` for every selected table: ``count`` cards, refilling once if needed.

        Where ``stopping``, the drawing instead stops after the first card for which ``stop``
        (kinds (B, n) -> bool (B, n)) holds: King Pig's declared color (4.6), a playable card
        under draw until playable (7.4). Returns (cards drawn, the last card or -1).
        """
        wanted = torch.where(m, count, 0)
        if stop is not None and stopping is not None:
            wanted = torch.where(m & stopping, self._until(t, stop), wanted)
        first = torch.zeros_like(wanted)
        got = torch.minimum(wanted, t.draw_len)
        last = self.take(t, got, first, first_seat, per_seat, public)
        short = wanted - got
        need = short.gt(0)
        if not self.any(need):
            return got, last
        self.refill(t, need)
        if stop is not None and stopping is not None:
            short = torch.where(need & stopping, self._until(t, stop), short)
        more = torch.where(need, torch.minimum(short, t.draw_len), 0)
        last = torch.where(more.gt(0), self.take(t, more, got, first_seat, per_seat, public), last)
        return got + more, last

    def _until(self, t: Tables, stop: Callable[[torch.Tensor], torch.Tensor]) -> torch.Tensor:
        """Cards to draw from the top up to and including the first ``stop`` card (or the whole pile, then more)."""
        pos = self.pile_pos[None, :]
        match = stop(t.draw.long()) & pos.lt(t.draw_len[:, None])
        highest = torch.where(match, pos, -1).amax(1)
        return torch.where(highest.ge(0), t.draw_len - highest, _NO_STOP)

    # ------------------------------------------------------------------ a round's deal
    def deal(self, t: Tables, m: torch.Tensor, dealer: torch.Tensor, deck: torch.Tensor | None = None,
             given: torch.Tensor | None = None) -> None:
        """``Game._deal`` (rules 2.2, 2.3) for the selected tables.

        ``deck`` (B, 112), top first, is dealt where ``given``; the other tables shuffle a full
        deck with their own generator.
        """
        size = self.deck_size[t.edition]
        keys = rng.shuffle_keys(t.rng_key, t.rng_counter, size, MAX_DECK)
        shuffled = self.decks[t.edition].gather(1, keys.argsort(dim=1))
        shuffle = m if given is None else m & ~given
        t.rng_counter = t.rng_counter + shuffle.long()
        if deck is not None and given is not None:
            shuffled = torch.where(given[:, None], deck, shuffled)
        # Bottom first: pile entry q holds deck card size - 1 - q.
        pile = shuffled.gather(1, (size[:, None] - 1 - self.pile_pos[None, :]).clamp(min=0)).to(torch.int8)
        mm = m[:, None]
        t.draw = torch.where(mm, pile, t.draw)
        t.draw_len = torch.where(m, size, t.draw_len)
        t.round_number = t.round_number + m.long()
        t.dealer = torch.where(m, dealer, t.dealer)
        t.hands = torch.where(m[:, None, None], 0, t.hands).to(torch.int8).contiguous()
        t.known = torch.where(m[:, None, None, None], 0, t.known).to(torch.int8).contiguous()
        t.drew_on = torch.where(m[:, None, None], 0, t.drew_on).to(torch.int8).contiguous()
        t.uno = t.uno & ~mm
        t.direction = torch.where(m, 1, t.direction)
        for name in ("played", "player", "drawn", "w4_prev", "round_winner"):
            setattr(t, name, torch.where(m, -1, getattr(t, name)))
        t.w4_guilty = t.w4_guilty & ~m
        t.catch_index = torch.where(m, 0, t.catch_index)
        t.penalty = torch.where(m, 0, t.penalty)
        t.round_points = torch.where(mm, 0, t.round_points)
        left = self.clockwise(t, dealer, 1)
        self.draw(t, m, HAND_SIZE * self.live(t), left, per_seat=torch.ones_like(left))
        # 2.3: a Wild Draw Four turned first goes back into the middle of the pile (4 at most).
        for _ in range(4):
            length = t.draw_len
            first = t.draw.gather(1, (length - 1).clamp(min=0)[:, None])[:, 0]
            back = m & first.eq(WILD_DRAW_FOUR)
            if not self.any(back):
                break
            rest = length - 1
            at = (rest - rest // 2)[:, None]
            pos = self.pile_pos[None, :]
            moved = t.draw.gather(1, torch.where(pos.le(at), pos, pos - 1))
            moved = torch.where(pos.eq(at), WILD_DRAW_FOUR, moved).to(torch.int8)
            t.draw = torch.where(back[:, None], moved, t.draw)
        length = t.draw_len
        first = t.draw.gather(1, (length - 1).clamp(min=0)[:, None])[:, 0].long()
        t.draw_len = torch.where(m, length - 1, length)
        t.discard = torch.where(mm, torch.where(self.pile_pos[None, :].eq(0), first[:, None], 0).to(torch.int8),
                                t.discard)
        t.discard_len = torch.where(m, 1, t.discard_len)
        t.discard_count = torch.where(mm, (self.kinds[None, :] == first[:, None]).to(torch.int8), t.discard_count)
        t.top = torch.where(m, first, t.top)
        wild = m & first.ge(WILD)
        t.active = torch.where(wild, -1, torch.where(m, self.kind_color[first], t.active))
        t.phase = torch.where(wild, CHOOSE_COLOR, t.phase)
        t.current = torch.where(wild, left, t.current)
        rank = self.kind_rank[first]
        colored = m & ~wild
        two = colored & rank.eq(DRAW_TWO)
        if self.any(two):
            self.draw(t, two, torch.full_like(left, 2), left)
        reverse = colored & rank.eq(REVERSE)
        t.direction = torch.where(reverse, -1, t.direction)
        skipped = two | colored & rank.eq(SKIP)
        start = torch.where(skipped, self.clockwise(t, left, 1), torch.where(reverse, dealer, left))
        self.begin_turn(t, colored, start)

    # ------------------------------------------------------------------ legal actions
    def action_mask(self, t: Tables) -> torch.Tensor:
        """(B, 80) bool: ``Game.legal_actions()`` of the seat to act, as a mask."""
        hand = self.hand_of(t, t.current)
        cards = self.playable_cards(t, hand)
        phase = t.phase
        drawn = self.kinds[None, :].eq(t.drawn[:, None])
        drawn_plays = (cards & drawn).any(1)
        # 7.4 stacking: a Draw Two answers a Draw Two, a W4 (legal or a bluff, as 3.3) a W4.
        twos = hand.gt(0) & self.draw_twos[None, :]
        four = (t.stacking & hand[:, WILD_DRAW_FOUR].gt(0) & (t.allow_bluff | ~self.holds_active(t, hand)))
        fours = self.kinds[None, :].eq(WILD_DRAW_FOUR) & four[:, None]
        chosen = torch.where(phase.eq(PLAY)[:, None], cards, torch.where(
            phase.eq(PLAY_DRAWN)[:, None], cards & drawn, torch.where(
                phase.eq(STACK_PHASE)[:, None], twos, fours & phase.eq(CHALLENGE)[:, None])))
        mask = self.phase_actions[phase].clone()
        mask[:, :NUM_KINDS] = chosen
        # Rule 3.4 ruling: keep is offered after every draw, but not for a playable card under 7.4's draw until playable.
        mask[:, A.KEEP] = phase.eq(PLAY_DRAWN) & ~(t.until_playable & drawn_plays)
        give = self.color_counts(hand).gt(0) & phase.eq(GIVE_AWAY)[:, None]
        mask[:, A.GIVE_BASE:A.GIVE_BASE + NUM_COLORS] = give
        offsets = self.swap_offsets[None, :]
        targets = (t.current[:, None] + offsets) % t.num_players[:, None]
        swap = offsets.lt(t.num_players[:, None]) & t.alive.gather(1, targets) & phase.eq(SWAP_PHASE)[:, None]
        mask[:, A.SWAP_BASE + 1:] = swap
        return mask

    # ------------------------------------------------------------------ one decision
    def apply(self, t: Tables, action: torch.Tensor) -> torch.Tensor:
        """``Game.step`` at every table (actions already checked legal); returns tables whose round ended."""
        seat = t.current
        phase = t.phase
        is_card = action.lt(A.NUM_PLAY_ACTIONS)
        false = torch.zeros_like(is_card)
        flow = _Flow(false, seat)

        # Cards are played in the play phases, and under stacking in answer to a Draw Two or a W4.
        play = (phase.eq(PLAY) | phase.eq(PLAY_DRAWN) | phase.eq(STACK_PHASE) | phase.eq(CHALLENGE)) & is_card
        if self.any(play):
            self._play(t, play, seat, action, flow)
        # Draws made by the decision itself: a turn's draw, a caught player's 2, a challenge's result.
        turn_draw = phase.eq(PLAY) & action.eq(A.DRAW)
        catch = phase.eq(CATCH_PHASE) & action.eq(A.CATCH)
        challenge = phase.eq(CHALLENGE) & action.eq(A.CHALLENGE)
        guilty = challenge & t.w4_guilty
        offender = t.player
        if self.any(challenge):  # 5.4: the hand is shown to the challenger first
            b = t.phase.shape[0]
            p = self.num_seats
            flat = (seat * p + offender.clamp(min=0))[:, None] * NUM_KINDS + self.kinds[None, :]
            shown = self.hand_of(t, offender.clamp(min=0))
            known = t.known.view(b, -1)
            known.scatter_(1, flat, torch.where(challenge[:, None], shown, known.gather(1, flat)))
        drawer = torch.where(catch | guilty, offender, seat)
        count = torch.where(turn_draw, 1, torch.where(catch, 2, torch.where(guilty, t.penalty, t.penalty + 2)))
        drawing = turn_draw | catch | challenge
        if self.any(turn_draw):
            self._note_turn_draw(t, turn_draw, seat)
        if self.any(drawing):
            # 7.4 draw until playable: the turn's draw goes on until a playable card comes (a W4 that
            # would be an illegal bluff does not count: no card of the active color was drawn before it).
            until = turn_draw & t.until_playable
            playable = self.playable_kinds(t, self.hand_of(t, seat)) if self.any(until) else None
            stop = None if playable is None else (lambda kinds: playable.gather(1, kinds))
            got, card = self.draw(t, drawing, count, drawer, stop=stop, stopping=until)
            t.penalty = torch.where(challenge, 0, t.penalty)
            # Rule 3.4 ruling: a drawn card always leads to the play_drawn decision (7.4: a playable one).
            drew = turn_draw & got.gt(0)
            if playable is not None:
                drew &= ~until | playable.gather(1, card.clamp(min=0)[:, None])[:, 0]
            t.phase = torch.where(drew, PLAY_DRAWN, t.phase)
            t.drawn = torch.where(drew, card, t.drawn)
            flow.begin(turn_draw & ~drew, self.next_seat(t, seat))
            flow.begin(guilty, seat)
            flow.begin(challenge & ~guilty, self.next_seat(t, seat))
            t.catch_index = torch.where(catch, 0, t.catch_index)
            flow.effect |= catch
        keep = phase.eq(PLAY_DRAWN) & action.eq(A.KEEP)
        flow.begin(keep, self.next_seat(t, seat))

        color = phase.eq(CHOOSE_COLOR)
        if self.any(color):
            self._choose_color(t, color, action - A.COLOR_BASE, flow)
        give = phase.eq(GIVE_AWAY)
        if self.any(give):
            self._give_away(t, give, seat, action - A.GIVE_BASE, flow)
        uno = phase.eq(UNO_PHASE)
        self.set_uno(t, uno, seat, action.eq(A.UNO))
        flow.after_uno |= uno
        no_catch = phase.eq(CATCH_PHASE) & action.eq(A.NO_CATCH)
        if self.any(no_catch):
            reach = t.catch_index + 1
            window = no_catch & reach.lt(self.live(t))
            t.current = torch.where(window, self.next_seat(t, t.player.clamp(min=0), reach), t.current)
            t.catch_index = torch.where(window, reach, torch.where(no_catch, 0, t.catch_index))
            flow.effect |= no_catch & ~window
        accept = (phase.eq(CHALLENGE) | phase.eq(STACK_PHASE)) & action.eq(A.ACCEPT)
        flow.penalise(accept, seat)
        swap = phase.eq(SWAP_PHASE)
        if self.any(swap):  # 7.4 seven-zero: the 7's player swaps hands with the chosen seat
            target = (seat + action - A.SWAP_BASE) % t.num_players
            source = self.seats[None, :].expand(seat.shape[0], -1)
            source = torch.where(source.eq(seat[:, None]), target[:, None],
                                 torch.where(source.eq(target[:, None]), seat[:, None], source))
            self._move_hands(t, swap, source)
            flow.resolve |= swap

        if self.any(flow.king_pig):
            player = t.player.clamp(min=0)
            declared = t.active
            self.draw(t, flow.king_pig, torch.zeros_like(player), self.clockwise(t, player, 1),
                      per_seat=torch.ones_like(player),
                      stop=lambda kinds: self.kind_color[kinds].eq(declared[:, None]), stopping=flow.king_pig,
                      public=flow.king_pig)
        if self.any(flow.greyskull):
            player = t.player.clamp(min=0)
            self.draw(t, flow.greyskull, 3 * (self.live(t) - 1), self.clockwise(t, player, 1),
                      per_seat=torch.full_like(player, 3))
        if self.any(flow.resolve):
            self._resolve_end_of_play(t, flow)
        if self.any(flow.after_uno):
            self._after_uno_call(t, flow)
        if self.any(flow.effect):
            self._effect_on_next(t, flow)
        if self.any(flow.penalty):
            self.draw(t, flow.penalty, t.penalty, flow.penalty_seat)
            t.penalty = torch.where(flow.penalty, 0, t.penalty)
            flow.begin(flow.penalty & ~flow.out, self.next_seat(t, flow.penalty_seat))
        if self.any(flow.start):
            self.begin_turn(t, flow.start, flow.start_seat)
        return flow.out

    def _play(self, t: Tables, m: torch.Tensor, seat: torch.Tensor, action: torch.Tensor, flow: _Flow) -> None:
        """``Game._play``: the card goes on the discard pile, then its own effects (3.7 steps 1-2)."""
        b = m.shape[0]
        kind = torch.where(m, action, 0)
        step = m.to(torch.int8)
        self._lower_drew_on(t, seat, (m & t.phase.ne(PLAY_DRAWN)).long())  # the card just drawn was not covered
        t.hands.view(b, -1).scatter_add_(1, (seat * NUM_KINDS + kind)[:, None], -step[:, None])
        at = t.discard_len.clamp(max=MAX_DECK - 1)[:, None]
        t.discard.scatter_(1, at, torch.where(m, kind, t.discard.gather(1, at)[:, 0].long()).to(torch.int8)[:, None])
        t.discard_len = t.discard_len + m.long()
        t.discard_count.scatter_add_(1, kind[:, None], step[:, None])
        t.top = torch.where(m, kind, t.top)
        self.set_uno(t, m, seat, False)
        t.drawn = torch.where(m, -1, t.drawn)
        # Each seat forgets one copy it had seen of the card played (Game._forget).
        p = self.num_seats
        flat = self.seats[None, :] * (p * NUM_KINDS) + (seat * NUM_KINDS + kind)[:, None]
        known = t.known.view(b, -1)
        known.scatter_(1, flat, (known.gather(1, flat) - step[:, None]).clamp(min=0))
        t.player = torch.where(m, seat, t.player)
        t.played = torch.where(m, kind, t.played)
        colored = m & kind.lt(WILD)
        rank = self.kind_rank[kind]
        t.direction = torch.where(colored & rank.eq(REVERSE), -t.direction, t.direction)
        t.penalty = t.penalty + 2 * (colored & rank.eq(DRAW_TWO)).long()
        hand = self.hand_of(t, seat)
        # 7.4 seven-zero, unless the card was the last: a 7 asks whose hand to swap, a 0 passes every hand on.
        seven_zero = colored & t.seven_zero & hand.sum(-1).gt(0)
        seven = seven_zero & rank.eq(7)
        t.phase = torch.where(seven, SWAP_PHASE, t.phase)
        zero = seven_zero & rank.eq(0)
        if self.any(zero):  # each live seat receives the hand of the live seat before it in the direction of play
            seats = self.seats[None, :].expand(b, -1)
            live = t.alive & seats.lt(t.num_players[:, None])
            before = self.clockwise(t, torch.where(live, seats, seat[:, None]), -t.direction[:, None])
            self._move_hands(t, zero, torch.where(live, before, seats))
        flow.resolve |= colored & ~seven
        wild = m & ~colored
        four = wild & kind.eq(WILD_DRAW_FOUR)
        t.penalty = t.penalty + 4 * four.long()
        t.w4_guilty = torch.where(four, self.holds_active(t, hand), t.w4_guilty)
        t.w4_prev = torch.where(four, t.active, t.w4_prev)
        t.active = torch.where(colored, self.kind_color[kind], t.active)
        special = kind.eq(SPECIAL_WILD)
        names_color = special & self.color_when_last[t.edition]
        out = wild & hand.sum(-1).eq(0) & ~names_color  # 5.5: no color asked, Greyskull still strikes
        flow.greyskull |= out & special & t.edition.eq(GREYSKULL)
        flow.resolve |= out
        ask = wild & ~out
        give = ask & special & t.edition.eq(URRRHHH) & self.color_counts(hand).sum(-1).gt(0)
        t.phase = torch.where(give, GIVE_AWAY, torch.where(ask, CHOOSE_COLOR, t.phase))

    def _choose_color(self, t: Tables, m: torch.Tensor, color: torch.Tensor, flow: _Flow) -> None:
        """``Game._choose_color``: the opening wild's chooser then plays; a special wild strikes."""
        t.active = torch.where(m, color, t.active)
        opening = m & t.played.lt(0)
        t.phase = torch.where(opening, PLAY, t.phase)
        special = m & t.played.eq(SPECIAL_WILD)
        flow.king_pig |= special & t.edition.eq(KING_PIG)
        flow.greyskull |= special & t.edition.eq(GREYSKULL)
        flow.resolve |= m & ~opening

    def _give_away(self, t: Tables, m: torch.Tensor, giver: torch.Tensor, color: torch.Tensor, flow: _Flow) -> None:
        """``Game._give_away`` (4.5): every card of the color, in rank order, one to each other seat clockwise."""
        b = m.shape[0]
        p = self.num_seats
        color = color.clamp(0, NUM_COLORS - 1)
        hand = self.hand_of(t, giver)
        kinds = color[:, None] * RANKS_PER_COLOR + self.give_rank[None, :]  # (B, 25)
        present = hand.gather(1, kinds).gt(self.give_copy[None, :]) & m[:, None]
        order = present.long().cumsum(1) - 1
        receiver = self.clockwise(t, giver, 1 + order % (self.live(t)[:, None] - 1))
        moved = present.to(torch.int8)
        self._lower_drew_on(t, giver, present.sum(1))
        t.hands.view(b, -1).scatter_add_(1, receiver * NUM_KINDS + kinds, moved)
        of_color = (color[:, None] * RANKS_PER_COLOR + self.kinds[None, :RANKS_PER_COLOR])
        gone = t.hands.view(b, -1).gather(1, giver[:, None] * NUM_KINDS + of_color)
        t.hands.view(b, -1).scatter_(1, giver[:, None] * NUM_KINDS + of_color,
                                     torch.where(m[:, None], 0, gone).to(torch.int8))
        known = t.known.view(b, -1)
        seen = (self.seats[:, None] * (p * NUM_KINDS) + (giver[:, None] * NUM_KINDS + of_color)[:, None, :])
        seen = seen.reshape(b, -1)
        known.scatter_(1, seen, torch.where(m[:, None], 0, known.gather(1, seen)).to(torch.int8))
        known.scatter_add_(1, (giver[:, None] * p + receiver) * NUM_KINDS + kinds, moved)
        received = torch.zeros(t.uno.shape, dtype=torch.int16, device=t.uno.device)
        received.scatter_add_(1, receiver, present.to(torch.int16))
        t.uno &= received.eq(0)
        left = self.hand_of(t, giver).sum(-1).gt(0)
        t.phase = torch.where(m & left, CHOOSE_COLOR, t.phase)
        flow.resolve |= m & ~left

    def _move_hands(self, t: Tables, m: torch.Tensor, source: torch.Tensor) -> None:
        """``Game._move_hands`` (seven-zero): seat ``s`` receives seat ``source[:, s]``'s hand where ``m``.

        What the other seats had seen of a hand moves with it; the seat that passed a hand on
        knows all of it; the receiver forgets what it knew of its new hand's cards (it holds them).
        """
        b, p = source.shape
        seats = self.seats[None, :]
        source = torch.where(m[:, None], source, seats)
        moved = source.ne(seats)
        old_hands = t.hands
        t.hands = old_hands.gather(1, source[:, :, None].expand(b, p, NUM_KINDS)).contiguous()
        known = t.known.gather(2, source[:, None, :, None].expand(b, p, p, NUM_KINDS))
        known = known * self.others[None, :, :, None]
        passer = seats[:, :, None].eq(source[:, None, :]) & moved[:, None, :]  # [observer, target]
        t.known = torch.where(passer[..., None], old_hands[:, :, None, :], known).contiguous()
        t.drew_on = t.drew_on.gather(1, source[:, :, None].expand(b, p, DREW_ON_SIZE)).contiguous()
        t.uno &= ~moved

    def _note_turn_draw(self, t: Tables, m: torch.Tensor, seat: torch.Tensor) -> None:
        """``Game._draw_for_turn``'s evidence (``PublicState.drew_on``): before the first card, the
        drawer's entries of the active color and of the top card's rank (a colored top) become its hand size."""
        b = m.shape[0]
        size = self.hand_of(t, seat).sum(-1).to(torch.int8)
        rank = self.kind_rank[t.top]
        flat = t.drew_on.view(b, -1)
        for entry, on in ((t.active.clamp(min=0), m), (NUM_COLORS + rank.clamp(max=RANKS_PER_COLOR - 1),
                                                      m & rank.ne(NO_RANK))):
            at = (seat * DREW_ON_SIZE + entry)[:, None]
            flat.scatter_(1, at, torch.where(on, size, flat.gather(1, at)[:, 0])[:, None])

    def _lower_drew_on(self, t: Tables, seat: torch.Tensor, count: torch.Tensor) -> None:
        """Lower every entry of ``seat``'s draw evidence by ``count`` (B,) cards that left its hand, floored at 0."""
        b = seat.shape[0]
        flat = t.drew_on.view(b, -1)
        at = seat[:, None] * DREW_ON_SIZE + self.drew_on_entries[None, :]
        flat.scatter_(1, at, (flat.gather(1, at).long() - count[:, None]).clamp(min=0).to(torch.int8))

    def _resolve_end_of_play(self, t: Tables, flow: _Flow) -> None:
        """``Game._resolve_end_of_play`` (3.7 steps 3-4): going out, then the UNO call."""
        m = flow.resolve
        player = t.player.clamp(min=0)
        size = self.hand_of(t, player).sum(-1)
        out = m & size.eq(0)
        flow.out |= out
        flow.penalise(out & t.penalty.gt(0), self.next_seat(t, player))
        called = t.uno.gather(1, player[:, None])[:, 0]
        one = m & size.eq(1) & ~called
        ask = one & ~t.uno_auto
        t.phase = torch.where(ask, UNO_PHASE, t.phase)
        t.current = torch.where(ask, player, t.current)
        self.set_uno(t, one & t.uno_auto, player, True)
        flow.after_uno |= m & ~out & ~ask

    def _after_uno_call(self, t: Tables, flow: _Flow) -> None:
        """``Game._after_uno_call`` (3.7 step 5): open the catch window after a missed call."""
        m = flow.after_uno
        player = t.player.clamp(min=0)
        missed = m & self.hand_of(t, player).sum(-1).eq(1) & ~t.uno.gather(1, player[:, None])[:, 0]
        t.catch_index = torch.where(missed, 1, t.catch_index)
        t.phase = torch.where(missed, CATCH_PHASE, t.phase)
        t.current = torch.where(missed, self.next_seat(t, player), t.current)
        flow.effect |= m & ~missed

    def _effect_on_next(self, t: Tables, flow: _Flow) -> None:
        """``Game._effect_on_next`` (3.7 step 6): skip, Draw Two, the Wild Draw Four decision, or a turn."""
        m = flow.effect
        kind = t.played.clamp(min=0)
        nxt = self.next_seat(t, t.player.clamp(min=0))
        colored = kind.lt(WILD)
        rank = self.kind_rank[kind]
        skip = m & colored & (rank.eq(SKIP) | rank.eq(REVERSE) & self.live(t).eq(2))
        two = m & colored & rank.eq(DRAW_TWO)
        four = m & kind.eq(WILD_DRAW_FOUR)
        stack = two & t.stacking  # 7.4: offered even without a Draw Two, so holding none stays hidden
        t.phase = torch.where(four, CHALLENGE, torch.where(stack, STACK_PHASE, t.phase))
        t.current = torch.where(four | stack, nxt, t.current)
        flow.penalise(two & ~stack, nxt)
        flow.begin(skip, self.next_seat(t, nxt))
        flow.begin(m & ~skip & ~two & ~four, nxt)


class _Flow:
    """Which automatic stages each table still has to pass through in this step."""

    def __init__(self, false: torch.Tensor, seat: torch.Tensor) -> None:
        self.resolve = false.clone()
        self.after_uno = false.clone()
        self.effect = false.clone()
        self.king_pig = false.clone()
        self.greyskull = false.clone()
        self.out = false.clone()
        self.penalty = false.clone()
        self.penalty_seat = torch.zeros_like(seat)
        self.start = false.clone()
        self.start_seat = torch.zeros_like(seat)

    def begin(self, m: torch.Tensor, seat: torch.Tensor) -> None:
        """The table's next turn starts at ``seat`` (``Game._begin_turn``)."""
        self.start = self.start | m
        self.start_seat = torch.where(m, seat, self.start_seat)

    def penalise(self, m: torch.Tensor, seat: torch.Tensor) -> None:
        """``seat`` draws the pending penalty (``Game._take_penalty``, or 5.5 for a last card)."""
        self.penalty = self.penalty | m
        self.penalty_seat = torch.where(m, seat, self.penalty_seat)
