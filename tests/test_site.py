"""The docs site's structure and its front door: every notebook is in the sidebar once, the index and the
glossary first, then the paper's experiments and the explorer, then the library in reading order (tasks →
mixers → model → training → interventions → sweeps → results); every experiment chapter carries its Colab
badge and set-up cell; the index's links reach real sections, it links the glossary's terms and states no
hand-written sweep status; README.md (the PyPI long description) is generated from it with absolute links
and captioned figures; no saved figure is wider than the page can show."""
import json
import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
NBS = ROOT / "nbs"


def _entries(items):
    for it in items:
        if isinstance(it, str): yield it
        else: yield from _entries(it.get("contents", []))


def test_sidebar_lists_every_notebook_once_in_reading_order():
    side = yaml.safe_load((NBS / "sidebar.yml").read_text())["website"]["sidebar"]["contents"]
    listed = list(_entries(side))
    assert sorted(listed) == sorted(p.name for p in NBS.glob("*.ipynb")), "sidebar.yml and nbs/ disagree"
    assert len(listed) == len(set(listed))
    # the front door first (index, glossary), then the paper's experiments, the explorer, and the library in reading order
    order = ["index", "glossary", "10_ar_main", "17_your_mixer", "07b_viz", "01b_tasks", "02_mixers", "04_model", "05_train",
             "05b_packed", "06d_interventions", "06_fast_patching", "08_sweep", "07_results"]
    idx = [listed.index(f"{n}.ipynb") for n in order]
    assert idx == sorted(idx), f"reading order broken: {listed}"
    assert listed[:2] == ["index.ipynb", "glossary.ipynb"], "the glossary sits right after the index"
    chapters = [listed.index(p.name) for p in NBS.glob("1[0-9]_*.ipynb")]
    library = [listed.index(p.name) for p in NBS.glob("0[0-9]*_*.ipynb")]
    assert max(chapters) < min(library), "the paper's experiments come before every library page"


def test_experiment_chapters_have_colab_badge_and_setup_cell():
    chapters = sorted(NBS.glob("1[0-9]_*.ipynb"))
    assert len(chapters) >= 7
    for nb in chapters:
        cells = json.loads(nb.read_text())["cells"]
        text = ["".join(c["source"]) for c in cells]
        assert any(f"colab.research.google.com/github/ssm-mech/ssm_mech/blob/main/nbs/{nb.name}" in t for t in text), nb.name
        setup = [t for c, t in zip(cells, text) if c["cell_type"] == "code" and "#| eval: false" in t]
        assert any("pip" in t and "install" in t for t in setup) and any("mamba_kernels()" in t for t in setup), nb.name
        pip = next(t for t in setup if "pip" in t and "install" in t)
        # the GPU extra (a source build of mamba-ssm, tens of minutes) only where a GPU is present, and the cell says so
        assert "ssm_mech[gpu]" in pip and "torch.cuda.is_available()" in pip and "minutes" in pip, nb.name


def test_readme_matches_index():
    "README.md (and its headline figure) is generated from nbs/index.ipynb by tools/readme.py."
    import subprocess, sys
    r = subprocess.run([sys.executable, str(ROOT / "tools" / "readme.py"), "--check"], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "https://raw.githubusercontent.com/ssm-mech/ssm_mech/main/images/readme_0.png" in (ROOT / "README.md").read_text()


def _import_only(node):
    "An import, or `try: import x` / `except ImportError: x = None`."
    import ast
    if isinstance(node, (ast.Import, ast.ImportFrom)): return True
    return (isinstance(node, ast.Try) and all(isinstance(n, (ast.Import, ast.ImportFrom)) for n in node.body)
            and all(isinstance(n, (ast.Assign, ast.Pass)) for h in node.handlers for n in h.body))


def test_docs_preprocessing_runs_only_import_cells():
    """`nbdev-proc-nbs` executes every cell holding an import (to render `show_doc`) out of order, without the
    cells before it. A cell that mixes imports with other code then runs without its context: it fails on a
    clean machine (a name defined earlier is missing) or silently trains a model while the docs render."""
    import ast
    from nbdev.process import NBProcessor
    from nbdev.processors import _do_eval
    offenders = []
    for nb_path in sorted(NBS.glob("*.ipynb")):
        for cell in NBProcessor(nb_path, rm_directives=False, process=True).nb.cells:
            if cell.cell_type != "code" or not _do_eval(cell): continue
            if cell.directives_.keys() & {"export", "exports", "exporti", "exec_doc"}: continue
            body = ast.parse("\n".join(l for l in cell.source.splitlines() if not l.lstrip().startswith(("!", "%")))).body
            if any(not _import_only(n) for n in body):
                offenders.append(f"{nb_path.name}: {cell.source.splitlines()[0][:60]!r}")
    assert not offenders, "cells mixing imports with other code (split the imports into their own cell):\n" + "\n".join(offenders)


# ------------------------------------------------------------------------------------ the front door: index and README

STALE = ("not run yet", "not yet run", "still running", "none has been run", "so far")   # a sweep's status belongs to its data


def slug(heading: str) -> str:
    "The id pandoc (and so Quarto) gives a heading: lower case, punctuation dropped, spaces to hyphens, from the first letter."
    s = re.sub(r"\s+", "-", re.sub(r"[^\w\s.-]", "", heading.strip().lower()))
    return re.sub(r"^[^a-z]+", "", s)


def anchors(nb_path: Path) -> set:
    "The ids a notebook's page has: its headings' and its labelled figures' and tables'."
    out = set()
    for c in json.loads(nb_path.read_text())["cells"]:
        src = "".join(c["source"])
        if c["cell_type"] == "markdown":
            out |= {slug(m) for m in re.findall(r"^#{1,6}\s+(.+?)\s*$", src, re.M)}
        else:
            out |= set(re.findall(r"^#\|\s*label:\s*((?:fig|tbl)-[\w-]+)", src, re.M))
    return out


def index_markdown() -> str:
    "The index's markdown as a reader gets it: its markdown cells and the markdown its cells print."
    cells = json.loads((NBS / "index.ipynb").read_text())["cells"]
    return "\n\n".join("".join(c["source"]) if c["cell_type"] == "markdown" else
                        "".join(o.get("data", {}).get("text/markdown", "")) for c in cells for o in (c.get("outputs") or [{}]))


def test_index_links_reach_a_page_and_section():
    "Every notebook link of the index (glossary terms, chapter sections) names a notebook, and an id that notebook's page has."
    links = re.findall(r"\]\(([\w.-]+\.ipynb)(?:#([\w.-]+))?\)", index_markdown())
    assert len(links) >= 15
    bad = [f"{nb}#{a}" for nb, a in links if not (NBS / nb).exists() or (a and a not in anchors(NBS / nb))]
    assert not bad, f"index links to no page or no section: {bad}"


def test_index_links_each_glossary_term():
    "The index links the glossary's entry of each term it uses (the first use of each)."
    used = set(re.findall(r"\]\(glossary\.ipynb#([\w.-]+)\)", index_markdown()))
    need = {"induction", "direct-retrieval", "unresolved", "the-accuracy-gate", "association", "the-effect-o-minus-c",
            "conv-binding", "cells-agrees-and-differs", "finding-verdicts", "scales"}
    assert need <= used, f"glossary terms the index does not link: {sorted(need - used)}"


def test_index_and_readme_have_no_stale_status_phrases():
    "A sweep's status on the front door is rendered from its files, never written by hand (phrases that go stale)."
    for name, text in (("index", index_markdown()), ("README.md", (ROOT / "README.md").read_text())):
        hits = [p for p in STALE if p in text.lower()]
        assert not hits, f"{name}: {hits}"


def _rendered_readme():
    "README.md rendered as PyPI renders a long description (CommonMark with tables): its HTML, link targets and images."
    from html.parser import HTMLParser
    from markdown_it import MarkdownIt
    html = MarkdownIt("commonmark").enable("table").render((ROOT / "README.md").read_text())
    links, images = [], []
    class P(HTMLParser):
        def handle_starttag(self, tag, attrs):
            a = dict(attrs)
            if tag == "a": links.append(a.get("href", ""))
            if tag == "img": images.append((a.get("src", ""), a.get("alt", "")))
    P().feed(html)
    return html, links, images


def test_readme_works_as_the_pypi_long_description():
    """README.md is the package's long description (pyproject's `readme`): on PyPI nothing relative resolves, so every
    link and image is absolute, notebooks are linked by their docs-site pages, figures are captioned, and the docs
    site is linked at the top."""
    import tomllib
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert meta["readme"] == "README.md"
    docs, repo = meta["urls"]["Documentation"].rstrip("/") + "/", meta["urls"]["Repository"].rstrip("/")
    raw = repo.replace("https://github.com/", "https://raw.githubusercontent.com/") + "/main/"
    text = (ROOT / "README.md").read_text()
    html, links, images = _rendered_readme()
    assert docs in text[:800], "the docs site is linked at the top"
    assert re.search(r"We have run \d+ of the paper's \d+ reported cells", text[:2000]), "the README opens with what was reproduced"
    assert "@fig" not in text and "(@" not in text, "an unresolved Quarto cross-reference"
    assert links and all(re.match(r"^https?://", h) for h in links), [h for h in links if not re.match(r"^https?://", h)]
    assert not [h for h in links if ".ipynb" in h and "colab.research.google.com" not in h], "notebooks are linked by their pages"
    pages = {page_name(p.name): p for p in NBS.glob("*.ipynb")}
    for h in links:
        if h.startswith(docs) and h != docs:
            page, _, anchor = h[len(docs):].partition("#")
            assert page in pages, f"{h}: no such page"
            assert not anchor or anchor in anchors(pages[page]), f"{h}: no such section"
    assert images, "the README shows the index's figures"
    for src, alt in images:
        assert src.startswith(raw + "images/") and (ROOT / src[len(raw):]).exists(), src
        assert alt.startswith("Figure "), f"{src}: no alt text"
    assert len(re.findall(r"<p><img [^>]*></p>\s*<p><em>Figure \d+: ", html)) == len(images), "a figure without its caption"


def page_name(nb: str) -> str:
    "The docs site's page of a notebook (as tools/preview_site.py and tools/readme.py name it)."
    return re.sub(r"^\d+[a-zA-Z0-9]*_", "", nb.lower()).rsplit(".", 1)[0] + ".html"


def test_saved_figures_fit_the_page():
    "No figure saved in images/ is wider than 1,400 px: wider ones are shrunk on the page until their text is unreadable."
    import struct
    wide = {}
    for p in sorted((ROOT / "images").glob("*.png")):
        head = p.read_bytes()[:24]
        assert head[:8] == b"\x89PNG\r\n\x1a\n", f"{p.name} is not a PNG"
        w, _ = struct.unpack(">II", head[16:24])
        if w > 1400: wide[p.name] = w
    assert not wide, f"figures wider than 1,400 px: {wide}"
