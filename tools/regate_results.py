"""Re-read the stored ATR verdicts under the accuracy gate of `ssm_mech.interventions.min_accuracy_for`.

    python tools/regate_results.py [results/atr_easy ...]     (default: every folder under results/)

Verdicts dissected before the gate existed were read with a fixed `min_accuracy` of 0.5. On ATR the
gate is now the strongest of the task's no-retrieval floors plus `MIN_GAIN`, and a 95% Wilson
interval of the accuracy that reaches below it makes the verdict unresolved. The gate only adds a
condition, so a stored verdict that clears it stands as it is; one that does not becomes
`unresolved`, and its reason keeps what it was before. A stored `unresolved` whose only reason was
accuracy below 0.5 and which now clears the gate would need the per-example data that the folders
do not keep: the script stops and names it instead of guessing.

Each ATR run's mechanism/<id>.json gains `min_accuracy`, `baseline`, `accuracy_interval` (the test
split's size from the run's config) and `regated`; results.csv's `mech.*` columns follow. The
datasets are rebuilt from the stored configs (CPU-medium configs written before `min_len` existed
were generated with `min_len` 1). Running it again changes nothing.
"""
import json, sys
from dataclasses import replace
from pathlib import Path

import pandas as pd
import yaml

from ssm_mech.interventions import accuracy_gate, accuracy_interval, min_accuracy_for
from ssm_mech.runs import ExperimentConfig
from ssm_mech.tasks import build_datasets

ROOT = Path(__file__).resolve().parents[1]
_floors: dict = {}


def gate_of(raw:dict) -> tuple:
    "(gate, baseline, test split size) of a stored run config's task."
    key = json.dumps(raw["task"], sort_keys=True)
    if key not in _floors:
        cfg = ExperimentConfig.from_dict(raw)
        task = cfg.task if "min_len" in raw["task"] else replace(cfg.task, min_len=1)
        ds = build_datasets(task)["test"]
        _floors[key] = (*min_accuracy_for(ds), len(ds))
    return _floors[key]


def regate(folder:Path) -> list:
    "Re-read every ATR verdict of `folder`; return [(run id, old verdict, new verdict)] of those that changed."
    changed, new_cols = [], {}
    for mf in sorted((folder / "mechanism").glob("*.json")):
        raw = yaml.safe_load((folder / "configs" / f"{mf.stem}.yaml").read_text())
        if raw["task"].get("task") != "atr": continue
        m = json.loads(mf.read_text())
        if "min_accuracy" in m and "regated" not in m: continue                    # dissected under the gate already
        if m.get("split", "test") != "test": sys.exit(f"{mf}: dissected on {m.get('split')!r}, this script reads test-split verdicts only")
        gate, base, n = gate_of(raw)
        lo, hi = accuracy_interval(m["accuracy"], n)
        before = m.get("regated", {}).get("before", {"mechanism": m["mechanism"], "reason": m["reason"]})
        why = accuracy_gate(m["accuracy"], gate, (lo, hi))                          # the verdict rule's own accuracy check
        if why is None:
            if before["mechanism"] == "unresolved" and accuracy_gate(m["accuracy"], 0.5) is not None:
                sys.exit(f"{mf}: unresolved for accuracy under the 0.5 gate, but clears the ATR gate {gate:.3f}: re-dissect this run")
            mech, reason = before["mechanism"], before["reason"]
        else:
            mech, reason = "unresolved", why
        if mech != before["mechanism"]: changed.append((mf.stem, before["mechanism"], mech))
        m.update(mechanism=mech, reason=reason, min_accuracy=gate, baseline=base, accuracy_interval=[lo, hi],
                 regated={"rule": "min_accuracy_for: the strongest retrieval floor + MIN_GAIN, with a 95% Wilson interval",
                          "before": before})
        mf.write_text(json.dumps(m, indent=1))
        new_cols[mf.stem] = {"mech.mechanism": mech, "mech.reason": reason, "mech.min_accuracy": gate,
                             "mech.baseline": base, "mech.accuracy_interval": json.dumps([lo, hi])}
    if new_cols and (folder / "results.csv").exists():
        df = pd.read_csv(folder / "results.csv", low_memory=False)
        for col in ("mech.min_accuracy", "mech.baseline", "mech.accuracy_interval"):
            if col not in df.columns: df[col] = pd.Series(dtype=object if col.endswith("interval") else float)
        for rid, cols in new_cols.items():
            rows = df.run_id == rid
            for col, v in cols.items(): df.loc[rows, col] = v
        df.to_csv(folder / "results.csv", index=False)
    return changed


if __name__ == "__main__":
    folders = [Path(a) for a in sys.argv[1:]] or sorted(p for p in (ROOT / "results").iterdir() if (p / "mechanism").is_dir())
    for f in folders:
        for rid, old, new in regate(f): print(f"{f.name}/{rid}: {old} -> {new}")
