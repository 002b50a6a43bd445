"""The experiment chapters (nbs/10_ar_main … 18_today_mixers) read as a researcher reads them, without a browser:
from the notebooks' saved outputs and the pages `tools/preview_site.py` renders from them.

* every chapter has a "Where we differ" section (a `##` heading);
* no sentence about a sweep's status that goes stale ("still running", "not run yet", "so far", …): never in
  hand-written markdown, and nowhere on a page whose sweeps have all settled (finished, or stopped for
  good, as the results layer computes it from each sweep's plan and its stored files);
* no saved figure wider than 1,400 px (its PNG header, as saved in the notebook);
* no table wider than the content column (900 px) unless it scrolls: a hand-written table never scrolls,
  so its narrowest layout (the longest word of each column) must fit;
* the glossary is linked from every chapter that uses its terms;
* chapters 14–17 define no helper of their own (no `def` outside a mixer written on the page): curves,
  pivots and verdicts come from the results layer.

tests/test_browser.py makes the same checks on the pages in headless Chromium, where the browser measures.
"""
from __future__ import annotations

import base64
import re
import struct
import sys
from functools import lru_cache
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
NBS, RESULTS = ROOT / "nbs", ROOT / "results"
sys.path.insert(0, str(ROOT / "tools"))
from preview_site import render_notebook, split_directives  # noqa: E402

CHAPTERS = sorted(p for p in NBS.glob("1[0-8]_*.ipynb"))
MINE = [p for p in CHAPTERS if p.name[:2] in ("14", "15", "16", "17", "18")]
FIGURE_MAX_PX = 1400        # the widest figure a chapter may save
COLUMN_PX = 900             # the content column of a page at 1280 px (the preview's `main>article`)
CHAR_PX, CELL_PAD_PX = 7.3, 19.2   # a character of table text (0.88rem) and a cell's padding, in px
# Phrases that state a sweep's status by hand, and go stale when it finishes.
STALE = ("still running", "not run yet", "not yet run", "so far", "none has been run", "still training",
         "not run for this page yet", "dashed: still running", "have not been run", "has not been run", "still to run",
         "in progress")
GLOSSARY_TERMS = ("O − C", "O - C", "association", "verdict", "gate")


def nb(path) -> nbformat.NotebookNode: return nbformat.read(path, as_version=4)


def page_text(body: str) -> str:
    "A page body's text as a reader sees it (tags, scripts and styles dropped, whitespace collapsed)."
    import html
    body = re.sub(r"<(script|style)\b.*?</\1>", " ", body, flags=re.S)
    body = re.sub(r'<pre class="sourceCode[^"]*".*?</pre>', " ", body, flags=re.S)   # the code a page quotes is not prose
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", body))).strip()


def stale_phrases(text: str) -> list[str]:
    "The stale-status phrases of `STALE` in `text` (case-insensitive)."
    t = text.lower()
    return [p for p in STALE if p in t]


def markdown_cells(book) -> list[str]:
    "The hand-written markdown of a notebook (leading `#|` directives dropped)."
    return [split_directives(c.source)[1] for c in book.cells if c.cell_type == "markdown"]


def sweeps_read(book) -> list[str]:
    "The stored sweeps (`results/<name>/`) a chapter names in its code or its text: in a path, or quoted as a folder name."
    src = "\n".join(c.source for c in book.cells)
    names = re.findall(r'(?:results/|res\s*/\s*"|RES\s*/\s*"|Path\("\.\./results/)([a-z][a-z0-9_]*)', src)
    names += re.findall(r'[`"]([a-z][a-z0-9_]*)[`"]', src)   # a sweep named in code quotes or as a string
    return sorted({n for n in names if (RESULTS / n / "sweep.yaml").exists()})


UNSETTLED = ("running", "started", "trained, not dissected")   # a partial run's detail while it can still change


@lru_cache(maxsize=None)
def sweep_settled(name: str) -> bool:
    """Whether every planned run of `results/<name>` has reached its end, as the results layer computes it from the plan and
    the files: finished, or partial and no longer moving (a pilot stopped at step 5,000 is settled; a run still training,
    or trained and not yet dissected, is not; a planned run with nothing stored is not)."""
    from ssm_mech.results import StoredSweep
    from ssm_mech.sweep import load_sweep, plan_sweep
    path = RESULTS / name
    st = StoredSweep(path, plan=plan_sweep(load_sweep(path / "sweep.yaml"))).status()
    planned = st[st.state != "unplanned"]
    moving = (planned.state == "pending") | ((planned.state == "partial") & planned.detail.astype(str).str.startswith(UNSETTLED))
    return len(planned) > 0 and not moving.any()


def png_width(data: str | bytes) -> int:
    "The width in px of a PNG (base64 text as a notebook stores it, or bytes), read from its IHDR header."
    raw = (base64.b64decode(data) if isinstance(data, str) else data)[:24]
    if raw[:8] != b"\x89PNG\r\n\x1a\n": raise ValueError("not a PNG")
    return struct.unpack(">I", raw[16:20])[0]


def saved_figures(book) -> list[tuple[int, int]]:
    "(cell index, width in px) of every PNG a notebook's outputs hold."
    return [(i, png_width(o["data"]["image/png"])) for i, c in enumerate(book.cells) if c.cell_type == "code"
            for o in c.get("outputs", []) if "image/png" in o.get("data", {})]


def pipe_tables(text: str) -> list[list[list[str]]]:
    "The markdown pipe tables in `text`, each as rows of cell strings (the `|---|` rule dropped)."
    tables, cur = [], []
    for line in text.splitlines() + [""]:
        s = line.strip()
        if s.startswith("|") and s.endswith("|") and len(s) > 1:
            cells = [c.strip() for c in s[1:-1].split("|")]
            if not all(re.fullmatch(r":?-+:?", c) for c in cells if c): cur.append(cells)
        elif cur: tables.append(cur); cur = []
    return tables


def min_table_px(rows: list[list[str]]) -> float:
    "The narrowest a table can be laid out: per column its longest word (markdown emphasis and code marks dropped) plus padding."
    ncol = max(len(r) for r in rows)
    def word(c): return max((len(w) for w in re.sub(r"[*`]|\]\([^)]*\)|\[", "", c).split()), default=0)
    return sum(max(word(r[j]) if j < len(r) else 0 for r in rows) * CHAR_PX + CELL_PAD_PX for j in range(ncol))


# ------------------------------------------------------------------------------------ the helpers, on made-up input

def test_helpers_on_made_up_input():
    assert stale_phrases("Every run has finished.") == [] and stale_phrases("Dashed: still running.") == ["still running", "dashed: still running"]
    one_px = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
    assert png_width(one_px) == 1
    assert png_width(b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\rIHDR" + struct.pack(">II", 2000, 300)) == 2000
    md = "Text.\n\n| a | b |\n|:---|---:|\n| attention | 1.00 |\n\nMore.\n| x |\n|---|\n| y |\n"
    t = pipe_tables(md)
    assert t == [[["a", "b"], ["attention", "1.00"]], [["x"], ["y"]]]
    assert min_table_px(t[0]) == pytest.approx(9 * CHAR_PX + 4 * CHAR_PX + 2 * CELL_PAD_PX)
    assert min_table_px([["**induction**", "[glossary](glossary.ipynb#x)"]]) == pytest.approx(9 * CHAR_PX + 8 * CHAR_PX + 2 * CELL_PAD_PX)
    book = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell('StoredSweep(res / "ar32_d64"); Path("../results/sibling/x")'),
                                           nbformat.v4.new_markdown_cell("[s](https://x/results/no_such_sweep/sweep.yaml)")])
    assert sweeps_read(book) == ["ar32_d64", "sibling"]


# ------------------------------------------------------------------------------------ every chapter

@pytest.mark.parametrize("path", CHAPTERS, ids=[p.stem for p in CHAPTERS])
def test_chapter_has_where_we_differ(path):
    "A `## Where we differ` section, with something under it."
    heads = [i for i, s in enumerate(markdown_cells(nb(path))) if re.search(r"^##\s+Where we differ\s*$", s, re.M | re.I)]
    assert heads, f"{path.name}: no '## Where we differ' section"


@pytest.mark.parametrize("path", CHAPTERS, ids=[p.stem for p in CHAPTERS])
def test_no_hand_written_sweep_status(path):
    "Hand-written text never states a sweep's status: the page renders it from the stored files."
    found = {i: stale_phrases(s) for i, s in enumerate(markdown_cells(nb(path))) if stale_phrases(s)}
    assert not found, f"{path.name}: stale-status phrases in markdown cells {found}"


@pytest.mark.parametrize("path", CHAPTERS, ids=[p.stem for p in CHAPTERS])
def test_no_stale_status_on_a_finished_page(path):
    "On a page whose sweeps have all settled (`sweep_settled`), no stale-status phrase anywhere, rendered outputs and captions included."
    book = nb(path)
    names = sweeps_read(book)
    assert names, f"{path.name} names no stored sweep"
    if not all(sweep_settled(n) for n in names): pytest.skip(f"not all of {names} have settled: {[n for n in names if not sweep_settled(n)]}")
    found = stale_phrases(page_text(render_notebook(path, book)["body"]))
    assert not found, f"{path.name} (its sweeps {names} have settled): {found}"


@pytest.mark.parametrize("path", CHAPTERS, ids=[p.stem for p in CHAPTERS])
def test_saved_figures_fit(path):
    wide = [(i, w) for i, w in saved_figures(nb(path)) if w > FIGURE_MAX_PX]
    assert not wide, f"{path.name}: figures wider than {FIGURE_MAX_PX} px (cell, px): {wide}"


@pytest.mark.parametrize("path", CHAPTERS, ids=[p.stem for p in CHAPTERS])
def test_hand_written_tables_fit_the_column(path):
    "A markdown cell's table does not scroll on the page: laid out as narrow as it can be, it fits the content column."
    wide = [(i, round(min_table_px(t))) for i, s in enumerate(markdown_cells(nb(path))) for t in pipe_tables(s)
            if min_table_px(t) > COLUMN_PX]
    assert not wide, f"{path.name}: hand-written tables wider than {COLUMN_PX} px (markdown cell, px): {wide}"


@pytest.mark.parametrize("path", MINE, ids=[p.stem for p in MINE])
def test_output_tables_fit_the_column(path):
    "The tables a chapter prints (markdown outputs) fit the column when laid out as narrow as they can be."
    book = nb(path)
    wide = [(i, round(min_table_px(t))) for i, c in enumerate(book.cells) if c.cell_type == "code"
            for o in c.get("outputs", []) for t in pipe_tables("".join(o.get("data", {}).get("text/markdown", "")))
            if min_table_px(t) > COLUMN_PX]
    assert not wide, f"{path.name}: printed tables wider than {COLUMN_PX} px (cell, px): {wide}"


@pytest.mark.parametrize("path", CHAPTERS, ids=[p.stem for p in CHAPTERS])
def test_glossary_linked(path):
    "A chapter that uses the glossary's terms links the glossary page."
    md = "\n".join(markdown_cells(nb(path)))
    if any(t in md for t in GLOSSARY_TERMS):
        assert "glossary.ipynb#" in md, f"{path.name} uses {[t for t in GLOSSARY_TERMS if t in md]} but links no glossary entry"


@pytest.mark.parametrize("path", MINE, ids=[p.stem for p in MINE])
def test_no_helpers_of_its_own(path):
    "Chapters 14–18 read their results through `ssm_mech.results`: no function defined on the page, except inside a mixer class written there."
    defs = []
    for i, c in enumerate(nb(path).cells):
        if c.cell_type != "code": continue
        in_class = False
        for line in c.source.splitlines():
            if re.match(r"class \w+", line): in_class = True
            elif line and not line[0].isspace() and not line.startswith(("#", ")")): in_class = False
            if re.match(r"\s*def \w+", line) and not in_class or re.match(r"\w+\s*=\s*lambda\b", line): defs.append((i, line.strip()[:60]))
    assert not defs, f"{path.name} defines its own helpers (cell, line): {defs}"
