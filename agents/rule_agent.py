"""Rule-based baselines: ``SimpleRuleAgent`` (the textbook heuristic) and ``RuleAgent``.

Both read only ``info`` (``game.view(seat)``), so they play under any table size, edition
and rule option (variants included), and both return legal action ids only.

SimpleRuleAgent, the heuristic the literature's numbers refer to:

* play the highest-value playable colored card (ties: the color it holds most);
* play a wild-type card only when no colored card plays; draw only when nothing plays;
  a drawn card that can be played is played;
* name the color it holds most; give away (Urrrhhh) the color it holds most;
* always call UNO, always catch (never its partner), never challenge a Wild Draw Four;
* under the house rules: always stack a Draw Two or Wild Draw Four when it can, and swap
  hands (seven-zero) with the opponent holding fewest cards.

RuleAgent, the stronger baseline (card counting, opponents' voids, blocking, W4 challenges
by estimated bluff odds, the special wilds' timing), is documented in its class docstring.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from uno_env.core import actions as A
from uno_env.core.cards import (
    DRAW_TWO,
    EDITIONS,
    KIND_COLOR,
    KIND_RANK,
    NUM_COLORS,
    NUM_KINDS,
    REVERSE,
    SKIP,
    SPECIAL_WILD,
    WILD,
    WILD_DRAW_FOUR,
    Edition,
)

from .base import Agent, legal_action_ids

_CODE_TO_KIND: dict[str, dict[str, int]] = {}
_DECK_COUNTS: dict[str, list[int]] = {}


def _kind_table(edition: Edition) -> dict[str, int]:
    table = _CODE_TO_KIND.get(edition.name)
    if table is None:
        table = {edition.code(k): k for k in range(NUM_KINDS) if k != SPECIAL_WILD or edition.special}
        _CODE_TO_KIND[edition.name] = table
    return table


def _deck_counts(edition: Edition) -> list[int]:
    counts = _DECK_COUNTS.get(edition.name)
    if counts is None:
        counts = [0] * NUM_KINDS
        for k in edition.deck():
            counts[k] += 1
        _DECK_COUNTS[edition.name] = counts
    return counts


def _effect(edition: Edition) -> str | None:
    """What the edition's special wild does (``SpecialWild.effect``), None without one."""
    return edition.special.effect if edition.special else None


_PLAIN_WILD_MAX = -15.0  # a wild scoring below this is played only for want of anything else


class _Facts:
    """What one decision needs from ``info``, converted to card kinds once."""

    __slots__ = ("info", "edition", "kinds", "hand", "count", "value", "active", "n", "live", "seat", "order",
                 "next_opp", "prev_opp", "opponents", "rivals", "pools")

    def __init__(self, info: Mapping[str, Any]) -> None:
        self.info = info
        self.edition = ed = EDITIONS[info["edition"]]
        self.kinds = table = _kind_table(ed)
        self.hand = hand = [table[c] for c in info["hand"]]
        self.count = count = [0] * NUM_COLORS
        self.value = value = [0] * NUM_COLORS
        card_value = ed.card_value
        for k in hand:
            c = KIND_COLOR[k]
            if c >= 0:
                count[c] += 1
                value[c] += card_value(k)
        color = info["active_color"]
        self.active = ed.colors.index(color) if color is not None else -1
        self.n = info["num_players"]
        self.seat = info["seat"]
        self.opponents: list[Mapping[str, Any]] = info["opponents"]
        # opponents are listed clockwise from the left; keep those still in the game, in the
        # direction of play (the next player first, the previous one last)
        alive = [o for o in self.opponents if not o.get("eliminated")]
        self.order = alive if info["direction"] == 1 else alive[::-1]
        self.live = len(alive) + 1
        self.next_opp, self.prev_opp = self.order[0], self.order[-1]
        self.rivals = [o for o in alive if not o.get("teammate")] or alive
        self.pools: dict[int, Any] = {}  # per seat, the unseen cards it may hold (RuleAgent._pool)

    def known_kinds(self, opponent: Mapping[str, Any]) -> list[int]:
        """Cards of an opponent's hand this seat has seen."""
        table = self.kinds
        return [table[c] for c in opponent["known_cards"]]

    def unseen_counts(self) -> list[int]:
        """Per kind: copies not in my hand, the discard pile or any card I know in a hand."""
        table = self.kinds
        left = list(_deck_counts(self.edition))
        for k in self.hand:
            left[k] -= 1
        for c in self.info["discard_pile"]:
            left[table[c]] -= 1
        for opp in self.opponents:
            for c in opp["known_cards"]:
                left[table[c]] -= 1
        return left

    def is_partner(self, seat: int | None) -> bool:
        """Whether ``seat`` is this seat's partner (partners variant)."""
        return any(o["seat"] == seat and o.get("teammate") for o in self.opponents)

    def best_swap(self, legal: Sequence[int]) -> int:
        """Seven-zero: the swap action towards the fewest cards, an opponent before a partner."""
        by_seat = {o["seat"]: o for o in self.opponents}

        def key(action: int) -> tuple[int, bool, int]:
            opp = by_seat[(self.seat + action - A.SWAP_BASE) % self.n]
            return opp["hand_size"], bool(opp.get("teammate")), action

        return min(legal, key=key)


def _most_held_color(facts: _Facts) -> int:
    """The color slot with most cards in hand (then most points; then the lowest slot)."""
    return max(range(NUM_COLORS), key=lambda c: (facts.count[c], facts.value[c], -c))


class SimpleRuleAgent(Agent):
    """The textbook heuristic (see the module docstring); deterministic."""

    name = "simple"

    def act(self, observation: Mapping[str, Any] | None, info: Mapping[str, Any]) -> int:
        """Highest-value colored card, wilds last, most-held color, UNO and catch, never challenge."""
        legal = legal_action_ids(observation, info)
        if len(legal) == 1:
            return legal[0]
        phase = info["phase"]
        if phase == "play":
            plays = [a for a in legal if a < A.NUM_PLAY_ACTIONS]
            if not plays:
                return A.DRAW
            facts = _Facts(info)
            colored = [k for k in plays if k < WILD]
            if colored:
                value = facts.edition.card_value
                return max(colored, key=lambda k: (value(k), facts.count[KIND_COLOR[k]], -k))
            return plays[0]
        if phase in ("play_drawn", "stack"):  # play the drawn card; stack a Draw Two
            return legal[0]
        if phase == "challenge":  # stack a Wild Draw Four when the rules allow it, else accept
            return legal[0] if legal[0] < A.NUM_PLAY_ACTIONS else A.ACCEPT
        if phase == "choose_color":
            return A.COLOR_BASE + _most_held_color(_Facts(info))
        if phase == "give_away":
            facts = _Facts(info)
            return max(legal, key=lambda a: (facts.count[a - A.GIVE_BASE], facts.value[a - A.GIVE_BASE], -a))
        if phase == "uno":
            return A.UNO
        if phase == "catch":
            return A.NO_CATCH if _Facts(info).is_partner(info["pending_player"]) else A.CATCH
        if phase == "swap":
            return _Facts(info).best_swap(legal)
        return legal[0]

    def __repr__(self) -> str:
        return "SimpleRuleAgent()"


class RuleAgent(Agent):
    """A heuristic UNO player that counts cards, tracks what opponents lack and blocks them.

    Knowledge it keeps (all from its own views): the *unseen* cards (the deck minus its hand,
    the discard pile and the cards it has seen in other hands); for the player who moved
    after it, the colors they lack (if their hand grew by one on their turn, or stayed level
    while a card was played, they drew, so they held nothing of the active color; the
    belief lasts until their hand grows); per opponent, a belief that they bluff Wild Draw
    Fours (``bluff_prior``; 1 after a guilty challenge, lowered by Bayes' rule after an
    innocent one, raised to 0.9 for a player seen holding one card without calling UNO).

    Playing a card (each playable card gets a score; the best is played):
        * the last card goes out at once;
        * colored cards: ``value_weight`` x points / 20 (shed costly cards first; times
          1 + ``dump_urgency`` / the smallest opponent hand, off by default), plus
          ``tempo_bonus`` for a Draw Two, and head to head for a Skip or Reverse (another
          turn); attack when the next player holds two cards or fewer (Draw Two +4, Skip +3,
          a Reverse +3 when it turns play towards a safe previous player, -3 the other way);
          plus the *block value*: the chance that the player who moves next cannot follow
          the card (their seen cards decide, else their hidden cards are taken as a random
          sample of the unseen cards without the colors they lack), times ``block_weight`` x
          (1 + ``block_urgency`` / their hand size);
        * wild-type cards come after every colored card (keep wilds for when nothing else
          plays): then Wild Draw Four first (it hurts the next player, and comes before
          everything when the next player holds two cards or fewer), Greyskull, the Wild,
          then King Pig (before the Wild with more than four cards, since its deal may
          reach its own seat). Greyskull is played at once when an opponent is down to
          ``greyskull_trigger`` cards; Urrrhhh at once when its give-away empties the hand
          (a win), when it gives away ``urrrhhh_min`` cards or more, or when an opponent
          holds two cards or fewer;
        * a Wild Draw Four is never a bluff unless the next player holds ``bluff_threat``
          cards or fewer;
        * with ``save_wilds`` > 0 (off by default: it wins a few more rounds but leaves more
          points in hand), when only wild-type cards play, it holds more than two cards and
          every opponent holds ``save_wilds`` or more, it draws instead and keeps the wild
          (not a Wild Draw Four or Greyskull, whose effect is worth playing);
        * a drawn card that can be played is played (unless that would be a bluff).
    Naming a color: ``color_count_weight`` x its cards of the color + their points / 200 +
        the block value of that color for the player who moves next (after a Wild Draw Four
        at a bigger table, the player after them).

    Urrrhhh give-away: the color it holds most cards of (then most points): sheds most.
    UNO: always calls. Catch: always (the offender draws two; catching never costs).

    Challenge of a Wild Draw Four: never when the rules forbid bluffs or when it knows the
        player lacks the previous color; always when it has seen a card of that color in
        their hand; otherwise p = (chance their hidden cards hold the previous color,
        hypergeometric over the unseen cards) x (belief they bluff), and it challenges when
        p x (4 + 4/(n-1), doubled if they hold two cards or fewer, + the turn kept: 1 head
        to head, 0.5 otherwise) - (1 - p) x 2 + the worth of seeing their hand (1 head to
        head, 0.3 otherwise) is positive.

    Every rule option is handled: ``uno_call="auto"`` asks no call or catch; with
    ``allow_bluff=False`` a Wild Draw Four is never challenged; both scorings reward shedding
    points first; partners: it never catches its partner and attacks, blocks and swaps with
    opponents only; elimination: seats that are out are passed over when it looks at the
    next and previous players; stacking: it passes owed cards on with a Draw Two (the one of
    its strongest color) or an honest Wild Draw Four, unless a challenge is sure to win;
    seven-zero: a 7 or a 0 scores the cards it gains by taking the smallest hand or the
    previous player's, and a 7 swaps with the smallest opponent's hand; draw-until-playable:
    it never draws to save a wild. Any table size 2-10 and every edition's special wild.

    ``challenge=False`` turns challenges off; the numeric options are the weights above
    (defaults tuned by duplicate matches against ``RandomAgent`` and ``SimpleRuleAgent``).
    """

    name = "rule"

    def __init__(self, challenge: bool = True, urrrhhh_min: int = 5, greyskull_trigger: int = 1,
                 count_weight: float = 0.0, value_weight: float = 0.5, tempo_bonus: float = 1.0,
                 block_weight: float = 1.0, block_urgency: float = 2.0, color_count_weight: float = 1.0,
                 save_wilds: int = 0, bluff_prior: float = 0.35, bluff_threat: int = 1,
                 swap_weight: float = 1.0, dump_urgency: float = 0.0) -> None:
        self.challenge = challenge
        self.urrrhhh_min = urrrhhh_min
        self.greyskull_trigger = greyskull_trigger
        self.count_weight = count_weight
        self.value_weight = value_weight
        self.tempo_bonus = tempo_bonus
        self.block_weight = block_weight
        self.block_urgency = block_urgency
        self.color_count_weight = color_count_weight
        self.save_wilds = save_wilds
        self.bluff_prior = bluff_prior
        self.bluff_threat = bluff_threat
        self.swap_weight = swap_weight
        self.dump_urgency = dump_urgency
        self._held = 0.0
        self.reset()

    def reset(self) -> None:
        """Forget the challenge history and the opponents' inferred voids."""
        self._bluffer: dict[int, float] = {}  # seat -> belief that it bluffs Wild Draw Fours
        self._pending: tuple[int, int, int, float] | None = None  # my last challenge: offender, hand size, round,
        # and the chance they held the color
        # After my turn: (round, discard length, next seat, its hand size, active color), for void inference
        self._snapshot: tuple[int, int, int, int, int] | None = None
        self._voids: dict[int, set[int]] = {}  # seat -> colors it was seen to lack, no card gained since
        self._sizes: tuple[int, list[int]] | None = None  # (round, hand sizes) at my last decision

    # ------------------------------------------------------------------ dispatch
    def act(self, observation: Mapping[str, Any] | None, info: Mapping[str, Any]) -> int:
        """The heuristic's choice among the legal actions."""
        if self._pending is not None:
            self._settle_challenge(info)
        legal = legal_action_ids(observation, info)
        phase = info["phase"]
        self._track_sizes(info)
        if self._snapshot is not None and phase in ("play", "challenge", "stack"):
            self._infer_void(info)
        if phase == "uno":
            return A.UNO
        if phase == "catch":  # catching costs nothing, but never catch a partner
            return A.NO_CATCH if _Facts(info).is_partner(info["pending_player"]) else A.CATCH
        if len(legal) == 1:
            if phase == "play":  # a forced draw
                self._remember_turn_end(info, _Facts(info), -1)
            elif phase == "play_drawn" and legal[0] < A.NUM_PLAY_ACTIONS:  # draw until playable: must play it
                self._remember_turn_end(info, _Facts(info), legal[0])
            return legal[0]
        facts = _Facts(info)
        if phase == "play":
            action = self._play(facts, legal)
        elif phase == "play_drawn":
            action = legal[0]
            if action == WILD_DRAW_FOUR and self._would_bluff(facts):
                action = A.KEEP
        elif phase == "choose_color":
            action = A.COLOR_BASE + self._color(facts)
        elif phase == "give_away":
            action = max(legal, key=lambda a: (facts.count[a - A.GIVE_BASE], facts.value[a - A.GIVE_BASE], -a))
        elif phase == "challenge":
            action = self._challenge_or_accept(facts, legal)
        elif phase == "stack":  # pass the draws on with the Draw Two whose color suits us best
            twos = [a for a in legal if a < A.NUM_PLAY_ACTIONS]
            action = max(twos, key=lambda k: (facts.count[KIND_COLOR[k]], -k)) if twos else A.ACCEPT
        elif phase == "swap":
            action = facts.best_swap(legal)
        else:
            action = legal[0]
        self._remember_turn_end(info, facts, action)
        return action

    def _would_bluff(self, f: _Facts) -> bool:
        """Whether a Wild Draw Four now is a bluff we do not want (the next player is not about to win)."""
        return f.active >= 0 and f.count[f.active] > 0 and f.next_opp["hand_size"] > self.bluff_threat

    # ------------------------------------------------------------------ opponent voids
    @property
    def voids(self) -> dict[int, frozenset[int]]:
        """Seat -> the colors (indices) it was seen to lack, no card gained since (see ``_infer_void``)."""
        return {seat: frozenset(colors) for seat, colors in self._voids.items() if colors}

    def played(self, info: Mapping[str, Any], action: int) -> None:
        """Tell the agent that ``action``, not the one ``act`` returned for ``info``, was played.

        A caller that takes the agent's advice and sometimes overrules it (a search agent with this
        agent as its prior) calls this, so that the void inference after the turn reads the move
        actually made.
        """
        if info["phase"] not in ("uno", "catch"):
            self._remember_turn_end(info, _Facts(info), action)

    def _remember_turn_end(self, info: Mapping[str, Any], f: _Facts, action: int) -> None:
        """Note the state my turn leaves when ``action`` ends it with no effect on the next player."""
        self._snapshot = None
        active = f.active
        discard_len = len(info["discard_pile"])
        direction = info["direction"]
        if action < WILD and action >= 0:
            rank = KIND_RANK[action]
            if rank in (SKIP, DRAW_TWO) or (rank == REVERSE and f.live == 2):
                return
            if info["rules"].get("seven_zero") and rank in (0, 7):
                self._voids.clear()  # hands move: what we knew of seats no longer holds
                return
            if rank == REVERSE:
                direction = -direction
            active = KIND_COLOR[action]
            discard_len += 1
        elif A.COLOR_BASE <= action < A.COLOR_BASE + NUM_COLORS:
            if info["pending_card"] != "W":  # W4, WU, WK and WG all touch other hands
                return
            active = action - A.COLOR_BASE
        elif action not in (-1, A.KEEP, A.DRAW, A.ACCEPT, A.CHALLENGE):
            return
        if active < 0:
            return
        nxt = (f.order[0] if direction == info["direction"] else f.order[-1])["seat"]
        size = info["hand_sizes"][nxt]
        self._snapshot = (info["round"], discard_len, nxt, size, active)

    def _infer_void(self, info: Mapping[str, Any]) -> None:
        """If the player after my last turn drew and kept a card, they held no card of that color."""
        assert self._snapshot is not None
        round_number, discard_len, nxt, size, active = self._snapshot
        self._snapshot = None
        if info["round"] != round_number:
            return
        pile = info["discard_pile"]
        added = pile[discard_len:]
        n = info["num_players"]
        if len(pile) < discard_len or len(added) > n - 1:
            return
        live = n - sum(1 for o in info["opponents"] if o.get("eliminated"))
        seven_zero = info["rules"].get("seven_zero")
        for code in added:
            if seven_zero and code[-1] in "07":
                self._voids.clear()  # hands moved
                return
            if code.startswith("W") or code.endswith("D") or (live > 2 and code.endswith("R")):
                return  # someone may have drawn for it, or the turn order changed
        # Grown by one or more: drew and kept; level with a card played: drew and played the
        # drawn card. Either way they had nothing of the active color when their turn began.
        grown = info["hand_sizes"][nxt] - size
        if grown >= 1 or (grown == 0 and added):
            self._voids.setdefault(nxt, set()).add(active)

    def _track_sizes(self, info: Mapping[str, Any]) -> None:
        """Drop what we believed an opponent lacks as soon as their hand grows."""
        sizes = info["hand_sizes"]
        last = self._sizes
        if last is None or last[0] != info["round"]:
            self._voids.clear()
        else:
            for seat, size in enumerate(sizes):
                if size > last[1][seat] and seat in self._voids:
                    del self._voids[seat]
        self._sizes = (info["round"], list(sizes))
        if info["rules"].get("uno_call") == "explicit":
            for opp in info["opponents"]:
                if opp["hand_size"] == 1 and not opp["uno_called"]:
                    # a player careless enough to skip the UNO call is likely careless with W4s too
                    seat = opp["seat"]
                    self._bluffer[seat] = max(self._bluffer.get(seat, self.bluff_prior), 0.9)

    def _void_colors(self, info: Mapping[str, Any], seat: int) -> list[bool]:
        """Colors ``seat`` is believed not to hold (seen drawing on them, no card gained since)."""
        voids = self._voids.get(seat)
        return [c in voids for c in range(NUM_COLORS)] if voids else [False] * NUM_COLORS

    # ------------------------------------------------------------------ play
    def _play(self, f: _Facts, legal: Sequence[int]) -> int:
        plays = [a for a in legal if a < A.NUM_PLAY_ACTIONS]
        if not plays:
            return A.DRAW
        hand = f.hand
        if len(hand) == 1:
            return plays[0]
        if WILD_DRAW_FOUR in plays and self._would_bluff(f):
            plays.remove(WILD_DRAW_FOUR)  # no bluff unless the next player is about to go out
        if not plays:
            return A.DRAW
        if len(plays) == 1 and plays[0] < WILD:
            return plays[0]
        unseen = f.unseen_counts()
        best, best_score = plays[0], float("-inf")
        for k in plays:
            score = self._score_play(f, k, unseen)
            if score > best_score:
                best, best_score = k, score
        if best >= WILD and best_score < _PLAIN_WILD_MAX and self._saves_wild(f, best):
            return A.DRAW
        return best

    def _saves_wild(self, f: _Facts, wild: int) -> bool:
        """Whether to draw rather than spend a wild nobody is threatening us into playing."""
        return (self.save_wilds > 0 and len(f.hand) > 2 and wild != WILD_DRAW_FOUR
                and not (wild == SPECIAL_WILD and _effect(f.edition) == "greyskull_draws")
                and not f.info["rules"].get("draw_until_playable")
                and min(o["hand_size"] for o in f.rivals) >= self.save_wilds)

    def _threat(self, opponent: Mapping[str, Any]) -> bool:
        """An opponent (not a partner) about to go out."""
        return bool(opponent["hand_size"] <= 2 and not opponent.get("teammate"))

    def _follow_chance(self, f: _Facts, unseen: list[int], follower: Mapping[str, Any], color: int,
                       rank: int) -> float:
        """Chance that ``follower`` can play on a top card of this color and rank (rank -1: a wild).

        A card of theirs I have seen decides it; otherwise their other cards are taken as a
        random sample of the cards I have not seen, minus colors they are believed to lack.
        """
        for k in f.known_kinds(follower):
            if k >= WILD or KIND_COLOR[k] == color or KIND_RANK[k] == rank:
                return 1.0
        hidden = int(follower["hand_size"]) - len(follower["known_cards"])
        if hidden <= 0:
            return 0.0
        pool = f.pools.get(follower["seat"])
        if pool is None:
            pool = f.pools[follower["seat"]] = self._pool(f, unseen, follower["seat"])
        total, wilds, by_color, by_rank, void = pool
        if total <= 0:
            return 0.0
        match = wilds + by_color[color]
        if rank >= 0:
            match += by_rank[rank] - (0 if void[color] else max(0, unseen[color * 13 + rank]))
        return 1.0 - (1.0 - match / total) ** hidden

    def _pool(self, f: _Facts, unseen: list[int], seat: int) -> tuple[int, int, list[int], list[int], list[bool]]:
        """The unseen cards ``seat`` may hold (its void colors left out): total, wilds, per color, per rank."""
        void = self._void_colors(f.info, seat)
        total = wilds = 0
        by_color = [0] * NUM_COLORS
        by_rank = [0] * 13
        for k in range(NUM_KINDS):
            copies = unseen[k]
            if copies <= 0:
                continue
            kc = KIND_COLOR[k]
            if kc < 0:
                wilds += copies
            elif void[kc]:
                continue
            else:
                by_color[kc] += copies
                by_rank[KIND_RANK[k]] += copies
            total += copies
        return total, wilds, by_color, by_rank, void

    def _block_value(self, f: _Facts, unseen: list[int], follower: Mapping[str, Any], color: int,
                     rank: int) -> float:
        """Worth of leaving ``follower`` without a playable card: more the closer they are to going out."""
        blocked = 1.0 - self._follow_chance(f, unseen, follower, color, rank)
        return self.block_weight * blocked * (1.0 + self.block_urgency / max(1, int(follower["hand_size"])))

    def _score_play(self, f: _Facts, k: int, unseen: list[int]) -> float:
        n = f.live
        next_threat = self._threat(f.next_opp)
        if k < WILD:
            color, rank = KIND_COLOR[k], KIND_RANK[k]
            # shedding points matters more the sooner someone may go out
            dump = 1.0 + self.dump_urgency / max(1, min(int(o["hand_size"]) for o in f.rivals))
            score = self.count_weight * (f.count[color] - 1) + self.value_weight * dump * f.edition.card_value(k) / 20
            skipped = rank == DRAW_TWO or rank == SKIP or (rank == REVERSE and n == 2)
            if rank in (0, 7) and f.info["rules"].get("seven_zero") and len(f.hand) > 1:
                # a 7 swaps our hand with the smallest one; a 0 takes the previous player's hand
                other = min(o["hand_size"] for o in f.rivals) if rank == 7 else f.prev_opp["hand_size"]
                score += self.swap_weight * (len(f.hand) - 1 - other)
            if rank == DRAW_TWO:
                score += self.tempo_bonus
                if next_threat:
                    score += 4
            elif rank == SKIP:
                if n == 2:
                    score += self.tempo_bonus
                elif next_threat:
                    score += 3
            elif rank == REVERSE:
                if n == 2:
                    score += self.tempo_bonus
                else:
                    prev_threat = self._threat(f.prev_opp)
                    if next_threat and not prev_threat:
                        score += 3
                    elif prev_threat and not next_threat:
                        score -= 3
            if not skipped:
                follower = f.prev_opp if rank == REVERSE else f.next_opp
                score += self._block_value(f, unseen, follower, color, rank)
            elif n > 2:  # the player after the skipped one moves next
                score += self._block_value(f, unseen, f.order[1], color, rank)
            return score
        # wild-type: below every colored card unless its power is wanted now
        score = -20.0
        if k == WILD_DRAW_FOUR:
            score += 3 + (30 if next_threat else 0)
        elif k == SPECIAL_WILD:
            effect = _effect(f.edition)
            if effect == "give_away":
                give = max(f.count)
                if sum(1 for c in f.count if c) == 1 and len(f.hand) == give + 1:
                    score = 100.0  # gives away every other card: goes out
                elif give >= self.urrrhhh_min or (give and min(o["hand_size"] for o in f.rivals) <= 2):
                    score = 10.0 + give
            elif effect == "greyskull_draws":
                if min(o["hand_size"] for o in f.rivals) <= self.greyskull_trigger:
                    score = 10.0
                else:
                    score += 2
            elif effect == "king_pig_deal":
                score += 0.5 if len(f.hand) > 4 else -0.5
        return score

    # ------------------------------------------------------------------ color
    def _color(self, f: _Facts) -> int:
        unseen = f.unseen_counts()
        # after a Wild Draw Four the next player draws and is skipped: the one after matters
        follower: Mapping[str, Any] | None = f.next_opp
        if f.info["pending_card"] == "W4":
            follower = f.order[1] if f.live > 2 else None

        def score(c: int) -> float:
            value = self.color_count_weight * f.count[c] + f.value[c] / 200
            if follower is not None:
                value += self._block_value(f, unseen, follower, c, -1)
            return value

        return max(range(NUM_COLORS), key=lambda c: (score(c), -c))

    # ------------------------------------------------------------------ challenge
    def _challenge_or_accept(self, f: _Facts, legal: Sequence[int]) -> int:
        can_stack = WILD_DRAW_FOUR in legal and not self._would_bluff(f)
        gain = self._challenge_gain(f)
        if gain == float("inf"):
            return self._do_challenge(f, 1.0)
        if can_stack:  # stacking passes every owed card on to the next player
            return WILD_DRAW_FOUR
        if gain > 0:
            return self._do_challenge(f, self._held)
        return A.ACCEPT

    def _challenge_gain(self, f: _Facts) -> float:
        """Expected cards won by challenging rather than accepting (inf: a sure win, -inf: never)."""
        info = f.info
        self._held = 0.0
        offender = info["pending_player"]
        prev_name = info["w4_prev_color"]
        if not self.challenge or not info["rules"].get("allow_bluff", True) or offender is None or prev_name is None:
            return float("-inf")
        prev = f.edition.colors.index(prev_name)
        opp = next(o for o in f.opponents if o["seat"] == offender)
        known = f.known_kinds(opp)
        if any(KIND_COLOR[k] == prev for k in known):
            return float("inf")
        hidden = opp["hand_size"] - len(known)
        if hidden <= 0 or self._void_colors(info, offender)[prev]:
            return float("-inf")  # we have seen their whole hand, or seen them draw on that color since
        unseen = f.unseen_counts()
        total = sum(unseen)
        of_color = sum(unseen[prev * 13:prev * 13 + 13])
        p_none = 1.0
        for i in range(hidden):
            if total - i <= 0:
                break
            p_none *= max(0, total - of_color - i) / (total - i)
        self._held = held = 1.0 - p_none  # chance they hold the previous color, were their cards a random sample
        bluffer = self._bluffer.get(offender, self.bluff_prior)  # chance this player bluffs at all
        p_guilty = held * bluffer
        # Against accepting (draw the penalty, lose the turn): a right challenge saves our
        # cards, gives them as many (worth less at bigger tables) and keeps our turn; a wrong
        # one costs 2 more cards. Either way we see their hand, which helps most head to head.
        n = f.live
        owed = float(info.get("penalty") or 4)
        their_cards = owed / (n - 1) * (2.0 if opp["hand_size"] <= 2 else 1.0)
        turn = 1.0 if n == 2 else 0.5
        reveal = 1.0 if n == 2 else 0.3
        return p_guilty * (owed + their_cards + turn) - (1.0 - p_guilty) * 2.0 + reveal

    def _do_challenge(self, f: _Facts, held: float) -> int:
        self._pending = (f.info["pending_player"], len(f.hand), f.info["round"], held)
        return A.CHALLENGE

    def _settle_challenge(self, info: Mapping[str, Any]) -> None:
        """Learn from our last challenge (guilty leaves our hand as it was): update the bluff belief."""
        assert self._pending is not None
        offender, size, round_number, held = self._pending
        self._pending = None
        if info["round"] != round_number:
            return
        bluffer = self._bluffer.get(offender, self.bluff_prior)
        if len(info["hand"]) == size:  # guilty: only a bluffer is ever guilty
            self._bluffer[offender] = 1.0
        else:  # innocent: likelier from an honest player
            evidence = bluffer * (1 - held) + (1 - bluffer)
            # Innocence the belief called impossible (a sure bluffer sure to hold the color): start over.
            self._bluffer[offender] = bluffer * (1 - held) / evidence if evidence > 0 else self.bluff_prior

    def __repr__(self) -> str:
        return (f"RuleAgent(challenge={self.challenge}, urrrhhh_min={self.urrrhhh_min}, "
                f"greyskull_trigger={self.greyskull_trigger})")
