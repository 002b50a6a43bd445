"""Time the generation of the paper-size task datasets (100,032 train + 1,024 dev + 1,024 test).

Usage: OMP_NUM_THREADS=1 python benchmarks/datagen.py [--repeats 3] [--out benchmarks/RESULTS.datagen.md]

Baselines:
* measured in the same run: a per-example Python generator (one document or one tree at a time, as the
  paper's code did), timed on a subset and extrapolated linearly to the full size;
* the paper code's own reference times on a similar 2-core machine, 15 s (AR) and 40 s (ATR easy),
  quoted, not re-measured here.
"""
import argparse, os, platform, time

import numpy as np
import torch

from ssm_mech.tasks import (BOS, EOS, N_SPECIAL, Grammar, build_datasets, task_preset)

PAPER_SECONDS = {"ar_32": 15.0, "atr_easy": 40.0}


def loop_ar(cfg, n, rng):
    "Reference: one AR document at a time in Python (no held-out pairs)."
    docs = []
    for _ in range(n):
        k = rng.choice(cfg.n_keys, cfg.n_pairs, replace=False) + cfg.key_offset
        v = rng.choice(cfg.n_values, cfg.n_pairs, replace=False) + cfg.value_offset
        j = rng.integers(cfg.n_pairs)
        doc = [BOS] + [t for kv in zip(k, v) for t in kv] + [EOS, k[j], v[j], EOS]
        docs.append(torch.tensor(doc))
    return torch.nn.utils.rnn.pad_sequence(docs, batch_first=True)


def loop_atr(grammar, n, rng):
    "Reference: one tree at a time, depth-first with an explicit stack, parent query at a uniform terminal."
    cfg, S = grammar.cfg, grammar.n_terminals
    docs = []
    while len(docs) < n:
        # stack items: (symbol, node id, id of the parent head); a popped terminal is emitted
        stack, next_id, out = [(S + rng.integers(grammar.n_nonterminals), 0, -1)], 1, []
        while stack:
            sym, nid, par = stack.pop()
            if sym < S:
                out.append((sym, nid, par)); continue
            a = sym - S
            r = rng.choice(grammar.n_rules[a], p=grammar.rule_probs[a, :grammar.n_rules[a]])
            head = rng.choice(S, p=grammar.head_probs[a])
            hid, next_id = next_id, next_id + 1
            stack.append((head, hid, par))                        # popped after the children: right head
            for s in grammar.rhs[a, r, :grammar.rhs_len[a, r]][::-1]:
                stack.append((s, next_id, hid)); next_id += 1
        if len(out) < 2 or len(out) > cfg.max_len: continue
        pos = {nid: i for i, (_, nid, _) in enumerate(out)}
        parents = [pos.get(par, -1) for _, _, par in out]
        q = int(rng.choice([i for i, p in enumerate(parents) if p >= 0]))
        toks = [t + N_SPECIAL for t, _, _ in out]
        docs.append(torch.tensor([BOS] + toks + [EOS, toks[q], toks[parents[q]], EOS]))
    return torch.nn.utils.rnn.pad_sequence(docs, batch_first=True)


def timeit(fn, repeats):
    best = float("inf")
    for _ in range(repeats):
        t = time.perf_counter(); out = fn(); best = min(best, time.perf_counter() - t)
    return best, out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--loop-n", type=int, default=5000, help="examples for the per-example reference")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "RESULTS.datagen.md"))
    args = ap.parse_args()
    torch.set_num_threads(1)

    rows = []
    for name in ("ar_32", "atr_easy", "atr_medium", "atr_easy_8192"):
        cfg = task_preset(name)
        n_total = cfg.n_train + cfg.n_dev + cfg.n_test
        sec, ds = timeit(lambda: build_datasets(cfg), args.repeats)
        rng = np.random.default_rng(0)
        if cfg.task == "ar":
            loop_sec, _ = timeit(lambda: loop_ar(cfg, args.loop_n, rng), 1)
        else:
            g = Grammar(cfg)
            loop_sec, _ = timeit(lambda: loop_atr(g, args.loop_n, rng), 1)
        loop_full = loop_sec * n_total / args.loop_n
        st = ds["dev"].stats()
        rows.append(dict(name=name, n=n_total, sec=sec, loop=loop_full, width=ds["train"].tokens.shape[1],
                         ctx=st["context_len_mean"], ctx_max=st["context_len_max"],
                         nr=st["no_retrieval_acc"], local=st.get("local_baseline_acc"),
                         last=st.get("answer_is_last_share"), paper=PAPER_SECONDS.get(name)))
        r = rows[-1]
        print(f"{name:15s} {sec:7.2f} s   loop ref {loop_full:8.1f} s (x{loop_full / sec:5.1f})"
              + (f"   paper {r['paper']:.0f} s (x{r['paper'] / sec:5.1f})" if r["paper"] else ""), flush=True)

    lines = [
        "## Task generation (`benchmarks/datagen.py`)",
        "",
        f"Machine: 2-core CPU ({platform.processor() or platform.machine()}), torch {torch.__version__} CPU, "
        f"numpy {np.__version__}, one thread. Each preset builds 100,032 train + 1,024 dev + 1,024 test "
        f"examples (`build_datasets`, no cache); best of {args.repeats} runs.",
        "",
        "| preset | examples | seconds | per-example loop (same run, extrapolated) | speed-up vs loop | paper code's time | speed-up vs paper |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        paper = f"{r['paper']:.0f} s" if r["paper"] else "–"
        ratio = f"{r['paper'] / r['sec']:.0f}×" if r["paper"] else "–"
        lines.append(f"| `{r['name']}` | {r['n']:,} | {r['sec']:.2f} | {r['loop']:.1f} s | {r['loop'] / r['sec']:.0f}× | {paper} | {ratio} |")
    lines += [
        "",
        "The per-example loop is a plain Python generator run in the same process (one AR document, or one "
        f"tree sampled depth-first with a stack, at a time) on {args.loop_n:,} examples and scaled linearly; "
        "it does less work than `build_datasets` (no eligibility filters, no positions, no trees kept). "
        "The paper code's times (15 s AR, 40 s ATR easy) are the reference times of the original generator "
        "on a similar 2-core machine, quoted from the task description, not re-measured here.",
        "",
        "Dataset shape (dev split; paper's reported mean sentence lengths: easy ~16, medium ~38, 8192 with factor 20 ~14):",
        "",
        "| preset | train width | mean context length | max context length | answer = last context token | no-retrieval acc (query token) | local baseline acc (query + last token) |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        f = lambda x: "–" if x is None else f"{x:.3f}"
        lines.append(f"| `{r['name']}` | {r['width']} | {r['ctx']:.1f} | {r['ctx_max']} | {f(r['last'])} | {f(r['nr'])} | {f(r['local'])} |")
    with open(args.out, "w") as fh: fh.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
