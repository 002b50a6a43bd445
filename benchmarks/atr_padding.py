"""Training-step time on the paper's ATR data with and without cutting the padding after each batch's last label
(`crop_to_labels`, used by `supervised_loss` and the packed trainer).

The paper's easy ATR training split (`atr_easy` with `task.grammar: paper`, `task.sampler: paper`: 100,032 documents,
right-padded to the split's longest, 120 tokens) is built once; each mixer (2 layers, d = 64, the preset's
configuration) then takes the same batches of 32 (the first epoch's order, train.seed 0), alternating a step with
the cut and a step without it, in one process and one thread. Reported: the median milliseconds per step (forward,
backward and AdamW) of each, their ratio, and the mean number of columns a cut batch keeps.

Run: python benchmarks/atr_padding.py [--steps 30] [--mixers attention based mamba hyena deltanet]
"""
import argparse, os, platform, statistics, time

import torch

from ssm_mech.runs import apply_overrides
from ssm_mech.train import experiment_preset, supervised_loss, crop_to_labels
from stepping import first_batches, alternate


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=30, help="timed steps of each kind per mixer (after 3 warm-up pairs)")
    ap.add_argument("--mixers", nargs="+", default=["attention", "based", "mamba", "hyena", "deltanet"])
    args = ap.parse_args()
    torch.set_num_threads(1)
    cfg = apply_overrides(experiment_preset("atr_easy"), {"task.grammar": "paper", "task.sampler": "paper"})
    t = time.perf_counter(); tr, batches = first_batches(cfg, args.steps + 3); built = time.perf_counter() - t
    kept = statistics.mean(crop_to_labels(tr.tokens[b], tr.labels[b])[0].shape[1] for b in batches)
    print(f"torch {torch.__version__}, 1 thread, {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
          f"load {os.getloadavg()[0]:.1f}; training split {tuple(tr.tokens.shape)} built in {built:.0f} s; "
          f"a cut batch keeps {kept:.1f} of {tr.tokens.shape[1]} columns on average over these {len(batches)} batches")
    print("| mixer | padded (ms/step) | cut (ms/step) | speed-up |\n|---|---|---|---|")
    for mixer in args.mixers:
        ms = alternate(cfg, mixer, tr, batches, {"cut": lambda m, t, l: supervised_loss(m, t, l, crop=True),
                                                 "padded": lambda m, t, l: supervised_loss(m, t, l, crop=False)})
        print(f"| {mixer} | {ms['padded']:.1f} | {ms['cut']:.1f} | {ms['padded'] / ms['cut']:.2f}× |", flush=True)


if __name__ == "__main__":
    main()
