"""Dissect every finished run of a multi-query (MQAR) sweep once per query, and store the verdicts.

Writes DEST/queries/<run id>.json: a list with one entry per query (accuracy at that query, mechanism,
reason, O - C, association at value/key/query of the deciding layer with 95% bootstrap intervals,
the layer-0 convolution binding when the mixer has a convolution hook). A run the sweep did not
dissect also gets its run-level mechanism.json and patching.csv (those of query 0, the plain
position names, as `dissect_run` would write them) before the sweep folder is exported.
Run: python tools/dissect_queries.py SWEEP_DIR results/EXPERIMENT [--n 512]
"""
import argparse, json
from pathlib import Path

from ssm_mech.report import dissect_model
from ssm_mech.runs import Run

p = argparse.ArgumentParser(); p.add_argument("sweep_dir"); p.add_argument("dest"); p.add_argument("--n", type=int, default=512)
a = p.parse_args()
src, dest = Path(a.sweep_dir), Path(a.dest) / "queries"
dest.mkdir(parents=True, exist_ok=True)
for rd in sorted((src / "runs").iterdir()):
    run = Run(rd)
    if run.status.get("status") != "finished" or (dest / f"{rd.name}.json").exists(): continue
    cfg, model, ds = run.config, run.model(device="cpu"), run.dataset("test", cache_dir=src / "cache")
    out = []
    for q in range(cfg.task.n_queries):
        d = dissect_model(model, ds, a.n, query=q)
        if q == 0 and not run.mechanism_file.exists():
            mech = {k: d[k] for k in ("mechanism", "reason", "accuracy", "o_minus_c", "association", "layer", "n")}
            mech.update(conv=d["conv"].get("blocks.0.mixer.hook_conv_out"), split="test", seed=0)
            d["summary"].to_csv(run.patching_file, index=False)
            run.mechanism_file.write_text(json.dumps(mech, indent=1))
        out.append({k: d[k] for k in ("query", "accuracy", "mechanism", "reason", "o_minus_c", "layer", "association", "n")}
                   | {"interval": {k: list(v) for k, v in d["interval"].items()}, "conv": d["conv"]})
    (dest / f"{rd.name}.json").write_text(json.dumps(out, indent=1))
    print(rd.name, cfg.model.mixer, cfg.train.lr, [(o["mechanism"], round(o["accuracy"], 2)) for o in out], flush=True)
