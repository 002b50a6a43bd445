"""Train and dissect the zoo's mixers exactly as `report_card` trains and dissects a new one, at one scale,
and store the results where `report_card` looks for them (results/report_card_<scale>/).

Each (mixer, task, learning rate) becomes a run folder in a sweep-like layout (config.yaml, metrics.csv,
run.json, mechanism.json of the first query) that `ssm_mech.sweep.collect` reads; the folder is then
exported like every other stored result (results.csv, configs/, mechanism/, patching/), and the package's
shipped zoo (ssm_mech/data/zoo/, what a pip install compares with) is derived again from results/
(`ssm_mech.report.write_zoo`; tests/test_report_card.py fails while the two differ).
Run: python tools/report_card_zoo.py [--scale ci] [--work DIR] [--mixers attention mamba ...]
"""
import argparse, shutil, subprocess, sys, time
from dataclasses import replace
from pathlib import Path

from ssm_mech.core import mixer_names
from ssm_mech.experiments import save_dissection
from ssm_mech.runs import Run
from ssm_mech.report import SCALES, TASKS, scale_experiments, _train_task, dissect_model, write_zoo
from ssm_mech.tasks import build_datasets
from ssm_mech.viz import MIXER_ORDER

p = argparse.ArgumentParser()
p.add_argument("--scale", default="ci"); p.add_argument("--work", default="runs/report_card_zoo")
p.add_argument("--mixers", nargs="*", default=[m for m in MIXER_ORDER if m in mixer_names()])
a = p.parse_args()
work = Path(a.work) / a.scale; exps = scale_experiments(a.scale); sc = SCALES[a.scale]
for m in a.mixers:
    for t in TASKS:
        t0 = time.time()
        rows = _train_task(m, t, exps[t], sc["lrs"], None, work / "train" / f"{m}_{t}", False)
        ds = build_datasets(rows[0]["config"].task)["test"]
        for r in rows:
            d = dissect_model(r["model"], ds, sc["dissect_n"])
            rid = f"{m}_{t}_lr{r['lr']:g}"
            rd = work / "runs" / rid; rd.mkdir(parents=True, exist_ok=True)
            src = Path(r["run_dir"])
            for f in ("config.yaml", "metrics.csv", "run.json"): shutil.copy(src / f, rd / f)
            save_dissection(Run(rd), replace(d["dissection"], split="test"))   # mechanism.json, patching.csv, the heatmap
            shutil.rmtree(src, ignore_errors=True)
        print(f"{m} {t}: " + ", ".join(f"lr {r['lr']:g} acc {r['test_acc']:.2f}" for r in rows) + f" ({time.time() - t0:.0f} s)", flush=True)
dest = Path(__file__).resolve().parents[1] / "results" / f"report_card_{a.scale}"
subprocess.run([sys.executable, str(Path(__file__).parent / "export_results.py"), str(work), str(dest), "--merge"], check=True)   # other mixers kept
print(f"shipped zoo written to {write_zoo(dest.parent)}")
