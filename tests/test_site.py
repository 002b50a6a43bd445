"""The docs site's structure: every notebook is in the sidebar once, in the reading order the
project promises (tasks → mixers → model → training → interventions → sweeps → experiments →
explorer), and every experiment chapter carries its Colab badge and Colab set-up cell."""
import json
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
    order = ["index", "01_tasks", "02_mixers", "04_model", "05_train", "05b_packed", "06_interventions", "06a_fast_patching", "07_sweep", "10_ar_main", "08_viz"]
    idx = [listed.index(f"{n}.ipynb") for n in order]
    assert idx == sorted(idx), f"reading order broken: {listed}"
    assert all(listed.index(p.name) < listed.index("08_viz.ipynb") for p in NBS.glob("1[0-9]_*.ipynb"))


def test_experiment_chapters_have_colab_badge_and_setup_cell():
    chapters = sorted(NBS.glob("1[0-9]_*.ipynb"))
    assert len(chapters) >= 7
    for nb in chapters:
        cells = json.loads(nb.read_text())["cells"]
        text = ["".join(c["source"]) for c in cells]
        assert any(f"colab.research.google.com/github/ssm-mech/ssm_mech/blob/main/nbs/{nb.name}" in t for t in text), nb.name
        setup = [t for c, t in zip(cells, text) if c["cell_type"] == "code" and "#| eval: false" in t]
        assert any("pip install" in t for t in setup) and any("mamba_kernels()" in t for t in setup), nb.name


def test_readme_matches_index():
    "README.md (and its headline figure) is generated from nbs/index.ipynb by tools/readme.py."
    import subprocess, sys
    r = subprocess.run([sys.executable, str(ROOT / "tools" / "readme.py"), "--check"], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "![](images/readme_0.png)" in (ROOT / "README.md").read_text()


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
