"""The scales of experiment (`ci`, `cpu`, `paper`) are defined once, in `ssm_mech.train.SCALE_SPECS`, and
nothing stored depends on more than that definition: a sweep's run ids are hashes of its configs, so the
`results/*/` folders and the runs still training need every preset to resolve to the same config, byte for byte.

`python tests/test_scales.py PATH [PINS]` writes the whole snapshot (every stored sweep's plan, every experiment
and sweep preset, every scale's experiments) to PATH as JSON, and the digests `PINNED` holds to PINS, so that
two versions of the code can be compared whole."""
import csv, hashlib, json, sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path: sys.path.insert(0, str(ROOT))

import ssm_mech.sweep as S
from ssm_mech.train import EXPERIMENT_PRESETS, SCALE_SPECS, cpu_scale, experiment_preset, scale_spec, scale_task
from ssm_mech.sweep import SWEEP_PRESETS, config_id, load_sweep, plan_sweep, sweep_preset
from ssm_mech.report import SCALES, scale_experiments
from ssm_mech.tasks import task_preset

STORED = sorted(p.parent for p in (ROOT / "results").glob("*/sweep.yaml"))
SWEEP_CONSTS = ("PAPER_LRS", "PAPER_WIDTHS", "PAPER_MIXERS", "CPU_LRS", "CPU_WIDTHS", "CPU_OVERRIDES")


def _plan(sweep) -> list: return [(r.id, r.config, r.label, r.overrides, r.error) for r in plan_sweep(sweep)]


def snapshot() -> dict:
    "Everything the scales feed into, as plain JSON (`repr`s keep tuples apart from lists)."
    return json.loads(json.dumps({
        "stored": {d.name: _plan(load_sweep(d / "sweep.yaml")) for d in STORED},
        "experiments": {n + s: experiment_preset(n + s).to_dict() for n in EXPERIMENT_PRESETS for s in ("", "-cpu")},
        "sweep_presets": {n: _plan(sweep_preset(n)) for n in SWEEP_PRESETS},
        "sweep_preset_fields": {n: dict(vars(s)) for n, s in SWEEP_PRESETS.items()},
        "scale_experiments": {s: {t: c.to_dict() for t, c in scale_experiments(s).items()} for s in SCALES},
        "report_scales": SCALES,
        "obj_reprs": {**{"se/" + s: repr(scale_experiments(s)) for s in SCALES},
                      **{"exp/" + n + x: repr(experiment_preset(n + x)) for n in EXPERIMENT_PRESETS for x in ("", "-cpu")}},
        "reprs": {"SCALES": repr(SCALES), **{n: repr(vars(s)) for n, s in SWEEP_PRESETS.items()},
                  **{k: repr(getattr(S, k)) for k in SWEEP_CONSTS}},
        "sweep_consts": {k: getattr(S, k) for k in SWEEP_CONSTS},
    }, sort_keys=True, default=repr))


def _digest(x) -> str: return hashlib.sha1(json.dumps(x, sort_keys=True).encode()).hexdigest()[:12]


def digests(snap:dict) -> dict:
    "{kind/name: digest} of each experiment preset, sweep preset and scale, and of sweep's constants."
    r, o = snap["reprs"], snap["obj_reprs"]
    return {**{f"experiment/{n}": _digest([v, o["exp/" + n]]) for n, v in snap["experiments"].items()},
            **{f"sweep/{n}": _digest([v, snap["sweep_preset_fields"][n], r[n]]) for n, v in snap["sweep_presets"].items()},
            **{f"scale/{s}": _digest([v, o["se/" + s], snap["report_scales"][s]]) for s, v in snap["scale_experiments"].items()},
            "sweep_constants": _digest([snap["sweep_consts"], [r[k] for k in SWEEP_CONSTS], r["SCALES"]])}


# The digests of the presets as they were when the scales were gathered into `SCALE_SPECS`: the stored results and
# the running lanes were planned from exactly these configs. A preset added later is not pinned; a pinned one that
# changes changes run ids or configs that are already stored (or the scales the report card compares with). The
# stored sweeps themselves are guarded by their ids (`test_stored_runs_are_planned`), so that a sweep.yaml may grow.
# (`python tests/test_scales.py snapshot.json pins.json` writes today's.)
# scale/cpu and sweep_constants were re-pinned when `modern_mixers`, `modern_mixers_atr` and `modern_mixers_mqar` joined the cpu scale's zoos: only the zoo changed (with
# the earlier zoo both equal their earlier pins), no experiment, plan or run id.
# The 26 sweep presets were re-pinned when `SweepConfig` gained its `pilot` field (empty in every preset): with that empty
# field left out of the fields and their repr, all 88 digests equal their earlier pins; no experiment, plan or run id changed.
PINNED = {
    "experiment/ar": "3fead980de3c", "experiment/ar-cpu": "bd4df6ef6f1e", "experiment/ar_1layer": "f84543ab2b6c",
    "experiment/ar_1layer-cpu": "733c90e59ae6", "experiment/ar_3layer": "3d4020cf2d23",
    "experiment/ar_3layer-cpu": "66120deda7a0", "experiment/ar_base_conv_long": "d33c3b8c8a36",
    "experiment/ar_base_conv_long-cpu": "a0195dd3f4eb", "experiment/ar_based_conv1": "86e26fbbd905",
    "experiment/ar_based_conv1-cpu": "7f397e16773d", "experiment/ar_based_conv2": "b0cfc30bdcfa",
    "experiment/ar_based_conv2-cpu": "d667f6247ae4", "experiment/ar_based_conv3": "b711a3bc3f2f",
    "experiment/ar_based_conv3-cpu": "c16c5147755d", "experiment/ar_based_conv4": "a4edfafeb2a9",
    "experiment/ar_based_conv4-cpu": "e6fbb827881a", "experiment/ar_based_long": "8398ea0e4509",
    "experiment/ar_based_long-cpu": "e5f925bdae56", "experiment/ar_gen": "efd1f0e19662",
    "experiment/ar_gen-cpu": "bb32070d48bb", "experiment/ar_mamba_conv0": "eb913f1d9648",
    "experiment/ar_mamba_conv0-cpu": "21c08b3da0a9", "experiment/ar_mamba_conv1": "43aaba403780",
    "experiment/ar_mamba_conv1-cpu": "07ab605c5eb5", "experiment/ar_mamba_conv2": "eb2b04e19d39",
    "experiment/ar_mamba_conv2-cpu": "33e331d2f071", "experiment/ar_mamba_conv3": "9f152eb8c2e7",
    "experiment/ar_mamba_conv3-cpu": "d837d09434af", "experiment/ar_mamba_conv4": "959a9e26eefc",
    "experiment/ar_mamba_conv4-cpu": "1aba4ac0f17f", "experiment/ar_nope": "36fff813eaa9",
    "experiment/ar_nope-cpu": "bdde07c84cc4", "experiment/ar_pe": "227754466320",
    "experiment/ar_pe-cpu": "9af6e949ef65", "experiment/ar_value_first": "7f7d7079e8b3",
    "experiment/ar_value_first-cpu": "66bf05f60b33", "experiment/atr_easy": "82fb196a565a",
    "experiment/atr_easy-cpu": "08d28fb2d975", "experiment/atr_easy_1layer": "06316390d3a7",
    "experiment/atr_easy_1layer-cpu": "6c503340998f", "experiment/atr_easy_3layer": "70d293b1c081",
    "experiment/atr_easy_3layer-cpu": "c1bca7076072", "experiment/atr_easy_8192": "24b6f0b46543",
    "experiment/atr_easy_8192-cpu": "8504be2ea263", "experiment/atr_easy_nope": "7cc4dac1b058",
    "experiment/atr_easy_nope-cpu": "ce2f16d0cdbc", "experiment/atr_easy_pe": "1640cdeaba38",
    "experiment/atr_easy_pe-cpu": "8049130d992a", "experiment/atr_gen": "e78a0b572c55",
    "experiment/atr_gen-cpu": "1c0686abfd19", "experiment/atr_mamba_noconv": "2ea58aa32ce3",
    "experiment/atr_mamba_noconv-cpu": "8d1ae25d2b53", "experiment/atr_medium": "157688548f42",
    "experiment/atr_medium-cpu": "6f7db48c4721", "experiment/atr_sibling": "48953db1f050",
    "experiment/atr_sibling-cpu": "7d0fd3fc9526", "experiment/mqar": "cf8c2bc18a5a",
    "experiment/mqar-cpu": "61ad6297fb9a", "sweep/ar_gen": "da8c73ece614", "sweep/ar_gen-cpu": "1393a90d97af",
    "sweep/ar_main": "e6b018d71d22", "sweep/ar_main-cpu": "4531c157dc3e", "sweep/atr_gen": "30d310ce185a",
    "sweep/atr_gen-cpu": "d9aedbe2fb88", "sweep/atr_main_easy": "be532f1d4b91",
    "sweep/atr_main_easy-cpu": "a53ae9980c83", "sweep/atr_main_easy_8192": "0a87c4b85823",
    "sweep/atr_main_easy_8192-cpu": "830b76c06665", "sweep/atr_main_medium": "4a4cc9c75514",
    "sweep/atr_main_medium-cpu": "0ffbd982d9fb", "sweep/conv_ablation": "4242a387fd15",
    "sweep/conv_ablation-cpu": "c52dcea83233", "sweep/depth_ar": "52feb707eef3", "sweep/depth_ar-cpu": "4ce4119f0574",
    "sweep/depth_atr": "89656bbbd113", "sweep/depth_atr-cpu": "6f05d8904966", "sweep/mqar_main": "baead876cd15",
    "sweep/mqar_main-cpu": "fe69f6069ae6", "sweep/positions_ar": "f2ddcf666de2",
    "sweep/positions_ar-cpu": "dafdb598fe72", "sweep/positions_atr": "ab40ca639a0e",
    "sweep/positions_atr-cpu": "132721c45352", "sweep/sibling": "7b4fda782147", "sweep/sibling-cpu": "abd19dc05c9c",
    "scale/ci": "9ce92c1e5023", "scale/cpu": "7df4daa95074", "scale/paper": "98694aadcd4e",
    "sweep_constants": "898cd19f9ffd"
}


@pytest.fixture(scope="module")
def snap(): return snapshot()


def test_pinned(snap):
    "Every pinned part of the snapshot is unchanged."
    now = digests(snap)
    changed = sorted(k for k, v in PINNED.items() if now.get(k) != v)
    assert not changed, f"changed since pinned (stored run ids or configs depend on them): {changed}"
    assert len(PINNED) > 80   # the pins cover every preset and scale, not a handful


def _stored_ids(folder:Path) -> dict:
    "{where: ids} of the runs a stored sweep folder names: its configs, statuses, runs.csv and results.csv."
    ids = {"configs": {f.stem for f in (folder / "configs").glob("*.yaml")},
           "status": {f.stem for f in (folder / "status").glob("*.json")}}
    for name, col in (("runs.csv", "id"), ("results.csv", "run_id")):
        if (folder / name).exists():
            with open(folder / name, newline="") as f: ids[name] = {row[col] for row in csv.DictReader(f)}
    return ids


@pytest.mark.parametrize("folder", STORED, ids=[d.name for d in STORED])
def test_stored_runs_are_planned(folder, snap):
    """Every run a stored sweep names is one its sweep.yaml plans today, under the same id, or a legacy run: one
    whose stored config predates a task field (ATR's `min_len`, `grammar`, `sampler`) and hashes to its own name."""
    plan = {rid: cfg for rid, cfg, *_ in snap["stored"][folder.name]}
    ids = _stored_ids(folder)
    configs = {f.stem: yaml.safe_load(f.read_text()) for f in (folder / "configs").glob("*.yaml")}
    fields = {k for cfg in plan.values() if "task" in cfg for k in cfg["task"]}
    legacy = {rid for rid, cfg in configs.items() if rid not in plan}
    for rid in legacy:
        assert set(configs[rid]["task"]) < fields, f"{folder.name}: stored run {rid} is not planned by its sweep.yaml today"
    for where, got in ids.items():
        assert got <= set(plan) | legacy, f"{folder.name}/{where}: runs {sorted(got - set(plan) - legacy)[:5]} are not planned today"
    for rid, cfg in configs.items():
        assert config_id(cfg) == rid, f"{folder.name}/configs/{rid}.yaml: the config does not hash to its name"


def test_the_guard_has_something_to_guard(snap):
    "Most stored sweeps hold finished runs (a sweep still training may hold none yet), most of them planned today."
    assert sum(bool(_stored_ids(d)["configs"]) for d in STORED) >= 20
    planned = {rid for plan in snap["stored"].values() for rid, *_ in plan}
    stored = set().union(*(_stored_ids(d)["configs"] for d in STORED))
    assert len(stored & planned) >= 100, len(stored & planned)   # 152 when written


def test_report_reads_the_registry():
    "The report card's scales are `SCALE_SPECS`'s: same names, learning rates, dissection n, widths, steps."
    assert list(SCALES) == list(SCALE_SPECS) == ["ci", "cpu", "paper"]
    for s, sc in SCALE_SPECS.items():
        assert (SCALES[s]["lrs"], SCALES[s]["dissect_n"]) == (sc.lrs, sc.dissect_n)
        for t, cfg in scale_experiments(s).items():
            assert cfg.model.d_model == sc.d_model, (s, t)
            assert cfg.train.max_steps == sc.steps, (s, t)
            assert cfg.train.eval_every == sc.eval_every, (s, t)
    ci = scale_experiments("ci")
    assert ci["ar"].task == task_preset("ar_32", **scale_spec("ci").tasks["ar"])
    assert scale_experiments("cpu")["mqar"].task == task_preset("mqar_small")   # the tasks page's CPU-sized MQAR


def test_sweeps_read_the_registry():
    "Every sweep preset's grid is its scale's: the paper grid, or the `ci` grid on a `-cpu` experiment preset."
    paper, ci = scale_spec("paper").sweep, scale_spec("ci").sweep
    assert (S.PAPER_LRS, S.PAPER_WIDTHS, S.CPU_LRS, S.CPU_WIDTHS) == (list(paper.lrs), list(paper.widths), list(ci.lrs), list(ci.widths))
    for n, sw in SWEEP_PRESETS.items():
        sc = ci if n.endswith("-cpu") else paper
        assert sw.axes["model.d_model"] == list(sc.widths), n
        assert set(sw.axes["train.lr"]) <= set(sc.lrs) and sw.axes["train.lr"], n
        assert sw.base.endswith(sc.suffix), n
        atr = sw.base.startswith("atr")
        assert sw.overrides == {**sc.overrides, **(sc.atr_overrides if atr else {})}, n


def test_cpu_scale_is_the_registry():
    "`cpu_scale` sets exactly the `cpu` scale's task sizes, training fields, cadence and initialisation."
    sc = scale_spec("cpu")
    for name in ("ar", "atr_easy", "atr_sibling", "mqar"):
        base, c = experiment_preset(name), experiment_preset(name + "-cpu")
        for k, v in sc.tasks[base.task.task].items():
            want = min(v, base.task.max_len) if k == "max_len" else v
            assert getattr(c.task, k) == want, (name, k)
        assert all(getattr(c.train, k) == v for k, v in sc.train.items()), name
        assert (c.train.max_steps, c.train.eval_every, c.train.checkpoint_every, c.model.init) == (sc.steps, sc.eval_every, sc.eval_every, sc.init)
    assert cpu_scale(experiment_preset("ar"), steps=50).train.eval_every == 10   # five evaluations at any length
    assert scale_task(task_preset("atr_easy", max_len=40), "cpu").max_len == 40   # max_len is a ceiling
    with pytest.raises(ValueError, match="valid scales: ci, cpu, paper"): scale_spec("gpu")


if __name__ == "__main__":
    out = snapshot()
    Path(sys.argv[1]).write_text(json.dumps(out, sort_keys=True, indent=0))
    if len(sys.argv) > 2: Path(sys.argv[2]).write_text(json.dumps(digests(out), sort_keys=True, indent=1) + "\n")
