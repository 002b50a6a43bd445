"""Forward+backward time of one layer of each attention/convolution mixer, relative to attention.

Run: OMP_NUM_THREADS=1 .venv/bin/python benchmarks/mixers_conv.py
Prints a markdown table: seconds per fwd+bwd (median of `reps`) and the ratio to MHA in the same run.
"""
import time, torch
from einops import einsum
from ssm_mech.core import make_mixer
from ssm_mech.mixers import MLP, DiagKernel

def naive_diag_kernel(dk, l):
    "H3's diagonal kernel with the full (H, N/2, l) Vandermonde matrix (the original's CPU path)."
    dA, Cp = dk.discretize()
    return 2 * einsum(Cp, torch.exp(dA.log()[..., None] * torch.arange(l)), "h n, h n l -> h l").real

def kernel_table(lengths=(37, 256, 600), n_heads=32, d_state=1024):
    dk = DiagKernel(n_heads, d_state)
    print(f"\nH3 diagonal kernel alone (H={n_heads}, N={d_state}), fwd+bwd\n")
    print("| L | naive Vandermonde s | two-level s | speed-up | max abs diff (fp32) |")
    print("|---|---|---|---|---|")
    for l in lengths:
        tn = bench(lambda _: naive_diag_kernel(dk, l), None)
        ts = bench(lambda _: dk(l), None)
        diff = (naive_diag_kernel(dk, l) - dk(l)).abs().max().item()
        print(f"| {l} | {tn:.4f} | {ts:.4f} | {tn / ts:.1f}× | {diff:.1e} |")

def bench(m, x, reps=5):
    ts = []
    for _ in range(reps + 1):
        t0 = time.perf_counter()
        m(x).pow(2).mean().backward()
        ts.append(time.perf_counter() - t0)
    return sorted(ts[1:])[reps // 2]                   # median, first call is warm-up

def main(b=32, d=64, lengths=(37, 256)):
    torch.manual_seed(0)
    mixers = {"attention": lambda: make_mixer("attention", d), "mlp": lambda: MLP(d),
              "base_conv k=3": lambda: make_mixer("base_conv", d, layer_idx=0),
              "base_conv long": lambda: make_mixer("base_conv", d, layer_idx=1),
              "based lin-attn (quadratic)": lambda: make_mixer("based", d, layer_idx=1),
              "based lin-attn (linear)": lambda: make_mixer("based", d, layer_idx=1, train_view="linear"),
              "hyena": lambda: make_mixer("hyena", d), "h3": lambda: make_mixer("h3", d)}
    res = {n: [] for n in mixers}
    for l in lengths:
        x = torch.randn(b, l, d)
        for n, mk in mixers.items(): res[n].append(bench(mk(), x))
    print(f"torch {torch.__version__}, threads {torch.get_num_threads()}, b={b}, d={d}, fwd+bwd of one layer\n")
    print("| mixer | " + " | ".join(f"L={l}: s (× MHA)" for l in lengths) + " |")
    print("|---|" + "---|" * len(lengths))
    for n, ts in res.items():
        print(f"| {n} | " + " | ".join(f"{t:.4f} ({t / a:.2f}×)" for t, a in zip(ts, res["attention"])) + " |")

if __name__ == "__main__":
    main()
    kernel_table()
