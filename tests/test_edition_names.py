"""Edition names read from data (configs, checkpoint metadata, settings) become the typed
``EditionName`` through one check, ``uno_env.core.rules.edition_name``."""

from __future__ import annotations

import pytest

from uno_env.core import EDITIONS, EditionName, Rules, RulesError, edition_name
from uno_env.core.rules import EDITION_NAMES


def test_the_edition_literal_lists_the_editions_in_order() -> None:
    assert EDITION_NAMES == tuple(EDITIONS)


@pytest.mark.parametrize("name", list(EDITIONS))
def test_edition_name_returns_each_edition(name: str) -> None:
    checked: EditionName = edition_name(name)
    assert checked == name and Rules(edition=checked).edition == name


@pytest.mark.parametrize("bad", ["Classic", "uno", "", None, 1, ["classic"], b"classic"])
def test_edition_name_refuses_anything_else_naming_the_editions(bad: object) -> None:
    with pytest.raises(RulesError, match="editions are classic, monster_high, angry_birds, masters_of_the_universe"):
        edition_name(bad)
    with pytest.raises(RulesError, match="unknown edition"):
        Rules(edition=bad)  # type: ignore[arg-type]  # the point: a bad value from data


def test_a_training_configs_editions_are_checked_names() -> None:
    pytest.importorskip("yaml")
    from training.run.config import EnvConfig

    assert EnvConfig(edition="all").editions() == list(EDITIONS)
    assert EnvConfig(edition=["angry_birds", "classic", "angry_birds"]).editions() == ["angry_birds", "classic"]
    from pydantic import ValidationError

    with pytest.raises(ValidationError, match="unknown edition 'nope'"):  # refused as the model is built
        EnvConfig(edition=["classic", "nope"])
