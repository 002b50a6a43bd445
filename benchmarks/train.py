"""Training speed: steps per second of a whole training step at the paper's associative-recall size.

Run from the repository root:  .venv/bin/python benchmarks/train.py [--threads 1 2] [--steps 20] [--rounds 2] [--quick]
                               [--baseline REV]
Prints markdown tables and writes benchmarks/RESULTS.train.md.

Configuration (the paper's AR models): 2 layers, d_model 64 and 128, vocabulary 8,196, batch 32,
sequence length 37, fp32, CPU, paper defaults (`pos_emb=None`: positions for attention only).
Every registered mixer is built with `LanguageModel(ModelConfig(mixer, d_model=d, vocab_size=8196))`;
Mamba is also run with `mixer_kwargs=dict(scan="sequential")`, the generic scan over materialised
states (the path Mamba used before `selective_scan`), as the in-run baseline of that change.

One step = `supervised_loss` (one labelled position per row, the last) + backward + AdamW step, with
the head applied only at the supervised positions (`supervised_head=True`) or to every position and
then selected (`False`). Each (mixer, d, head, threads) runs in a fresh subprocess:
* time: 3 untimed warm-up steps, then the median of `--steps` timed steps, as process CPU time (used
  in the tables with 1 thread: it does not count waiting for a core on a shared machine) and wall
  time (used with more threads); `--rounds` repeats the whole set and keeps each configuration's
  fastest round;
* memory: peak resident set size (`ru_maxrss`) after the timed steps minus the value just before the
  first warm-up step, i.e. the extra memory the process ever held for activations, gradients, AdamW state and
  allocator slack (not a per-tensor account; the allocator may keep freed memory);
* FLOPs: `torch.utils.flop_counter.FlopCounterMode` over one forward+backward, which counts matrix
  products, convolutions and attention only (elementwise work such as the recurrent scans, norms,
  activations and the optimizer is not counted, so recurrent mixers are under-counted);
  achieved FLOP/s = counted FLOPs / step time, reported as a fraction of a plain fp32
  512x512x512 matmul's FLOP/s measured in the same process and thread count.

`--baseline REV` adds a before/after table: the package as of git revision REV (extracted with
`git archive` into a temporary directory and imported under another name, `ssm_base`) and the
working tree's package build the same model from the same seed (the first losses must agree, a check
that the change kept the function), and their training steps alternate in one process with attention's, so
that all three see the same background load; the table gives the medians and their ratios.
"""
from __future__ import annotations
import argparse, json, os, platform, resource, subprocess, sys, time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAPER_ATTN_MS = 89.0  # quoted: the paper's code, 2-layer d=64 attention, similar 2-core CPU (not re-measured)
VOCAB, BATCH, SEQ, LAYERS = 8196, 32, 37, 2


def child(mixer:str, d:int, head:str, threads:int, steps:int, kwargs:dict) -> dict:
    "Measure one configuration in this (fresh) process; returns a dict of results."
    import torch
    torch.set_num_threads(threads)
    sys.path.insert(0, str(ROOT))
    from torch.utils.flop_counter import FlopCounterMode
    from ssm_mech.model import LanguageModel, ModelConfig
    from ssm_mech.train import supervised_loss
    torch.manual_seed(0)
    model = LanguageModel(ModelConfig(mixer, d_model=d, vocab_size=VOCAB, n_layers=LAYERS, mixer_kwargs=kwargs))
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    tokens = torch.randint(0, VOCAB, (BATCH, SEQ))                       # (b, l)
    labels = torch.full((BATCH, SEQ), -100); labels[:, -1] = torch.randint(0, VOCAB, (BATCH,))
    sup = head == "supervised"

    def step():
        loss, _ = supervised_loss(model, tokens, labels, supervised_head=sup)
        opt.zero_grad(set_to_none=True); loss.backward(); opt.step()

    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss             # KiB on Linux
    for _ in range(3): step()
    ts, cs = [], []
    for _ in range(steps):
        t0, c0 = time.perf_counter(), time.process_time(); step()
        ts.append(time.perf_counter() - t0); cs.append(time.process_time() - c0)
    rss1 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    ts.sort(); cs.sort()
    with FlopCounterMode(display=False) as fc:
        loss, _ = supervised_loss(model, tokens, labels, supervised_head=sup); loss.backward()
    flops = fc.get_total_flops()
    a, b = torch.randn(512, 512), torch.randn(512, 512)
    for _ in range(3): a @ b
    mm = []
    for _ in range(10):
        t0 = time.perf_counter(); a @ b; mm.append(time.perf_counter() - t0)
    mm_flops = 2 * 512 ** 3 / min(mm)
    med = ts[len(ts) // 2]
    return dict(ms=med * 1e3, ms_min=ts[0] * 1e3, cpu_ms=cs[len(cs) // 2] * 1e3, peak_mib=(rss1 - rss0) / 1024, gflop=flops / 1e9,
                frac_mm=flops / med / mm_flops, mm_gflops=mm_flops / 1e9,
                n_params=sum(p.numel() for p in model.parameters()))


def paired_child(mixer:str, d:int, threads:int, steps:int, kwargs:dict) -> dict:
    "Ratio of `mixer`'s step time to attention's, alternating their steps in one process (supervised head)."
    import torch
    torch.set_num_threads(threads)
    sys.path.insert(0, str(ROOT))
    from ssm_mech.model import LanguageModel, ModelConfig
    from ssm_mech.train import supervised_loss
    torch.manual_seed(0)
    tokens = torch.randint(0, VOCAB, (BATCH, SEQ))                       # (b, l)
    labels = torch.full((BATCH, SEQ), -100); labels[:, -1] = torch.randint(0, VOCAB, (BATCH,))
    def make(mx, kw):
        model = LanguageModel(ModelConfig(mx, d_model=d, vocab_size=VOCAB, n_layers=LAYERS, mixer_kwargs=kw))
        opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
        def step():
            loss, _ = supervised_loss(model, tokens, labels, supervised_head=True)
            opt.zero_grad(set_to_none=True); loss.backward(); opt.step()
        return step
    steps_ = [make("attention", {}), make(mixer, kwargs)]
    clock = time.process_time if threads == 1 else time.perf_counter
    for st in steps_:
        for _ in range(3): st()
    ts = [[], []]
    for _ in range(steps):
        for i, st in enumerate(steps_):
            t0 = clock(); st(); ts[i].append(clock() - t0)
    med = [sorted(t)[len(t) // 2] for t in ts]
    return dict(attn_ms=med[0] * 1e3, ms=med[1] * 1e3, ratio=med[1] / med[0])


def baseline_child(mixer:str, d:int, threads:int, steps:int, kwargs:dict, base_dir:str) -> dict:
    "Step times of `mixer` built by the baseline package (`ssm_base` in `base_dir`) and by the working tree, and attention's."
    import importlib, torch
    torch.set_num_threads(threads)
    sys.path[:0] = [str(ROOT), base_dir]
    clock = time.process_time if threads == 1 else time.perf_counter
    tokens = torch.randint(0, VOCAB, (BATCH, SEQ), generator=torch.Generator().manual_seed(0))  # (b, l)
    labels = torch.full((BATCH, SEQ), -100); labels[:, -1] = tokens[:, 0]
    def make(pkg, mx, kw):
        M, T = importlib.import_module(f"{pkg}.model"), importlib.import_module(f"{pkg}.train")
        for mod in ("mixers", "recurrent"): importlib.import_module(f"{pkg}.{mod}")  # registers every mixer
        torch.manual_seed(0)
        model = M.LanguageModel(M.ModelConfig(mx, d_model=d, vocab_size=VOCAB, n_layers=LAYERS, mixer_kwargs=kw))
        opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
        def step():
            loss, _ = T.supervised_loss(model, tokens, labels, supervised_head=True)
            opt.zero_grad(set_to_none=True); loss.backward(); opt.step()
            return loss.item()
        return step
    steps_ = [make("ssm_base", mixer, kwargs), make("ssm_mech", mixer, kwargs), make("ssm_mech", "attention", {})]
    loss0 = [st() for st in steps_[:2]]                                  # same weights, same batch
    for st in steps_:
        for _ in range(3): st()
    ts = [[], [], []]
    for _ in range(steps):
        for i, st in enumerate(steps_):
            t0 = clock(); st(); ts[i].append(clock() - t0)
    med = [sorted(t)[len(t) // 2] * 1e3 for t in ts]
    return dict(base_ms=med[0], ms=med[1], attn_ms=med[2], loss_base=loss0[0], loss=loss0[1])


def baseline_table(rows:dict, rev:str, threads:int, widths) -> list:
    out = [f"**Before / after, {threads} thread{'s' if threads > 1 else ''}** (baseline: `{rev}`; the same model "
           "from the same seed built by the baseline package and by the working tree, their steps alternating with "
           "attention's in one process; median ms/step, supervised head):\n",
           "| mixer | d | before (ms) | after (ms) | speed-up | attention (ms) | × attention, before → after | first loss, before / after |",
           "|---|---|---|---|---|---|---|---|"]
    for (th, d, label), r in rows.items():
        if th != threads: continue
        if "error" in r: out.append(f"| {label} | {d} | {r['error']} | | | | | |"); continue
        out.append(f"| {label} | {d} | {r['base_ms']:.1f} | {r['ms']:.1f} | {r['base_ms'] / r['ms']:.2f}× | {r['attn_ms']:.1f} "
                   f"| {r['base_ms'] / r['attn_ms']:.2f} → {r['ms'] / r['attn_ms']:.2f} | {r['loss_base']:.6f} / {r['loss']:.6f} |")
    return out + [""]


def extract_baseline(rev:str) -> str:
    "`ssm_mech` as of git revision `rev`, extracted as package `ssm_base` into a new temporary directory."
    import tempfile
    tmp = tempfile.mkdtemp(prefix="ssm_base_")
    tar = subprocess.run(["git", "archive", rev, "ssm_mech"], cwd=ROOT, capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", tmp], input=tar, check=True)
    os.rename(os.path.join(tmp, "ssm_mech"), os.path.join(tmp, "ssm_base"))
    return tmp


def run_child(mixer, d, head, threads, steps, kwargs, base_dir=None):
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), MKL_NUM_THREADS=str(threads))
    cmd = [sys.executable, __file__, "--child", json.dumps(dict(mixer=mixer, d=d, head=head, threads=threads,
                                                                steps=steps, kwargs=kwargs))]
    if head == "paired": cmd[2] = "--paired"
    if head == "baseline": cmd[2:] = ["--baseline-child", json.dumps(dict(mixer=mixer, d=d, threads=threads, steps=steps,
                                                                      kwargs=kwargs, base_dir=base_dir))]
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=ROOT)
    if p.returncode: return dict(error=(p.stderr.strip().splitlines() or ["?"])[-1])
    return json.loads(p.stdout.strip().splitlines()[-1])


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def key_ms(r:dict, threads:int) -> float:
    "The step time the tables use: process CPU time with 1 thread (robust to other jobs), wall time otherwise."
    return r["cpu_ms"] if threads == 1 else r["ms"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--child"); ap.add_argument("--paired"); ap.add_argument("--threads", type=int, nargs="+", default=[1])
    ap.add_argument("--steps", type=int, default=20); ap.add_argument("--widths", type=int, nargs="+", default=[64, 128])
    ap.add_argument("--rounds", type=int, default=2, help="repeat every configuration; keep the fastest round")
    ap.add_argument("--mixers", nargs="+"); ap.add_argument("--quick", action="store_true")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "RESULTS.train.md"))
    ap.add_argument("--baseline", help="git revision to compare against (before/after table)")
    ap.add_argument("--baseline-only", action="store_true", help="only the before/after table")
    ap.add_argument("--baseline-child")
    args = ap.parse_args()
    if args.baseline_child:
        c = json.loads(args.baseline_child)
        print(json.dumps(baseline_child(c["mixer"], c["d"], c["threads"], c["steps"], c["kwargs"], c["base_dir"])))
        return
    if args.child:
        c = json.loads(args.child)
        print(json.dumps(child(c["mixer"], c["d"], c["head"], c["threads"], c["steps"], c["kwargs"])))
        return
    if args.paired:
        c = json.loads(args.paired)
        print(json.dumps(paired_child(c["mixer"], c["d"], c["threads"], c["steps"], c["kwargs"])))
        return
    sys.path.insert(0, str(ROOT))
    import torch
    import ssm_mech.model  # noqa: F401  (registers every mixer)
    from ssm_mech.core import mixer_names
    steps, rounds = (5, 1) if args.quick else (args.steps, args.rounds)
    variants = [(m, m, {}) for m in (args.mixers or mixer_names())]
    if "mamba" in [v[0] for v in variants]:
        variants.append(("mamba [generic sequential scan]", "mamba", dict(scan="sequential")))
    load_before = load()
    res, before_after = {}, {}
    if args.baseline:
        base_dir = extract_baseline(args.baseline)
        for threads in args.threads:
            for d in args.widths:
                for label, mixer, kw in variants:
                    if mixer == "attention" or kw: continue
                    r = run_child(mixer, d, "baseline", threads, steps, kw, base_dir)
                    before_after[(threads, d, label)] = r
                    print(f"  before/after threads={threads} d={d:4d} {label:34s} " + (r["error"] if "error" in r else
                          f"{r['base_ms']:.1f} -> {r['ms']:.1f} ms ({r['base_ms'] / r['ms']:.2f}x), attention {r['attn_ms']:.1f} ms"), flush=True)
    if args.baseline_only: rounds = 0
    for rnd in range(rounds):
        for threads in args.threads:
            for d in args.widths:
                for label, mixer, kw in variants:
                    for head in ("supervised", "full"):
                        r = run_child(mixer, d, head, threads, steps, kw)
                        k = (threads, d, label, head)
                        if "error" not in r and ("error" in res.get(k, {"error": 1}) or key_ms(r, threads) < key_ms(res[k], threads)):
                            res[k] = r
                        res.setdefault(k, r)
                        print(f"  round {rnd} threads={threads} d={d:4d} {label:34s} {head:10s} "
                              + (r["error"] if "error" in r else f"{r['ms']:7.1f} ms wall {r['cpu_ms']:7.1f} ms CPU "
                                 f"{r['peak_mib']:6.1f} MiB  {r['gflop']:.3f} GFLOP  {100 * r['frac_mm']:.1f}% of mm"), flush=True)
    paired = {}
    for threads in (args.threads if rounds else []):
        for d in args.widths:
            for label, mixer, kw in variants:
                if mixer == "attention": continue
                r = run_child(mixer, d, "paired", threads, steps, kw)
                paired[(threads, d, label)] = r
                print(f"  paired threads={threads} d={d:4d} {label:34s} "
                      + (r["error"] if "error" in r else f"{r['ratio']:.2f}x attention ({r['ms']:.1f} / {r['attn_ms']:.1f} ms)"), flush=True)
    load_after = load()
    lines = [report_header(torch, steps, rounds, load_before, load_after)]
    for threads in args.threads:
        if rounds:
            lines += tables(res, threads, args.widths, [v[0] for v in variants])
            lines += paired_table(paired, threads, args.widths, [v[0] for v in variants if v[1] != "attention"])
        if args.baseline: lines += baseline_table(before_after, args.baseline, threads, args.widths)
    text = "\n".join(lines) + "\n"
    print(text)
    Path(args.out).write_text(text)


def report_header(torch, steps, rounds, lb, la):
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), platform.processor())
    return (f"## Training speed (`benchmarks/train.py`)\n\n"
            f"Machine: {os.cpu_count()}-core CPU ({cpu}), torch {torch.__version__}, Python {platform.python_version()}. "
            f"Load average (1/5/15 min) before the run: {lb}; after: {la}. The machine is shared with other jobs, "
            f"so absolute times carry noise; ratios within one run are the more reliable figures.\n\n"
            f"Configuration: {LAYERS} layers, vocabulary {VOCAB}, batch {BATCH}, length {SEQ}, fp32, paper "
            f"defaults (`pos_emb=None`), AdamW; one supervised position per row. Each configuration runs in a fresh "
            f"process: 3 warm-up steps, then the median of {steps} timed steps; the whole set is run {rounds} time(s) "
            f"and the fastest round is kept. **Step times are process CPU time with 1 thread** (unaffected by "
            f"waiting for a core while other jobs run; still affected by shared caches and memory bandwidth), wall "
            f"time with more threads; the wall time of the 1-thread runs is listed too. *Head*: `supervised` applies "
            f"the tied head only at the supervised positions, `full` to all 37 positions. *Peak MiB*: growth of the "
            f"process's peak resident set (`ru_maxrss`) over the warm-up and timed steps (activations, gradients, "
            f"AdamW state, allocator slack). *GFLOP*: `FlopCounterMode` count of one forward+backward (matmuls, "
            f"convolutions, attention only: elementwise work, e.g. the recurrent scans, is not counted); *% of mm*: "
            f"those FLOP/s as a share of a plain fp32 512³ matmul measured in the same process. The paper's code "
            f"reference is ~{PAPER_ATTN_MS:.0f} ms/step for 2-layer d=64 attention on a similar 2-core machine "
            f"(quoted, not re-measured). `mamba [generic sequential scan]` is Mamba with "
            f"`scan=\"sequential\"`: the autograd scan over materialised states, Mamba's path before "
            f"`selective_scan`.\n")


def tables(res, threads, widths, labels):
    out = [f"### {threads} thread{'s' if threads > 1 else ''}\n"]
    for d in widths:
        a = res.get((threads, d, "attention", "supervised"), {})
        attn = key_ms(a, threads) if "ms" in a else None
        out += [f"**d = {d}**\n",
                "| mixer | ms/step, supervised head | steps/s | ms/step, full logits | full / supervised | × attention | speed-up vs paper ref (89 ms) | peak MiB (sup / full) | GFLOP/step (sup) | % of mm FLOP/s | wall ms (sup) |",
                "|---|---|---|---|---|---|---|---|---|---|---|"]
        for label in labels:
            s, f = res.get((threads, d, label, "supervised"), {}), res.get((threads, d, label, "full"), {})
            if "ms" not in s:
                out.append(f"| {label} | {s.get('error', 'n/a')} | | | | | | | | | |"); continue
            ts = key_ms(s, threads)
            full = f"{key_ms(f, threads):.1f}" if "ms" in f else f.get("error", "n/a")
            ratio = f"{key_ms(f, threads) / ts:.2f}×" if "ms" in f else "—"
            rel = f"{ts / attn:.2f}" if attn else "—"
            paper = f"{PAPER_ATTN_MS / ts:.1f}×" if d == 64 else "—"
            mem = f"{s['peak_mib']:.0f} / {f['peak_mib']:.0f}" if "ms" in f else f"{s['peak_mib']:.0f}"
            out.append(f"| {label} | {ts:.1f} | {1000 / ts:.1f} | {full} | {ratio} | {rel} | {paper} | {mem} "
                       f"| {s['gflop']:.3f} | {100 * s['gflop'] * 1e9 / (ts / 1e3) / (s['mm_gflops'] * 1e9):.1f}% | {s['ms']:.1f} |")
        if "mm_gflops" in a: out.append(f"\nPlain fp32 512³ matmul in these processes: {a['mm_gflops']:.0f} GFLOP/s.\n")
        else: out.append("")
    return out


def paired_table(paired, threads, widths, labels):
    out = [f"**Paired ratios, {threads} thread{'s' if threads > 1 else ''}** (each mixer's step time over attention's, "
           "supervised head, with the two models' steps alternating in one process so that both see the same "
           "background load; median of each):\n",
           "| mixer | " + " | ".join(f"× attention, d={d}" for d in widths) + " |",
           "|---|" + "---|" * len(widths)]
    for label in labels:
        cells = []
        for d in widths:
            r = paired.get((threads, d, label), {})
            cells.append(f"{r['ratio']:.2f} ({r['ms']:.0f} / {r['attn_ms']:.0f} ms)" if "ratio" in r else r.get("error", "n/a"))
        out.append(f"| {label} | " + " | ".join(cells) + " |")
    return out + [""]


if __name__ == "__main__":
    main()
