"""Second check for notebooks whose saved outputs are meant to be stable: re-execute them with nbval.

nbval runs a notebook in a fresh Jupyter kernel and compares each cell's output with the one saved
in the notebook. It skips (and rejects) cells without an execution count, while `nbdev-clean`
removes execution counts from committed notebooks. The two agree through a numbered copy: the
test numbers the code cells of a temporary copy and hands that to nbval, so the committed
notebooks stay clean and every saved output is still compared. Matplotlib object reprs, which differ
between inline and headless backends, are sanitised (`tests/nbval_sanitize.cfg`).
"""
import json, os, subprocess, sys, tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
STABLE = ["01b_tasks.ipynb", "01_pcfg.ipynb", "04_model.ipynb"]


def numbered_copy(nb_path: Path, dest_dir: Path) -> Path:
    nb = json.loads(nb_path.read_text())
    n = 0
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            n += 1; cell["execution_count"] = n
            for out in cell.get("outputs", []):
                if "execution_count" in out: out["execution_count"] = n
    dest = dest_dir / nb_path.name
    dest.write_text(json.dumps(nb))
    return dest


@pytest.mark.parametrize("nb", STABLE)
def test_saved_outputs_reproduce(nb):
    src = ROOT / "nbs" / nb
    nb_json = json.loads(src.read_text())
    assert any(c.get("outputs") for c in nb_json["cells"] if c["cell_type"] == "code"), f"{nb} has no saved outputs to check"
    env = {**os.environ, "OMP_NUM_THREADS": "1", "MPLBACKEND": "Agg", "IN_TEST": "1"}  # as under nbdev-test
    with tempfile.TemporaryDirectory(dir=ROOT / "nbs") as d:   # inside nbs/ so relative paths resolve
        copy = numbered_copy(src, Path(d))
        r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:xdist", "-p", "no:cacheprovider",
                            "--nbval", "--nbval-sanitize-with", str(ROOT / "tests" / "nbval_sanitize.cfg"), str(copy)], cwd=ROOT / "nbs", env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout[-6000:] + r.stderr[-3000:]
