"""Write README.md from nbs/index.ipynb (Quarto-free replacement for `nbdev-readme`).

Markdown cells are copied; visible code cells become fenced Python blocks with their text/markdown
outputs; cells with `#| hide` are left out. Run: `python tools/readme.py`.
"""
import json
from pathlib import Path

root = Path(__file__).resolve().parents[1]
nb = json.loads((root / "nbs" / "index.ipynb").read_text())
parts = []
for cell in nb["cells"]:
    src = "".join(cell["source"])
    if cell["cell_type"] == "markdown":
        parts.append(src)
    elif cell["cell_type"] == "code" and "#| hide" not in src:
        code = "\n".join(l for l in src.splitlines() if not l.startswith("#|")).strip()
        if code: parts.append(f"```python\n{code}\n```")
        for out in cell.get("outputs", []):
            data = out.get("data", {})
            if "text/markdown" in data: parts.append("".join(data["text/markdown"]))
            elif "text/plain" in data: parts.append("```\n" + "".join(data["text/plain"]) + "\n```")
            elif out.get("output_type") == "stream": parts.append("```\n" + "".join(out["text"]) + "\n```")
text = "\n\n".join(parts).strip() + "\n"
import re
text = re.sub(r"\]\((\d\d_[^)]+\.ipynb)\)", r"](nbs/\1)", text)   # chapter links from the repository root
(root / "README.md").write_text(text)
print(f"wrote README.md ({len(text)} characters)")
