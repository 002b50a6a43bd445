"""One math thread or two for the small models of the demo and the report card: training-step wall time.

Each (mixer, width, threads) runs in a fresh process: the `ar-cpu` task (batch 32, 13 tokens, vocabulary 68) or the
`ci` scale's (batch 64), a 2-layer model, AdamW, the loss at the answer position; 5 warm-up steps, then the median of
`--steps` timed steps. The 1-minute load average is printed before and after, since a second thread only pays when a
second core is free. Run: python benchmarks/threads.py [--steps 40] [--widths 32 64 256]
"""
import argparse, json, os, subprocess, sys

CHILD = r"""
import json, sys, time, torch
from ssm_mech.model import LanguageModel, ModelConfig
from ssm_mech.tasks import build_datasets, task_preset
mixer, d, threads, steps, batch = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
torch.set_num_threads(threads); torch.manual_seed(0)
task = task_preset("ar_32", n_keys=32, n_values=32, n_pairs=4, n_train=2048, n_dev=16, n_test=16)
ds = build_datasets(task)["train"]
model = LanguageModel(ModelConfig(mixer, d_model=d, vocab_size=task.vocab_size))
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
rows = torch.arange(batch)
times = []
for i in range(5 + steps):
    idx = torch.randint(0, len(ds.tokens), (batch,))
    tok, q, a = ds.tokens[idx], ds.positions["query"][idx], ds.positions["answer"][idx]
    t0 = time.perf_counter()
    logits = model.logits(model.hidden(tok)[rows, q])                     # (batch, vocab)
    loss = torch.nn.functional.cross_entropy(logits, tok[rows, a])
    opt.zero_grad(); loss.backward(); opt.step()
    if i >= 5: times.append(time.perf_counter() - t0)
times.sort()
print(json.dumps({"ms": 1000 * times[len(times) // 2], "cpu_s": time.process_time()}))
"""


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=40)
    p.add_argument("--mixers", nargs="*", default=["attention", "mamba"])
    p.add_argument("--widths", nargs="*", type=int, default=[32, 64, 256])
    p.add_argument("--label", default="")
    a = p.parse_args()
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", "MKL_NUM_THREADS")}
    load0 = os.getloadavg()[0]
    print(f"{a.label} cores {os.cpu_count()}, load {load0:.2f} at the start, torch threads set per process", flush=True)
    print("| mixer | d_model | batch | 1 thread ms/step | 2 threads ms/step | 2 threads / 1 |")
    print("|---|---|---|---|---|---|")
    for m in a.mixers:
        for d in a.widths:
            batch = 64 if d == 32 else 32                                       # the ci scale's batch at d = 32, the -cpu presets' else
            ms = {}
            for t in (1, 2):
                r = subprocess.run([sys.executable, "-c", CHILD, m, str(d), str(t), str(a.steps), str(batch)], env=env,
                                   capture_output=True, text=True, check=True)
                ms[t] = json.loads(r.stdout.strip().splitlines()[-1])["ms"]
            print(f"| {m} | {d} | {batch} | {ms[1]:.1f} | {ms[2]:.1f} | {ms[2] / ms[1]:.2f} |", flush=True)
    print(f"load {os.getloadavg()[0]:.2f} at the end", flush=True)


if __name__ == "__main__":
    main()
