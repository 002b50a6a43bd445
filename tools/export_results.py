"""Copy a finished sweep's results (no checkpoints) into results/<experiment>/ for the narrative notebooks.

Writes results.csv (the tidy table of `ssm_mech.sweep.collect`), runs.csv, sweep.yaml, and per run
its config.yaml, patching.csv and mechanism.json under configs/, patching/ and mechanism/.
Run: python tools/export_results.py SWEEP_DIR results/EXPERIMENT
"""
import shutil, sys
from pathlib import Path

from ssm_mech.results import collect

src, dest = Path(sys.argv[1]), Path(sys.argv[2])
dest.mkdir(parents=True, exist_ok=True)
df = collect(src, write=False)
df.to_csv(dest / "results.csv", index=False)
for f in ("runs.csv", "sweep.yaml"):
    if (src / f).exists(): shutil.copy(src / f, dest / ("sweep_run.yaml" if f == "sweep.yaml" else f))
for run in sorted((src / "runs").iterdir()):
    for name, sub in (("config.yaml", "configs"), ("patching.csv", "patching"), ("mechanism.json", "mechanism")):
        if (run / name).exists():
            (dest / sub).mkdir(exist_ok=True)
            shutil.copy(run / name, dest / sub / f"{run.name}{Path(name).suffix}")
print(f"{len(df)} rows, {len(list((src / 'runs').iterdir()))} runs -> {dest}")
