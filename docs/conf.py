"""Sphinx configuration of the documentation site (``make docs`` builds it into docs/_build/html)."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # the clone's packages, as `pip install -e .` sees them

project = "uno_env"
author = "The uno_env authors"
copyright = "the uno_env authors, MIT licence"

extensions = ["myst_parser", "sphinx.ext.autodoc", "sphinx.ext.napoleon"]
source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
# incoming/: material other work drops for merging into these pages; experiments/: run notes.
exclude_patterns = ["_build", "incoming", "experiments", "RULES.md"]  # RULES.md: included by rules.md

myst_enable_extensions = ["colon_fence"]  # ::: directives, so ``` fences stay code (tests/test_docs.py runs them)
myst_heading_anchors = 3

autodoc_default_options = {"members": True, "show-inheritance": True}
autodoc_member_order = "bysource"
autodoc_typehints = "description"
napoleon_google_docstring = True
napoleon_numpy_docstring = False

html_theme = "furo"
html_title = "uno_env"
