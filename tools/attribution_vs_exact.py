"""Train the CPU AR preset for attention and Mamba and compare attribution patching with exact patching at every
site (results/fast_patching/attribution_vs_exact.csv, read by nbs/06b_fast_patching.ipynb).

Run: OMP_NUM_THREADS=2 python tools/attribution_vs_exact.py [--steps 5000] [--n 512]
"""
import argparse, tempfile, time
from pathlib import Path

import pandas as pd

from ssm_mech.runs import apply_overrides
from ssm_mech.train import experiment_preset, train, evaluate
from ssm_mech.model import load_model
from ssm_mech.tasks import build_datasets, token_classes
from ssm_mech.interventions import patch_sweep, all_sites, attribution_sweep

OUT = Path(__file__).resolve().parents[1] / "results" / "fast_patching"
MODELS = {"attention": {}, "mamba": {"model.mixer": "mamba", "train.lr": 3e-3}}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=5000)
    ap.add_argument("--n", type=int, default=512)
    args = ap.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    tables = []
    with tempfile.TemporaryDirectory() as runs:
        for name, over in MODELS.items():
            cfg = apply_overrides(experiment_preset("ar-cpu"), {**over, "train.max_steps": args.steps})
            train(cfg, Path(runs) / name, progress=False)
            model = load_model(Path(runs) / name / "final", device="cpu").eval()
            ds = build_datasets(cfg.task)["test"]
            acc = evaluate(model, ds)["acc"]
            tok, pos = ds.tokens[:args.n], {k: v[:args.n] for k, v in ds.positions.items()}
            kw = dict(classes=token_classes(cfg.task), corruptions=("key", "value"))
            t0 = time.perf_counter(); exact = patch_sweep(model, tok, pos, all_sites(model), **kw).summary
            t1 = time.perf_counter(); est = attribution_sweep(model, tok, pos, **kw).summary
            t2 = time.perf_counter()
            cols = ["corruption", "site", "hook", "layer", "position", "O", "C", "R", "association"]
            j = exact[cols].merge(est[["corruption", "site", "R", "association"]], on=["corruption", "site"], suffixes=("", "_est"))
            j.insert(0, "model", name); j["accuracy"] = acc; j["exact_s"] = t1 - t0; j["estimate_s"] = t2 - t1
            tables.append(j)
            print(name, f"acc {acc:.3f}", f"exact {t1 - t0:.1f} s, estimate {t2 - t1:.2f} s", flush=True)
    pd.concat(tables).to_csv(OUT / "attribution_vs_exact.csv", index=False, float_format="%.5g")


if __name__ == "__main__":
    main()
