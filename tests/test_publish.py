"""Publishing a sweep (nbs/08a_publish.ipynb): the two scripts that other scripts call are the package's functions
with the same arguments, and the README of a stored results folder is what `readme_text` writes from its data."""
import csv, filecmp, json, shutil, subprocess, sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

from ssm_mech.publish import export_sweep, readme_text
from ssm_mech.runs import ExperimentConfig, Run, write_status
from ssm_mech.sweep import load_sweep, plan_sweep

ROOT = Path(__file__).resolve().parents[1]
TOOLS = ROOT / "tools"
# finished sweeps whose README the export of their last run wrote; ar32_d64 (pilot table) and seeds_cpu are documents of their own
STORED = ["ar32_conv", "ar32_widths", "atr_paper100k"]


def fake_sweep(root:Path, trained:dict) -> tuple:
    "A sweep folder planning attention, Mamba and DeltaNet on AR; `trained`: {mixer: test acc} of the runs that trained."
    (root / "runs").mkdir(parents=True)
    (root / "sweep.yaml").write_text(yaml.safe_dump({"name": "toy", "base": "ar", "description": "Made up.",
                                                     "runs": [{"model.mixer": m} for m in ("attention", "mamba", "deltanet")]}))
    plan = plan_sweep(load_sweep(root / "sweep.yaml"))
    with open(root / "runs.csv", "w", newline="") as f:
        w = csv.writer(f); w.writerow(["id", "label", "status"])
        for p in plan: w.writerow([p.id, p.label, "finished" if p.overrides["model.mixer"] in trained else "pending"])
    for p in plan:
        if (acc := trained.get(p.overrides["model.mixer"])) is None: continue
        run = Run(root / "runs" / p.id); run.path.mkdir()
        run.config_file.write_text(ExperimentConfig.from_dict(p.config).to_yaml())
        for step in (500, 1000): run.metrics.log(step, "dev", {"acc": acc * step / 1000})
        run.metrics.log(1000, "test", {"acc": acc})
        write_status(run.path, status="finished", step=1000, seconds=600)
        (run.path / "mechanism.json").write_text(json.dumps({"mechanism": "induction", "reason": "", "accuracy": acc, "o_minus_c": 0.9,
                                                             "association": {"value": 1.0, "key": 0.0, "query": 0.0},
                                                             "interval": {"value": [0.9, 1.1], "key": [0, 0.1], "query": [0, 0.1]}}))
    return root, plan


def tool(name:str, *args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(TOOLS / name), *map(str, args)], capture_output=True, text=True, cwd=ROOT)


def test_export_script_is_the_package_function(tmp_path):
    src, plan = fake_sweep(tmp_path / "sweep", {"attention": 0.99, "mamba": 0.5})
    r = tool("export_results.py", src, tmp_path / "by_script")
    assert r.returncode == 0, r.stderr
    export_sweep(src, tmp_path / "by_function", log=None)
    cmp = filecmp.dircmp(tmp_path / "by_script", tmp_path / "by_function")
    assert sorted(cmp.common_dirs) == ["configs", "mechanism", "status"] and not cmp.left_only and not cmp.right_only
    for d in [cmp, *cmp.subdirs.values()]:
        assert not d.diff_files and filecmp.cmpfiles(d.left, d.right, d.common_files, shallow=False)[0] == sorted(d.common_files)
    # --merge and two folders, as the training lanes' export calls it: the old runs' rows stay, the new run joins
    later, _ = fake_sweep(tmp_path / "later", {"deltanet": 1.0})
    before = pd.read_csv(tmp_path / "by_script" / "results.csv", dtype=str)
    r = tool("export_results.py", later, tmp_path / "by_script", "--merge")
    assert r.returncode == 0 and "kept 2 run(s)" in r.stdout, r.stdout + r.stderr   # the pending DeltaNet row of the first export is replaced
    after = pd.read_csv(tmp_path / "by_script" / "results.csv", dtype=str)
    old = [p.id for p in plan if p.overrides["model.mixer"] != "deltanet"]
    key = ["run_id", "step", "split", "metric"]
    pd.testing.assert_frame_equal(after[after.run_id.isin(old)].sort_values(key).reset_index(drop=True),
                                  before[before.run_id.isin(old)].sort_values(key).reset_index(drop=True)[after.columns])
    assert after[after.metric == "acc"].astype({"value": float}).groupby("run_id").value.max().to_dict()[plan[2].id] == 1.0
    twin = shutil.copytree(later, tmp_path / "twin")
    r = tool("export_results.py", later, twin, tmp_path / "twice")
    assert r.returncode == 1 and "are in both" in r.stderr and r.stderr.count("\n") == 1
    assert tool("export_results.py", src).returncode == 2


def test_readme_script_is_the_package_function(tmp_path):
    src, plan = fake_sweep(tmp_path / "sweep", {"attention": 0.99})
    dest = tmp_path / "toy"
    export_sweep(src, dest, log=None); shutil.copy(src / "sweep.yaml", dest / "sweep.yaml")
    r = tool("sweep_readme.py", dest)
    assert r.returncode == 0, r.stderr
    text = (dest / "README.md").read_text()
    assert text == readme_text(dest) and "**Finished** (1 of 3)" in text and text.count("not started") == 2
    assert tool("sweep_readme.py").returncode == 2 and tool("sweep_readme.py", tmp_path / "nowhere").returncode == 1


@pytest.mark.parametrize("name", STORED)
def test_stored_readme_is_written_from_its_data(name):
    folder = ROOT / "results" / name
    assert readme_text(folder) == (folder / "README.md").read_text()


def test_cli_publish_is_export_and_readme(tmp_path):
    "`ssm-mech publish SWEEP_DIR RESULTS_DIR` writes what `export_sweep` and `write_readme` write; bad arguments give one line."
    from ssm_mech.cli import main
    src, _ = fake_sweep(tmp_path / "sweep", {"attention": 0.99, "mamba": 0.5})
    dest = tmp_path / "toy"; dest.mkdir(); shutil.copy(src / "sweep.yaml", dest / "sweep.yaml")
    assert main(["publish", str(src), str(dest)]) == 0
    export_sweep(src, tmp_path / "by_function", log=None)
    assert (dest / "results.csv").read_bytes() == (tmp_path / "by_function" / "results.csv").read_bytes()
    assert (dest / "README.md").read_text() == readme_text(dest) and "**Finished** (2 of 3)" in (dest / "README.md").read_text()
    bare = tmp_path / "bare"
    assert main(["publish", str(src), str(bare), "--no-readme"]) == 0 and not (bare / "README.md").exists()
    r = subprocess.run([str(Path(sys.executable).parent / "ssm-mech"), "publish", str(src)], capture_output=True, text=True, cwd=tmp_path)
    assert r.returncode == 2 and "publish needs SWEEP_DIR" in r.stderr and r.stderr.count("\n") == 1, r.stderr
