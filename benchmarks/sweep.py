"""Wall time of a sweep of tiny runs with each runner of `ssm_mech.sweep`.

Usage:
  OMP_NUM_THREADS=1 python benchmarks/sweep.py [--runs 8] [--out benchmarks/RESULTS.sweep.md]
  python benchmarks/sweep.py --gpu [--runs 32] [--fraction 0.25] [--width 64]

CPU mode times the same sweep of `--runs` tiny AR runs (CPU-scale task, width 16, 100 steps) three
ways, each into a fresh sweep directory: one after another in this process (the baseline), with
2 local worker processes (1 torch thread each), and on a local Ray instance with 2 CPUs (1 CPU per
run; timed with and without Ray's start-up).

GPU mode (`--gpu`) needs CUDA and Ray: it runs `--runs` GPU-sized runs on a local Ray instance
once with `gpus_per_run=1` (one run on the GPU at a time, the baseline) and once with
`gpus_per_run=--fraction` (1/fraction runs share the GPU), and reports the speed-up.
"""
import argparse, os, platform, shutil, sys, tempfile, time
from pathlib import Path

import torch

from ssm_mech.sweep import SweepConfig, CPU_OVERRIDES, run_sweep
from ssm_mech.results import collect

MIXERS = ["attention", "base_conv", "mamba", "h3", "based", "deltanet", "hyena"]


def cpu_sweep(n_runs: int) -> SweepConfig:
    "`n_runs` tiny AR runs: mixers x two learning rates (repeated seeds beyond that)."
    runs = [{"model.mixer": m, "train.lr": lr, "train.seed": s} for s in range(n_runs) for m in MIXERS[:4] for lr in (1e-3, 3e-3)]
    return SweepConfig("bench", "ar-cpu", runs=runs[:n_runs], overrides={**CPU_OVERRIDES, "model.d_model": 16})


def gpu_sweep(n_runs: int, width: int) -> SweepConfig:
    "`n_runs` GPU-sized AR runs (CPU-scale task, `width`, 1,000 steps) over mixers x lr x seed."
    runs = [{"model.mixer": m, "train.lr": lr, "train.seed": s} for s in range(n_runs) for m in MIXERS[:4] for lr in (1e-3, 3e-3)]
    return SweepConfig("bench_gpu", "ar-cpu", runs=runs[:n_runs],
                       overrides={"model.d_model": width, "train.max_steps": 1000, "train.eval_every": 500,
                                  "train.checkpoint_every": 500, "train.device": "cuda"})


def timed(fn):
    t0 = time.perf_counter(); out = fn(); return time.perf_counter() - t0, out


def bench_cpu(args):
    sweep = cpu_sweep(args.runs)
    root = Path(tempfile.mkdtemp(prefix="sweep_bench_"))
    rows = []
    try:
        t, s = timed(lambda: run_sweep(sweep, root / "seq", workers=1, cpus_per_run=1, progress=False))
        rows.append(("local, sequential (1 process, 1 thread)", t, t, s))
        t, s = timed(lambda: run_sweep(sweep, root / "pool", workers=2, cpus_per_run=1, progress=False))
        rows.append(("local, 2 worker processes (1 thread each)", t, t, s))
        try:
            import ray
        except ImportError:
            print("Ray is not installed (pip install 'ssm_mech[sweep]'): skipping the Ray row")
        else:
            t_init, _ = timed(lambda: ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False))
            try: t, s = timed(lambda: run_sweep(sweep, root / "ray", runner="ray", cpus_per_run=1, progress=False))
            finally: ray.shutdown()
            rows.append(("Ray, local instance, 2 CPUs (1 per run)", t + t_init, t, s))
        # all runners must produce the same runs
        accs = {k: collect(root / k, write=False).query("split == 'test' and metric == 'acc'")
                .groupby("run_id")["value"].last().round(6).to_dict() for k in ("seq", "pool", "ray") if (root / k).exists()}
        same = all(a == accs["seq"] for a in accs.values())
    finally:
        shutil.rmtree(root, ignore_errors=True)
    base = rows[0][1]
    lines = ["| runner | wall time (s) | without Ray start-up (s) | speed-up vs sequential | runs done |", "|---|---|---|---|---|"]
    for name, t, t_runs, s in rows:
        lines.append(f"| {name} | {t:.1f} | {t_runs:.1f} | {base / t:.2f}× | {s['done']}/{s['total']} |")
    table = "\n".join(lines)
    print(table)
    print(f"identical final test accuracies across runners: {same}")
    if args.out:
        load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
        text = f"""## Sweeps (`benchmarks/sweep.py`)

Machine: {os.cpu_count()}-core CPU ({platform.machine()}), torch {torch.__version__}, Python {platform.python_version()}.
Sweep: {args.runs} tiny AR runs (CPU-scale task with 2,048 training documents, 4 mixers x 2 learning rates, width 16,
100 steps, evaluation at steps 50 and 100), each runner into a fresh sweep directory, one torch thread per run.
Times include everything a user waits for: process start-up (workers import torch), dataset generation (once per
sweep, cached in the sweep directory), training, evaluation, checkpoints. 1-minute load average when the table was
written: {load:.1f}{" (other jobs shared the CPU)" if load > 0.5 else ""}.

{table}

All runners trained the same runs to the same final test accuracies: {same}.
Each run takes about a second here, so fixed costs dominate: a spawned worker imports torch and
`ssm_mech` before its first run (1–2 s; importing `ssm_mech.train` alone takes 1.3 s on this machine), and a local Ray instance takes {rows[-1][1] - rows[-1][2]:.0f} s to start.
The parallel speed-up also depends on the cores being free; with other jobs on the machine (see the
load average) two workers cannot get two cores: re-measure on an idle machine before drawing conclusions about the pool. Ray is for clusters and GPU machines, where fractional GPUs
(`gpus_per_run=0.25`) pack several small models on one device: `--gpu` mode of this script, not run here (no GPU).
"""
        Path(args.out).write_text(text)
        print(f"wrote {args.out}")


def bench_gpu(args):
    if not torch.cuda.is_available():
        sys.exit("--gpu needs a CUDA GPU; none is visible (torch.cuda.is_available() is False). Nothing was run.")
    try:
        import ray
    except ImportError:
        sys.exit("--gpu needs Ray: pip install 'ssm_mech[sweep]'")
    sweep = gpu_sweep(args.runs, args.width)
    root = Path(tempfile.mkdtemp(prefix="sweep_bench_gpu_"))
    rows = []
    ray.init(num_cpus=os.cpu_count(), num_gpus=1, include_dashboard=False, log_to_driver=False, configure_logging=False)
    try:
        for frac in (1.0, args.fraction):
            t, s = timed(lambda: run_sweep(sweep, root / f"g{frac}", runner="ray", gpus_per_run=frac, cpus_per_run=1, progress=False))
            rows.append((frac, t, s))
    finally:
        ray.shutdown(); shutil.rmtree(root, ignore_errors=True)
    print(f"{args.runs} runs, width {args.width}, 1,000 steps each on {torch.cuda.get_device_name(0)}")
    print("| gpus_per_run | runs sharing the GPU | wall time (s) | speed-up | runs done |\n|---|---|---|---|---|")
    for frac, t, s in rows:
        print(f"| {frac} | {int(1 / frac)} | {t:.1f} | {rows[0][1] / t:.2f}× | {s['done']}/{s['total']} |")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=None, help="number of runs (8 on CPU, 32 with --gpu)")
    ap.add_argument("--gpu", action="store_true", help="pack runs on one GPU with fractional GPUs (needs CUDA and Ray)")
    ap.add_argument("--fraction", type=float, default=0.25, help="--gpu: GPUs per run in the packed variant")
    ap.add_argument("--width", type=int, default=64, help="--gpu: model width")
    ap.add_argument("--out", default=None, help="CPU mode: write the markdown results here")
    args = ap.parse_args()
    args.runs = args.runs or (32 if args.gpu else 8)
    torch.set_num_threads(1)
    bench_gpu(args) if args.gpu else bench_cpu(args)
