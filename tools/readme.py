"""Write README.md from nbs/index.ipynb (Quarto-free replacement for `nbdev-readme`).

README.md is also the package's long description on PyPI, where nothing relative resolves, so it is written
for both GitHub and PyPI:

* markdown cells are copied, and code cells become fenced Python blocks (unless `#| echo: false`) with their
  outputs: markdown and text inline, figures written to `images/readme_<n>.png`; cells with `#| hide` are left
  out;
* a line with the docs site's address follows the title block;
* every figure is shown by its absolute URL on raw.githubusercontent.com and captioned from its `#| fig-cap`
  ("Figure N: …", numbered as Quarto numbers the `#| label: fig-…` figures); `@fig-…` cross-references become
  "Figure N";
* links to notebooks (`10_ar_main.ipynb#section`) become links to their pages on the docs site, and other
  relative links become links to the file on GitHub.

The addresses come from `[project.urls]` of pyproject.toml (`Repository`, `Documentation`).
Run: `python tools/readme.py` (`--check`: only report whether README.md and the figures are up to date).
"""
import base64, json, re, sys, tomllib
from pathlib import Path

import yaml

root = Path(__file__).resolve().parents[1]
urls = tomllib.loads((root / "pyproject.toml").read_text())["project"]["urls"]
REPO, DOCS = urls["Repository"].rstrip("/"), urls["Documentation"].rstrip("/") + "/"
RAW = REPO.replace("https://github.com/", "https://raw.githubusercontent.com/") + "/main/"
BRANCH = REPO + "/blob/main/"


def page_name(nb: str) -> str:
    "The docs site's page of a notebook: nbdev/Quarto drop the numeric prefix (`01b_tasks.ipynb` → `tasks.html`)."
    return re.sub(r"^\d+[a-zA-Z0-9]*_", "", nb.lower()).rsplit(".", 1)[0] + ".html"


def directives(src: str) -> dict:
    "The `#| key: value` lines of a cell, values parsed as YAML."
    out = {}
    for line in src.splitlines():
        m = re.match(r"^\s*#\s*\|\s*([\w-]+)\s*:\s*(.*)$", line)
        if m: out[m.group(1)] = yaml.safe_load(m.group(2)) if m.group(2).strip() else ""
    return out


def absolute(target: str) -> str:
    "A link's target, made absolute: notebooks to their docs-site pages, other relative paths to the file on GitHub."
    if re.match(r"^(https?:|mailto:|#)", target): return target
    path, _, anchor = target.partition("#")
    anchor = "#" + anchor if anchor else ""
    if path.endswith(".ipynb"): return f"{DOCS}{page_name(Path(path).name)}{anchor}"
    return f"{BRANCH}{(root / 'nbs' / path).resolve().relative_to(root).as_posix()}{anchor}"   # relative to nbs/


nb = json.loads((root / "nbs" / "index.ipynb").read_text())
check = "--check" in sys.argv[1:]
parts, n_img, stale = [], 0, []
labels = [d["label"] for c in nb["cells"] if c["cell_type"] == "code"
          for d in [directives("".join(c["source"]))] if str(d.get("label", "")).startswith("fig-")]
number = {label: i + 1 for i, label in enumerate(labels)}


def write(path, data):
    "Write `data` to `path` (check mode: only record whether it would change)."
    if path.exists() and path.read_bytes() == data: return
    if check: stale.append(str(path.relative_to(root)))
    else: path.parent.mkdir(exist_ok=True); path.write_bytes(data)


for i, cell in enumerate(nb["cells"]):
    src = "".join(cell["source"])
    if cell["cell_type"] == "markdown":
        lines = src.splitlines(keepends=True)
        while lines and lines[0].startswith("#|"): lines.pop(0)   # an `#| export` cell feeds the package docstring too
        parts.append("".join(lines))
        if i == 0: parts.append(f"**Documentation: [{DOCS.split('://')[1].rstrip('/')}]({DOCS})** · "
                                f"source: [{REPO.split('://')[1]}]({REPO})")
    elif cell["cell_type"] == "code" and "#| hide" not in src:
        d = directives(src)
        code = "\n".join(l for l in src.splitlines() if not l.startswith("#|")).strip()
        if code and d.get("echo") is not False: parts.append(f"```python\n{code}\n```")
        for out in cell.get("outputs", []):
            data = out.get("data", {})
            if "image/png" in data:
                name = f"images/readme_{n_img}.png"; n_img += 1
                write(root / name, base64.b64decode("".join(data["image/png"])))
                cap = str(d.get("fig-cap", "")).strip()
                if d.get("label") in number: cap = f"Figure {number[d['label']]}: {cap}"
                alt = re.sub(r"[*_`\[\]]", "", cap).split(". ")[0] or "figure"   # the caption's first sentence
                parts.append(f"![{alt}]({RAW}{name})" + (f"\n\n*{cap}*" if cap else ""))
            elif "text/markdown" in data: parts.append("".join(data["text/markdown"]))
            elif "text/plain" in data: parts.append("```\n" + "".join(data["text/plain"]) + "\n```")
            elif out.get("output_type") == "stream": parts.append("```\n" + "".join(out["text"]) + "\n```")
text = "\n\n".join(parts).strip() + "\n"
def prose(t: str) -> str:
    "Cross-references and links of markdown text made to work off the docs site."
    t = re.sub(r"@(fig-[\w-]+)", lambda m: f"Figure {number[m.group(1)]}" if m.group(1) in number else m.group(0), t)
    return re.sub(r"\]\(([^)\s]+)\)", lambda m: f"]({absolute(m.group(1))})", t)   # links and images
text = "".join(p if i % 2 else prose(p) for i, p in enumerate(re.split(r"(\n```[^\n]*\n.*?\n```)", "\n" + text, flags=re.S)))[1:]
write(root / "README.md", text.encode())
if check:
    if stale: sys.exit(f"out of date (run python tools/readme.py): {', '.join(stale)}")
    print("README.md and its figures are up to date")
else: print(f"wrote README.md ({len(text)} characters)")
