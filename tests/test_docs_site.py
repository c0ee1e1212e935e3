"""The documentation site: ``make docs``'s Sphinx build succeeds with warnings as errors, every page of
``docs/`` is built (``docs/incoming/`` is not), the API reference holds the packages' docstrings, and
the built site opens from disk in Chromium (skipped, saying why, without Chromium or Playwright)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("sphinx", reason="the docs extra builds the site: pip install -e '.[docs]'")
pytest.importorskip("myst_parser", reason="the docs extra builds the site: pip install -e '.[docs]'")
pytest.importorskip("furo", reason="the docs extra builds the site: pip install -e '.[docs]'")

pytestmark = pytest.mark.slow  # a full build: about 30 s on 2 shared cores

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
CHROMIUM = os.environ.get("UNO_CHROMIUM", "/usr/bin/chromium")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"]


@pytest.fixture(scope="session")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site built as ``make docs`` builds it (``-W``: a warning fails), into a scratch folder."""
    out = tmp_path_factory.mktemp("site")
    done = subprocess.run([sys.executable, "-m", "sphinx", "-q", "-W", "--keep-going", "-b", "html",
                           "-d", str(out / "doctrees"), str(DOCS), str(out / "html")],
                          capture_output=True, text=True, cwd=ROOT, timeout=600,
                          env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert done.returncode == 0, f"the docs build failed:\n{done.stdout[-3000:]}\n{done.stderr[-6000:]}"
    return out / "html"


def test_every_page_is_built_and_incoming_is_not(site: Path) -> None:
    pages = {p.stem for p in DOCS.glob("*.md")} - {"RULES"}  # RULES.md is included by rules.md
    missing = sorted(p for p in pages | {"api", "index"} if not (site / f"{p}.html").is_file())
    assert not missing, f"pages of docs/ not built: {missing}"
    assert not (site / "incoming").exists(), "docs/incoming/ is merge material, not a page"


def test_the_api_reference_holds_the_docstrings(site: Path) -> None:
    api = (site / "api.html").read_text(encoding="utf-8")
    for target in ('id="uno_env.core.Game"', 'id="uno_env.batched.BatchedUno"', 'id="agents.RuleAgent"',
                   'id="uno_env.raw_env"'):
        assert target in api, f"no {target} in the API reference"


def test_the_rules_and_changelog_pages_include_their_files(site: Path) -> None:
    rules = (site / "rules.html").read_text(encoding="utf-8")
    changelog = (site / "changelog.html").read_text(encoding="utf-8")
    first_rule = next(line for line in (DOCS / "RULES.md").read_text(encoding="utf-8").splitlines()
                      if line.startswith("## "))[3:]
    assert first_rule.split()[-1] in rules
    assert "Changelog" in changelog and len(changelog) > len((ROOT / "CHANGELOG.md").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not Path(CHROMIUM).exists():
        pytest.skip(f"no Chromium at {CHROMIUM}: install it with `apt-get install -y chromium` (or set UNO_CHROMIUM)")
    sync_api = pytest.importorskip("playwright.sync_api", reason="pip install -e '.[web]' for Playwright")
    with sync_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        yield launched
        launched.close()


@pytest.mark.browser
def test_the_site_opens_from_disk_and_its_links_lead_to_the_env_page(site: Path, browser: Any) -> None:
    page = browser.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda err: errors.append(str(err)))
    page.goto((site / "index.html").as_uri())
    assert "uno_env" in page.title()
    page.click("text=The PettingZoo environment")
    page.wait_for_url("**/env.html")
    assert page.locator("h1").first.inner_text().startswith("The PettingZoo environment")
    assert page.locator("div.highlight-python pre").count() > 0, "the env page shows no Python example"
    assert not errors, errors
    page.close()
