"""Write results/ar32_d64/README.md from what that folder holds (results.csv, mechanism/, status/).

    python tools/paper_task_readme.py [results/ar32_d64]

The pilot table ranks each mixer's learning rates by dev loss at step 5,000 (the rule fixed before the
sweep started); the second table lists every run trained to 50,016 steps. pilot.csv keeps each pilot's
step-5,000 dev loss and accuracy as first recorded (the ranking uses these); a full run trained again from
step 0 in a later session is compared with them, and the README states the difference. Wall minutes come from each run's
status record (status/<id>.json, `seconds`); runs exported before status records were kept have theirs
in wall_minutes.csv. The script keeps both files up to date.
"""
import json, sys
from pathlib import Path

import pandas as pd

from ssm_mech.results import first_step_at

dest = Path(sys.argv[1] if len(sys.argv) > 1 else "results/ar32_d64")
PILOT, FULL = 5000, 50016
df = pd.read_csv(dest / "results.csv", low_memory=False)
runs = df.groupby("run_id").agg(mixer=("model.mixer", "first"), lr=("train.lr", "first"), status=("status", "first"),
                                step=("step", "max")).reset_index()

# wall minutes: status records first, then the earlier table
mins_file = dest / "wall_minutes.csv"
mins = pd.read_csv(mins_file, dtype={"run_id": str}).set_index("run_id").minutes.to_dict() if mins_file.exists() else {}
for f in sorted((dest / "status").glob("*.json")) if (dest / "status").exists() else []:
    st = json.loads(f.read_text())
    if st.get("status") == "finished": mins[f.stem] = round(st["seconds"] / 60)
pd.DataFrame(sorted(mins.items()), columns=["run_id", "minutes"]).to_csv(mins_file, index=False)

def at(rid, split, metric, step):
    v = df[(df.run_id == rid) & (df.split == split) & (df.metric == metric) & (df.step == step)].value
    return float(v.iloc[0]) if len(v) else None

# pilot values: as first recorded (pilot.csv), new pilots added; a later run's step 5,000 checked against them
pilot_file = dest / "pilot.csv"
recorded = pd.read_csv(pilot_file, dtype={"run_id": str}) if pilot_file.exists() else pd.DataFrame(columns=["run_id", "mixer", "lr", "dev_loss", "dev_acc", "session"])
seen = set(recorded.run_id)
today = Path("/proc/sys/kernel/random/boot_id").read_text().strip()[:8]   # this machine's boot: one session
earlier = set(recorded[recorded.session.astype(str) != today].run_id)
repeats = []
for _, r in runs.iterrows():
    loss, acc = at(r.run_id, "dev", "loss", PILOT), at(r.run_id, "dev", "acc", PILOT)
    if loss is None: continue
    if r.run_id not in seen:
        recorded = pd.concat([recorded, pd.DataFrame([{"run_id": r.run_id, "mixer": r.mixer, "lr": r.lr, "dev_loss": loss, "dev_acc": acc, "session": today}])], ignore_index=True)
    else:
        repeats.append(r.run_id)
recorded.sort_values(["mixer", "lr"]).to_csv(pilot_file, index=False)   # session: the boot id of the machine that first recorded the pilot
pilot = recorded.rename(columns={"dev_loss": "loss", "dev_acc": "acc"})
pilot = pilot.sort_values(["mixer", "loss"])
n_lrs = pilot.groupby("mixer").size()
complete = int((n_lrs == 3).sum())
lines = []
for m, g in pilot.groupby("mixer", sort=True):
    for k, (_, p) in enumerate(g.iterrows(), 1):
        rank = str(k) if len(g) == 3 else f"– (pilot at {len(g)} of 3 lrs)"
        lines.append(f"| {m} | {p.lr:g} | {p.loss:.3f} | {p.acc:.3f} | {rank} |")

full = runs[(runs.status == "finished") & (runs.step == FULL)].sort_values(["mixer", "lr"])
left = first_step_at(df)                                                   # where each run leaves the plateau
rows = []
for _, r in full.iterrows():
    mech = json.loads((dest / "mechanism" / f"{r.run_id}.json").read_text())
    a = mech["association"]
    resolved = mech["mechanism"] != "unresolved"
    assoc = " | ".join(f"{a[p]:.2f}" if resolved else "" for p in ("value", "key", "query"))
    rows.append(f"| {r.mixer} | {r.lr:g} | {FULL:,} | {mins.get(r.run_id, '–')} | {mech['accuracy']:.3f} | "
                f"{f'{int(left[r.run_id]):,}' if r.run_id in left.index else 'not left'} | {mech['mechanism']} | "
                f"{mech['o_minus_c']:.2f} | {assoc} |")
running = runs[(runs.status != "finished") & (runs.step > PILOT)]
# runs trained again from step 0 (a status record exported) after their pilot was recorded in an earlier session
status_ids = {f.stem for f in (dest / "status").glob("*.json")} if (dest / "status").exists() else set()
rerun = [rid for rid in repeats if rid in status_ids and rid in earlier]

text = f"""# `ar32_d64`: the paper's AR task at d = 64, on a 2-core CPU

The paper's task exactly (`ar` preset: `ar_32`, 16 pairs over 4,096 keys and 4,096 values, 37 tokens,
100,032 training documents, 50,016 steps of batch 32, the paper's (zoology) initialisation, train.seed 0),
d = 64, every mixer at lr 3e-4, 1e-3 and 3e-3 (`sweep.yaml`). One run per cell (one seed).

**Pilot.** The first 5,000 steps of each full run, with the full run's schedule (warm-up over the first
5,002 steps, then cosine decay to step 50,016), stopped resumably at step 5,000. The rule, fixed before
any run started: for each mixer, the two learning rates with the lowest dev loss at step 5,000 continue to
50,016 steps. The ranking uses loss, not accuracy, because most models are still on the plateau at step
5,000. Mixers piloted at all three learning rates so far: {complete} of 9
(a mixer piloted at fewer has no rank yet).

| mixer | lr | dev loss at step 5,000 | dev acc at step 5,000 | rank (by dev loss) |
|---|---|---|---|---|
{chr(10).join(lines)}

**Runs continued to 50,016 steps** (finished so far: {len(rows)}). Each finished run is dissected on 1,024 test
documents: the verdict and the associations (key corruption, input of the last layer) follow the rule of
`decide_mechanism`; associations are left blank where the verdict is unresolved. "dev acc ≥ 0.5 from step"
is the first evaluation (every 1,000 steps) at which the dev accuracy reaches 0.5: where the run leaves
the plateau. "minutes" is the wall time the run's status records over all its sessions, one math thread,
with a second run and other work sharing the machine's two cores: a measure of what this machine did,
not of the code's speed. A run continues from its last checkpoint (every 1,000 steps) when the machine that
holds it is still there in the next session, as the DeltaNet lr 1e-3 run did from step 18,000; where the
checkpoints were lost with a machine, the run is trained again from step 0, so a full run whose pilot ran
on an earlier machine trains its first 5,000 steps again; the pilot table keeps the pilot's own values.

| mixer | lr | steps | minutes | test acc | dev acc ≥ 0.5 from step | verdict | O − C | assoc. value | key | query |
|---|---|---|---|---|---|---|---|---|---|---|
{chr(10).join(rows)}
"""
if rerun:
    text += ("\nTrained again from step 0 in a later session than their pilot (same seed, same data order), with the "
             "package of that later session; dev loss and accuracy at step 5,000, pilot → full run:\n\n"
             "| mixer | lr | dev loss | dev acc |\n|---|---|---|---|\n")
    for rid in rerun:
        p0, r = recorded[recorded.run_id == rid].iloc[0], runs[runs.run_id == rid].iloc[0]
        text += (f"| {r.mixer} | {r.lr:g} | {p0.dev_loss:.4f} → {at(rid, 'dev', 'loss', PILOT):.4f} | "
                 f"{p0.dev_acc:.4f} → {at(rid, 'dev', 'acc', PILOT):.4f} |\n")
    text += ("\nThe two differ because the package changed between the sessions (its short and long convolutions, among "
             "other things, were rewritten for speed), and a training trajectory amplifies rounding differences: trained "
             "60 steps from the same seed, the two package versions' losses already differ in the 7th digit, while each "
             "version repeats its own exactly. The ranking of learning rates above uses the pilots' values.\n")
if len(running):
    text += "\nStill running when these results were collected: " + ", ".join(
        f"{r.mixer} lr {r.lr:g} (step {int(r.step):,})" for _, r in running.iterrows()) + ".\n"
text += "\nRun on a 2-core CPU, one math thread per run, beside other work; checkpoints are not stored here.\n"
(dest / "README.md").write_text(text)
print(f"README: {len(lines)} pilot rows ({complete} mixers complete), {len(rows)} finished runs, {len(running)} running")
