"""Write README.md from nbs/index.ipynb (Quarto-free replacement for `nbdev-readme`).

Markdown cells are copied; code cells become fenced Python blocks (unless `#| echo: false`) with
their outputs: markdown and text inline, figures written to `images/` and linked; cells with
`#| hide` are left out. Run: `python tools/readme.py` (`--check`: only report whether README.md and
the figures are up to date).
"""
import base64, json, sys
from pathlib import Path

root = Path(__file__).resolve().parents[1]
nb = json.loads((root / "nbs" / "index.ipynb").read_text())
check = "--check" in sys.argv[1:]
parts, n_img, stale = [], 0, []
def write(path, data):
    "Write `data` to `path` (check mode: only record whether it would change)."
    if path.exists() and path.read_bytes() == data: return
    if check: stale.append(str(path.relative_to(root)))
    else: path.parent.mkdir(exist_ok=True); path.write_bytes(data)
for cell in nb["cells"]:
    src = "".join(cell["source"])
    if cell["cell_type"] == "markdown":
        parts.append(src)
    elif cell["cell_type"] == "code" and "#| hide" not in src:
        code = "\n".join(l for l in src.splitlines() if not l.startswith("#|")).strip()
        if code and "#| echo: false" not in src: parts.append(f"```python\n{code}\n```")
        for out in cell.get("outputs", []):
            data = out.get("data", {})
            if "image/png" in data:
                name = f"images/readme_{n_img}.png"; n_img += 1
                write(root / name, base64.b64decode("".join(data["image/png"])))
                parts.append(f"![]({name})")
            elif "text/markdown" in data: parts.append("".join(data["text/markdown"]))
            elif "text/plain" in data: parts.append("```\n" + "".join(data["text/plain"]) + "\n```")
            elif out.get("output_type") == "stream": parts.append("```\n" + "".join(out["text"]) + "\n```")
text = "\n\n".join(parts).strip() + "\n"
import re
text = re.sub(r"\]\((\d\d_[^)]+\.ipynb)\)", r"](nbs/\1)", text)   # chapter links from the repository root
write(root / "README.md", text.encode())
if check:
    if stale: sys.exit(f"out of date (run python tools/readme.py): {', '.join(stale)}")
    print("README.md and its figures are up to date")
else: print(f"wrote README.md ({len(text)} characters)")
