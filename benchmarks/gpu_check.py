"""Mamba on GPU: the fused mamba-ssm / causal-conv1d kernels against the pure-PyTorch reference.

Run from the repository root on a CUDA machine with `mamba-ssm` (and optionally `causal-conv1d`)
installed:  .venv/bin/python benchmarks/gpu_check.py [--quick]

For each kernel width d_conv in 0..4 and each width d, the same `ssm_mech.recurrent.Mamba` module
runs its fused path (`use_fast_path=True`) and its reference path (`use_fast_path=False`) on the same
input. The script checks outputs and every parameter gradient (relative max error), checks that a
registered hook forces the reference path, and times forward+backward of both (batch 32, fp32).
Exit status: 0 all checks pass, 1 a check failed, 2 no GPU or no kernels (nothing was checked).
"""
from __future__ import annotations
import argparse, sys, time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from ssm_mech.recurrent import Mamba, hooks_active, mamba_kernels  # noqa: E402

OUT_TOL, GRAD_TOL = 1e-4, 1e-3  # relative to the largest reference magnitude


def rel_err(a, b): return ((a - b).abs().max() / b.abs().max().clamp_min(1e-12)).item()


def run(m, u, w, fast):
    "Output and parameter gradients of one forward+backward, and its time in seconds."
    m.use_fast_path = fast; m.zero_grad(set_to_none=True)
    torch.cuda.synchronize(); t0 = time.perf_counter()
    y = m(u); (y * w).sum().backward()
    torch.cuda.synchronize()
    return y.detach(), {n: p.grad.clone() for n, p in m.named_parameters() if p.grad is not None}, time.perf_counter() - t0


def timed(m, u, w, fast, reps=3):
    run(m, u, w, fast)  # warm-up (kernel compilation, allocator)
    return min(run(m, u, w, fast)[2] for _ in range(reps))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="one width, short sequences")
    args = ap.parse_args()
    if not torch.cuda.is_available():
        print("gpu_check: no CUDA device; nothing checked (run this on a GPU machine)."); return 2
    kernels = mamba_kernels()
    if kernels is None:
        print("gpu_check: mamba_ssm.selective_scan_fn is not importable (install mamba-ssm with its CUDA "
              "extension); nothing checked."); return 2
    print(f"device: {torch.cuda.get_device_name()}, torch {torch.__version__}, "
          f"causal_conv1d: {'yes' if kernels[1] is not None else 'no (ShortConv is used for the conv)'}")
    widths, lengths = ([64], [37, 128]) if args.quick else ([16, 64, 256], [37, 128, 600])
    failures, rows = [], []
    torch.manual_seed(0)
    for d in widths:
        for k in (0, 1, 2, 3, 4):
            m = Mamba(d, d_conv=k).cuda()
            for l in lengths:
                u = torch.randn(32, l, d, device="cuda"); w = torch.randn(32, l, d, device="cuda")
                if not m._use_fused(u): failures.append(f"d={d} k={k}: fused path not taken"); continue
                yf, gf, _ = run(m, u, w, True)
                yr, gr, _ = run(m, u, w, False)
                e_out = rel_err(yf, yr)
                e_grad = max(rel_err(gf[n], gr[n]) for n in gr) if sorted(gf) == sorted(gr) else float("inf")
                t_f, t_r = timed(m, u, w, True), timed(m, u, w, False)
                ok = e_out < OUT_TOL and e_grad < GRAD_TOL
                if not ok: failures.append(f"d={d} k={k} L={l}: out err {e_out:.1e}, grad err {e_grad:.1e}")
                rows.append((d, k, l, e_out, e_grad, t_f, t_r))
                print(f"d={d:4d} d_conv={k} L={l:4d}  out rel err {e_out:.1e}  grad rel err {e_grad:.1e}  "
                      f"fused {t_f * 1e3:7.2f} ms  reference {t_r * 1e3:8.2f} ms  speed-up {t_r / t_f:5.1f}x  "
                      f"{'ok' if ok else 'FAIL'}", flush=True)
    # a registered hook must force the reference path
    m = Mamba(widths[0]).cuda(); u = torch.randn(2, 16, widths[0], device="cuda")
    h = m.hook_conv_out.register_forward_hook(lambda mod, i, o: o)
    if not hooks_active(m) or m._use_fused(u): failures.append("a registered hook did not disable the fused path")
    h.remove()
    if m._use_fused(u) is not True: failures.append("removing the hook did not re-enable the fused path")
    print("\n| d | d_conv | L | out rel err | grad rel err | fused | reference | speed-up |\n|---|---|---|---|---|---|---|---|")
    for d, k, l, eo, eg, tf, tr in rows:
        print(f"| {d} | {k} | {l} | {eo:.1e} | {eg:.1e} | {tf * 1e3:.2f} ms | {tr * 1e3:.2f} ms | {tr / tf:.1f}× |")
    if failures:
        print("\nFAILED:\n  " + "\n  ".join(failures)); return 1
    print("\nall checks passed"); return 0


if __name__ == "__main__":
    sys.exit(main())
