"""Run every notebook in `nbs/` with `nbdev-test`, one pytest test per notebook.

`nbdev-test` executes a notebook top to bottom (skipping cells flagged `slow` or `gpu`), so the
executed examples and assertions in each chapter are its tests. Set `SSM_MECH_TEST_FLAGS="slow"`
(or "slow gpu") to run flagged cells too.
"""
import os, shutil, subprocess, sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted(p for p in (ROOT / "nbs").rglob("*.ipynb")
                   if not any(part.startswith((".", "_")) for part in p.relative_to(ROOT / "nbs").parts))


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=[str(p.relative_to(ROOT / "nbs")) for p in NOTEBOOKS])
def test_notebook(nb):
    # Several notebooks run at once (pytest -n): one math thread each keeps the cores honest.
    env = {**os.environ, "OMP_NUM_THREADS": os.environ.get("SSM_MECH_TEST_THREADS", "1"),
           "MKL_NUM_THREADS": os.environ.get("SSM_MECH_TEST_THREADS", "1"), "MPLBACKEND": "Agg"}
    # the interpreter's own script, else the one on PATH (a virtualenv that reuses the system's nbdev has none)
    nbdev_test = Path(sys.executable).parent / "nbdev-test"
    if not nbdev_test.exists(): nbdev_test = shutil.which("nbdev-test") or nbdev_test
    cmd = [str(nbdev_test), str(nb), "--flags", os.environ.get("SSM_MECH_TEST_FLAGS", ""), "--n-workers", "0"]
    r = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
    if r.returncode != 0:
        pytest.fail(f"{nb.name} failed:\n{r.stdout[-6000:]}\n{r.stderr[-12000:]}", pytrace=False)
