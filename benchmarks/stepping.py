"""Shared by the training-step benchmarks (`atr_padding.py`, `last_block.py`, `chunks.py`): a training split's first
batches in the trainer's order, and one model stepped by several variants of the loss in turn, batch by batch, so
that every variant sees the same batches, the same weights and the same background load."""
import statistics, time

import torch

from ssm_mech.model import LanguageModel
from ssm_mech.runs import apply_overrides
from ssm_mech.tasks import build_datasets
from ssm_mech.train import epoch_order


def first_batches(cfg, k:int):
    "The training split of `cfg`'s task and its first `k` batches (row indices; train.seed 0 order, the config's batch size)."
    tr = build_datasets(cfg.task)["train"]
    order = epoch_order(len(tr.tokens), 0, 0, True)
    bs = cfg.train.batch_size
    return tr, [order[i * bs:(i + 1) * bs] for i in range(k)]


def alternate(cfg, mixer:str, tr, batches, variants:dict, warmup:int=3, check=None) -> dict:
    """Median process-CPU milliseconds per training step (forward, backward, AdamW) of each variant in `variants`
    ({name: loss_fn(model, tokens, labels) -> (loss, logits)}): one model of `mixer` (d = 64, the config's other
    settings, torch seed 0) stepped by each variant in turn on every batch, the first `warmup` rounds untimed.
    `check(model, tokens, labels)` runs once on the first batch before any step (e.g. that the variants agree)."""
    c = apply_overrides(cfg, {"model.mixer": mixer, "model.d_model": 64}).resolve()
    torch.manual_seed(0)
    model = LanguageModel(c.model)
    opt = torch.optim.AdamW(model.parameters(), lr=c.train.lr)
    if check is not None: check(model, tr.tokens[batches[0]], tr.labels[batches[0]])
    times = {k: [] for k in variants}
    for i, b in enumerate(batches):
        for k, f in variants.items():
            t = time.process_time()
            loss, _ = f(model, tr.tokens[b], tr.labels[b])
            opt.zero_grad(set_to_none=True); loss.backward(); opt.step()
            if i >= warmup: times[k].append(time.process_time() - t)
    return {k: 1000 * statistics.median(v) for k, v in times.items()}
