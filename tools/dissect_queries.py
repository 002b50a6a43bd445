"""Dissect every finished run of a multi-query (MQAR) sweep once per query, and store the verdicts.

Writes DEST/queries/<run id>.json: a list with one stored `Dissection` per query (`Dissection.to_dict`:
accuracy at that query, mechanism, reason, O - C, associations with 95% bootstrap intervals at every
layer, the convolution binding of every convolution hook of layer 0). A run the sweep did not
dissect also gets its run-level mechanism.json, patching.csv and association.png (those of query 0,
the plain position names, written by `save_dissection` as `dissect_run` writes them) before the
sweep folder is exported.
Run: python tools/dissect_queries.py SWEEP_DIR results/EXPERIMENT [--n 512]
"""
import argparse, json
from pathlib import Path

from ssm_mech.experiments import save_dissection
from ssm_mech.interventions import dissect
from ssm_mech.runs import Run

p = argparse.ArgumentParser(); p.add_argument("sweep_dir"); p.add_argument("dest"); p.add_argument("--n", type=int, default=512)
a = p.parse_args()
src, dest = Path(a.sweep_dir), Path(a.dest) / "queries"
dest.mkdir(parents=True, exist_ok=True)
for rd in sorted((src / "runs").iterdir()):
    run = Run(rd)
    if run.status.get("status") != "finished" or (dest / f"{rd.name}.json").exists(): continue
    cfg, model, ds = run.config, run.model(device="cpu"), run.dataset("test", cache_dir=src / "cache")
    out = [dissect(model, ds, a.n, seed=0, split="test", query=q) for q in range(cfg.task.n_queries)]
    if not run.mechanism_file.exists(): save_dissection(run, out[0])
    (dest / f"{rd.name}.json").write_text(json.dumps([d.to_dict() for d in out], indent=1))
    print(rd.name, cfg.model.mixer, cfg.train.lr, [(d.mechanism, round(d.accuracy, 2)) for d in out], flush=True)
