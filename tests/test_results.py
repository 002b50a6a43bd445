"""The stored result tables stay valid: every site a stored patching table names is a hook point of
the model its run trained, under today's hook names (see `upgrade_hook` in the interventions page)."""
from pathlib import Path

import pandas as pd
import pytest

from ssm_mech.model import LanguageModel
from ssm_mech.runs import ExperimentConfig

ROOT = Path(__file__).resolve().parents[1]
TABLES = sorted((ROOT / "results").glob("*/patching/*.csv"))


@pytest.mark.parametrize("table", TABLES, ids=[f"{p.parts[-3]}/{p.stem}" for p in TABLES])
def test_stored_sites_are_hook_points(table):
    cfg = ExperimentConfig.from_yaml((table.parents[1] / "configs" / f"{table.stem}.yaml").read_text())
    hooks = set(LanguageModel(cfg.resolve().model).hook_names())
    sites = set(pd.read_csv(table).hook)
    assert sites <= hooks, f"{table}: {sorted(sites - hooks)} are not hook points of a {cfg.model.mixer} model"


# The stored sweeps as the reader sees them, and the scoreboard against the paper's numbers (07_results).
import tomllib

from ssm_mech.results import (CELL, StoredSweep, cell_status, is_paper_scale, paper_cell, paper_numbers, paper_runs,
                              paper_variant, scoreboard, stored_sweeps)
from ssm_mech.sweep import load_sweep, plan_sweep

RESULTS = ROOT / "results"
SWEEPS = sorted(p for p in RESULTS.iterdir() if (p / "sweep.yaml").exists())


def test_paper_numbers_ship_with_the_package():
    paper = paper_numbers()
    assert len(paper) == 295 and not paper.duplicated(list(CELL)).any()
    assert set(paper.task) == {"ar", "atr-easy", "atr-medium", "atr-8192", "atr-gen"}
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["ssm_mech"]
    assert "data/*.csv" in data and (ROOT / "ssm_mech" / "data" / "paper_reported_accuracy.csv").exists()


@pytest.mark.parametrize("mixer, kwargs, variant", [
    ("mamba", {}, ""), ("mamba", {"d_conv": 4}, ""), ("mamba", {"d_conv": 0}, "d_conv=0"), ("mamba", {"d_conv": 3.0}, "d_conv=3"),
    ("based", {"kernel_size": 3}, ""), ("based", {"kernel_size": 1}, "kernel_size=1"), ("based", {"kernel_size": -1}, "kernel_size=-1"),
    ("attention", {}, ""), ("hyena", {"d_conv": 4}, None), ("based", {"kernel_size": 2, "feature_dim": 8}, None)])
def test_variant_mapping(mixer, kwargs, variant):
    got, why = paper_variant(mixer, kwargs)
    assert got == variant and (why == "") == (variant is not None)


@pytest.mark.parametrize("paper, lo, hi, status", [
    (0.75, 0.80, 0.84, "agrees"), (0.7499, 0.80, 0.84, "differs"), (0.89, 0.80, 0.84, "agrees"), (0.8901, 0.80, 0.84, "differs"),
    (0.95, 1.0, 1.0, "agrees"), (0.9499, 1.0, 1.0, "differs"), (0.0, 0.0, 0.0, "agrees"), (0.5, float("nan"), float("nan"), "not run")])
def test_status_rule_at_its_bounds(paper, lo, hi, status):
    assert cell_status(paper, lo, hi) == status


@pytest.mark.parametrize("path", SWEEPS, ids=[p.name for p in SWEEPS])
def test_reader_status_follows_the_plan(path):
    plan = plan_sweep(load_sweep(path / "sweep.yaml"))
    st = StoredSweep(path, plan=plan).status()
    assert list(st.run_id[:len(plan)]) == [p.id for p in plan]
    assert set(st.state) <= {"finished", "partial", "pending", "unplanned"}
    if not (path / "results.csv").exists() and not (path / "configs").exists():   # only sweep.yaml so far: every run pending
        assert list(st.state) == ["pending"] * len(plan)
    else:                                                                          # every stored run is planned (by id or label)
        assert "unplanned" not in set(st.state), st[st.state == "unplanned"]


def test_every_stored_paper_scale_run_maps_to_one_cell_or_says_why():
    paper, runs = paper_numbers(), paper_runs(RESULTS)
    scale = [s for s in stored_sweeps(RESULTS) if is_paper_scale(s.spec)]
    assert {s.name for s in scale} >= {"ar32_d64", "ar32_widths", "ar32_conv", "ar32_depth_pos", "atr_paper100k", "atr_gen_paper100k"}
    assert not {s.name for s in stored_sweeps(RESULTS) if s.spec["base"].endswith("-cpu")} & set(runs.sweep)
    assert len(runs) == sum(len(s.runs()) for s in scale)
    for r in runs.to_dict("records"):
        cell, why = paper_cell(r, paper)
        if r["unmatched"]: assert cell is None and why == r["unmatched"], r["key"]
        else:
            assert why == "" and ((paper[list(CELL)] == pd.Series(cell)).all(axis=1)).sum() == 1, r["key"]
            assert {k: r[k] for k in CELL} == cell, r["key"]


def test_scoreboard_on_the_stored_results_follows_its_rules():
    board, runs = scoreboard(RESULTS), paper_runs(RESULTS)
    ran = board[board.status != "not run"]
    assert len(ran) >= 29 and not board.duplicated(list(CELL)).any()
    paper_order = runs.get("train.shuffle", pd.Series("", index=runs.index)).astype(str).str.lower().isin(["false", "0"])
    done = runs[(runs.unmatched == "") & (runs.state == "finished") & (runs["train.seed"] == 0) & ~paper_order]   # a run in the paper's data order tests that difference, no try at the cell
    for r in ran.to_dict("records"):
        assert r["status"] == cell_status(r["paper"], r["lo"], r["hi"]) and r["one_lr"] == (r["n_lrs"] == 1)
        mine = done[(done[list(CELL)] == pd.Series({k: r[k] for k in CELL})).all(axis=1)]
        assert r["n_lrs"] == mine["train.lr"].nunique() and r["lo"] <= r["ours"] <= r["hi"]
        select = "dev_acc" if r["task"] == "atr-gen" else "test_acc"
        assert mine.loc[mine[select].idxmax(), "test_acc"] == r["ours"], r["cell"]
        if r["verdict"] not in ("induction", "direct retrieval") or pd.isna(r["paper_mechanism"]): assert pd.isna(r["verdict_agrees"])
        else: assert r["verdict_agrees"] == (r["verdict"] == r["paper_mechanism"])


def test_stored_sweep_keeps_run_ids_inside(tmp_path):
    "A run id comes from results.csv or a file name, which is data: it never leads a read outside the folder."
    from ssm_mech.results import StoredSweep
    from ssm_mech.runs import ConfigError
    (tmp_path / "outside.csv").write_text("corruption,association\nkey,1.0\n")
    (tmp_path / "outside.yaml").write_text("model: {mixer: attention}\n")
    (tmp_path / "sw" / "patching").mkdir(parents=True)
    s = StoredSweep(tmp_path / "sw")
    for read, rid in ((s.patching, "../../outside"), (s.config, "../../outside"), (s.mechanism, "/etc/passwd"), (s.run_status, "../x")):
        with pytest.raises(ConfigError, match="not a plain name"): read(rid)
    assert s.config("absent") == {} and s.mechanism("absent") is None and len(s.patching("absent")) == 0   # plain ids as before


# The reader's questions the chapters ask (07_results: effect, queries, status_text, chosen_runs, mixer_verdicts).
from ssm_mech.results import MIN_EFFECT, chosen_runs, finding_word, accuracy_checks, mixer_verdicts

PATCHED = sorted({p.parents[1] for p in TABLES})


@pytest.mark.parametrize("path", PATCHED, ids=[p.name for p in PATCHED])
def test_effect_is_every_sites_o_minus_c(path):
    "`effect` is O − C of the corruption, the same at every site of it (one clean and one corrupted run per corruption)."
    sw = StoredSweep(path)
    for f in sorted((path / "patching").glob("*.csv"))[:3]:
        t = pd.read_csv(f)
        for c, g in t.groupby("corruption"):
            assert (g.O - g.C).max() - (g.O - g.C).min() < 1e-9, (f, c)
            assert sw.effect(f.stem, c) == pytest.approx(float(g.O.iloc[0] - g.C.iloc[0]))
        m = sw.mechanism(f.stem)
        if m and m.get("o_minus_c") is not None and "key" in set(t.corruption):   # the verdict's O - C is the key corruption's
            assert sw.effect(f.stem) == pytest.approx(m["o_minus_c"], abs=1e-6), f


def test_queries_one_row_per_query_asked():
    sw = StoredSweep(RESULTS / "mqar")
    done = sw.runs().query("state == 'finished'")
    assert len(done) >= 4
    for rid, n in zip(done.run_id, done["task.n_queries"]):
        q = sw.queries(rid)
        assert q["query"].tolist() == list(range(int(n))), rid
        assert set(q.mechanism) <= {"induction", "direct retrieval", "unresolved"}
        resolved = q[q.mechanism != "unresolved"]
        assert (resolved.o_minus_c >= MIN_EFFECT).all() and (resolved.accuracy >= 0.5).all(), rid


@pytest.mark.parametrize("path", SWEEPS, ids=[p.name for p in SWEEPS])
def test_status_text_counts_what_status_counts(path):
    sw = StoredSweep(path, plan=plan_sweep(load_sweep(path / "sweep.yaml")))
    st = sw.status()
    planned = st[st.state != "unplanned"]
    text = sw.status_text()
    assert text.startswith(f"{(planned.state == 'finished').sum()} of {len(planned)} planned run"), text
    for label in planned[planned.state != "finished"].label: assert label in text
    assert sw.status_text(list_rest=False).endswith("finished.")


def test_chosen_runs_are_the_scoreboards():
    board = scoreboard(RESULTS)
    cr = chosen_runs(board, RESULTS)
    assert cr.index.tolist() == board.cell.tolist()
    assert cr.run_id.tolist() == board.run_id.tolist() and cr.test_acc.tolist() == board.ours.tolist()
    assert finding_word(accuracy_checks(board)) in {"reproduced", "partly"}          # every cell here was run: none untested


def test_mixer_verdicts_read_the_best_stored_run():
    "Per task, the finished run of the mixer with the best test accuracy over the learning rate among the task's sweeps."
    zoo = {"ar": ["ar_main", "extra_mixers"], "atr": ["atr_easy", "extra_mixers_atr"], "mqar": ["mqar"]}
    for mixer in ("deltanet", "mamba", "attention", "mamba2"):
        mv = mixer_verdicts(mixer, zoo, RESULTS)
        for task, names in zoo.items():
            runs = pd.concat([StoredSweep(RESULTS / n).runs().assign(sweep=n) for n in names], ignore_index=True)
            runs = runs[(runs["model.mixer"] == mixer) & (runs.state == "finished")]
            rows = mv[mv.task == task]
            if runs.empty: assert rows.empty; continue
            assert set(rows.run_id) == {runs.loc[runs.test_acc.idxmax(), "run_id"]}, (mixer, task)
            assert (rows.test_acc == runs.test_acc.max()).all()


def test_mixer_sites_tool_patches_every_mixer_hook(finished_run, tmp_path):
    "tools/mixer_sites.py writes, per finished run, a patching table of every hook point inside its mixers, which StoredSweep reads; a second call skips it."
    import shutil, subprocess, sys
    from conftest import ROOT, cli_env
    from ssm_mech.core import hook_points
    from ssm_mech.runs import Run
    sweep = tmp_path / "sweep"; shutil.copytree(finished_run, sweep / "runs" / "abc123")
    dest = tmp_path / "results" / "tiny"; dest.mkdir(parents=True)
    tool = [sys.executable, str(ROOT / "tools" / "mixer_sites.py"), str(sweep), str(dest), "--n", "8"]
    r = subprocess.run(tool, env=cli_env(), capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-3000:]
    s = StoredSweep(dest).mixer_sites("abc123")
    hooks = [h for h in hook_points(Run(finished_run).model()) if ".mixer.hook_" in h]
    assert set(s["hook"]) == set(hooks) and (s["corruption"] == "key").all()
    assert set(s["position"]) <= {"key", "value", "next_key", "value+2", "query"} and {"key", "query"} <= set(s["position"])
    first = (dest / "mixer_sites" / "abc123.csv").stat().st_mtime_ns
    assert subprocess.run(tool, env=cli_env(), capture_output=True, text=True).returncode == 0
    assert (dest / "mixer_sites" / "abc123.csv").stat().st_mtime_ns == first      # already there: skipped


def test_per_document_tool_agrees_with_evaluate(finished_run, tmp_path):
    "tools/per_document.py writes one row per test document; its accuracy is `evaluate`'s on the test split, and each queried token occurs in its document."
    import shutil, subprocess, sys
    from conftest import ROOT, cli_env
    from ssm_mech.runs import Run
    from ssm_mech.train import evaluate
    run_dir = tmp_path / "sweep" / "runs" / "abc123"; shutil.copytree(finished_run, run_dir)
    dest = tmp_path / "results" / "tiny"; dest.mkdir(parents=True)
    r = subprocess.run([sys.executable, str(ROOT / "tools" / "per_document.py"), str(dest), str(run_dir)], env=cli_env(), capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-3000:]
    df = pd.read_csv(dest / "per_document" / "abc123.csv")
    run = Run(run_dir); ds = run.dataset("test")
    assert list(df.columns) == ["doc", "length", "query_count", "key_value_distance", "correct"]
    assert list(df.doc) == list(range(len(ds)))
    assert df.correct.mean() == pytest.approx(evaluate(run.model(), ds)["acc"])
    assert (df.query_count >= 1).all() and (df.key_value_distance == (ds.positions["value"] - ds.positions["key"]).numpy()).all()
    assert (df.length == (ds.positions["divider"] - 1).numpy()).all()


def test_pilot_rule_reproduces_the_stored_decision():
    """`pilot_ranks` on ar32_d64's stored logs gives the ranks of its pilot table (recorded when the pilots ran), and the two it
    marks per mixer are exactly the runs that went on past the pilot: the rule the chapters state is the one that was applied."""
    from ssm_mech.results import pilot_ranks
    sw = StoredSweep(ROOT / "results" / "ar32_d64")
    ours = pilot_ranks(sw.table, lrs=load_sweep(sw.path / "sweep.yaml").axes["train.lr"]).set_index("run_id")
    recorded = pd.read_csv(sw.path / "pilot.csv", dtype={"run_id": str}).set_index("run_id")
    recorded["rank"] = recorded.groupby("mixer").dev_loss.rank(method="first").astype(int)
    assert sorted(ours.index) == sorted(recorded.index) and ours["rank"].notna().all()
    assert (ours["rank"].astype(int) == recorded["rank"]).all()
    went_on = set(sw.table.query("step > 5000").run_id)
    assert set(ours.index[ours.continues]) == went_on and len(went_on) == 2 * recorded.mixer.nunique()
