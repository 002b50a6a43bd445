"""Per test document of finished runs: whether the final model answers it, beside the document's shape.

    python tools/per_document.py RESULTS_DIR RUN_DIR [RUN_DIR ...]

Writes RESULTS_DIR/per_document/<run id>.csv with one row per test document: `doc` (its index in the
test split), `length` (tokens before the divider), `query_count` (how often the queried token occurs
there: the task asks for its rightmost occurrence), `key_value_distance` (value position minus key
position) and `correct` (1 where the argmax answer is right). Needs the run's final weights, which
`results/` does not keep: run it on the sweep folder a lane trained in, before it is removed.
"""
import os, sys
os.environ.setdefault("OMP_NUM_THREADS", "1")
from pathlib import Path
import numpy as np, pandas as pd, torch
from ssm_mech.runs import Run
from ssm_mech.train import supervised_loss

def per_document(run_dir) -> pd.DataFrame:
    run = Run(run_dir).require_finished()
    cache = Path(run_dir).parent.parent / "cache"
    ds = run.dataset("test", cache_dir=cache if cache.is_dir() else None)
    model, ok = run.model(), []
    with torch.no_grad():
        for i in range(0, len(ds.tokens), 256):
            tok, lab = ds.tokens[i:i+256], ds.labels[i:i+256]          # (b, l)
            _, logits = supervised_loss(model, tok, lab)                # (b, vocab): one answer per document
            ok.append((logits.argmax(-1) == lab[lab != -100]).numpy())
    T, pos = ds.tokens.numpy(), {k: v.numpy() for k, v in ds.positions.items()}
    r = np.arange(len(T)); q = T[r, pos["key"]]
    return pd.DataFrame({"doc": r, "length": pos["divider"] - 1,
                         "query_count": [(T[i, 1:pos["divider"][i]] == q[i]).sum() for i in r],
                         "key_value_distance": pos["value"] - pos["key"], "correct": np.concatenate(ok).astype(int)})

if __name__ == "__main__":
    if len(sys.argv) < 3: sys.exit(__doc__)
    out = Path(sys.argv[1]) / "per_document"; out.mkdir(exist_ok=True)
    for d in sys.argv[2:]:
        df = per_document(d); df.to_csv(out / f"{Path(d).name}.csv", index=False)
        print(f"{Path(d).name}: {len(df)} documents, accuracy {df.correct.mean():.4f} -> {out / (Path(d).name + '.csv')}")
