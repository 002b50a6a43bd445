"""The demo's Mamba verdict over training seeds and thread counts (issue 35: a demo whose verdicts do not hinge on them).

Rule, fixed before any run: keep the demo's setting (the `ar-cpu` preset, train.seed 1) if its Mamba verdict is
clear, i.e. the same verdict with one and two threads and the lower end of the 95% interval of the deciding
association at least 0.05 above the verdict's 0.5; otherwise use the first of train.seed 2, 3 that is clear in the
same sense; if none is, keep the preset's seed and state that the verdict is borderline.
Run: OMP_NUM_THREADS=N python benchmarks/demo_setting.py --seeds 1 2 3 [--out DIR]
"""
import argparse, json, os, tempfile, time
from pathlib import Path

import torch
from ssm_mech.cli import demo_configs
from ssm_mech.runs import apply_overrides
from ssm_mech.experiments import dissect_run, run_experiment

p = argparse.ArgumentParser()
p.add_argument("--seeds", nargs="*", type=int, default=[1, 2, 3])
p.add_argument("--out", default=None)
a = p.parse_args()
out = Path(a.out or tempfile.mkdtemp())
print(f"threads {torch.get_num_threads()}, load {os.getloadavg()[0]:.2f}", flush=True)
for s in a.seeds:
    t0 = time.time()
    cfg = apply_overrides(demo_configs()["mamba"], {"train.seed": s})
    res = run_experiment(cfg, out / f"mamba_seed{s}", overwrite=True, progress=False, cache_dir=out / "cache")
    m = dissect_run(out / f"mamba_seed{s}", n=512, cache_dir=out / "cache")
    iv = {k: [round(x, 3) for x in v] for k, v in (m.get("interval") or {}).items() if k in ("value", "key", "query")}
    print(json.dumps({"seed": s, "test_acc": round(res.metrics["test"]["acc"], 3), "mechanism": m["mechanism"],
                      "assoc": {k: round(v, 3) for k, v in m["association"].items()}, "interval": iv,
                      "minutes": round((time.time() - t0) / 60, 1)}), flush=True)
