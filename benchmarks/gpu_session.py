"""Everything a session with a GPU should run first, in one script that fits a short device lease.

Run from the repository root:  python benchmarks/gpu_session.py [--budget 480] [--out results/gpu_session]
                                  [--wheels DIR] [--mixers attention mamba ...] [--bf16]
On a machine without CUDA it prints why and exits with status 2, having done nothing.

Phases, each time-boxed so that the whole script ends within `--budget` seconds (default 8 minutes):
1. **Packed against solo** (`ssm_mech.packed.PackedLM`): per mixer, the `ar` preset's model (d = 64,
   batch 32, 37 tokens, head at the answer) trained solo and as packs of K = 4, 16, 64 members (fp32,
   and bf16 autocast with `--bf16`); throughput in runs·steps per second and the ratio to one solo run,
   with `StackedAdamW`, with K member AdamW steps (train_packed's default), and without an optimiser.
2. **fla-core**: our DeltaNet, GLA and Mamba-2 scans against the Triton kernels of
   flash-linear-attention (`chunk_delta_rule`, `chunk_gla`, `chunk_simple_gla`), outputs and final
   states, if `fla` is importable (install the pure-Python `fla-core` wheel from `--wheels`).
3. **mamba-ssm**: if `--wheels` holds the source distributions of `mamba-ssm` and `causal-conv1d`,
   build them for this GPU's architecture only (forced source builds), within the time left, then run
   `benchmarks/gpu_check.py --quick` (fused kernels against our reference).
4. **The paper's AR grid, d = 64 column** (`ar_main` restricted to d = 64): packed sweeps of as many
   steps as fit in the time left (`stop_at`, resumable later with the same command), and the measured
   throughput extrapolated to the whole grid (stated as an extrapolation).
Everything is written to `--out` (`session.json`, `session.md`, the sweep directory). `--dry-run` runs
every phase on the CPU at toy size, to check the script where there is no GPU; it measures nothing.
"""
from __future__ import annotations
import argparse, glob, json, os, platform, subprocess, sys, time, traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
VOCAB, BATCH, SEQ, D = 8196, 32, 37, 64


DEVICE = "cuda"   # "cpu" only for --dry-run, which checks this script's plumbing on a machine without a GPU


def sync():
    import torch
    if DEVICE == "cuda": torch.cuda.synchronize()


def step_time(k, mixer, dtype_bf16, reps=10, optimizer=True, stacked=True):
    "Seconds per optimiser step of a pack of k models (k = 0: one solo model with `supervised_loss`); without the optimiser on request."
    import torch
    from ssm_mech.model import LanguageModel, ModelConfig
    from ssm_mech.train import supervised_loss
    from ssm_mech.packed import PackedLM, StackedAdamW
    dev = torch.device(DEVICE)
    cfg = ModelConfig(mixer, d_model=D, vocab_size=VOCAB)
    n = max(k, 1)
    models = []
    for s in range(n):
        torch.manual_seed(s); models.append(LanguageModel(cfg).to(dev))
    tok = torch.randint(0, VOCAB, (n, BATCH, SEQ), device=dev)
    lab = torch.full((n, BATCH, SEQ), -100, device=dev); lab[..., -1] = torch.randint(0, VOCAB, (n, BATCH), device=dev)
    autocast = torch.autocast(DEVICE, dtype=torch.bfloat16, enabled=dtype_bf16)
    if k == 0:
        m, opt = models[0], torch.optim.AdamW(models[0].parameters(), lr=1e-3)
        def step():
            with autocast: loss, _ = supervised_loss(m, tok[0], lab[0])
            opt.zero_grad(set_to_none=True); loss.backward()
            if optimizer: opt.step()
    else:
        pm = PackedLM(models)
        opts = [torch.optim.AdamW(mm.parameters(), lr=1e-3) for mm in models]
        st = StackedAdamW(pm, opts) if stacked and optimizer else None
        def step():
            with autocast: loss = pm.loss(tok, lab)
            pm.backward_step(loss, opts if optimizer else [], None, st)
    for _ in range(3): step()
    sync(); t0 = time.perf_counter()
    for _ in range(reps): step()
    sync()
    return (time.perf_counter() - t0) / reps


def phase_packed(args, left, report):
    rows = []
    for mixer in args.mixers:
        for bf16 in ([False, True] if args.bf16 else [False]):
            for k in args.ks:
                if left() < 60: report["packed_note"] = "stopped early: time budget"; return rows
                try:
                    t, t_fb = step_time(k, mixer, bf16), step_time(k, mixer, bf16, optimizer=False)
                    t_m = step_time(k, mixer, bf16, stacked=False) if k else t
                except Exception as e: rows.append(dict(mixer=mixer, bf16=bf16, k=k, error=f"{type(e).__name__}: {e}"[:200])); continue
                rows.append(dict(mixer=mixer, bf16=bf16, k=k, ms=t * 1e3, ms_member_optimizers=t_m * 1e3, ms_without_optimizer=t_fb * 1e3,
                                 runs_steps_per_s=max(k, 1) / t))
                print(f"  packed {mixer:10s} bf16={bf16!s:5s} K={k:3d}: {t * 1e3:7.2f} ms/step with StackedAdamW, {t_m * 1e3:.2f} with K AdamW, "
                      f"{t_fb * 1e3:.2f} without an optimiser; {max(k, 1) / t:8.1f} runs·steps/s", flush=True)
    return rows


def phase_fla(report):
    import torch
    if DEVICE != "cuda": return {"skipped": "needs CUDA (Triton kernels)"}
    try: import fla  # noqa: F401
    except Exception as e: return {"skipped": f"fla not importable ({type(e).__name__}: {e})"}
    from ssm_mech.recurrent import delta_rule_chunkwise, ssd_chunked, scan
    out, dev = {}, torch.device("cuda")
    rel = lambda a, b: ((a.float() - b.float()).abs().max() / b.float().abs().max().clamp_min(1e-12)).item()
    torch.manual_seed(0)
    b, l, h, dk, dv = 4, 128, 2, 32, 32
    try:
        from fla.ops.delta_rule import chunk_delta_rule
        q, k = (torch.nn.functional.normalize(torch.randn(b, l, h, dk, device=dev), dim=-1) for _ in range(2))
        v, beta = torch.randn(b, l, h, dv, device=dev), torch.rand(b, l, h, device=dev)
        q, k, v, beta = (t.bfloat16() for t in (q, k, v, beta))                      # the Triton kernel takes bf16 only
        o, S = delta_rule_chunkwise(*(t.float() for t in (q, k, v, beta)))           # ours in fp32 on the same bf16 inputs
        of, Sf = chunk_delta_rule(q, k, v, beta, scale=1.0, output_final_state=True)
        out["deltanet"] = dict(out_rel_err=rel(of, o), state_rel_err=rel(Sf, S), note="kernel in bf16, ours in fp32 on the same inputs")
    except Exception as e: out["deltanet"] = {"error": f"{type(e).__name__}: {e}"[:300]}
    try:
        from fla.ops.gla import chunk_gla
        q, k = torch.randn(b, l, h, dk, device=dev), torch.randn(b, l, h, dk, device=dev)
        v, g = torch.randn(b, l, h, dv, device=dev), torch.nn.functional.logsigmoid(torch.randn(b, l, h, dk, device=dev)) / 16
        S = scan(torch.exp(g)[..., None], k[..., :, None] * v[..., None, :])       # (b, l, h, dk, dv): our GLA's scan
        o = torch.einsum("blhkv,blhk->blhv", S, q * dk ** -0.5)
        of, Sf = chunk_gla(q, k, v, g, scale=dk ** -0.5, output_final_state=True)
        out["gla"] = dict(out_rel_err=rel(of, o), state_rel_err=rel(Sf, S[:, -1]))
    except Exception as e: out["gla"] = {"error": f"{type(e).__name__}: {e}"[:300]}
    try:
        from fla.ops.simple_gla import chunk_simple_gla
        p, n = 32, 64
        x, dt = torch.randn(b, l, h, p, device=dev), torch.nn.functional.softplus(torch.randn(b, l, h, device=dev))
        A, B, C = -torch.rand(h, device=dev) * 4, torch.randn(b, l, n, device=dev), torch.randn(b, l, n, device=dev)
        y, S = ssd_chunked(x, dt, A, B, C)                                           # (b, l, h, p), (b, h, p, n)
        yf, Sf = chunk_simple_gla(C[:, :, None].expand(b, l, h, n).contiguous(), B[:, :, None].expand(b, l, h, n).contiguous(),
                                  (x * dt[..., None]).contiguous(), (dt * A), scale=1.0, output_final_state=True)
        out["mamba2"] = dict(out_rel_err=rel(yf, y), state_rel_err=rel(Sf.transpose(-1, -2), S))
    except Exception as e: out["mamba2"] = {"error": f"{type(e).__name__}: {e}"[:300]}
    return out


def phase_mamba_ssm(args, left):
    import torch
    from ssm_mech.recurrent import mamba_kernels
    res = {}
    if DEVICE != "cuda": return {"skipped": "needs CUDA"}
    if mamba_kernels() is None:
        sdists = sorted(glob.glob(str(Path(args.wheels) / "causal_conv1d*.tar.gz")) + glob.glob(str(Path(args.wheels) / "mamba_ssm*.tar.gz"))) if args.wheels else []
        if not sdists: return {"skipped": "mamba-ssm not installed and no source distributions in --wheels"}
        cap = torch.cuda.get_device_capability()
        env = dict(os.environ, MAMBA_FORCE_BUILD="TRUE", CAUSAL_CONV1D_FORCE_BUILD="TRUE", MAMBA_SKIP_CUDA_BUILD="FALSE",
                   CAUSAL_CONV1D_SKIP_CUDA_BUILD="FALSE", TORCH_CUDA_ARCH_LIST=f"{cap[0]}.{cap[1]}", MAX_JOBS=str(os.cpu_count() or 4))
        for sd in sdists:                                          # causal-conv1d first (sorted), then mamba-ssm
            budget = left() - 90
            if budget < 60: res[Path(sd).name] = "skipped: no time left to build"; continue
            t0 = time.time()
            try:
                p = subprocess.run([sys.executable, "-m", "pip", "install", "--no-build-isolation", "--no-deps", "--no-index", sd],
                                   env=env, capture_output=True, text=True, timeout=budget)
                res[Path(sd).name] = f"{'built' if p.returncode == 0 else 'build failed: ' + p.stderr.strip()[-300:]} in {time.time() - t0:.0f}s"
            except subprocess.TimeoutExpired: res[Path(sd).name] = f"build timed out after {budget:.0f}s"
        mamba_kernels.cache_clear()
    if left() < 45: res["gpu_check"] = "skipped: no time left"; return res
    try:
        p = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "gpu_check.py"), "--quick"], capture_output=True, text=True,
                           timeout=max(30, left() - 30), cwd=ROOT)
        res["gpu_check"] = {"returncode": p.returncode, "output": p.stdout[-3000:]}
    except subprocess.TimeoutExpired: res["gpu_check"] = "timed out"
    return res


def phase_grid(args, left, packed_rows, out):
    from ssm_mech.sweep import sweep_preset, run_sweep
    from ssm_mech.results import collect, final_metrics
    sw = sweep_preset("ar_main"); sw.axes["model.d_model"] = [D]; sw.name = "ar_main_d64"
    sw.overrides["train.device"] = DEVICE
    if args.dry_run: sw.runs, sw.axes["train.lr"] = sw.runs[:2], sw.axes["train.lr"][:2]
    k = args.pack
    per_step = {r["mixer"]: r["ms"] / 1e3 for r in packed_rows if r.get("k") == max(args.ks) and not r.get("bf16") and "ms" in r}
    slowest = max(per_step.values()) if per_step else 0.05
    n_packs = len(sw.runs) * -(-len(sw.axes["train.lr"]) // k)
    stop_at = int(max(10, (left() - 60) / max(1, n_packs) / slowest * 0.7))
    t0 = time.time()
    s = run_sweep(sw, out / "ar_main_d64", pack=k, stop_at=min(stop_at, 50_016), progress=False)
    secs = time.time() - t0
    steps_done = min(stop_at, 50_016)
    res = dict(summary={k_: v for k_, v in s.items() if k_ != "failures"}, failures=s["failures"][:10], stop_at=steps_done,
               seconds=secs, note="resumable: rerun this script (or run_sweep with the same directory) to continue")
    res["extrapolated_hours_for_this_sweep_to_50016_steps"] = secs / steps_done * 50_016 / 3600
    try: final_metrics(collect(out / "ar_main_d64"), finished_only=False).to_csv(out / "ar_main_d64_latest.csv", index=False)
    except Exception as e: res["collect_error"] = str(e)
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--budget", type=float, default=480); ap.add_argument("--out", default=str(ROOT / "results" / "gpu_session"))
    ap.add_argument("--wheels", default=None, help="directory with fla-core wheel and mamba-ssm / causal-conv1d sdists")
    ap.add_argument("--mixers", nargs="+", default=["attention", "mamba", "based", "hyena", "deltanet"])
    ap.add_argument("--bf16", action="store_true"); ap.add_argument("--pack", type=int, default=10)
    ap.add_argument("--skip", nargs="*", default=[], choices=["packed", "fla", "mamba_ssm", "grid"])
    ap.add_argument("--ks", type=int, nargs="+", default=[0, 4, 16, 64], help="pack sizes to time (0: one solo model)")
    ap.add_argument("--dry-run", action="store_true", help="run every phase on the CPU at toy size (checks the script, measures nothing)")
    args = ap.parse_args()
    t_start = time.time(); left = lambda: args.budget - (time.time() - t_start)
    import torch
    global DEVICE
    if args.dry_run:
        DEVICE, args.ks, args.mixers, args.budget = "cpu", [0, 2], args.mixers[:2], min(args.budget, 240)
        args.out = str(Path(args.out) / "dry-run")
    elif not torch.cuda.is_available():
        print("gpu_session: no CUDA device here (torch.cuda.is_available() is False): nothing was run. "
              "Run this script first thing on a machine with a GPU."); return 2
    out = Path(args.out); out.mkdir(parents=True, exist_ok=True)
    if args.wheels and not args.skip.count("fla"):
        fla_whl = glob.glob(str(Path(args.wheels) / "fla_core*.whl"))
        if fla_whl: subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--no-index", *fla_whl], capture_output=True)
    report = dict(device=torch.cuda.get_device_name() if DEVICE == "cuda" else "cpu (dry run)",
                  capability=list(torch.cuda.get_device_capability()) if DEVICE == "cuda" else None,
                  torch=torch.__version__, python=platform.python_version(), started=time.strftime("%Y-%m-%d %H:%M:%S"))
    print(f"gpu_session on {report['device']}, torch {report['torch']}, budget {args.budget:.0f}s", flush=True)
    phases = [("packed", lambda: phase_packed(args, left, report)), ("fla", lambda: phase_fla(report)),
              ("mamba_ssm", lambda: phase_mamba_ssm(args, left)),
              ("grid", lambda: phase_grid(args, left, report.get("packed") or [], out))]
    for name, fn in phases:
        if name in args.skip: continue
        if left() < 30: report[name] = "skipped: time budget spent"; continue
        t0 = time.time()
        try: report[name] = fn()
        except Exception as e: report[name] = {"error": f"{type(e).__name__}: {e}", "traceback": traceback.format_exc()[-2000:]}
        print(f"== {name} ({time.time() - t0:.0f}s): {json.dumps(report[name], default=str)[:600]}", flush=True)
        (out / "session.json").write_text(json.dumps(report, indent=1, default=str))
    lines = [f"## GPU session ({report['device']}, torch {report['torch']}, {report['started']})\n",
             "| mixer | bf16 | K | ms per step (StackedAdamW) | ms (K AdamW) | ms without an optimiser | runs·steps/s | × one solo run |", "|---|---|---|---|---|---|---|---|"]
    solo = {(r["mixer"], r["bf16"]): r["runs_steps_per_s"] for r in report.get("packed") or [] if r.get("k") == 0 and "ms" in r}
    for r in report.get("packed") or []:
        if "ms" in r:
            base = solo.get((r["mixer"], r["bf16"]))
            lines.append(f"| {r['mixer']} | {r['bf16']} | {r['k'] or 'solo'} | {r['ms']:.2f} | {r['ms_member_optimizers']:.2f} | {r['ms_without_optimizer']:.2f} | {r['runs_steps_per_s']:.1f} | "
                         + (f"{r['runs_steps_per_s'] / base:.1f}× |" if base else "— |"))
    (out / "session.md").write_text("\n".join(lines) + "\n\n```\n" + json.dumps({k: v for k, v in report.items() if k != "packed"}, indent=1, default=str) + "\n```\n")
    print("\n".join(lines)); return 0


if __name__ == "__main__":
    sys.exit(main())
