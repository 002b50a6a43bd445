"""Speed of the intervention-site sweep: full recomputation (the previous sweep), incremental (suffix) patching,
and the attribution-patching screen; plus the cost of logging mechanism formation during training.

For a 2-layer d=64 attention model and a 2-layer d=64 Mamba at the paper's AR configuration (vocabulary 8,196,
37 tokens), untrained, on 1,024 examples: every hook point inside the blocks (residual stream and mixer
internals) x the six named positions x key and value corruption.

* full: `patch_sweep(method="full")`, the previous sweep (clean and counterfactual runs once, patched runs
  restart at the site's block and recompute every position, several sites stacked along the batch, head only at
  the answer). It is the in-run baseline.
* suffix: `patch_sweep()` (default `method="suffix"`): patched runs recompute only positions >= the patch, from
  the site's block on (a site that changes its block's output only at the patch computes that block at one
  position), skip runs whose patch cannot reach the read position or restores the clean final state, and run
  once for sites whose patched runs coincide (`ssm_mech.fast_patching`).
* attribution: `attribution_sweep`, the gradient estimate of every site (`gradient_screen`: one clean recording,
  then both corruptions' runs, each from its first changed token, in one forward and one backward per batch).
* naive (optional, --naive-sites k): one full forward per site per batch of 64 examples with full-vocabulary
  logits at every position, as a hook-based evaluator does, timed on k random sites and extrapolated.
* breakdown (optional, --breakdown): one more screen under the PyTorch profiler, for the time inside the model's
  own kernels: matrix products (with their achieved GFLOP/s) and the selective scan's compiled forward and backward.
  Set against the unprofiled screen, it is the part of the screen's time that bookkeeping cannot remove (the
  profiler slows the rest, elementwise work, gathers, autograd and Python, several-fold, so only the kernels' time
  is read from it).
* logger (optional, --logger): training the CPU AR preset with `MechanismLogger` every 1,000 steps; the share of
  training time spent in the logger.

Times are wall-clock seconds and process CPU seconds (with one thread, CPU time is what the sweep itself used,
less affected by other jobs on a shared machine). Both tables (full and suffix) are compared.

Run: python benchmarks/interventions.py [--threads 1] [--n 1024] [--naive-sites 0] [--logger] [--skip-full] [--breakdown]
"""
import argparse, os, platform, random, time

import torch

from ssm_mech.interventions import (all_sites, patch_sweep, corrupt_tokens, cache_activations, patched,
                                    resolve_positions, MechanismLogger, attribution_sweep)
from ssm_mech.model import LanguageModel, ModelConfig
from ssm_mech.tasks import build_datasets, task_preset, token_classes


def timed(fn):
    "(result, wall seconds, process CPU seconds) of fn()."
    w, c = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - w, time.process_time() - c


def matmul_gflops(reps=20):
    """Calibration: GFLOP/s of one (37,888 x 64) @ (64 x 256) float32 product (a d = 64 MLP layer over 1,024 documents
    of 37 tokens) at the current thread count, the best of three rounds. It tells apart runs made when this shared
    machine was faster or slower (RESULTS.md, interventions run 8)."""
    a, w = torch.randn(37888, 64), torch.randn(256, 64)
    best = float("inf")
    for _ in range(3):
        t = time.perf_counter()
        for _ in range(reps): torch.nn.functional.linear(a, w)
        best = min(best, (time.perf_counter() - t) / reps)
    return 37888 * 64 * 256 * 2 / best / 1e9


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


MATMULS = ("aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm")

def screen_breakdown(fn):
    """Profile one call of fn (a screen): (wall s, matmul s, matmul GFLOP/s, scan s). A kernel's wall time is the
    profiler's self time on the calling thread (the intra-op threads work inside it); the compiled scan's calls are
    labelled by wrapping its two entry points for the duration."""
    from torch.profiler import profile, record_function
    from ssm_mech import recurrent
    orig = recurrent._c_scan_fwd, recurrent._c_scan_bwd
    def label(f):
        def g(*a, **k):
            with record_function("selective scan kernel"): return f(*a, **k)
        return g
    recurrent._c_scan_fwd, recurrent._c_scan_bwd = map(label, orig)
    try:
        w = time.perf_counter()
        with profile(with_flops=True) as prof: fn()
        wall = time.perf_counter() - w
    finally: recurrent._c_scan_fwd, recurrent._c_scan_bwd = orig
    ev = prof.key_averages()
    mm = sum(e.self_cpu_time_total for e in ev if e.key in MATMULS) / 1e6
    flops = sum(e.flops or 0 for e in ev if e.key in MATMULS)
    scan = sum(e.self_cpu_time_total for e in ev if e.key == "selective scan kernel") / 1e6
    return wall, mm, flops / mm / 1e9 if mm else float("nan"), scan


def logger_share(steps=2000, every=1000):
    "Train the CPU AR preset for `steps` steps logging the mechanism every `every`: (logger s, training s, calls)."
    import tempfile
    from ssm_mech.runs import apply_overrides
    from ssm_mech.train import experiment_preset, train
    cfg = apply_overrides(experiment_preset("ar-cpu"), {"train.max_steps": steps, "train.eval_every": steps,
                                                         "train.checkpoint_every": steps})
    cfg.train.mech_every = 0
    inner = MechanismLogger(cfg.train.mech_sites, every)
    spent = []
    def cb(step, model, data, log):
        w = time.process_time(); inner(step, model, data, log)
        if inner.every and step % inner.every == 0: spent.append(time.process_time() - w)
    with tempfile.TemporaryDirectory() as d:
        _, wall, cpu = timed(lambda: train(cfg, d, progress=False, callbacks=[cb]))
    return sum(spent), cpu, len(spent)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=1024)
    ap.add_argument("--threads", type=int, default=None, help="torch threads (default: as configured by the environment)")
    ap.add_argument("--naive-sites", type=int, default=0, help="sites timed for the naive loop (then extrapolated); 0: skip")
    ap.add_argument("--skip-full", action="store_true", help="skip the full-recomputation baseline")
    ap.add_argument("--logger", action="store_true", help="also measure the mechanism logger's share of training time")
    ap.add_argument("--breakdown", action="store_true", help="also profile one screen: the model's kernels against the rest")
    ap.add_argument("--models", default="attention,mamba")
    args = ap.parse_args()
    if args.threads: torch.set_num_threads(args.threads)
    torch.manual_seed(0); random.seed(0)
    task = task_preset("ar_32", n_train=32, n_dev=args.n, n_test=32)
    ds = build_datasets(task)["dev"]
    classes = token_classes(task)
    print(f"torch {torch.__version__}, threads {torch.get_num_threads()}, {platform.processor() or platform.machine()}, "
          f"{os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}, n={args.n}, matmul {matmul_gflops():.1f} GFLOP/s")
    print(f"{'model':<10} {'sites':>6} {'full s (cpu)':>14} {'suffix s (cpu)':>15} {'speed-up wall/cpu':>18} "
          f"{'attribution s (cpu)':>20} {'max |Δ assoc|':>14} {'max |ΔR|':>9} {'naive s':>8}")
    for mixer in args.models.split(","):
        model = LanguageModel(ModelConfig(mixer, d_model=64, vocab_size=task.vocab_size)).eval()
        sites = all_sites(model)
        sweep = lambda method: patch_sweep(model, ds.tokens, ds.positions, sites, corruptions=("key", "value"),
                                           classes=classes, method=method, progress=False)
        fast, fw, fc = timed(lambda: sweep("suffix"))
        attribution_sweep(model, ds.tokens[:32], {k: v[:32] for k, v in ds.positions.items()}, classes=classes)  # warm-up
        _, aw, ac = timed(lambda: attribution_sweep(model, ds.tokens, ds.positions, classes=classes))
        if args.skip_full: full, sw, sc = None, float("nan"), float("nan")
        else: full, sw, sc = timed(lambda: sweep("full"))
        d_assoc = d_r = float("nan")
        if full is not None:
            d_assoc = (full.summary.association - fast.summary.association).abs().max()
            d_r = (full.examples.R - fast.examples.R).abs().max()
        naive = float("nan")
        if args.naive_sites:
            sample = random.sample(sites, min(args.naive_sites, len(sites)))
            naive = naive_seconds(model, ds.tokens, ds.positions, sample, classes) * len(sites) / len(sample)
        print(f"{mixer:<10} {2 * len(sites):>6} {sw:>7.1f} ({sc:>5.1f}) {fw:>7.1f} ({fc:>5.1f}) "
              f"{sw / fw:>8.1f}x/{sc / fc:>5.1f}x {aw:>11.2f} ({ac:>5.2f}) {d_assoc:>14.1e} {d_r:>9.1e} {naive:>8.1f}", flush=True)
        if args.breakdown:
            wall, mm, rate, scan = screen_breakdown(lambda: attribution_sweep(model, ds.tokens, ds.positions, classes=classes))
            print(f"  screen breakdown ({mixer}; one more screen, {wall:.2f} s under the profiler): matrix products {mm:.2f} s "
                  f"({rate:.1f} GFLOP/s), selective scan kernel {scan:.2f} s; the two together are {mm + scan:.2f} s, "
                  f"{100 * (mm + scan) / aw:.0f}% of the unprofiled screen's {aw:.2f} s", flush=True)
    if args.logger:
        spent, total, calls = logger_share()
        print(f"mechanism logger: {calls} calls, {spent:.2f} s CPU of {total:.1f} s CPU training "
              f"({100 * spent / (total - spent):.2f}% of training time)")
    print(f"load after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
