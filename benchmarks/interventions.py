"""Speed of the full intervention-site sweep against a naive one-forward-per-site loop.

For a 2-layer d=64 attention model and a 2-layer d=64 Mamba at the paper's AR configuration
(vocabulary 8,196, 37 tokens), on 1,024 examples: every hook point inside the blocks (residual
stream and mixer internals) x the six named positions x key and value corruption.

* sweep: `ssm_mech.interventions.patch_sweep` (clean and counterfactual runs once, patched runs
  restart at the site's block, several sites stacked along the batch, head only at the answer).
* naive: for every site, a full forward of the counterfactual batch (64 examples at a time, as the
  paper's evaluator did) with a patching hook, computing logits at every position over the whole
  vocabulary. It is timed on a random subset of sites and extrapolated linearly to all of them.

Run: OMP_NUM_THREADS=2 python benchmarks/interventions.py [--naive-sites 12]
"""
import argparse, os, platform, random, time

import torch

from ssm_mech.interventions import all_sites, patch_sweep, corrupt_tokens, cache_activations, patched, resolve_positions
from ssm_mech.model import LanguageModel, ModelConfig
from ssm_mech.tasks import build_datasets, task_preset, token_classes


def naive_seconds(model, tokens, positions, sites, classes, batch=64):
    "Seconds for the naive loop over `sites` (one full forward per site per batch of examples)."
    t0 = time.perf_counter()
    with torch.no_grad():
        for corr in ("key", "value"):
            cf = corrupt_tokens(tokens, positions, corr, classes[corr], seed=0)
            for s in sites:
                for i in range(0, len(tokens), batch):
                    tok, ctk = tokens[i:i + batch], cf[i:i + batch]
                    pos = {k: v[i:i + batch] for k, v in positions.items()}
                    idx = resolve_positions(s.position, pos, tok.shape[1])
                    with cache_activations(model, {(s.hook, "p"): idx}) as src: model(tok)
                    with patched(model, [(s.hook, torch.arange(len(tok)), idx, src[(s.hook, "p")])]):
                        model(ctk).softmax(-1)
    return time.perf_counter() - t0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=1024)
    ap.add_argument("--naive-sites", type=int, default=12, help="sites timed for the naive loop (then extrapolated)")
    args = ap.parse_args()
    torch.manual_seed(0); random.seed(0)
    task = task_preset("ar_32", n_train=32, n_dev=args.n, n_test=32)
    ds = build_datasets(task)["dev"]
    classes = token_classes(task)
    print(f"torch {torch.__version__}, threads {torch.get_num_threads()}, {platform.processor() or platform.machine()}, "
          f"load {os.getloadavg()[0]:.1f}")
    print(f"{'model':<10} {'sites':>6} {'sweep s':>9} {'naive s (extrap.)':>18} {'speed-up':>9}")
    for mixer in ("attention", "mamba"):
        model = LanguageModel(ModelConfig(mixer, d_model=64, vocab_size=task.vocab_size)).eval()
        sites = all_sites(model)
        t0 = time.perf_counter()
        patch_sweep(model, ds.tokens, ds.positions, sites, corruptions=("key", "value"), classes=classes)
        sweep = time.perf_counter() - t0
        sample = random.sample(sites, min(args.naive_sites, len(sites)))
        naive = naive_seconds(model, ds.tokens, ds.positions, sample, classes) * len(sites) / len(sample)
        print(f"{mixer:<10} {2 * len(sites):>6} {sweep:>9.1f} {naive:>18.1f} {naive / sweep:>8.1f}x")


if __name__ == "__main__":
    main()
