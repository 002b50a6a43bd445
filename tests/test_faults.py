"""Faults: two writers, a stale lock, a damaged checkpoint, a kill during a checkpoint write, a resume between two
loss logs, Ctrl-C, a sweep with failed runs. Each runs the real thing (a second process, a SIGKILL) on a tiny config."""
import json, os, re, shutil, signal, subprocess, sys, textwrap, time
from pathlib import Path

import pandas as pd
import pytest
import torch

from conftest import CLI, ROOT, cli_env, interrupt_cli_train, tiny_config
from ssm_mech.cli import main
from ssm_mech.core import TMP_SUFFIX
from ssm_mech.results import read_runs_csv
from ssm_mech.runs import LOCK_FILE, DirectoryLocked, Run, read_status
from ssm_mech.sweep import SweepConfig, plan_sweep, run_sweep
from ssm_mech.train import latest_checkpoint, train

def hold_lock(path:Path) -> subprocess.Popen:
    "A second process holding `path`'s lock until it is killed."
    code = f"import sys, time; from ssm_mech.runs import DirLock; DirLock({str(path)!r}).acquire(); print('held', flush=True); time.sleep(120)"
    p = subprocess.Popen([sys.executable, "-c", code], env=cli_env(), stdout=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == "held"
    return p

def same_weights(a, b):
    for (k, x), (_, y) in zip(a.state_dict().items(), b.state_dict().items()): assert torch.equal(x, y), k

@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory):
    d = tmp_path_factory.mktemp("full") / "run"
    return train(tiny_config(), d, progress=False), d

def test_second_writer_refused(tmp_path, capsys):
    run_dir = tmp_path / "run"
    holder = hold_lock(run_dir)
    try:
        with pytest.raises(DirectoryLocked) as e: train(tiny_config(), run_dir, progress=False)
        assert str(run_dir) in str(e.value) and f"pid {holder.pid}" in str(e.value) and os.uname().nodename in str(e.value)
        capsys.readouterr()
        assert main(["train", "ar-cpu", "--run-dir", str(run_dir), "--resume", "--no-progress"]) == 2   # the CLI too
        assert f"is in use by pid {holder.pid}" in capsys.readouterr().err
        assert sorted(p.name for p in run_dir.iterdir()) == [LOCK_FILE]          # nothing written by the refused ones
        with pytest.raises(DirectoryLocked): run_sweep(SweepConfig("s", tiny_config()), run_dir, progress=False)  # a sweep dir alike
    finally: holder.kill(); holder.wait()

def test_stale_lock_taken_over(tmp_path, capsys):
    run_dir = tmp_path / "run"
    holder = hold_lock(run_dir); holder.kill(); holder.wait()         # killed: its .lock file stays behind
    assert (run_dir / LOCK_FILE).exists()
    res = train(tiny_config(), run_dir, progress=False)
    assert f"taking over the stale lock of pid {holder.pid}" in capsys.readouterr().err
    assert res.steps == 8 and not (run_dir / LOCK_FILE).exists()

def test_corrupted_newest_checkpoint_falls_back(tmp_path, uninterrupted, capsys):
    run_dir = tmp_path / "run"; cfg = tiny_config(checkpoint_every=2, keep_checkpoints=3)
    train(cfg, run_dir, progress=False, stop_at=6)                   # checkpoints at 2, 4, 6
    newest = latest_checkpoint(run_dir / "checkpoints"); assert newest.name == "step_0000006.json"
    newest.with_suffix(".safetensors").write_bytes(newest.with_suffix(".safetensors").read_bytes()[:500])  # truncated
    (run_dir / "checkpoints" / "step_0000004.json").write_text("{}")  # and the one before has no optimiser state
    capsys.readouterr()
    res = train(cfg, run_dir, progress=False, resume=True)
    err = capsys.readouterr().err
    assert "skipped checkpoint" in err and "step_0000006" in err and "step_0000004" in err and "param_groups" in err, err
    same_weights(res.model, uninterrupted[0].model)
    assert read_status(run_dir)["sessions"][-1]["from_step"] == 2

def test_resumed_metrics_equal_uninterrupted(tmp_path, uninterrupted):
    run_dir = tmp_path / "run"
    train(tiny_config(), run_dir, progress=False, stop_at=5)          # between the loss logs at 3 and 6
    res = train(tiny_config(), run_dir, progress=False, resume=True)
    same_weights(res.model, uninterrupted[0].model)
    assert (run_dir / "metrics.csv").read_text() == (uninterrupted[1] / "metrics.csv").read_text()

KILL_IN_WRITE = textwrap.dedent('''
    import os, signal, sys
    import ssm_mech.model as M, ssm_mech.train as T
    from conftest import tiny_config
    real = M.save_file
    def dying(tensors, path):                  # the second checkpoint: half a file, then SIGKILL
        if "step_0000004" in str(T._last_name):
            open(path, "wb").write(b"half"); os.kill(os.getpid(), signal.SIGKILL)
        real(tensors, path)
    orig = T.save_checkpoint
    def save_checkpoint(ckpt_dir, step, *a, **k):
        T._last_name = T._ckpt_name(step); return orig(ckpt_dir, step, *a, **k)
    T._last_name = ""; M.save_file = dying; T.save_checkpoint = save_checkpoint   # save_tensors (model) writes checkpoints
    T.train(tiny_config(checkpoint_every=2), sys.argv[1], progress=False)
''')

def test_kill_during_checkpoint_write(tmp_path, uninterrupted, capsys):
    run_dir = tmp_path / "run"
    r = subprocess.run([sys.executable, "-c", KILL_IN_WRITE, str(run_dir)], env={**cli_env(), "PYTHONPATH": f"{ROOT}:{ROOT / 'tests'}"},
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == -signal.SIGKILL, r.stderr
    left = list(run_dir.rglob(".*.tmp")); assert left                       # the kill left a temporary file
    st = read_status(run_dir); assert st["status"] == "running" and st["step"] == 2 and st["seconds"] > 0
    killed_seconds = st["seconds"]                                          # recorded at the checkpoint of step 2
    capsys.readouterr()
    res = train(tiny_config(checkpoint_every=2), run_dir, progress=False, resume=True)
    err = capsys.readouterr().err
    assert not list(run_dir.rglob(".*.tmp")) and "removed 1 temporary file" in err, err
    assert "previous session stopped abruptly" in err and "marked 'killed'" in err and "taking over the stale lock" in err
    st = read_status(run_dir)
    assert st["status"] == "finished" and len(st["sessions"]) == 2 and st["seconds"] > killed_seconds
    same_weights(res.model, uninterrupted[0].model)
    assert (run_dir / "metrics.csv").read_text() == (uninterrupted[1] / "metrics.csv").read_text()

def test_killed_session_time_is_kept(tmp_path):
    run_dir = tmp_path / "run"
    train(tiny_config(), run_dir, progress=False, stop_at=4)
    Run(run_dir).write_status(status="running", seconds=100.0)       # as a kill -9 after a checkpoint leaves it
    train(tiny_config(), run_dir, progress=False, resume=True)
    st = read_status(run_dir)
    assert st["status"] == "finished" and st["seconds"] > 100.0

def test_ctrl_c_on_the_cli(tmp_path):
    # as at a terminal: the CLI starts with SIGINT at its default, even where this test process was started with
    # SIGINT ignored (a launcher in the background), which a child would otherwise inherit, and Ctrl-C would be lost
    returncode, err = interrupt_cli_train(tmp_path, signal.SIGINT)
    assert returncode == 130 and len(err.strip().splitlines()) == 1 and "interrupted" in err and "--resume" in err, err
    assert read_status(tmp_path / "run")["status"] == "interrupted" and not (tmp_path / "run" / LOCK_FILE).exists()

def test_redirected_progress_is_plain_lines(tmp_path):
    cfg = tmp_path / "t.yaml"; cfg.write_text(tiny_config(max_steps=20).to_yaml())
    r = subprocess.run(CLI + ["train", str(cfg), "--run-dir", "run"], cwd=tmp_path, env=cli_env(), capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and "\r" not in r.stderr and "tiny: 20/20 steps" in r.stderr, r.stderr
    assert (tmp_path / "run" / "config.yaml").stat().st_mode & 0o777 == 0o666 & ~_umask()   # the user's umask, not 0600

def _umask():
    m = os.umask(0o022); os.umask(m); return m

def test_sweep_with_failures(tmp_path, monkeypatch, capsys):
    import ssm_mech.sweep as S
    sw = SweepConfig("s", tiny_config(), axes={"train.lr": [-1.0, 1e-3, 2e-3]})
    (tmp_path / "s.yaml").write_text(sw.to_yaml())
    seen, real = {}, S._run_one
    def spy(job):   # what runs.csv says as each run starts
        seen[job["id"]] = {r["id"]: r["status"] for r in read_runs_csv(tmp_path / "sw" / "runs.csv")}
        return real(job)
    monkeypatch.setattr(S, "_run_one", spy)
    capsys.readouterr()
    assert main(["sweep", str(tmp_path / "s.yaml"), "--dir", str(tmp_path / "sw"), "--no-progress"]) == 1
    assert "1 of 3 runs failed" in capsys.readouterr().err
    ids = [p.id for p in plan_sweep(sw)]
    assert seen[ids[1]][ids[1]] == "running" and seen[ids[1]][ids[0]] == "failed" and seen[ids[1]][ids[2]] == "pending"
    assert seen[ids[2]][ids[1]] == "finished"
    assert sorted(r["status"] for r in read_runs_csv(tmp_path / "sw" / "runs.csv")) == ["failed", "finished", "finished"]

def test_packed_members_are_locked(tmp_path):
    from ssm_mech.packed import train_packed
    dirs = [tmp_path / "a", tmp_path / "b"]
    holder = hold_lock(dirs[1])                                   # another process writes into the second member
    try:
        with pytest.raises(DirectoryLocked) as e:
            train_packed([tiny_config(seed=1), tiny_config(seed=2)], dirs, progress=False)
        assert str(dirs[1]) in str(e.value) and f"pid {holder.pid}" in str(e.value)
        assert not dirs[0].exists() or [p.name for p in dirs[0].iterdir()] == []   # the free member was left untouched
    finally: holder.kill(); holder.wait()
    res = train_packed([tiny_config(seed=1), tiny_config(seed=2)], dirs, progress=False)   # the stale lock is taken over
    assert [r.steps for r in res] == [8, 8] and not any((d / LOCK_FILE).exists() for d in dirs)

# ---------------------------------------------------------------------------------- one pre-flight, solo or packed

def _temp_files(d:Path):
    (d / f".metrics.csv.a1b2{TMP_SUFFIX}").write_text("half a write"); (d / "checkpoints" / f".step_0000008.json.c3d4{TMP_SUFFIX}").write_text("{")

def _only_temp_files(d:Path):
    shutil.rmtree(d); d.mkdir(); (d / f".config.yaml.e5f6{TMP_SUFFIX}").write_text("half a write")

FAULTS = {   # name: (fault made in a run stopped at step 4 of 8, the trainer's arguments, train config changes, expected error)
    "only stale temp files":         (_only_temp_files, {}, {}, None),
    "stale temp files, resumed":     (_temp_files, dict(resume=True), {}, None),
    "stale temp files, not resumed": (_temp_files, {}, {}, "FileExistsError"),
    "killed run, resumed":           (lambda d: Run(d).write_status(status="running", seconds=50.0), dict(resume=True), {}, None),
    "killed run, not resumed":       (lambda d: Run(d).write_status(status="running", seconds=50.0), {}, {}, "FileExistsError"),
    "missing config.yaml":           (lambda d: (d / "config.yaml").unlink(), dict(resume=True), {}, "ConfigError"),
    "another config":                (None, dict(resume=True), dict(lr=5e-3), "ConfigError"),
    "resume and overwrite":          (None, dict(resume=True, overwrite=True), {}, "ConfigError"),
    "locked":                        ("lock", dict(resume=True), {}, "DirectoryLocked"),
}

@pytest.fixture(scope="module")
def stopped(tmp_path_factory) -> dict:
    "Runs of seeds 1 and 2 stopped after step 4 of 8 (copy them before changing them)."
    root = tmp_path_factory.mktemp("stopped")
    for seed in (1, 2): train(tiny_config(seed=seed), root / str(seed), progress=False, stop_at=4)
    return {seed: root / str(seed) for seed in (1, 2)}

def _outcome(kind:str, root:Path, stopped:dict, fault:str, capsys) -> dict:
    "What training `kind` ('solo', or 'packed' as the first of two members) does to a faulty directory: error, words, the directory after."
    from ssm_mech.packed import train_packed
    make, kwargs, changes, _ = FAULTS[fault]
    dirs = [root / "run"] + ([root / "other"] if kind == "packed" else [])
    for k, d in enumerate(dirs):
        shutil.copytree(stopped[k + 1], d)
        if callable(make): make(d)
    d, holder, error = dirs[0], hold_lock(dirs[0]) if make == "lock" else None, None
    cfgs = [tiny_config(seed=k + 1, **changes) for k in range(len(dirs))]
    capsys.readouterr()
    try:
        if kind == "solo": train(cfgs[0], d, progress=False, **kwargs)
        else: train_packed(cfgs, dirs, progress=False, **kwargs)
    except Exception as e: error = (type(e).__name__, str(e))
    finally:
        if holder: holder.kill(); holder.wait()
    said = [l for l in capsys.readouterr().err.splitlines() if str(d) in l]
    norm = lambda s: re.sub(r"pid \d+|\(since [^)]*\)", "…", s.replace(str(d), "<run>"))
    st = read_status(d)
    return dict(error=error and (error[0], norm(error[1])), said=[norm(l) for l in said], status=st.get("status"), step=st.get("step"),
                sessions=len(st.get("sessions", [])), files=sorted(p.relative_to(d).as_posix() for p in d.rglob("*") if p.name != LOCK_FILE))

@pytest.mark.parametrize("fault", list(FAULTS))
def test_faulty_directory_same_for_solo_and_packed(tmp_path, stopped, fault, capsys):
    "`train` and `train_packed` prepare a run directory through one pre-flight (`prepare_run_dir`): the same fault, the same outcome."
    solo = _outcome("solo", tmp_path / "solo", stopped, fault, capsys)
    packed = _outcome("packed", tmp_path / "packed", stopped, fault, capsys)
    assert solo == packed
    expected = FAULTS[fault][3]
    assert (solo["error"] or [None])[0] == expected, solo
    if expected is None: assert solo["status"] == "finished" and solo["step"] == 8 and not any(f.endswith(TMP_SUFFIX) for f in solo["files"])
    if "temp files" in fault: assert any("temporary file(s) left by an interrupted write" in l for l in solo["said"]), solo["said"]
    if fault.startswith("killed"):
        assert any("marked 'killed', its 50 s are kept" in l for l in solo["said"]), solo["said"]
        assert solo["status"] == ("finished" if expected is None else "killed")
    if fault == "missing config.yaml": assert "config.yaml is missing" in solo["error"][1]
    if fault == "another config": assert "config differs from this one at train.lr" in solo["error"][1]

# ---- issue #32: a full disk, a damaged metrics.csv, and the report card's time limits and signals ----------------
SSM = [str(ROOT / ".venv" / "bin" / "ssm-mech")] if (ROOT / ".venv" / "bin" / "ssm-mech").exists() else CLI

def snapshot(root:Path) -> dict:
    "Every path under `root` (links not followed) with its size, modification time and, for files, content."
    return {str(p.relative_to(root)): (p.is_symlink(), p.is_dir(), p.lstat().st_size, p.lstat().st_mtime_ns,
                                       p.read_bytes() if p.is_file() and not p.is_symlink() else None) for p in sorted(root.rglob("*"))}

def one_line(err:str, *expected):
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    for s in expected: assert s in err, (s, err)

def _small_files(limit:int):
    "For `preexec_fn`: files larger than `limit` bytes cannot be written (EFBIG, as a full disk gives ENOSPC), and no signal kills."
    def setup():
        import resource
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return setup

def test_disk_full_during_train(tmp_path):
    "safetensors' own error on a failed write is one line naming the file; nothing is half-written and the run is marked failed."
    (tmp_path / "tiny.yaml").write_text(tiny_config().to_yaml())
    r = subprocess.run(SSM + ["train", "tiny.yaml", "--run-dir", "run", "--no-progress"], cwd=tmp_path, capture_output=True, text=True,
                       env={**cli_env(), "PYTHONDONTWRITEBYTECODE": "1"}, timeout=300, preexec_fn=_small_files(100_000))
    assert r.returncode == 2, r.stderr
    one_line(r.stderr, "File too large", "safetensors could not write the file", "run/checkpoints/step_0000004.safetensors")
    run = tmp_path / "run"
    assert not list(run.rglob(f"*{TMP_SUFFIX}")) and not (run / "final.safetensors").exists()
    assert not list((run / "checkpoints").glob("*")), "a checkpoint without its other half"
    st = read_status(run); assert st["status"] == "failed" and "File too large" in st["error"], st
    res = train(tiny_config(), run, progress=False, resume=True)                  # once there is room: resumed from step 0
    assert res.steps == 8 and read_status(run)["status"] == "finished"

def test_resume_with_a_damaged_metrics_csv(tmp_path, uninterrupted, monkeypatch, capsys):
    "Damaged lines of metrics.csv (a crash mid-line, an edit) are dropped with one line; the resumed run logs what an uninterrupted one does."
    run = tmp_path / "run"; train(tiny_config(), run, progress=False, stop_at=5)
    m = run / "metrics.csv"
    m.write_text(m.read_text().replace("step,split,metric,value\n", "") + "7,dev\n\x00garbage\nstep,acc,,\n")
    (tmp_path / "tiny.yaml").write_text(tiny_config().to_yaml()); monkeypatch.chdir(tmp_path); capsys.readouterr()
    assert main(["train", "tiny.yaml", "--resume", "--run-dir", "run", "--no-progress"]) == 0
    assert "metrics file run/metrics.csv: dropped 3 damaged line(s)" in capsys.readouterr().err
    assert m.read_text() == (uninterrupted[1] / "metrics.csv").read_text()

def test_collect_with_a_damaged_metrics_csv(tmp_path, uninterrupted, capsys):
    "collect reads the intact rows of a damaged metrics.csv instead of aborting the whole table with KeyError: 'step'."
    sw = tmp_path / "sw"; shutil.copytree(uninterrupted[1], sw / "runs" / "a1b2c3"); shutil.copytree(uninterrupted[1], sw / "runs" / "d4e5f6")
    (sw / "runs.csv").write_text("id,label,status\na1b2c3,a,finished\nd4e5f6,b,finished\n")
    (sw / "runs" / "d4e5f6" / "metrics.csv").write_bytes(b"\x00\xff,broken\nstep\n3,train,loss\n")
    capsys.readouterr()
    assert main(["collect", str(sw)]) == 0, capsys.readouterr().err
    df = pd.read_csv(sw / "results.csv", dtype={"run_id": str})
    assert set(df.run_id) == {"a1b2c3", "d4e5f6"} and df[df.run_id == "d4e5f6"].step.isna().all()

SLOW = '''
import time, torch.nn as nn
class Slow(nn.Module):
    "Causal, but its forward takes ten minutes."
    def __init__(self, d_model): super().__init__(); self.proj = nn.Linear(d_model, d_model)
    def forward(self, x): time.sleep(600); return self.proj(x)
'''

@pytest.fixture
def mixers(tmp_path, monkeypatch):
    "A module `slowmix` importable from `tmp_path` (the working directory); registrations are forgotten afterwards."
    from ssm_mech.core import _MIXERS, _TRUSTED
    (tmp_path / "slowmix.py").write_text(SLOW)
    monkeypatch.chdir(tmp_path); monkeypatch.syspath_prepend(str(tmp_path)); monkeypatch.setattr(sys, "dont_write_bytecode", True)
    before = set(_MIXERS), list(_TRUSTED)
    yield tmp_path
    for k in set(_MIXERS) - before[0]: del _MIXERS[k]
    _TRUSTED[:] = before[1]; sys.modules.pop("slowmix", None)

def test_report_card_check_time_limit(mixers, capsys):
    "A mixer whose forward takes ten minutes fails its shape check after --check-timeout seconds: one line, nothing written."
    before = snapshot(mixers); capsys.readouterr(); t0 = time.time()
    assert main(["report-card", "slowmix:Slow", "--check-timeout", "1", "--no-progress"]) == 2
    assert time.time() - t0 < 30
    one_line(capsys.readouterr().err, "breaks the mixer contract: shape", "took longer than 1 s", "--check-timeout")
    assert snapshot(mixers) == before

def test_report_card_training_time_limit(tmp_path, monkeypatch):
    "Training and dissection together stop at train_seconds, as a failed check; the runs folder beside the report is removed."
    import tempfile
    from ssm_mech.report import ContractError, report_card
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "systmp")); (tmp_path / "systmp").mkdir()
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path.parent / f"{tmp_path.name}_inductor"))   # torch's compile cache is not the card's
    before = snapshot(tmp_path); t0 = time.time()
    with pytest.raises(ContractError, match="training time: training and dissecting mixer 'attention' took longer than 2 s"):
        report_card("attention", out=tmp_path / "card", overrides=["train.max_steps=100000"], train_seconds=2)
    assert time.time() - t0 < 60 and snapshot(tmp_path) == before

def test_report_card_sigterm_leaves_nothing(tmp_path):
    "SIGTERM during a report card ends it as Ctrl-C does (status 130) and removes its runs; nothing is left in the temp folder either."
    (tmp_path / "systmp").mkdir()
    p = subprocess.Popen(SSM + ["report-card", "attention", "train.max_steps=100000", "--out", "card", "--no-progress"], cwd=tmp_path,
                         env={**cli_env(), "TMPDIR": str(tmp_path / "systmp"), "PYTHONDONTWRITEBYTECODE": "1",
                              "TORCHINDUCTOR_CACHE_DIR": str(tmp_path.parent / f"{tmp_path.name}_inductor")},  # torch's compile cache is not the card's
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=lambda: signal.signal(signal.SIGTERM, signal.SIG_DFL))
    for _ in range(1200):
        if list(tmp_path.glob(".card.runs-*/*/run.json")): break              # training has started
        time.sleep(0.1)
    assert list(tmp_path.glob(".card.runs-*/*/run.json")), "no run started"
    p.send_signal(signal.SIGTERM); out, err = p.communicate(timeout=120)
    assert p.returncode == 130, (p.returncode, err)
    one_line(err, "interrupted")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["systmp"] and not list((tmp_path / "systmp").iterdir())

def test_report_card_mixers_it_used_to_fail_on(tmp_path):
    "A mixer without parameters gets its report; one that halves its input in place is causal; a float64 output is a failed check."
    class CausalMean(torch.nn.Module):
        "No parameters: the running mean."
        def __init__(self, d_model): super().__init__()
        def forward(self, x): return x.cumsum(1) / torch.arange(1, x.shape[1] + 1, dtype=x.dtype)[None, :, None]
    class Halves(torch.nn.Module):
        "Causal; works on its input in place."
        def __init__(self, d_model): super().__init__(); self.proj = torch.nn.Linear(d_model, d_model)
        def forward(self, x): x.mul_(0.5); return self.proj(x.cumsum(1))
    class F64(Halves):
        def forward(self, x): return self.proj(x.cumsum(1)).double()
    from ssm_mech.core import _MIXERS
    before = set(_MIXERS)
    try: _mixers_it_used_to_fail_on(tmp_path, CausalMean, Halves, F64)
    finally:
        for k in set(_MIXERS) - before: del _MIXERS[k]

def _mixers_it_used_to_fail_on(tmp_path, CausalMean, Halves, F64):
    from ssm_mech.report import ContractError, check_contract, report_card
    outcomes = {c.name: c.outcome for c in check_contract(Halves)}
    assert outcomes["causal"] == "pass" and outcomes["gradient flow"] == "pass", outcomes
    with pytest.raises(ContractError, match="a torch.float32 input gave a torch.float64 output"):
        report_card(F64, out=tmp_path / "f64", runs_dir=tmp_path / "runs")
    card = report_card(CausalMean, out=tmp_path / "card", name="causal_mean", runs_dir=tmp_path / "runs", overrides=["train.max_steps=2"],
                       lrs=(1e-2,), dissect_n=8)
    assert card.name == "causal_mean" and {c.name: c.outcome for c in card.checks}["gradient flow"] == "n/a"
    assert json.loads((tmp_path / "card" / "report.json").read_text())["name"] == "causal_mean"
    assert sorted(p.name for p in (tmp_path / "runs").iterdir()) == ["causal_mean"]       # --name names the runs' folder too
    assert sorted(p.name for p in tmp_path.iterdir()) == ["card", "runs"]

def test_report_card_name_of_a_path(mixers):
    "--name is the name a MODULE:CLASS mixer has in the registry and the report."
    from ssm_mech.core import get_mixer_spec
    from ssm_mech.report import resolve_mixer
    import slowmix
    assert resolve_mixer("slowmix:Slow", name="slow") == "slow" and get_mixer_spec("slow").factory is slowmix.Slow
