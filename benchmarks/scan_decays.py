"""The compiled selective scan's backward: decays kept from the recomputation pass (the current kernel) against
decays computed again in the adjoint pass (the previous kernel, rebuilt from the current source), in one process.

Each kernel is built by `ssm_mech.recurrent._build_scan_lib` from its source and called directly on the same inputs
(one row range, one thread), alternating, so both see the same load. Reported: the median wall milliseconds of one
backward call over `--reps` alternations, their ratio, and the largest difference between the two kernels'
gradients (expected: exactly 0, the same operations on the same numbers).

Shapes (b rows, l steps; d_inner 128, d_state 16, Mamba at d = 64): a training batch of the paper's ATR data (32,
100) and AR task (32, 37), and the attribution screen's corrupted windows (1,024 rows of about 20 steps) and clean
length (1,024, 37); float32, and one float64 case.

Run: python benchmarks/scan_decays.py [--reps 9]
"""
import argparse, os, platform, statistics, time

import torch

from ssm_mech import recurrent as R

KEPT = "T a = ea[(t * n + k) * d + i], z = gk[i] * pk[i] * a;"


def previous_source(src:str) -> str:
    "The kernel source before the backward kept its decays: the adjoint pass computes exp(dt A) again."
    out = src.replace(KEPT, "T a = EXP(dt[i] * Ak[i]), z = gk[i] * pk[i] * a;")
    out = out.replace("gkk[i] = ea[(t * n + k) * d + i] * gk[i];", "gkk[i] = EXP(dt[i] * Ak[i]) * gk[i];")
    assert out != src and "ea[" in out, "the current kernel no longer has the form this benchmark rebuilds from"
    return out


def build(src:str):
    "The kernel library compiled from `src` (cached by `_build_scan_lib` per source)."
    old = R._SCAN_C
    try: R._SCAN_C = src; return R._build_scan_lib()
    finally: R._SCAN_C = old


def case(libs:dict, b:int, l:int, reps:int, dtype=torch.float32, d:int=128, n:int=16) -> dict:
    torch.manual_seed(0)
    delta = torch.rand(b, l, d, dtype=dtype) * 0.1                # (b, l, d_in) step sizes
    At = -torch.rand(n, d, dtype=dtype) * 4                       # (n, d_in) negative decay rates
    B, C = torch.randn(b, l, n, dtype=dtype), torch.randn(b, l, n, dtype=dtype)  # (b, l, n)
    x, gy = torch.randn(b, l, d, dtype=dtype), torch.randn(b, l, d, dtype=dtype)  # (b, l, d_in)
    p = lambda t: None if t is None else t.data_ptr()
    def run(lib):
        gd, gx, gB, gC = (torch.empty_like(t) for t in (delta, x, B, C))
        gAt = torch.empty(b, n, d, dtype=dtype)
        f = lib.ssm_scan_bwd_f32 if dtype == torch.float32 else lib.ssm_scan_bwd_f64
        f(0, b, l, d, n, p(delta), p(At), 0, p(B), p(C), p(x), None, p(gy), None, p(gd), p(gAt), p(gB), p(gC), p(gx), None)
        return gd, gx, gB, gC, gAt
    got = {k: run(lib) for k, lib in libs.items()}
    diff = max((a - c).abs().max().item() for a, c in zip(got["kept"], got["recomputed"]))
    times = {k: [] for k in libs}
    for _ in range(reps):
        for k, lib in libs.items():
            t = time.perf_counter(); run(lib); times[k].append(time.perf_counter() - t)
    ms = {k: 1000 * statistics.median(v) for k, v in times.items()}
    return {"b": b, "l": l, "dtype": str(dtype).removeprefix("torch."), **ms, "ratio": ms["recomputed"] / ms["kept"], "diff": diff}


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=9)
    args = ap.parse_args()
    torch.set_num_threads(1)
    libs = {"kept": build(R._SCAN_C), "recomputed": build(previous_source(R._SCAN_C))}
    print(f"{platform.machine()} {platform.processor() or ''}, torch {torch.__version__}, 1 thread, "
          f"load average {os.getloadavg()[0]:.1f}")
    print("| rows × steps | dtype | decays recomputed ms | decays kept ms | speed-up | max |Δ| |")
    print("|---|---|---|---|---|---|")
    for b, l, dt in [(32, 100, torch.float32), (32, 37, torch.float32), (1024, 20, torch.float32),
                     (1024, 37, torch.float32), (8, 37, torch.float64)]:
        r = case(libs, b, l, args.reps, dt)
        print(f"| {b} × {l} | {r['dtype']} | {r['recomputed']:.1f} | {r['kept']:.1f} | {r['ratio']:.2f}× | {r['diff']:.0e} |")
