#!/usr/bin/env python
"""Render every notebook of `nbs/` to static HTML the way the Quarto docs site shows it.

    python tools/preview_site.py [--out DIR] [NOTEBOOK ...]

Writes one page per notebook (the index and every chapter, in `nbs/sidebar.yml` order) plus a shared
sidebar into DIR (default `_preview/`), from the outputs saved in the notebooks: nothing is executed,
and Quarto is not needed. What nbdev's doc processors and Quarto do to a cell is mirrored:

* `# Title` / `> description` in the first markdown cell become the page title and subtitle;
* `#| hide`, `#| include: false`, `#| export`, `#| exporti`, `#| default_exp`: the cell is not shown
  (exported functions and classes get a signature-and-docstring entry, as nbdev's `show_doc` adds);
  `#| exports`: the source is shown folded ("Exported source") with its `show_doc` entry;
* `#| echo: false` hides the code, `#| output: false` the outputs, `#| eval: false` shows the code
  without outputs, `#| code-fold: true|show` (and `#| code-summary`) fold the code in a `<details>`;
* `#| fig-cap` captions a cell's figure; with `#| label: fig-…` it is numbered "Figure N: …" and
  `@fig-…` in the text links to it (likewise `#| tbl-cap` / `label: tbl-…` for tables);
* outputs: the richest type Quarto would use (HTML, SVG/PNG/JPEG embedded as data URIs, markdown,
  then the text/plain repr); stdout/stderr as `<pre>` blocks kept as saved (carriage-return frames
  of a progress bar included); an ipywidget shows a placeholder note when the notebook stores its
  widget state, otherwise its text/plain repr, as the static site would;
* markdown through markdown-it-py (tables, footnotes, `$…$` math kept as text, `:::` divs), with
  links to `NN_name.ipynb` rewritten to the site's `name.html` and local images embedded.

Tests import `render_notebook`, `page_name` and `notebooks` from here (tests/test_html.py,
tests/test_browser.py).
"""
from __future__ import annotations

import argparse
import ast
import base64
import html
import json
import mimetypes
import re
from dataclasses import dataclass, field
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
NBS = ROOT / "nbs"

# ---------------------------------------------------------------------------------------- notebooks

def sidebar(nbs: Path = NBS) -> list[tuple[str | None, str]]:
    "(section, notebook file name) for every entry of `sidebar.yml`, in order."
    side = yaml.safe_load((nbs / "sidebar.yml").read_text())["website"]["sidebar"]["contents"]
    out = []
    def walk(items, section):
        for it in items:
            if isinstance(it, str): out.append((section, it))
            else: walk(it.get("contents", []), it.get("section", section))
    walk(side, None)
    return out


def notebooks(nbs: Path = NBS) -> list[Path]:
    "Every notebook of `nbs/`: those in the sidebar in its order, then any it does not list."
    listed = [n for _, n in sidebar(nbs) if (nbs / n).exists()]
    rest = sorted(p.name for p in nbs.glob("*.ipynb") if p.name not in listed)
    return [nbs / n for n in listed + rest]


def navbar_links(nbs: Path = NBS) -> list[dict]:
    "The text links of the site's navbar (`website.navbar.left/right` in `_quarto.yml`), shown on every page."
    try: bar = yaml.safe_load((nbs / "_quarto.yml").read_text())["website"].get("navbar", {}) or {}
    except (OSError, KeyError, TypeError): return []
    return [it for side in ("left", "right") for it in bar.get(side, []) or []
            if isinstance(it, dict) and it.get("href") and it.get("text")]


def page_name(nb: Path | str) -> str:
    "The site's page for a notebook: nbdev/Quarto drop the numeric prefix (`01b_tasks.ipynb` → `tasks.html`)."
    name = Path(nb).name
    return re.sub(r"^\d+[a-zA-Z0-9]*_", "", name.lower()).rsplit(".", 1)[0] + ".html"


# ---------------------------------------------------------------------------------------- directives

_re_dir = re.compile(r"^\s*#\s*\|\s*(.*?)\s*$")


def split_directives(source: str) -> tuple[dict[str, str], str]:
    "Leading `#| key: value` / `#| key value` lines of a code cell as a dict, and the rest of the source."
    lines, d = source.splitlines(), {}
    i = 0
    while i < len(lines):
        m = _re_dir.match(lines[i])
        if not m:
            if lines[i].strip() == "" and i + 1 < len(lines) and _re_dir.match(lines[i + 1]): i += 1; continue
            break
        body = m.group(1)
        if ":" in body and re.match(r"^[\w\-]+\s*:", body):
            k, v = body.split(":", 1)
        else:
            k, _, v = body.partition(" ")
        d[k.strip()] = v.strip().strip('"').strip("'")
        i += 1
    return d, "\n".join(lines[i:]).strip("\n")


def _false(v: str | None) -> bool: return v is not None and v.strip().lower() == "false"
def _true(v: str | None) -> bool: return v is not None and v.strip().lower() in ("true", "show", "")


# ---------------------------------------------------------------------------------------- markdown

_ANSI = re.compile(r"\x1B(?:[@-Z\\-_]|\[[0-?]*[ -/]*[@-~])")


def _md_parser():
    from markdown_it import MarkdownIt
    md = MarkdownIt("commonmark", {"html": True, "linkify": False, "typographer": False}).enable(["table", "strikethrough"])
    try:
        from mdit_py_plugins.dollarmath import dollarmath_plugin
        from mdit_py_plugins.footnote import footnote_plugin
        from mdit_py_plugins.container import container_plugin
        from mdit_py_plugins.attrs import attrs_plugin
        md.use(dollarmath_plugin, allow_space=True, double_inline=True,
               renderer=lambda content, opts: html.escape(content))
        md.use(footnote_plugin).use(attrs_plugin)
        md.use(container_plugin, name="div", validate=lambda params, *a: True,
               render=_render_div)
    except ImportError:  # plain commonmark still renders everything but math and divs faithfully
        pass
    return md


def _render_div(self, tokens, idx, options, env):
    tok = tokens[idx]
    if tok.nesting == 1:
        classes = re.findall(r"\.([\w\-]+)", tok.info) or [tok.info.strip().strip("{}").strip()]
        return f'<div class="{html.escape(" ".join(c for c in classes if c))}">\n'
    return "</div>\n"


_MD = None


def markdown(text: str, ctx: "Context | None" = None) -> str:
    "Markdown → HTML, with Quarto's cross-references, notebook links and local images resolved."
    global _MD
    if _MD is None: _MD = _md_parser()
    if ctx is not None: text = ctx.xrefs(text)
    out = _MD.render(text)
    out = re.sub(r'href="(?!https?:|#|mailto:)([^"#]*?)\.ipynb(#[^"]*)?"',
                 lambda m: f'href="{page_name(m.group(1) + ".ipynb")}{m.group(2) or ""}"', out)
    out = re.sub(r'<img ([^>]*?)src="(?!https?:|data:)([^"]+)"',
                 lambda m: f'<img {m.group(1)}src="{_embed_file(m.group(2), ctx)}"', out)
    return out


def inline_markdown(text: str) -> str:
    "Markdown of one line (a title, a caption) without the surrounding paragraph."
    out = markdown(text).strip()
    return out[3:-4] if out.startswith("<p>") and out.endswith("</p>") else out


def _embed_file(src: str, ctx: "Context | None") -> str:
    if ctx is not None and src.startswith("attachment:"):
        att = ctx.attachments.get(src.split(":", 1)[1])
        if att:
            mime, data = next(iter(att.items()))
            return f"data:{mime};base64,{''.join(data) if isinstance(data, list) else data}"
        return src
    base = ctx.nb_path.parent if ctx is not None else NBS
    p = (base / src).resolve()
    if p.is_file():
        mime = mimetypes.guess_type(p.name)[0] or "application/octet-stream"
        return f"data:{mime};base64,{base64.b64encode(p.read_bytes()).decode()}"
    return src  # left as written: the browser test reports it as a broken image


# ---------------------------------------------------------------------------------------- show_doc

def _signature(node: ast.AST) -> str:
    if isinstance(node, ast.ClassDef):
        init = next((n for n in node.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == "__init__"), None)
        if init is None: return f"{node.name} ()"
        args = ast.unparse(init.args)
        args = re.sub(r"^self\s*,?\s*", "", args)
        return f"{node.name} ({args})"
    return f"{node.name} ({ast.unparse(node.args)})"


def show_docs(source: str) -> str:
    "What nbdev's `show_doc` adds after an exported cell: a heading, the signature and the docstring per public def/class."
    try: tree = ast.parse(source)
    except SyntaxError: return ""
    parts = []
    for node in tree.body:
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)): continue
        if node.name.startswith("_") and not node.name.startswith("__"): continue
        doc = ast.get_docstring(node) or ""
        parts.append(f'<div class="doc-entry"><hr><h3 id="{html.escape(node.name)}">{html.escape(node.name)}</h3>'
                     f'<blockquote><pre><code>{html.escape(_signature(node))}</code></pre></blockquote>'
                     + (f"<p><em>{html.escape(doc)}</em></p>" if doc else "") + "</div>")
    return "\n".join(parts)


# ---------------------------------------------------------------------------------------- outputs

@dataclass
class Context:
    nb_path: Path
    widget_state: set = field(default_factory=set)
    labels: dict = field(default_factory=dict)  # label → (kind, number)
    attachments: dict = field(default_factory=dict)

    def xrefs(self, text: str) -> str:
        def sub(m):
            lab = m.group(1)
            if lab not in self.labels: return m.group(0)
            kind, n = self.labels[lab]
            return f"[{'Figure' if kind == 'fig' else 'Table'}&nbsp;{n}](#{lab})"
        return re.sub(r"(?<![\w@])@((?:fig|tbl)-[\w\-]+)", sub, text)


def _text(v) -> str: return "".join(v) if isinstance(v, list) else (v or "")


def _widget_state(nb: dict) -> set:
    st = nb.get("metadata", {}).get("widgets", {}).get("application/vnd.jupyter.widget-state+json", {})
    return set(st.get("state", {}))


def render_output(o: dict, ctx: Context) -> tuple[str, str]:
    "One saved output as (kind, html), kind in stdout/stderr/error/image/display."
    t = o.get("output_type")
    if t == "stream":
        name = o.get("name", "stdout")
        return name, html.escape(_ANSI.sub("", _text(o.get("text"))))
    if t == "error":
        tb = "\n".join(o.get("traceback", [])) or f"{o.get('ename')}: {o.get('evalue')}"
        return "error", f'<pre><code>{html.escape(_ANSI.sub("", tb))}</code></pre>'
    data = o.get("data", {})
    w = data.get("application/vnd.jupyter.widget-view+json")
    if w and w.get("model_id") in ctx.widget_state:
        return "display", ('<div class="widget-placeholder"><p><em>Interactive widget: it runs live in Jupyter; '
                           'the site embeds its saved state.</em></p></div>')
    if "text/html" in data: return "display", _text(data["text/html"])
    if "image/svg+xml" in data: return "image", _text(data["image/svg+xml"])
    for mime in ("image/png", "image/jpeg", "image/gif"):
        if mime in data:
            b64 = _text(data[mime]).replace("\n", "")
            return "image", f'<img src="data:{mime};base64,{b64}" alt="">'
    if "text/markdown" in data: return "display", markdown(_text(data["text/markdown"]), ctx)
    if "text/latex" in data: return "display", f'<div class="math">{html.escape(_text(data["text/latex"]))}</div>'
    if "text/plain" in data: return "plain", html.escape(_ANSI.sub("", _text(data["text/plain"])))
    return "display", ""


def _merge_streams(outputs: list) -> list:
    merged = []
    for o in outputs:
        if (o.get("output_type") == "stream" and merged and merged[-1].get("output_type") == "stream"
                and merged[-1].get("name") == o.get("name")):
            merged[-1] = {**merged[-1], "text": _text(merged[-1]["text"]) + _text(o.get("text"))}
        else: merged.append(dict(o))
    return merged


def render_outputs(outputs: list, d: dict, ctx: Context) -> str:
    parts, images = [], []
    for o in _merge_streams(outputs):
        kind, body = render_output(o, ctx)
        if kind in ("stdout", "stderr"):
            if "filter_stream" in d and d["filter_stream"]:
                words = d["filter_stream"].split()
                body = "".join(l for l in body.splitlines(True) if not any(w in l for w in words))
                if not body.strip(): continue  # nothing left of the stream once filtered
            parts.append(f'<div class="cell-output cell-output-{kind}"><pre><code>{body}</code></pre></div>')
        elif kind == "plain":
            parts.append(f'<div class="cell-output cell-output-display"><pre><code>{body}</code></pre></div>')
        elif kind == "image":
            images.append(len(parts))
            parts.append(f'<div class="cell-output cell-output-display">{body}</div>')
        else:
            parts.append(f'<div class="cell-output cell-output-{"error" if kind == "error" else "display"}">{body}</div>')
    label, figcap, tblcap = d.get("label", ""), d.get("fig-cap"), d.get("tbl-cap")
    id_attr = f' id="{html.escape(label)}"'
    if figcap is not None and images:
        num = ctx.labels.get(label, (None, None))[1] if label.startswith("fig-") else None
        cap = f"Figure&nbsp;{num}: " if num else ""
        first, last = images[0], images[-1]
        parts[first] = f'<figure class="figure"{id_attr if num else ""}>' + parts[first]
        parts[last] = parts[last] + f'<figcaption>{cap}{inline_markdown(figcap)}</figcaption></figure>'
    if tblcap is not None:
        num = ctx.labels.get(label, (None, None))[1] if label.startswith("tbl-") else None
        cap = f"Table&nbsp;{num}: " if num else ""
        parts.insert(0, f'<div class="table-caption"{id_attr if num else ""}>{cap}{inline_markdown(tblcap)}</div>')
    return "\n".join(parts)


# ---------------------------------------------------------------------------------------- cells

_MAGICS = re.compile(r"^\s*(%load_ext|%autoreload|%reload_ext|%matplotlib|%config)\b.*\n?", re.MULTILINE)


def render_code_cell(cell: dict, ctx: Context) -> str:
    d, src = split_directives(_text(cell.get("source")))
    if "hide" in d or _false(d.get("include")): return ""
    exported = {"export", "exports"} & d.keys()
    src = "\n".join(l for l in src.splitlines() if not re.search(r"#\|\s*hide_line\s*$", l))
    src = _MAGICS.sub("", src).strip("\n")  # nbdev's clean_magics: housekeeping magics are not shown
    docs = show_docs(src) if exported else ""
    if d.keys() & {"export", "exporti", "default_exp"}:
        return f'<div class="cell">{docs}</div>' if docs else ""
    code = ""
    if src.strip() and not _false(d.get("echo")):
        code = f'<pre class="sourceCode python"><code>{html.escape(src)}</code></pre>'
        fold = d.get("code-fold")
        if "exports" in d: fold = "show"; d.setdefault("code-summary", "Exported source")
        if fold is not None and not _false(fold):
            summ = html.escape(d.get("code-summary", "Code"))
            code = f'<details class="code-fold"{" open" if fold == "show" else ""}><summary>{summ}</summary>{code}</details>'
    outs = ""
    if not _false(d.get("output")) and not _false(d.get("eval")):
        outs = render_outputs(cell.get("outputs", []), d, ctx)
    if not (code or outs or docs): return ""
    if "exports" in d: return f'<div class="cell">{docs}{code}{outs}</div>'
    return f'<div class="cell">{code}{outs}{docs}</div>'


def _title_cell(source: str) -> tuple[str, str, str] | None:
    "nbdev front matter: `# Title`, then `> description`, then the rest of the first markdown cell."
    lines = source.strip().splitlines()
    if not lines or not lines[0].startswith("# "): return None
    title, i, desc = lines[0][2:].strip(), 1, []
    while i < len(lines) and not lines[i].strip(): i += 1
    while i < len(lines) and lines[i].startswith(">"):
        desc.append(lines[i].lstrip(">").strip()); i += 1
    return title, " ".join(desc), "\n".join(lines[i:])


def _number_labels(cells: list, ctx: Context) -> None:
    n = {"fig": 0, "tbl": 0}
    for c in cells:
        if c.get("cell_type") != "code": continue
        d, _ = split_directives(_text(c.get("source")))
        lab = d.get("label", "")
        kind = lab.split("-", 1)[0]
        if kind in n and f"{kind}-cap" in d and not ("hide" in d or _false(d.get("include"))):
            n[kind] += 1
            ctx.labels[lab] = (kind, n[kind])


def render_notebook(nb_path: Path | str, nb: dict | None = None) -> dict:
    "A notebook as {'title', 'subtitle', 'body'} HTML fragments, rendered from its saved outputs."
    nb_path = Path(nb_path)
    if nb is None: nb = json.loads(nb_path.read_text())
    cells = nb.get("cells", [])
    ctx = Context(nb_path=nb_path, widget_state=_widget_state(nb))
    _number_labels(cells, ctx)
    title, subtitle, body = nb_path.stem, "", []
    for i, c in enumerate(cells):
        src = _text(c.get("source"))
        if c.get("cell_type") == "markdown":
            ctx.attachments = c.get("attachments", {})
            if _re_dir.match(src.split("\n", 1)[0]):  # nbdev removes a markdown cell's leading `#|` lines too (and acts on none)
                src = split_directives(src)[1]
            if i == next((j for j, x in enumerate(cells) if x.get("cell_type") == "markdown"), -1):
                tc = _title_cell(src)
                if tc: title, subtitle, src = tc
            if re.match(r"^#+\s+.*\s+-\s*$", src.strip()): continue  # nbdev drops headings ending in " -"
            if src.strip(): body.append(f'<div class="cell-markdown">{markdown(src, ctx)}</div>')
        elif c.get("cell_type") == "code":
            h = render_code_cell(c, ctx)
            if h: body.append(h)
        elif c.get("cell_type") == "raw":
            fm = re.match(r"^---\s*\n(.*?)\n---\s*$", src.strip(), re.DOTALL)
            if fm:  # Quarto front matter in a raw cell
                meta = yaml.safe_load(fm.group(1)) or {}
                title, subtitle = str(meta.get("title", title)), str(meta.get("description", subtitle))
            else: body.append(src)
    return {"title": title, "subtitle": subtitle, "body": "\n".join(body)}


# ---------------------------------------------------------------------------------------- pages

CSS = """
*{box-sizing:border-box}
body{margin:0;font:16px/1.55 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;color:#212529;background:#fff}
nav#sidebar{position:fixed;top:0;left:0;bottom:0;width:260px;overflow-y:auto;padding:1.2rem 1rem;background:#f8f9fa;border-right:1px solid #dee2e6;font-size:.9rem}
nav#sidebar .site{font-weight:700;font-size:1.1rem;margin-bottom:.8rem;display:block;color:#2780e3;text-decoration:none}
nav#sidebar .section{margin:.9rem 0 .2rem;font-weight:600;color:#6c757d}
nav#sidebar a.page{display:block;padding:.15rem .4rem;color:#343a40;text-decoration:none;border-radius:4px}
nav#sidebar a.page.active{background:#e7f1fc;color:#2780e3;font-weight:600}
nav#sidebar a.navbar-link{display:block;margin:-.4rem 0 .6rem;font-size:.85rem;color:#2780e3}
main{margin-left:260px;padding:1.5rem 2.5rem 4rem;max-width:1180px}
main>article{max-width:900px}
header#title-block-header h1{font-size:2.1rem;margin:.2rem 0 .4rem}
header#title-block-header p.subtitle{font-size:1.15rem;color:#5a6169;margin:0 0 1.2rem}
pre{background:#f6f8fa;padding:.6rem .8rem;overflow-x:auto;border-radius:4px;font-size:.82rem;line-height:1.4}
pre.sourceCode{border-left:3px solid #2780e3}
.cell{margin:1rem 0}
.cell-output pre{background:#fff;border:1px solid #eee}
.cell-output-stderr pre{background:#fff5f5;border-color:#f5c6cb}
.cell-output img,.cell-markdown img{max-width:100%;height:auto}
.cell-output-display{overflow-x:auto}
table{border-collapse:collapse;font-size:.88rem;margin:.6rem 0}
th,td{border-bottom:1px solid #dee2e6;padding:.25rem .6rem;text-align:left;vertical-align:top}
table.dataframe td,table.dataframe th{text-align:right}
th{border-bottom:2px solid #adb5bd}
figure{margin:1rem 0}
figcaption,.table-caption{font-size:.92rem;color:#495057;margin:.3rem 0 .8rem}
details.code-fold summary{cursor:pointer;color:#2780e3;font-size:.9rem}
.widget-placeholder{border:1px dashed #adb5bd;padding:.5rem 1rem;color:#495057}
.doc-entry h3{margin-bottom:.2rem}
blockquote{margin:.5rem 0;padding-left:1rem;border-left:3px solid #dee2e6;color:#495057}
"""


def page(nb_path: Path, rendered: dict, nav: str) -> str:
    t, sub = rendered["title"], rendered["subtitle"]
    sub_html = f'<p class="subtitle lead">{inline_markdown(sub)}</p>' if sub else ""
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{html.escape(re.sub(r"`", "", t))} – ssm_mech</title>
<style>{CSS}</style></head>
<body>
{nav}
<main><article>
<header id="title-block-header"><h1 class="title">{inline_markdown(t)}</h1>{sub_html}</header>
{rendered["body"]}
</article></main>
</body></html>
"""


def nav_html(active: Path, nbs: Path = NBS, titles: dict | None = None) -> str:
    titles = titles or {}
    out, last = ['<nav id="sidebar"><a class="site" href="index.html">ssm_mech</a>'], None
    for item in navbar_links(nbs):  # the navbar's links of _quarto.yml, on every page as on the site
        out.append(f'<a class="navbar-link" href="{html.escape(item["href"])}">{html.escape(item["text"])}</a>')
    for section, name in sidebar(nbs):
        if section != last and section:
            out.append(f'<div class="section">{html.escape(section)}</div>')
        last = section
        cls = "page active" if name == active.name else "page"
        label = html.escape(re.sub(r"`", "", titles.get(name, Path(name).stem)))
        out.append(f'<a class="{cls}" href="{page_name(name)}">{label}</a>')
    out.append("</nav>")  # only what sidebar.yml lists, as on the site
    return "\n".join(out)


def build(out: Path, nbs_: list[Path] | None = None, nbs_dir: Path = NBS) -> list[Path]:
    "Render `nbs_` (default: every notebook) into `out`; return the pages written."
    out.mkdir(parents=True, exist_ok=True)
    todo = nbs_ or notebooks(nbs_dir)
    rendered = {p.name: render_notebook(p) for p in todo}
    # Titles of notebooks not rendered this time, for the sidebar: their first heading.
    titles = {}
    for _, name in sidebar(nbs_dir):
        if name in rendered: titles[name] = rendered[name]["title"]; continue
        try:
            first = next(c for c in json.loads((nbs_dir / name).read_text())["cells"] if c["cell_type"] == "markdown")
            tc = _title_cell(_text(first["source"]))
            titles[name] = tc[0] if tc else Path(name).stem
        except (OSError, StopIteration, ValueError): titles[name] = Path(name).stem
    written = []
    for p in todo:
        dest = out / page_name(p)
        dest.write_text(page(p, rendered[p.name], nav_html(p, nbs_dir, titles)), encoding="utf-8")
        written.append(dest)
    return written


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=str(ROOT / "_preview"), help="output folder (default: _preview/)")
    ap.add_argument("notebooks", nargs="*", help="notebooks to render (default: every notebook of nbs/)")
    a = ap.parse_args(argv)
    todo = [Path(n) if Path(n).exists() else NBS / n for n in a.notebooks] or None
    pages = build(Path(a.out), todo)
    for p in pages: print(p)
    print(f"{len(pages)} pages in {a.out}; open {Path(a.out) / 'index.html'}")


if __name__ == "__main__":
    main()
