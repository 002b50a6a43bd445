"""Write results/<sweep>/README.md for a sweep of the paper's tasks run over several sessions: what it runs
(the sweep's description), every finished run with its verdict, and the runs still to come.

    python tools/sweep_readme.py results/ar32_conv [results/ar32_depth_pos ...]

Reads the folder's sweep.yaml (the plan), results.csv, mechanism/ and status/ as `tools/export_results.py`
writes them. A folder with no results yet gets the plan alone. Wall minutes come from each run's status
record (`seconds`, over all its sessions).
"""
import json, sys
from pathlib import Path

import pandas as pd

from ssm_mech.results import first_step_at
from ssm_mech.sweep import load_sweep, plan_sweep


def cell(v, fmt="{:.2f}"): return "" if v is None or pd.isna(v) else fmt.format(v)


def readme(dest:Path) -> str:
    sweep = load_sweep(dest / "sweep.yaml")
    plan = plan_sweep(sweep)
    df = pd.read_csv(dest / "results.csv", low_memory=False) if (dest / "results.csv").exists() else None
    status = {}
    for f in sorted((dest / "status").glob("*.json")) if (dest / "status").exists() else []:
        status[f.stem] = json.loads(f.read_text())
    rows, waiting = [], []
    left_at = first_step_at(df) if df is not None else pd.Series(dtype=int)   # where each run leaves the plateau
    for p in plan:
        mech_file = dest / "mechanism" / f"{p.id}.json"
        st = status.get(p.id, {})
        done = df is not None and (df[df.run_id == p.id].status == "finished").any()
        if done and mech_file.exists():
            mech = json.loads(mech_file.read_text())
            dev = df[(df.run_id == p.id) & (df.split == "dev") & (df.metric == "acc")]
            left = left_at.get(p.id)
            resolved = mech["mechanism"] != "unresolved"
            a, iv = mech.get("association") or {}, mech.get("interval") or {}
            width = max((hi - lo for k, (lo, hi) in iv.items() if k in ("value", "key", "query")), default=None)
            rows.append(f"| `{p.id}` | {p.label} | {int(dev.step.max()):,} | {round(st['seconds'] / 60) if 'seconds' in st else '–'} | "
                        f"{mech['accuracy']:.3f} | {dev.value.max():.3f} | {'not left' if left is None else f'{int(left):,}'} | "
                        f"{mech['mechanism']} | {mech['o_minus_c']:.2f} | "
                        + " | ".join(cell(a.get(k)) if resolved else "" for k in ("value", "key", "query"))
                        + f" | {cell(width, '{:.3f}') if resolved else ''} |")
        else:
            at = None if df is None else df[df.run_id == p.id].step.max()
            waiting.append(f"{p.label} (`{p.id}`" + (f", at step {int(at):,} when exported)" if at is not None and not pd.isna(at) else ", not started)"))
    text = f"# `{sweep.name}`\n\n{sweep.description}\n\nThe plan: `sweep.yaml` ({len(plan)} runs, one seed each).\n"
    text += f"\n**Finished** ({len(rows)} of {len(plan)}). "
    if rows:
        text += ("Each finished run is dissected on the test documents (`mechanism/<id>.json`, field `n`): the verdict "
                 "and the associations (key corruption, input of the last layer) follow `decide_mechanism`, and are "
                 "left blank where the verdict is unresolved; \"widest interval\" is the width of the widest 95% bootstrap "
                 "interval of the three. \"dev acc ≥ 0.5 from step\" is the first evaluation at which the dev accuracy "
                 "reached 0.5. \"minutes\" is the wall time over all of a run's sessions, one math thread, with other "
                 "work sharing the machine's two cores: what this machine did, not the code's speed.\n\n"
                 "| run | variant | steps | minutes | test acc | best dev acc | dev acc ≥ 0.5 from step | verdict | O − C | "
                 "assoc. value | key | query | widest interval |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|\n"
                 + "\n".join(rows) + "\n")
    else: text += "None yet.\n"
    if waiting: text += "\n**Still to run**: " + "; ".join(waiting) + ".\n"
    text += "\nRun on a 2-core CPU, one math thread per run, beside other work; checkpoints are not stored here.\n"
    return text


if __name__ == "__main__":
    if len(sys.argv) < 2: sys.exit(__doc__)
    for d in map(Path, sys.argv[1:]):
        (d / "README.md").write_text(readme(d))
        print(f"{d / 'README.md'} written")
