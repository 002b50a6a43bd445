"""Every notebook converts to HTML with `nbconvert`, keeping its saved outputs and figures.

The docs site is rendered by Quarto where it is installed; this check needs only nbconvert, so it
runs everywhere and catches a notebook whose outputs would be lost or whose figures would vanish.
"""
from pathlib import Path

import nbformat
import pytest
from nbconvert import HTMLExporter

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted(p for p in (ROOT / "nbs").glob("*.ipynb"))


@pytest.mark.parametrize("nb_path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_converts_with_outputs(nb_path):
    nb = nbformat.read(nb_path, as_version=4)
    html, _ = HTMLExporter().from_notebook_node(nb)
    figures = sum(1 for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []) if "image/png" in o.get("data", {}))
    assert html.count("data:image/png;base64") >= figures
    for c in nb.cells:
        if c.cell_type == "markdown" and c.source.startswith("# "):
            assert c.source.splitlines()[0][2:].split("`")[0][:20] in html
            break
