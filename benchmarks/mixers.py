"""Forward + backward time of every registered sequence mixer, and of the scans behind the recurrent ones.

Run from the repository root:  OMP_NUM_THREADS=2 .venv/bin/python benchmarks/mixers.py [--quick] [--only PART ...]
Prints markdown tables and writes benchmarks/RESULTS.mixers.md (all parts) or benchmarks/RESULTS.<part>.md.

* Mixers: batch 32, lengths 37 / 128 / 600, widths 64 / 256, fp32, one layer, loss = sum(y * w).
  Mixers whose factory depends on `layer_idx` (e.g. "based", "base_conv") are timed at layers 0 and 1.
  Mamba is also timed with the naive per-step-indexing scan (`scan="naive"`), the baseline that
  reference implementations use; configurations where that baseline is predicted to exceed
  NAIVE_CAP_S (cubic extrapolation in L from the previous length: the backward's O(L^2)
  memory traffic grows faster than L^2 once it leaves the caches) are skipped and marked.
* Long convolutions (`--only longconv`): `ssm_mech.mixers.causal_conv`'s two paths (Toeplitz product,
  FFT of a 5-smooth size >= 2L-1) and the FFT of size 2L of `ssm_mech.core.fft_causal_conv`, at lengths around
  `TOEPLITZ_MAX_LEN` and batch x channels per filter around `TOEPLITZ_MIN_ROWS`, to back that rule;
  process CPU time (median of LONGCONV_REPEATS).
* Selective scan (`--only selective`): Mamba's `SelectiveScan` with its PyTorch loops and with the compiled CPU
  kernel (`ssm_mech.recurrent.cpu_scan_kernel`), alternating in one process (process CPU time, median of
  SELECTIVE_ROUNDS paired rounds): the scan alone, forward + backward and forward without gradients, at the sizes of
  a training step, a recording chunk and a patching window; and a whole training step of a 2-layer d = 64 Mamba at
  the paper's AR shape (vocabulary 8,196, 37 tokens, batch 32, loss at the answer, AdamW).
* Scans: the scan alone (a = exp(ΔA), b = ΔBx of Mamba's shape), sequential vs chunked, to back the
  rule of `ssm_mech.recurrent.pick_scan`; DeltaNet recurrent vs chunkwise, to back its `mode="auto"`.
Timing: one untimed warm-up when a run takes < 2 s, then the best of REPEATS runs (one run when slow).
"""
from __future__ import annotations
import argparse, inspect, os, platform, sys, time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from ssm_mech.core import get_mixer_spec, make_mixer, mixer_names  # noqa: E402
from ssm_mech import recurrent as R  # noqa: E402
from ssm_mech import mixers as M  # noqa: E402
from ssm_mech.core import fft_causal_conv  # noqa: E402

NAIVE_CAP_S = 60.0
REPEATS = 2
LONGCONV_REPEATS = 15


def fwd_bwd_time(fn, *shapes, dtype=torch.float32):
    "Seconds for one forward+backward of `fn` on fresh random inputs of `shapes` (best of a few)."
    def once():
        xs = [torch.randn(*s, dtype=dtype, requires_grad=True) for s in shapes]
        t0 = time.perf_counter()
        y = fn(*xs)
        y = y[0] if isinstance(y, tuple) else y
        (y * torch.randn_like(y)).sum().backward()
        return time.perf_counter() - t0
    t = once()
    if t > 2.0: return t
    return min(once() for _ in range(REPEATS))


def fmt(t): return "—" if t is None else (f"{t * 1000:.0f} ms" if t < 1 else f"{t:.2f} s")


def variants(name):
    "(label, kwargs) pairs to time for mixer `name`."
    spec = get_mixer_spec(name)
    layers = [0, 1] if "layer_idx" in inspect.signature(spec.factory).parameters else [0]
    out = [(name if len(layers) == 1 else f"{name} [layer {i}]", dict(layer_idx=i)) for i in layers]
    if name == "mamba": out.append(("mamba, naive indexing scan (baseline)", dict(scan="naive")))
    return out


def bench_mixers(widths, lengths, batch):
    rows, notes = [], []
    for name in mixer_names():
        for label, kw in variants(name):
            row = dict(mixer=label)
            for d in widths:
                prev = None  # (length, seconds) for the naive-scan extrapolation
                for l in lengths:
                    key = f"d={d}, L={l}"
                    try: m = make_mixer(name, d, n_layers=2, **kw)
                    except ValueError as e:
                        row[key] = "n/a"; notes.append(f"{label} at d={d}: {e}"); continue
                    if kw.get("scan") == "naive" and prev is not None:
                        est = prev[1] * (l / prev[0]) ** 3
                        if est > NAIVE_CAP_S:
                            row[key] = f"skipped (est. {est:.0f} s)"; continue
                    t = fwd_bwd_time(m, (batch, l, d))
                    row[key] = t; prev = (l, t)
                    print(f"  {label:45s} {key:14s} {fmt(t)}", flush=True)
            rows.append(row)
    return rows, notes


def bench_scans(batch):
    rows = []
    for (b, l, d_in, n) in [(batch, 128, 128, 16), (batch, 600, 128, 16), (batch, 600, 512, 16),
                            (1, 128, 128, 16), (1, 600, 128, 16), (4, 600, 32, 16)]:
        a = torch.empty(b, l, d_in, n)  # shape only; the timed decays are sigmoid(randn)
        fn = lambda a_, b_, f: f(torch.sigmoid(a_), b_)  # noqa: E731
        r = dict(shape=f"B={b}, L={l}, d_in={d_in}, N={n}", slice=b * d_in * n, auto=R.pick_scan(a))
        for meth, f in [("sequential", R.sequential_scan), ("chunked", R.chunked_scan)]:
            r[meth] = fwd_bwd_time(lambda a_, b_: fn(a_, b_, f), a.shape, a.shape)
        rows.append(r); print("  scan", r, flush=True)
    return rows


def cpu_median(f, n:int) -> float:
    "Median process CPU seconds of `f()` over n runs, after 3 untimed ones."
    for _ in range(3): f()
    ts = []
    for _ in range(n):
        t0 = time.process_time(); f(); ts.append(time.process_time() - t0)
    return sorted(ts)[n // 2]


SELECTIVE_ROUNDS = 15


def paired(fns:dict, rounds:int) -> dict:
    "Median process CPU seconds of each fn, their calls alternating round by round (both see the same load)."
    for f in fns.values(): f(); f()
    ts = {k: [] for k in fns}
    for _ in range(rounds):
        for k, f in fns.items():
            t0 = time.process_time(); f(); ts[k].append(time.process_time() - t0)
    return {k: sorted(v)[len(v) // 2] for k, v in ts.items()}


def with_kernel(on:bool, f):
    "f run with the compiled CPU scan switched on or off."
    def g():
        R.cpu_scan_kernel(on)
        try: return f()
        finally: R.cpu_scan_kernel(True)
    return g


def bench_selective(quick:bool=False):
    "The selective scan with its PyTorch loops and with the compiled kernel: scan alone, and a whole Mamba training step."
    assert R.cpu_scan_kernel(), "the compiled CPU scan is unavailable: " + str(R._cpu_scan["why"])
    rows, rounds = [], 3 if quick else SELECTIVE_ROUNDS
    sizes = [(2, 5, "tiny")] if quick else [(32, 37, "training step"), (64, 37, "recording chunk"), (186, 22, "patching window")]
    for b, l, what in sizes:
        torch.manual_seed(0)
        d, n = 128, 16
        ins = [torch.nn.functional.softplus(torch.randn(b, l, d)), -torch.rand(d, n) * 8, torch.randn(b, l, n),
               torch.randn(b, l, n), torch.randn(b, l, d)]
        gy = torch.randn(b, l, d)
        def fb():
            xs = [t.clone().requires_grad_() for t in ins]
            y, _ = R.selective_scan(*xs); y.backward(gy)
        def fwd():
            with torch.no_grad(): R.selective_scan(*ins)
        t = paired({"loops fb": with_kernel(False, fb), "kernel fb": with_kernel(True, fb),
                    "loops f": with_kernel(False, fwd), "kernel f": with_kernel(True, fwd)}, rounds)
        rows.append(dict(case=f"scan alone, {what} (B={b}, L={l}, d_in={d}, N={n})", **t)); print("  selective", rows[-1], flush=True)
    from ssm_mech.model import LanguageModel, ModelConfig
    torch.manual_seed(0)
    V, L, B = (50, 9, 4) if quick else (8196, 37, 32)
    model = LanguageModel(ModelConfig("mamba", d_model=64, vocab_size=V))
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    tok, ans = torch.randint(0, V, (B, L)), torch.randint(0, V, (B,))
    def step():
        h = model.hidden(tok)[:, -1]
        loss = torch.nn.functional.cross_entropy(model.logits(h), ans)
        opt.zero_grad(); loss.backward(); opt.step()
    t = paired({"loops fb": with_kernel(False, step), "kernel fb": with_kernel(True, step)}, rounds)
    rows.append(dict(case=f"a Mamba training step (2 layers, d = 64, vocabulary {V}, L={L}, batch {B}, AdamW)", **t))
    print("  selective", rows[-1], flush=True)
    return rows


def selective_table(rows, threads, rounds=SELECTIVE_ROUNDS) -> list:
    out = [f"### Selective scan: PyTorch loops and the compiled kernel ({threads} thread(s), process CPU time, median of "
           f"{rounds} paired rounds, fp32)", "",
           "| case | fwd + bwd: loops | kernel | speed-up | fwd, no grad: loops | kernel | speed-up |", "|---|---|---|---|---|---|---|"]
    for r in rows:
        f = (f"{r['loops f'] * 1e3:.2f} ms | {r['kernel f'] * 1e3:.2f} ms | {r['loops f'] / r['kernel f']:.2f}×"
             if "loops f" in r else "— | — | —")
        out.append(f"| {r['case']} | {r['loops fb'] * 1e3:.2f} ms | {r['kernel fb'] * 1e3:.2f} ms | "
                   f"{r['loops fb'] / r['kernel fb']:.2f}× | {f} |")
    return out


LONGCONV_CASES = [(32, 64, 64), (8, 64, 64), (32, 192, 192), (32, 128, 32), (4, 128, 32)]  # (b, c, g)


def bench_longconv(lengths=(16, 24, 32, 37, 40, 48, 64, 128), cases=LONGCONV_CASES):
    "fwd+bwd of a causal long convolution (b, L, c) with g filters (g, L): 2L FFT, 5-smooth FFT, Toeplitz."
    rows, rule = [], (M.TOEPLITZ_MAX_LEN, M.TOEPLITZ_MIN_ROWS)
    def path(forced):                                          # causal_conv with its rule forced one way
        def f(u, h):
            M.TOEPLITZ_MAX_LEN, M.TOEPLITZ_MIN_ROWS = forced
            try: return M.causal_conv(u, h)
            finally: M.TOEPLITZ_MAX_LEN, M.TOEPLITZ_MIN_ROWS = rule
        return f
    fns = [("fft_2L", lambda u, h: fft_causal_conv(u, h.repeat_interleave(u.shape[-1] // h.shape[0], 0))),
           ("fft_smooth", path((0, 0))), ("toeplitz", path((10 ** 9, 0)))]
    for (b, c, g) in cases:
        for l in lengths:
            u, h = torch.randn(b, l, c, requires_grad=True), torch.randn(g, l, requires_grad=True)
            gy = torch.randn(b, l, c)
            r = dict(shape=f"b={b}, c={c}, g={g}, L={l}", fft_size=M.fft_size(2 * l - 1), auto=M.conv_path(b, l, c, g))
            for name, fn in fns: r[name] = cpu_median(lambda: fn(u, h).backward(gy), LONGCONV_REPEATS)
            rows.append(r); print("  long conv", r, flush=True)
    return rows


def longconv_table(rows, threads) -> list:
    out = [f"### Long convolutions: `causal_conv`'s paths (fwd + bwd, {threads} thread(s), process CPU time, "
           f"median of {LONGCONV_REPEATS}; g filters, each serving c/g channels)", "",
           "| shape | 2L FFT (`fft_causal_conv`) | 5-smooth FFT (size) | Toeplitz | fastest | `causal_conv` uses |",
           "|---|---|---|---|---|---|"]
    for r in rows:
        best = min(("fft_2L", "fft_smooth", "toeplitz"), key=lambda k: r[k])
        out.append(f"| {r['shape']} | {r['fft_2L'] * 1e3:.2f} ms | {r['fft_smooth'] * 1e3:.2f} ms ({r['fft_size']}) | "
                   f"{r['toeplitz'] * 1e3:.2f} ms | {best} | {r['auto']} |")
    return out


def bench_deltanet(batch, widths, lengths):
    rows = []
    for d in widths:
        for l in lengths:
            r = dict(shape=f"d={d}, L={l}")
            for mode in ("recurrent", "chunkwise"):
                # the recurrent form keeps a (b, d, d) state per token for the backward: skip when huge
                if mode == "recurrent" and 3 * batch * d * d * l * 4 > 4e9:
                    r[mode] = None; continue
                r[mode] = fwd_bwd_time(R.DeltaNet(d, mode=mode), (batch, l, d))
            r["auto"] = R.DeltaNet(d).pick_mode(l)
            rows.append(r); print("  deltanet", r, flush=True)
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="tiny sizes, to check the script runs")
    ap.add_argument("--only", nargs="+", choices=["longconv", "selective"], help="run only these parts")
    args = ap.parse_args()
    if args.only and "selective" in args.only:                 # one part, its own results file
        threads = torch.get_num_threads()
        text = "\n".join(selective_table(bench_selective(args.quick), threads, 3 if args.quick else SELECTIVE_ROUNDS)) + "\n"
        print(f"torch {torch.__version__}, {platform.machine()}, load {os.getloadavg()[0]:.1f}\n\n" + text)
        if not args.quick: (Path(__file__).parent / "RESULTS.selective.md").write_text(text)
        return
    if args.only:                                              # one part, its own results file
        threads = torch.get_num_threads()
        rows = bench_longconv((37, 48), [(2, 8, 8)]) if args.quick else bench_longconv()
        text = "\n".join(longconv_table(rows, threads)) + "\n"
        print("\n" + text)
        if not args.quick: (Path(__file__).parent / "RESULTS.longconv.md").write_text(text)
        return
    torch.manual_seed(0)
    batch, widths, lengths = (32, [64, 256], [37, 128, 600]) if not args.quick else (2, [64], [37, 70])
    threads = torch.get_num_threads()
    t_start = time.perf_counter()
    print(f"torch {torch.__version__}, {threads} threads, batch {batch}, fp32")
    print("mixers:"); rows, notes = bench_mixers(widths, lengths, batch)
    print("scans:"); scan_rows = bench_scans(batch if not args.quick else 2)
    print("deltanet forms:"); dn_rows = bench_deltanet(batch, widths, lengths)
    print("long convolutions:"); lc_rows = bench_longconv((37, 48), [(2, 8, 8)]) if args.quick else bench_longconv()
    total = time.perf_counter() - t_start

    cols = [f"d={d}, L={l}" for d in widths for l in lengths]
    mamba = next((r for r in rows if r["mixer"] == "mamba"), None)
    out = [f"## Sequence mixers: forward + backward time ({platform.machine()} CPU, {threads} threads, "
           f"torch {torch.__version__}, fp32, batch {batch})", "",
           "Produced by `benchmarks/mixers.py` (one mixer layer, no model around it). The machine is shared "
           "with other jobs, so absolute times are noisy; compare rows measured in the same run (1 thread: with "
           "another job on one of the 2 cores, 2 OpenMP threads ran ~50× slower than 1). "
           "Brackets: speed relative to Mamba's default (sequential-scan) path in the same column.", "",
           "| mixer | " + " | ".join(cols) + " |", "|---|" + "---|" * len(cols)]
    for r in rows:
        cells = []
        for c in cols:
            v = r.get(c)
            if isinstance(v, float):
                rel = f" ({mamba[c] / v:.2g}×)" if mamba and isinstance(mamba.get(c), float) and r is not mamba else ""
                cells.append(fmt(v) + rel)
            else: cells.append(v or "—")
        out.append(f"| {r['mixer']} | " + " | ".join(cells) + " |")
    if notes: out += ["", "Not built: " + "; ".join(sorted(set(notes)))]
    out += ["", "### Scans alone (fwd + bwd; a, b of Mamba's (B, L, d_in, N) shape)", "",
            "| shape | elements per time step | sequential | chunked | chunked / sequential | `pick_scan` |",
            "|---|---|---|---|---|---|"]
    for r in scan_rows:
        out.append(f"| {r['shape']} | {r['slice']} | {fmt(r['sequential'])} | {fmt(r['chunked'])} | "
                   f"{r['chunked'] / r['sequential']:.2f} | {r['auto']} |")
    out += ["", "### DeltaNet: recurrent vs chunkwise form (whole mixer, 1 head, fwd + bwd)", "",
            "| shape | recurrent | chunkwise | recurrent / chunkwise | `mode=\"auto\"` picks |", "|---|---|---|---|---|"]
    for r in dn_rows:
        ratio = f"{r['recurrent'] / r['chunkwise']:.2f}" if r["recurrent"] else "—"
        rec = fmt(r["recurrent"]) if r["recurrent"] else "skipped (> 4 GB of saved states)"
        out.append(f"| {r['shape']} | {rec} | {fmt(r['chunkwise'])} | {ratio} | {r['auto']} |")
    out += [""] + longconv_table(lc_rows, threads)
    out += ["", f"Total benchmark time: {total:.0f} s."]
    text = "\n".join(out) + "\n"
    print("\n" + text)
    if not args.quick:
        (Path(__file__).parent / "RESULTS.mixers.md").write_text(text)


if __name__ == "__main__":
    # On a shared CPU, more OpenMP threads than idle cores makes every op wait at barriers: with another
    # job on one of 2 cores, OMP_NUM_THREADS=2 measured 50x slower than 1 thread. Use 1 thread there.
    if "OMP_NUM_THREADS" not in os.environ: print("note: set OMP_NUM_THREADS (1 on a shared CPU)")
    main()
