"""Every notebook renders to a site page with its saved outputs and figures, and the preview honours
the cell flags the way nbdev and Quarto do.

The docs site is rendered by Quarto where it is installed; `tools/preview_site.py` renders the same
pages from the saved outputs without it, so this runs everywhere (the browser checks of those pages
are in tests/test_browser.py).
"""
import re
import sys
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
from preview_site import build, notebooks, page_name, render_notebook, sidebar, split_directives  # noqa: E402

NOTEBOOKS = notebooks()


def _shown(cell) -> bool:
    d, _ = split_directives(cell.source)
    return not (d.keys() & {"hide", "export", "exporti", "default_exp"} or
                d.get("include") == "false" or d.get("output") == "false" or d.get("eval") == "false")


@pytest.mark.parametrize("nb_path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_converts_with_outputs(nb_path):
    nb = nbformat.read(nb_path, as_version=4)
    page = render_notebook(nb_path, nb)
    figures = sum(1 for c in nb.cells if c.cell_type == "code" and _shown(c)
                  for o in c.get("outputs", []) if "image/png" in o.get("data", {}))
    assert page["body"].count("data:image/png;base64") >= figures
    first = next(c for c in nb.cells if c.cell_type == "markdown")
    assert first.source.startswith("# "), f"{nb_path.name}: the first markdown cell is not a `# Title`"
    assert page["title"] == first.source.splitlines()[0][2:].strip()


def test_every_notebook_is_a_page_in_sidebar_order(tmp_path):
    pages = build(tmp_path)
    assert [p.name for p in pages] == [page_name(n) for _, n in sidebar()] + \
        [page_name(p) for p in NOTEBOOKS if p.name not in {n for _, n in sidebar()}]
    assert (tmp_path / "index.html").exists() and page_name("10_ar_main.ipynb") == "ar_main.html"
    html = (tmp_path / "index.html").read_text()
    for _, n in sidebar(): assert f'href="{page_name(n)}"' in html


# ------------------------------------------------------------------------------------ flags, on a synthetic notebook

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="


def _img(): return new_output("display_data", data={"image/png": PNG, "text/plain": "<Figure size 640x480 with 1 Axes>"})
def _txt(s): return new_output("stream", name="stdout", text=s)


def _render(*cells, metadata=None):
    nb = new_notebook(cells=[new_markdown_cell("# The title\n\n> The description.\n\nFirst words.")] + list(cells),
                      metadata=metadata or {})
    return render_notebook(Path("nbs/99_synthetic.ipynb"), nb)


def _cell(src, *outputs): c = new_code_cell(src); c.outputs = list(outputs); return c


def test_title_and_description_become_the_header():
    p = _render()
    assert (p["title"], p["subtitle"]) == ("The title", "The description.")
    assert "First words." in p["body"] and "The title" not in p["body"]


@pytest.mark.parametrize("flags,code,out", [
    ("", True, True),
    ("#| hide\n", False, False),
    ("#| include: false\n", False, False),
    ("#| echo: false\n", False, True),
    ("#| output: false\n", True, False),
    ("#| eval: false\n", True, False),
    ("#|hide\n", False, False),
])
def test_cell_flags(flags, code, out):
    b = _render(_cell(flags + "print('CODE')", _txt("OUTPUT")))["body"]
    assert ("print(&#x27;CODE&#x27;)" in b) == code and ("OUTPUT" in b) == out
    assert "#|" not in b, "directive lines are not shown"


@pytest.mark.parametrize("fold,open_", [("true", False), ("show", True)])
def test_code_fold(fold, open_):
    b = _render(_cell(f"#| code-fold: {fold}\n#| code-summary: Set-up\nx = 1", _txt("1")))["body"]
    assert re.search(r"<details class=\"code-fold\"( open)?><summary>Set-up</summary>", b)
    assert ("<details class=\"code-fold\" open>" in b) == open_ and "x = 1" in b and "1" in b


def test_export_cells_show_docs_not_source():
    b = _render(_cell('#| export\ndef f(x, y=2):\n    "Add."\n    return x + y\ndef _private(): pass'))["body"]
    assert "return x + y" not in b and "f (x, y=2)" in b and "Add." in b and "_private" not in b
    b = _render(_cell('#| exports\ndef g(): "Doc."'))["body"]
    assert "Exported source" in b and "def g()" in b and "g ()" in b


def test_numbered_figures_and_cross_references():
    p = _render(new_markdown_cell("As @fig-b shows."),
                _cell("#| label: fig-a\n#| fig-cap: \"First *plot*.\"\nplot()", _img()),
                _cell("#| fig-cap: Unnumbered.\nplot()", _img()),
                _cell("#| label: fig-b\n#| fig-cap: Second.\nplot()", _img()))
    b = p["body"]
    assert "Figure&nbsp;1: First <em>plot</em>." in b and "Figure&nbsp;2: Second." in b
    assert "<figcaption>Unnumbered.</figcaption>" in b
    assert '<a href="#fig-b">Figure\xa02</a>' in b and '<figure class="figure" id="fig-b">' in b
    assert b.count("<figure") == 3 and "&lt;Figure size" not in b, "the image, not its text repr"


def test_magics_and_raw_front_matter():
    from nbformat.v4 import new_raw_cell
    nb = new_notebook(cells=[new_raw_cell("---\ntitle: Raw title\ndescription: Raw description.\n---"),
                             _cell("%load_ext autoreload\n%autoreload 2\nimport os")])
    p = render_notebook(Path("nbs/98_raw.ipynb"), nb)
    assert (p["title"], p["subtitle"]) == ("Raw title", "Raw description.")
    assert "autoreload" not in p["body"] and "import os" in p["body"] and "---" not in p["body"]


def test_outputs_richest_type_and_streams():
    html_out = new_output("execute_result", data={"text/html": "<table><tr><td>1</td></tr></table>", "text/plain": "TEXTREPR"})
    err = new_output("stream", name="stderr", text="10%|█\r100%|██\n")
    b = _render(_cell("df", html_out), _cell("train()", err))["body"]
    assert "<table>" in b and "TEXTREPR" not in b
    assert 'class="cell-output cell-output-stderr"' in b and "10%|█\r100%|██" in b, "stderr kept as saved"


def test_widget_placeholder_only_with_saved_state():
    view = {"application/vnd.jupyter.widget-view+json": {"model_id": "abc", "version_major": 2, "version_minor": 0},
            "text/plain": "VBox(children=(IntSlider(value=0),))"}
    c = _cell("explorer()", new_output("display_data", data=view))
    assert "VBox(children=" in _render(c)["body"], "no saved state: the site shows the text repr"
    state = {"widgets": {"application/vnd.jupyter.widget-state+json": {"state": {"abc": {}}, "version_major": 2, "version_minor": 0}}}
    b = _render(c, metadata=state)["body"]
    assert "VBox(children=" not in b and "widget-placeholder" in b


def test_markdown_tables_math_links_and_local_images(tmp_path):
    (tmp_path / "pic.png").write_bytes(__import__("base64").b64decode(PNG))
    nb = new_notebook(cells=[new_markdown_cell("# T\n\n| a | b |\n|---|---|\n| 1 | $x_1 * y_2$ |\n\n"
                                                 "[next](10_ar_main.ipynb#findings) ![](pic.png) ![](gone.png)")])
    b = render_notebook(tmp_path / "x.ipynb", nb)["body"]
    assert "<table>" in b and "x_1 * y_2" in b and 'href="ar_main.html#findings"' in b
    assert 'src="data:image/png;base64,' in b and 'src="gone.png"' in b


# ------------------------------------------------------------------------------------ the explorer without a kernel

def _embedded_explorer(body: str) -> tuple[str, dict]:
    "The id and the data of the one embedded explorer on a page."
    import json
    found = re.findall(r'<div id="(ssm-explorer-[0-9a-f]+)" class="ssm-explorer".*?'
                       r'<script type="application/json" class="ssm-explorer-data">(.*?)</script>', body, re.S)
    assert len(found) == 1, f"{len(found)} embedded explorers"
    return found[0][0], json.loads(found[0][1].replace("<\\/", "</"))


def test_explorer_page_embeds_every_control_state():
    "The explorer page carries the static explorer: its controls, the script that redraws it, and its data for every value of every control."
    body = render_notebook(ROOT / "nbs" / "07a_explorer.ipynb")["body"]
    uid, snap = _embedded_explorer(body)
    # the page leads with the explorer: nothing but the title and one paragraph before it
    assert body.index('class="ssm-explorer"') < body.index("<h2") and body[:body.index('class="ssm-explorer"')].count("<p>") <= 2
    # where the attribution estimate is known to fail (value corruption), the widget and the page warn
    assert set(snap["warnings"]) == {"value"} and 'class="sx-warning"' in body and "D.warnings[S.corruption]" in body
    assert "Where the estimate fails: value corruption" in body
    assert f'document.getElementById("{uid}")' in body, "the script of this explorer"
    assert not re.search(r"<script[^>]*\bsrc=", body), "self-contained: nothing loaded from elsewhere"
    hooks = [h for layer in snap["hooks"] for h in layer]
    points = {re.sub(r"^blocks\.\d+\.", "", h) for h in hooks}
    assert len(snap["hooks"]) == 2 and len(hooks) > 2 * 6
    assert (snap["corruptions"], snap["methods"]) == (["key", "value"], ["exact", "estimated"])
    assert snap["positions"] == ["key", "value", "next_key", "divider", "query", "answer"] == snap["named_positions"]
    E = list(snap["examples"])
    assert len(E) == 4 and set(snap["initial"]) == {"example", "corruption", "method", "layer", "hook", "position"}
    for v in snap["corruptions"]: assert f'data-control="corruption" data-value="{v}"' in body
    for v in snap["methods"]: assert f'data-control="method" data-value="{v}"' in body
    for v in snap["positions"]: assert f'<option value="{v}">' in body
    for e in E: assert f'<option value="{e}">' in body
    assert f'data-control="layer" min="0" max="{len(snap["hooks"]) - 1}"' in body
    for c in snap["corruptions"]:
        for e in E: assert {"O", "C"} <= set(snap["examples"][e]) and c in snap["examples"][e]["C"]
        A = snap["answers"][c]
        for m in snap["methods"]:
            cm = f"{c}|{m}"
            assert set(snap["grid"][cm]) == points
            assert all(len(g) == 2 and all(len(row) == 6 for row in g) for g in snap["grid"][cm].values())
            for h in hooks:
                assert len(snap["named"][cm][h]) == 6
                assert all(len(snap["strip"][cm][h]["R"][e]) == len(snap["examples"][e]["tokens"]) for e in E)
                assert all(isinstance(snap["site"][cm][h][p][e], (int, float)) for p in snap["positions"] for e in E)
        for h in hooks:
            for p in snap["positions"]:
                for e in E:
                    k, probs = A["patched"][h][p][e]
                    assert len(k) == len(probs) >= 1 and max(k) < len(A["tokens"][e]) and all(0 <= x <= 1000 for x in probs)
    # each control changes what is shown
    g = snap["grid"]
    assert g["key|exact"] != g["value|exact"] and g["key|exact"] != g["key|estimated"]
    assert g["key|exact"]["hook_resid_pre"][0] != g["key|exact"]["hook_resid_pre"][1]
    assert len({str(snap["strip"]["key|exact"][h]["R"]) for h in hooks}) > 1
    assert len({str(snap["strip"]["key|exact"][hooks[-1]]["R"][e]) for e in E}) > 1


# ------------------------------------------------------------------------------------ the paper, on every chapter

PAPER = "https://arxiv.org/abs/2505.15105"
CHAPTER_SECTIONS = ("The paper's experiments", "Exploring a trained run")


def links_paper(body: str) -> bool:
    "Whether a rendered page body links the paper (arXiv 2505.15105) in its text."
    return re.search(r'<a [^>]*href="' + re.escape(PAPER) + r'/?"', body) is not None


def test_every_chapter_links_the_paper():
    "The index and every chapter (the experiment and explorer sections of the sidebar) link the paper in their text; the navbar links it on every page."
    chapters = ["index.ipynb"] + [n for s, n in sidebar() if s in CHAPTER_SECTIONS]
    assert len(chapters) >= 10
    missing = [n for n in chapters if not links_paper(render_notebook(ROOT / "nbs" / n)["body"])]
    assert not missing, f"chapters that do not link {PAPER}: {missing}"
    import yaml
    bar = yaml.safe_load((ROOT / "nbs" / "_quarto.yml").read_text())["website"]["navbar"]
    assert any(it.get("href", "").rstrip("/") == PAPER for side in ("left", "right") for it in bar.get(side, [])), "navbar"


def test_paper_link_check_on_synthetic_pages():
    assert not links_paper(_render(new_markdown_cell("The paper (arXiv 2505.15105) is not linked here."))["body"])
    assert not links_paper(_render(new_markdown_cell("[a later version](https://arxiv.org/abs/2505.151051)"))["body"])
    assert links_paper(_render(new_markdown_cell(f"Reproduces [Arora et al. (2025)]({PAPER})."))["body"])


def test_markdown_cell_directives_are_not_shown():
    "nbdev removes a markdown cell's leading `#|` lines (`#| export` puts the cell in the module docstring): the site shows the text alone."
    b = _render(new_markdown_cell("#| export\nEvery mixer on this page is a recurrence."))["body"]
    assert "Every mixer on this page is a recurrence." in b and "#|" not in b and "export" not in b


# ------------------------------------------------------------------------------------ the front door

def page_text(body: str) -> str:
    "A page body's text as a reader sees it (tags, scripts and styles dropped, whitespace collapsed)."
    import html
    body = re.sub(r"<(script|style)\b.*?</\1>", " ", body, flags=re.S)
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", body))).strip()


def test_index_first_screen_says_what_was_reproduced():
    """The index's first screen (its first 1,200 characters of text, before any figure) says how many of the paper's
    cells were run on its data and how many agree, how its seven findings stand, and on how many seeds."""
    text = page_text(render_notebook(ROOT / "nbs" / "index.ipynb")["body"])[:1200]
    m = re.search(r"We have run (\d+) of the paper's (\d+) reported cells on its own data.*?(\d+) agree with its accuracy and (\d+) differ", text)
    assert m, f"no reproduced count in the first screen: {text!r}"
    ran, total, agree, differ = map(int, m.groups())
    assert 0 < ran <= total and agree + differ == ran
    assert re.search(r"Of the paper's seven findings, \d+ ", text), "how the seven findings stand"
    assert "seed" in text, "on how many seeds"


STALE = ("not run yet", "not yet run", "still running", "none has been run", "so far")


def test_index_states_no_hand_written_sweep_status():
    "No phrase on the index that goes stale when a sweep finishes: its status there is rendered from the stored files."
    text = page_text(render_notebook(ROOT / "nbs" / "index.ipynb")["body"]).lower()
    assert not [p for p in STALE if p in text], [p for p in STALE if p in text]


def test_glossary_defines_every_term_once():
    "The glossary page has an entry (a heading) for each term the chapters use, and shows its numbers from the package."
    body = render_notebook(ROOT / "nbs" / "glossary.ipynb")["body"]
    heads = [page_text(h) for h in re.findall(r"<h[23][^>]*>(.*?)</h[23]>", body, re.S)]
    for term in ("O, C and R", "The effect, O minus C", "Association", "The accuracy gate", "Verdicts", "Induction",
                 "Direct retrieval", "Unresolved", "Conv binding", "Cells, agrees and differs", "Finding verdicts", "Scales"):
        assert heads.count(term) == 1, f"glossary: {term!r} in {heads}"
    text = page_text(body)
    assert "exceed 1" in text and "MIN_GAIN is 0.1" in text and "high = 0.5" in text
