"""Flavour lines: each special wild's line lives in its edition's record (``SpecialWild.flavour``)
and every place that shows it (the narrator, so the env's renderer and the terminal game, and the
web app) reads it from there; no other copy of the wording exists."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import play, position
from uno_env.core import EDITIONS
from uno_env.render import Narrator, plain

ROOT = Path(__file__).resolve().parent.parent
SPECIALS = {name: ed.special for name, ed in EDITIONS.items() if ed.special is not None}
# What a source file would hold if it copied a line (its outer quotes left out).
CORES = {name: s.flavour.strip('"') for name, s in SPECIALS.items()}


def test_each_flavour_line_is_written_once_in_the_code() -> None:
    assert set(CORES) == {"monster_high", "angry_birds", "masters_of_the_universe"}
    assert CORES["monster_high"] == "Urrrhhh!"  # the check below looks for the words without their quotes
    sources = [p for package in ("uno_env", "uno_app", "agents", "training")
               for p in sorted((ROOT / package).rglob("*")) if p.suffix in {".py", ".js", ".html"}]
    assert len(sources) > 40
    copies = [(p.relative_to(ROOT).as_posix(), name) for p in sources for name, core in CORES.items()
              if core in p.read_text(encoding="utf-8")]
    assert copies == [("uno_env/core/cards.py", name) for name in CORES]


@pytest.mark.parametrize("edition", sorted(SPECIALS))
def test_the_narrator_reads_the_flavour_from_the_record(edition: str) -> None:
    special = SPECIALS[edition]
    # A changed record changes what is told: the narrator holds no wording of its own.
    changed = type(special)(**{**special.__dict__, "flavour": f"<{edition} line>"})
    ed = EDITIONS[edition]
    changed_ed = type(ed)(**{**ed.__dict__, "special": changed})
    game = position(edition, 3, hands={0: [special.code, ed.letters[0] + "1", ed.letters[0] + "2"]},
                    discard=[ed.letters[1] + "5"])
    actions = [f"play {special.code}"] + (["give " + ed.colors[0]] if special.gives_away else [])
    play(game, actions)
    told = [plain(line) for line in Narrator(changed_ed, seat=None).lines(game.events())]
    assert f"Player 0 plays {special.code} - <{edition} line>" in told
    if special.gives_away:
        assert f"  <{edition} line> Player 0 gives {ed.letters[0]}1 to player 1" in told
    assert not any(special.flavour in line for line in told)


def test_the_web_app_offers_each_records_flavour() -> None:
    pytest.importorskip("fastapi")
    from uno_app.web.server import options

    offered = options()["editions"]
    assert offered["classic"]["special"] is None
    for name, special in SPECIALS.items():
        assert offered[name]["special"] == {"code": special.code, "name": special.name, "flavour": special.flavour}
