"""Copy a sweep's results (no checkpoints) into results/<experiment>/ for the narrative notebooks.

    python tools/export_results.py SWEEP_DIR [SWEEP_DIR ...] results/EXPERIMENT [--merge]

Writes results.csv (the tidy table of `ssm_mech.results.collect`), runs.csv, sweep.yaml (as
sweep_run.yaml), and per run its config.yaml, patching.csv, mechanism.json and run.json (the run's
status record: steps, seconds, sessions) under configs/, patching/, mechanism/ and status/.

Several sweep directories of the same sweep (parts run in separate processes or sessions) are
exported together. `--merge` keeps what DEST already holds for runs that the given directories do
not have (results gathered over several sessions, whose checkpoints are gone); a run present in a
given directory replaces its earlier rows.
"""
import shutil, sys
from pathlib import Path

import pandas as pd

from ssm_mech.results import collect

args = [a for a in sys.argv[1:] if a != "--merge"]
merge = "--merge" in sys.argv[1:]
if len(args) < 2: sys.exit(__doc__)
srcs, dest = [Path(a) for a in args[:-1]], Path(args[-1])
dest.mkdir(parents=True, exist_ok=True)
def trained(src):
    "The runs of `src` that have a run directory (a sweep's table also lists its pending runs)."
    df = collect(src, write=False)
    return df[df.run_id.isin({p.name for p in (src / "runs").iterdir() if p.is_dir()})] if len(srcs) > 1 or merge else df
parts = [trained(src) for src in srcs]
ids = [set(p.run_id) for p in parts]
for i in range(len(ids)):
    for j in range(i):
        if ids[i] & ids[j]: sys.exit(f"run(s) {sorted(ids[i] & ids[j])} are in both {srcs[j]} and {srcs[i]}: export each run from one directory")
df = pd.concat(parts, ignore_index=True)
if merge and (dest / "results.csv").exists():
    old = pd.read_csv(dest / "results.csv", low_memory=False)
    kept = old[~old.run_id.isin(set(df.run_id))]
    df = pd.concat([kept, df], ignore_index=True).sort_values(["run_id", "step"], kind="stable", na_position="first")
    print(f"kept {kept.run_id.nunique()} run(s) already in {dest}")
df.to_csv(dest / "results.csv", index=False)
for src in srcs:
    for f in ("runs.csv", "sweep.yaml"):
        if (src / f).exists() and not (merge and f == "runs.csv"): shutil.copy(src / f, dest / ("sweep_run.yaml" if f == "sweep.yaml" else f))
    for run in sorted((src / "runs").iterdir()):
        for name, sub in (("config.yaml", "configs"), ("patching.csv", "patching"), ("mechanism.json", "mechanism"), ("run.json", "status")):
            if (run / name).exists():
                (dest / sub).mkdir(exist_ok=True)
                shutil.copy(run / name, dest / sub / f"{run.name}{Path(name).suffix}")
print(f"{len(df)} rows, {df.run_id.nunique()} runs -> {dest}")
