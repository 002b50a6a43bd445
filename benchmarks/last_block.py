"""Training-step time with the last block computed at the supervised position alone (`supervised_loss` when every
row has one label: `LanguageModel.hidden(tokens, last=...)`) against the whole-sequence computation it replaced
(every position of the last block, then the labelled rows selected; reproduced here as `whole_loss`).

Two datasets, each built once: the paper's easy ATR training split (`atr_easy` with `task.grammar: paper`,
`task.sampler: paper`; batches cut after their last label, as in training) and the paper's AR task (`ar` preset,
`ar_32`, 37 tokens; the first 3,200 training documents). Each mixer (2 layers, d = 64, the preset's configuration,
train.seed 0 batch order) takes the same batches of 32, alternating a step of each variant, in one process and one
thread. Reported: the median process-CPU milliseconds per step (forward, backward and AdamW) of each and their ratio.

Run: python benchmarks/last_block.py [--steps 30] [--tasks atr ar] [--mixers attention based hyena deltanet mamba]
"""
import argparse, os, platform

import torch
import torch.nn.functional as F

from ssm_mech.runs import apply_overrides
from ssm_mech.train import experiment_preset, supervised_loss, crop_to_labels
from stepping import first_batches, alternate


def whole_loss(model, tokens, labels):
    "The previous computation: every position of every block, then the labelled rows (the same cut after the last label)."
    tokens, labels = crop_to_labels(tokens, labels)
    mask = labels != -100
    logits = model.logits(model.hidden(tokens)[mask])
    return F.cross_entropy(logits.float(), labels[mask]), logits


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=30, help="timed steps of each variant per mixer (after 3 warm-up pairs)")
    ap.add_argument("--tasks", nargs="+", default=["atr", "ar"])
    ap.add_argument("--mixers", nargs="+", default=["attention", "based", "hyena", "deltanet", "mamba"])
    args = ap.parse_args()
    torch.set_num_threads(1)
    print(f"torch {torch.__version__}, 1 thread, {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
          f"load {os.getloadavg()[0]:.1f}")
    print("| task | mixer | whole last block (ms/step) | at the label (ms/step) | speed-up |\n|---|---|---|---|---|")
    for task in args.tasks:
        if task == "atr": cfg = apply_overrides(experiment_preset("atr_easy"), {"task.grammar": "paper", "task.sampler": "paper"})
        else: cfg = apply_overrides(experiment_preset("ar"), {"task.n_train": 3200})
        tr, batches = first_batches(cfg, args.steps + 3)
        for mixer in args.mixers:
            ms = alternate(cfg, mixer, tr, batches, {"last": supervised_loss, "whole": whole_loss})
            print(f"| {task} | {mixer} | {ms['whole']:.1f} | {ms['last']:.1f} | {ms['whole'] / ms['last']:.2f}× |", flush=True)
    print(f"load after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
