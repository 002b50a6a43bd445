"""Training-step time of the chunked scans (DeltaNet's `delta_rule_chunkwise`, Mamba-2's `ssd_chunked`) with equal
chunks (a sequence of l tokens splits into ceil(l / chunk_size) chunks of equal length) against fixed chunks of
`chunk_size` tokens with the last one padded, the rule they replaced (reproduced here by padding the inputs to a
multiple of `chunk_size` before the call: padded tokens leave the state unchanged, so the two are the same function).

Data: the paper's easy ATR training split (`atr_easy` with `task.grammar: paper`, `task.sampler: paper`; batches cut
after their last label, as in training; the first 6,400 documents). Each mixer (2 layers, d = 64, chunk_size 64)
takes the same batches of 32 (train.seed 0 order), alternating a step of each variant, in one process and one
thread. Reported: median process-CPU milliseconds per step (forward, backward and AdamW) and their ratio.

Run: python benchmarks/chunks.py [--steps 30] [--mixers deltanet mamba2]
"""
import argparse, inspect, math, os, platform

import torch
import torch.nn.functional as F

from ssm_mech import recurrent
from ssm_mech.runs import apply_overrides
from ssm_mech.train import experiment_preset, supervised_loss
from stepping import first_batches, alternate

EQUAL = {"delta_rule_chunkwise": recurrent.delta_rule_chunkwise, "ssd_chunked": recurrent.ssd_chunked}


def padded(name):
    "The scan `name` with its sequence axis (1) padded to a multiple of its chunk size first: the fixed-chunk rule."
    f = EQUAL[name]
    seq = ("x", "delta", "B", "C") if name == "ssd_chunked" else ("q", "k", "v", "beta")  # the per-token inputs
    def g(*args, **kw):
        a = inspect.signature(f).bind(*args, **kw); a.apply_defaults()
        l, size = a.arguments[seq[0]].shape[1], a.arguments["chunk_size"]
        pad = math.ceil(l / size) * size - l
        for n in seq: a.arguments[n] = F.pad(a.arguments[n], (0, 0) * (a.arguments[n].dim() - 2) + (0, pad))
        y, *rest = f(*a.args, **a.kwargs)
        return (y[:, :l], *rest)
    return g

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=30, help="timed steps of each variant per mixer (after 3 warm-up pairs)")
    ap.add_argument("--mixers", nargs="+", default=["deltanet", "mamba2"])
    args = ap.parse_args()
    torch.set_num_threads(1)
    cfg = apply_overrides(experiment_preset("atr_easy"), {"task.grammar": "paper", "task.sampler": "paper", "task.n_train": 6400})
    tr, batches = first_batches(cfg, args.steps + 3)
    print(f"torch {torch.__version__}, 1 thread, {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
          f"load {os.getloadavg()[0]:.1f}")
    print("| mixer | fixed chunks of 64, padded (ms/step) | equal chunks (ms/step) | speed-up |\n|---|---|---|---|")
    fixed = {n: padded(n) for n in EQUAL}
    def using(scans):
        "supervised_loss with the chunked scans `scans` in place."
        def loss(model, tokens, labels):
            for n, f in scans.items(): setattr(recurrent, n, f)
            return supervised_loss(model, tokens, labels)
        return loss
    def same(model, tokens, labels):
        "Both rules give the same loss on the first batch (the same function)."
        with torch.no_grad(): a, b = (using(s)(model, tokens, labels)[0].item() for s in (EQUAL, fixed))
        assert abs(a - b) < 1e-4 * max(1.0, abs(a)), (a, b)
    try:
        for mixer in args.mixers:
            ms = alternate(cfg, mixer, tr, batches, {"equal": using(EQUAL), "fixed": using(fixed)}, check=same)
            print(f"| {mixer} | {ms['fixed']:.1f} | {ms['equal']:.1f} | {ms['fixed'] / ms['equal']:.2f}× |", flush=True)
    finally:
        for n, f in EQUAL.items(): setattr(recurrent, n, f)
    print(f"load after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
