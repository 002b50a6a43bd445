"""Patch every mixer-internal hook point of every finished run of a sweep, to locate where key and value are bound.

The verdict's sweep patches the residual stream and the convolution outputs. This one patches the hook points
inside each layer's mixer (its projections, gates, filter outputs and output: `blocks.<l>.mixer.hook_*`) at the
key, the value, the two tokens after it and the query, under key corruption, and writes the patching table of those
sites (the columns of `patching/<id>.csv`) to DEST/mixer_sites/<run id>.csv, which `StoredSweep.mixer_sites` reads.
A run that already has its file is skipped.
Run: python tools/mixer_sites.py SWEEP_DIR results/EXPERIMENT [--n 512]
"""
import argparse
from pathlib import Path

from ssm_mech.core import hook_points
from ssm_mech.interventions import Site, dissect
from ssm_mech.runs import Run, inside

POSITIONS = ("key", "value", "next_key", "value+2", "query")

p = argparse.ArgumentParser(); p.add_argument("sweep_dir"); p.add_argument("dest"); p.add_argument("--n", type=int, default=512)
a = p.parse_args()
src, dest = Path(a.sweep_dir), Path(a.dest) / "mixer_sites"
dest.mkdir(parents=True, exist_ok=True)
for rd in sorted((src / "runs").iterdir()):
    run, out = Run(rd), inside(dest, f"{rd.name}.csv", what="mixer sites")
    if run.status.get("status") != "finished" or out.exists(): continue
    model, ds = run.model(device="cpu"), run.dataset("test", cache_dir=src / "cache")
    sites = [Site(h, q) for h in hook_points(model) if ".mixer.hook_" in h for q in POSITIONS]
    d = dissect(model, ds, a.n, seed=0, split="test", sites=sites, conv=False, corruptions=("key",), progress=False)
    s = d.summary[d.summary["hook"].str.contains(r"\.mixer\.hook_")]
    s.to_csv(out, index=False)
    top = s.loc[s["association"].idxmax()] if len(s) else None
    print(rd.name, run.config.model.mixer, run.config.train.lr, d.mechanism,
          f"strongest: {top['hook']} at {top['position']} {top['association']:.2f}" if top is not None else "", flush=True)
