"""Packed training speed: K models trained as one stack (`ssm_mech.packed`) against the same K models
trained one after another, per mixer and thread count, on the paper's AR training step.

Run from the repository root:  python benchmarks/packed.py [--threads 1 2] [--mixers attention mamba]
                                 [--k 4] [--rounds 12] [--allocator default keep] [--compile]
Prints a markdown table and writes benchmarks/RESULTS.packed.md.

Configuration: the `ar` preset's model and task shape (2 layers, d_model 64, vocabulary 8,196 of
`ar_32`, 37 tokens, batch 32 per model, the head at the answer position only, fp32, AdamW).
Every (mixer, threads, allocator) runs in a fresh process that builds K solo models with their own
AdamW and a packed group of K (`PackedLM` + one AdamW per member, as `train_packed` steps them),
then alternates one *round* = K solo steps followed by one packed step, so that both see the same
background load. Time per round: process CPU time with 1 thread (waiting for a core on a shared
machine does not count), wall time with more threads. After 3 warm-up rounds, the median of
`--rounds` rounds is kept. Ratio = (K solo steps) / (one packed step) = per-model throughput of the
packed group over solo runs one after another.

`--allocator keep` calls `ssm_mech.packed.keep_freed_memory()` (glibc `mallopt`: freed buffers
stay in the process instead of going back to the OS and being page-faulted in again next step)
in the child before anything is allocated; `default` leaves glibc's defaults.
`--compile` additionally times `torch.compile` of one solo model's loss (forward, and its backward
through AOTAutograd) against eager, per mixer (same process, alternating; the optimizer step is
not included).
"""
from __future__ import annotations
import argparse, json, os, platform, subprocess, sys, time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VOCAB, BATCH, SEQ, D = 8196, 32, 37, 64


def ceiling(step, clock, rounds:int) -> dict:
    """What packing could gain at most: the matrix products of one solo step at this core's fp32 matmul rate.

    Packing K models keeps every matrix product of each member (batched, the FLOPs are the same), so
    a packed step can take no less than K x (FLOPs of a solo step) / (the best fp32 matmul rate here);
    the per-model speed-up is bounded by (solo step time) / (FLOPs / best rate), whatever else packing
    removes. Also reported: the CPU time the solo step spends inside matmul kernels (profiler)."""
    import torch
    from torch.utils.flop_counter import FlopCounterMode
    from torch.profiler import profile, ProfilerActivity
    with FlopCounterMode(display=False) as fc: step()
    flop = fc.get_total_flops()
    a, b = torch.randn(512, 512), torch.randn(512, 512)
    for _ in range(5): a @ b
    tm = []
    for _ in range(rounds):
        t0 = clock(); [a @ b for _ in range(20)]; tm.append((clock() - t0) / 20)
    rate = 2 * 512 ** 3 / sorted(tm)[0]                                   # best of the rounds: the core's fp32 matmul rate
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        for _ in range(3): step()
    mm = sum(e.self_cpu_time_total for e in prof.key_averages() if e.key in ("aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm")) / 3 / 1e3
    return dict(gflop=flop / 1e9, mm_gflops=rate / 1e9, flop_floor_ms=flop / rate * 1e3, mm_kernel_ms=mm)


def child(mixer:str, k:int, threads:int, rounds:int, allocator:str, compile_:bool, ceiling_:bool=False) -> dict:
    sys.path.insert(0, str(ROOT))
    if allocator == "keep":
        from ssm_mech.packed import keep_freed_memory
        assert keep_freed_memory()
    import torch
    torch.set_num_threads(threads)
    from ssm_mech.model import LanguageModel, ModelConfig
    from ssm_mech.train import supervised_loss
    from ssm_mech.packed import PackedLM
    cfg = ModelConfig(mixer, d_model=D, vocab_size=VOCAB)
    def model(seed):
        torch.manual_seed(seed); return LanguageModel(cfg)
    g = torch.Generator().manual_seed(0)
    tok = torch.randint(0, VOCAB, (k, BATCH, SEQ), generator=g)
    lab = torch.full((k, BATCH, SEQ), -100); lab[..., -1] = torch.randint(0, VOCAB, (k, BATCH), generator=g)
    solos = [model(s) for s in range(k)]
    sopts = [torch.optim.AdamW(m.parameters(), lr=1e-3) for m in solos]
    members = [model(s) for s in range(k)]
    pm = PackedLM(members)
    popts = [torch.optim.AdamW(m.parameters(), lr=1e-3) for m in members]
    def solo_round():
        for j in range(k):
            loss, _ = supervised_loss(solos[j], tok[j], lab[j])
            sopts[j].zero_grad(set_to_none=True); loss.backward(); sopts[j].step()
    def packed_round(): pm.backward_step(pm.loss(tok, lab), popts)
    clock = time.process_time if threads == 1 else time.perf_counter
    for _ in range(3): solo_round(); packed_round()
    ts, tp = [], []
    for _ in range(rounds):
        t0 = clock(); solo_round(); t1 = clock(); packed_round(); t2 = clock()
        ts.append(t1 - t0); tp.append(t2 - t1)
    med = lambda v: sorted(v)[len(v) // 2]
    out = dict(solo_ms=med(ts) * 1e3 / k, packed_ms=med(tp) * 1e3, ratio=med(ts) / med(tp),
               ratio_paired=med([a / b for a, b in zip(ts, tp)]))
    if ceiling_:
        def one():
            loss, _ = supervised_loss(solos[0], tok[0], lab[0])
            sopts[0].zero_grad(set_to_none=True); loss.backward(); sopts[0].step()
        out.update(ceiling(one, clock, rounds))
        out["ceiling"] = out["solo_ms"] / out["flop_floor_ms"]
    if compile_:
        m, opt = solos[0], sopts[0]
        eager = lambda t, y: supervised_loss(m, t, y)[0]
        compiled = torch.compile(eager)                          # the loss of one model: forward, and backward via AOTAutograd
        try:
            tc0 = time.perf_counter()
            compiled(tok[0], lab[0]).backward(); opt.zero_grad(set_to_none=True)
            out["compile_s"] = time.perf_counter() - tc0
            for _ in range(3):
                for f in (eager, compiled): f(tok[0], lab[0]).backward()
                opt.zero_grad(set_to_none=True)
            te, tc = [], []
            for _ in range(rounds):
                t0 = clock(); eager(tok[0], lab[0]).backward(); t1 = clock(); compiled(tok[0], lab[0]).backward(); t2 = clock()
                opt.zero_grad(set_to_none=True); te.append(t1 - t0); tc.append(t2 - t1)
            out.update(eager_fb_ms=med(te) * 1e3, compiled_fb_ms=med(tc) * 1e3)
        except Exception as e:
            out.update(compile_error=f"{type(e).__name__}: {str(e).splitlines()[0][:120]}")
    return out


def run_child(mixer, k, threads, rounds, allocator, compile_, ceiling_=False):
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), MKL_NUM_THREADS=str(threads))
    args = json.dumps(dict(mixer=mixer, k=k, threads=threads, rounds=rounds, allocator=allocator, compile_=compile_, ceiling_=ceiling_))
    p = subprocess.run([sys.executable, __file__, "--child", args], env=env, capture_output=True, text=True, cwd=ROOT)
    if p.returncode: return dict(error=(p.stderr.strip().splitlines() or ["?"])[-1])
    return json.loads(p.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--child"); ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--mixers", nargs="+", default=["attention", "mamba"]); ap.add_argument("--k", type=int, default=4)
    ap.add_argument("--rounds", type=int, default=12); ap.add_argument("--allocator", nargs="+", default=["default", "keep"])
    ap.add_argument("--compile", action="store_true")
    ap.add_argument("--ceiling", action="store_true", help="also bound the pack's speed-up by the solo step's FLOPs at this core's fp32 matmul rate")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "RESULTS.packed.md"))
    args = ap.parse_args()
    if args.child:
        c = json.loads(args.child)
        print(json.dumps(child(**c))); return
    import torch
    load0 = " ".join(f"{x:.2f}" for x in os.getloadavg())
    rows = []
    for threads in args.threads:
        for mixer in args.mixers:
            for alloc in args.allocator:
                r = run_child(mixer, args.k, threads, args.rounds, alloc, args.compile, args.ceiling)
                rows.append((threads, mixer, alloc, r))
                print(f"  threads={threads} {mixer:10s} allocator={alloc:7s} " + (r["error"] if "error" in r else
                      f"solo {r['solo_ms']:6.1f} ms/model-step, packed {r['packed_ms']:6.1f} ms/{args.k} models, "
                      f"ratio {r['ratio']:.2f} (paired {r['ratio_paired']:.2f})"
                      + (f", eager fwd+bwd {r['eager_fb_ms']:.1f} ms vs compiled {r['compiled_fb_ms']:.1f} ms" if "eager_fb_ms" in r else "")
                      + (f", compile: {r['compile_error']}" if "compile_error" in r else "")
                      + (f"; ceiling: {r['gflop']:.3f} GFLOP/step at {r['mm_gflops']:.0f} GFLOP/s = {r['flop_floor_ms']:.1f} ms "
                         f"-> at most {r['ceiling']:.2f}x; matmul kernels {r['mm_kernel_ms']:.1f} ms of the solo step" if "ceiling" in r else "")), flush=True)
    load1 = " ".join(f"{x:.2f}" for x in os.getloadavg())
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), platform.processor())
    lines = ["## Packed training (`benchmarks/packed.py`)\n",
             f"Machine: {os.cpu_count()}-core CPU ({cpu}), torch {torch.__version__}, Python {platform.python_version()}. "
             f"Load average before: {load0}; after: {load1} (shared machine: ratios within one process are the reliable figures).\n",
             f"K = {args.k} models, d = {D}, batch {BATCH} each, {SEQ} tokens, vocabulary {VOCAB}, head at the answer only, fp32, AdamW. "
             f"Median of {args.rounds} alternating rounds (K solo steps, then one packed step); 1 thread: process CPU time, more: wall time.\n",
             "| threads | mixer | allocator | solo ms per model-step | packed ms per step of K | per-model speed-up (packed / solo) | median of per-round ratios |"
             + (" eager fwd+bwd ms | compiled fwd+bwd ms |" if args.compile else "")
             + (" GFLOP per solo step | best matmul GFLOP/s | FLOP floor ms | ceiling (solo / floor) | matmul kernels ms |" if args.ceiling else ""),
             "|---|---|---|---|---|---|---|" + ("---|---|" if args.compile else "") + ("---|---|---|---|---|" if args.ceiling else "")]
    for threads, mixer, alloc, r in rows:
        if "error" in r: lines.append(f"| {threads} | {mixer} | {alloc} | {r['error']} | | | |" + (" | |" if args.compile else "")); continue
        cells = f"| {threads} | {mixer} | {alloc} | {r['solo_ms']:.1f} | {r['packed_ms']:.1f} | {r['ratio']:.2f}× | {r['ratio_paired']:.2f}× |"
        if args.compile: cells += (f" {r['eager_fb_ms']:.1f} | {r['compiled_fb_ms']:.1f} |" if "eager_fb_ms" in r else f" {r.get('compile_error', '')} | |")
        if args.ceiling: cells += f" {r['gflop']:.3f} | {r['mm_gflops']:.0f} | {r['flop_floor_ms']:.1f} | {r['ceiling']:.2f}× | {r['mm_kernel_ms']:.1f} |"
        lines.append(cells)
    text = "\n".join(lines) + "\n"
    print(text); Path(args.out).write_text(text)


if __name__ == "__main__":
    main()
