"""Opening someone else's runs is safe (issue #32): no code runs from a run, a config or a sweep file; nothing outside the
given directory is written, truncated or deleted; SIGTERM ends training as Ctrl-C does; an edited config is noticed.
Each refusal is exit status 2 with one line naming the field or path (a `ValueError` in the API), and every file outside
the directory stays as it was."""
import json, shutil, signal, subprocess, sys
from pathlib import Path

import pytest

from conftest import CLI, ROOT, cli_env, interrupt_cli_train, tiny_config
from ssm_mech.cli import main
from ssm_mech.core import _MIXERS, _TRUSTED, MixerImportError, UntrustedMixerError, get_mixer_spec, trust_mixer, trusted_mixers
from ssm_mech.model import load_model
from ssm_mech.runs import ConfigError, LOCK_FILE, Run, read_status, sweep_run
from ssm_mech.sweep import SweepConfig, plan_sweep, run_sweep
from ssm_mech.train import train

SSM = [str(ROOT / ".venv" / "bin" / "ssm-mech")] if (ROOT / ".venv" / "bin" / "ssm-mech").exists() else CLI
ATTACK = {"file": "/bin/sh", "args": ["sh", "-c", "touch PWNED"]}   # the exact attack, run from the working directory
MYMIX = '''
import torch, torch.nn as nn
class Mean(nn.Module):
    "A causal running mean, then a linear map."
    def __init__(self, d_model): super().__init__(); self.proj = nn.Linear(d_model, d_model)
    def forward(self, x):
        n = torch.arange(1, x.shape[1] + 1, device=x.device, dtype=x.dtype)[None, :, None]
        return self.proj(x.cumsum(1) / n)
def not_a_class(d_model): return nn.Identity()
'''

def snapshot(root:Path) -> dict:
    "Every path under `root` (links not followed) with its size, modification time and, for files, content."
    out = {}
    for p in sorted(root.rglob("*")):
        st = p.lstat()
        out[str(p.relative_to(root))] = (p.is_symlink(), p.is_dir(), st.st_size, st.st_mtime_ns,
                                         p.read_bytes() if p.is_file() and not p.is_symlink() else None)
    return out

def ssm(*argv, cwd, extra_env=None, **kw) -> subprocess.CompletedProcess:
    env = {**cli_env(), "PYTHONDONTWRITEBYTECODE": "1", **(extra_env or {})}
    return subprocess.run(SSM + [str(a) for a in argv], cwd=cwd, env=env, capture_output=True, text=True, timeout=300, **kw)

def one_line(err:str, *expected):
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    for s in expected: assert s in err, (s, err)

def poison(run:Path, mixer="os:spawnv", kwargs=ATTACK, config=False):
    "Name `mixer` (with `kwargs`) in the run's final.json (and config.yaml)."
    meta = json.loads((run / "final.json").read_text())
    meta["model"].update(mixer=mixer, mixer_kwargs=kwargs)
    (run / "final.json").write_text(json.dumps(meta))
    if config:
        (run / "config.yaml").write_text((run / "config.yaml").read_text().replace("mixer: attention", f"mixer: {mixer}")
                                         .replace("mixer_kwargs: {}", f"mixer_kwargs: {json.dumps(kwargs)}"))

@pytest.fixture
def mymix(tmp_path, monkeypatch):
    "A mixer module `mymix` importable from `tmp_path`; whatever the test trusts is forgotten afterwards."
    (tmp_path / "mymix.py").write_text(MYMIX)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    before = set(_MIXERS), list(_TRUSTED)
    yield tmp_path
    for k in set(_MIXERS) - before[0]: del _MIXERS[k]
    _TRUSTED[:] = before[1]
    sys.modules.pop("mymix", None)

# ---- 1. trust boundary -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("argv,config", [(["eval", "run"], False), (["dissect", "run", "--n", "8"], False),
                                         (["train", "run/config.yaml", "--resume", "--run-dir", "run", "--no-progress"], False),
                                         (["train", "run/config.yaml", "--resume", "--run-dir", "run", "--no-progress"], True)],
                         ids=["eval", "dissect", "resume", "resume, config names it too"])
def test_spawnv_in_a_run_runs_nothing(argv, config, tmp_path, finished_run):
    shutil.copytree(finished_run, tmp_path / "run"); poison(tmp_path / "run", config=config)
    before = snapshot(tmp_path)
    r = ssm(*argv, cwd=tmp_path)
    assert r.returncode == 2, r.stderr
    one_line(r.stderr, "model.mixer='os:spawnv'", "--allow-mixer", "trust_mixer", "attention")
    assert not list(tmp_path.rglob("PWNED")) and snapshot(tmp_path) == before

def test_this_is_not_imported(tmp_path, finished_run):
    shutil.copytree(finished_run, tmp_path / "run"); poison(tmp_path / "run", "this:s", {})
    r = ssm("eval", "run", cwd=tmp_path)
    assert r.returncode == 2 and "Zen of Python" not in r.stdout + r.stderr, (r.stdout, r.stderr)
    one_line(r.stderr, "model.mixer='this:s'")

def test_os_exit_does_not_end_the_process(tmp_path, finished_run):
    shutil.copytree(finished_run, tmp_path / "run"); poison(tmp_path / "run", "os:_exit", {"n": 16})
    with pytest.raises(UntrustedMixerError) as e: Run(tmp_path / "run").model()     # we are still here to see it
    assert "final.json: model.mixer='os:_exit'" in str(e.value) and "\n" not in str(e.value)
    with pytest.raises(UntrustedMixerError): load_model(tmp_path / "run" / "final")
    assert isinstance(e.value, ValueError) and "os:_exit" not in _MIXERS

@pytest.mark.parametrize("path", ["os:spawnv", "os:_exit", "os:path", "mymix:not_a_class", "mymix:Nope", "mymix", "no_such_module:X"])
def test_trust_mixer_accepts_only_module_classes(path, mymix):
    with pytest.raises(MixerImportError) as e: trust_mixer(path)
    assert isinstance(e.value, ValueError) and "\n" not in str(e.value) and path not in _MIXERS and path not in trusted_mixers()

def test_trusted_path_is_usable(mymix, tmp_path):
    with pytest.raises(UntrustedMixerError): get_mixer_spec("mymix:Mean")
    assert trust_mixer("mymix:Mean") == "mymix:Mean" and trusted_mixers()[-1] == "mymix:Mean"
    cfg = tiny_config(); cfg.model.mixer = "mymix:Mean"
    res = train(cfg, tmp_path / "r", progress=False)
    assert res.steps == 8 and Run(tmp_path / "r").model().config.mixer == "mymix:Mean"

def test_allow_mixer_on_the_cli(mymix):
    tmp = mymix; (tmp / "tiny.yaml").write_text(tiny_config().to_yaml())
    before = snapshot(tmp)
    r = ssm("train", "tiny.yaml", "model.mixer=mymix:Mean", "--run-dir", "r", "--no-progress", cwd=tmp)
    assert r.returncode == 2; one_line(r.stderr, "model.mixer='mymix:Mean'", "--allow-mixer mymix:Mean")
    assert snapshot(tmp) == before
    r = ssm("train", "tiny.yaml", "model.mixer=mymix:Mean", "--run-dir", "r", "--no-progress", "--allow-mixer", "mymix:Mean", cwd=tmp)
    assert r.returncode == 0, r.stderr
    assert read_status(tmp / "r")["status"] == "finished"
    r = ssm("eval", "r", cwd=tmp)
    assert r.returncode == 2; one_line(r.stderr, "final.json: model.mixer='mymix:Mean'", "--allow-mixer mymix:Mean")
    r = ssm("eval", "r", "--allow-mixer", "mymix:Mean", cwd=tmp)
    assert r.returncode == 0 and '"acc"' in r.stdout, r.stderr
    r = ssm("eval", "r", "--allow-mixer", "os:spawnv", cwd=tmp)                  # trusting a function by mistake
    assert r.returncode == 2; one_line(r.stderr, "'os:spawnv' is a function, not a torch.nn.Module class")

def test_sweep_needs_trust_and_workers_get_it(mymix, capsys):
    tmp = mymix
    sw = SweepConfig("s", tiny_config(), axes={"model.mixer": ["mymix:Mean"]})
    with pytest.raises(UntrustedMixerError): plan_sweep(sw)                      # the sweep file alone imports nothing
    (tmp / "s.yaml").write_text(sw.to_yaml())
    capsys.readouterr()
    assert main(["sweep", str(tmp / "s.yaml"), "--dir", str(tmp / "sw"), "--no-progress"]) == 2
    one_line(capsys.readouterr().err, "model.mixer='mymix:Mean'", "--allow-mixer")
    assert not (tmp / "sw").exists()
    trust_mixer("mymix:Mean")                                                    # the user's own process trusts it ...
    s = run_sweep(sw, tmp / "sw", workers=2, progress=False)                     # ... and a spawned worker is told so
    assert (s["done"], s["failed"]) == (1, 0), s

# ---- 2. stay inside ----------------------------------------------------------------------------------------------
def test_overwrite_refuses_a_directory_that_is_not_a_run(tmp_path):
    mine = tmp_path / "mydata"; mine.mkdir(); (mine / "thesis.tex").write_text("years"); (mine / "sub").mkdir()
    (tmp_path / "tiny.yaml").write_text(tiny_config().to_yaml())
    before = snapshot(tmp_path)
    r = ssm("train", "tiny.yaml", "--run-dir", "mydata", "--overwrite", "--no-progress", cwd=tmp_path)
    assert r.returncode == 2; one_line(r.stderr, "run directory mydata", "not a run")
    with pytest.raises(ConfigError, match="so it is not a run"): train(tiny_config(), mine, overwrite=True, progress=False)
    assert snapshot(tmp_path) == before

def test_overwrite_still_replaces_a_run(tmp_path, finished_run):
    shutil.copytree(finished_run, tmp_path / "run")
    assert train(tiny_config(lr=2e-3), tmp_path / "run", overwrite=True, progress=False).steps == 8

@pytest.fixture
def stopped_run(tmp_path) -> Path:
    d = tmp_path / "run"; train(tiny_config(), d, progress=False, stop_at=4); return d

@pytest.mark.parametrize("name", [LOCK_FILE, "metrics.csv", "run.json", "checkpoints", "log.txt", "config.yaml"])
def test_resume_refuses_a_link_out_of_the_run(name, tmp_path, stopped_run, capsys):
    out = tmp_path / "outside"; out.mkdir(); (tmp_path / "tiny.yaml").write_text(tiny_config().to_yaml())
    src, target = stopped_run / name, out / name
    if src.exists(): shutil.move(str(src), str(target))            # what the run had now lives behind the link
    else: target.write_text("precious")
    src.symlink_to(target, target_is_directory=target.is_dir())
    before = snapshot(tmp_path)
    with pytest.raises(ConfigError) as e: train(tiny_config(), stopped_run, resume=True, progress=False)
    assert f"{name} is a symbolic link" in str(e.value) and "\n" not in str(e.value)
    capsys.readouterr()
    assert main(["train", str(tmp_path / "tiny.yaml"), "--resume", "--run-dir", str(stopped_run), "--no-progress"]) == 2
    one_line(capsys.readouterr().err, f"{name} is a symbolic link")
    assert snapshot(tmp_path) == before                                    # the link's target included

def test_dissect_does_not_truncate_a_linked_lock(tmp_path, finished_run, capsys):
    shutil.copytree(finished_run, tmp_path / "run")
    (tmp_path / "precious.txt").write_text("keep"); (tmp_path / "run" / LOCK_FILE).symlink_to(tmp_path / "precious.txt")
    before = snapshot(tmp_path)
    capsys.readouterr()
    assert main(["dissect", str(tmp_path / "run"), "--n", "8"]) == 2
    one_line(capsys.readouterr().err, ".lock is a symbolic link")
    assert snapshot(tmp_path) == before and (tmp_path / "precious.txt").read_text() == "keep"

def _sweep_dir(tmp:Path, finished:Path, ids=("a1b2c3",)) -> Path:
    sw = tmp / "sw"; (sw / "runs").mkdir(parents=True)
    for rid in ids: shutil.copytree(finished, sw / "runs" / rid)
    (sw / "runs.csv").write_text("id,label,status\n" + "".join(f"{rid},x,finished\n" for rid in ids))
    return sw

def test_sweep_refuses_a_linked_log(tmp_path, capsys):
    sw = SweepConfig("s", tiny_config(), axes={"train.lr": [1e-3]}); rid = plan_sweep(sw)[0].id
    (tmp_path / "s.yaml").write_text(sw.to_yaml()); (tmp_path / ".bashrc").write_text("keep")
    (tmp_path / "sw" / "runs" / rid).mkdir(parents=True); (tmp_path / "sw" / "runs" / rid / "log.txt").symlink_to(tmp_path / ".bashrc")
    before = snapshot(tmp_path)
    capsys.readouterr()
    assert main(["sweep", str(tmp_path / "s.yaml"), "--dir", str(tmp_path / "sw"), "--no-progress"]) == 2
    one_line(capsys.readouterr().err, "log.txt is a symbolic link")
    with pytest.raises(ConfigError, match="log.txt is a symbolic link"): run_sweep(sw, tmp_path / "sw", progress=False)
    assert snapshot(tmp_path) == before

@pytest.mark.parametrize("bad", ["../victim", "/etc", "..", "a/../../victim"])
def test_collect_confines_run_ids(bad, tmp_path, finished_run, capsys):
    sw = _sweep_dir(tmp_path, finished_run); shutil.copytree(finished_run, tmp_path / "victim")
    with open(sw / "runs.csv", "a") as f: f.write(f"{bad},x,finished\n")
    before = snapshot(tmp_path)
    capsys.readouterr()
    assert main(["collect", str(sw)]) == 2
    one_line(capsys.readouterr().err, "runs.csv names the run id", repr(bad))
    with pytest.raises(ConfigError): sweep_run(sw, bad)
    assert snapshot(tmp_path) == before

def test_collect_api_confines_run_ids(tmp_path, finished_run):
    from ssm_mech.results import collect
    sw = _sweep_dir(tmp_path, finished_run)
    with open(sw / "runs.csv", "a") as f: f.write("../../victim,x,finished\n")
    with pytest.raises(ConfigError, match="runs.csv names the run id"): collect(sw)

def test_collect_refuses_a_linked_results_csv(tmp_path, finished_run, capsys):
    sw = _sweep_dir(tmp_path, finished_run); (tmp_path / "precious.csv").write_text("keep")
    (sw / "results.csv").symlink_to(tmp_path / "precious.csv")
    before = snapshot(tmp_path)
    capsys.readouterr()
    assert main(["collect", str(sw)]) == 2
    one_line(capsys.readouterr().err, "results.csv is a symbolic link")
    assert snapshot(tmp_path) == before

def test_report_card_keeps_each_mixers_runs(tmp_path, monkeypatch):
    import ssm_mech.report as R
    seen = []
    class Stop(Exception): pass
    def fake_train_task(name, task, base, lrs, overrides, work, progress): seen.append(Path(work)); raise Stop
    monkeypatch.setattr(R, "_train_task", fake_train_task)
    for mixer in ("attention", "base_conv"):
        with pytest.raises(Stop): R.report_card(mixer, runs_dir=tmp_path / "runs", out=tmp_path / "card")
    assert seen == [tmp_path / "runs" / "attention", tmp_path / "runs" / "base_conv"]

# ---- 3. SIGTERM --------------------------------------------------------------------------------------------------
def test_sigterm_during_train_is_ctrl_c(tmp_path):
    returncode, err = interrupt_cli_train(tmp_path, signal.SIGTERM, cli=SSM)
    assert returncode == 130, (returncode, err)
    one_line(err, "interrupted", "--resume")
    st = read_status(tmp_path / "run")
    assert st["status"] == "interrupted" and st["error"] == "KeyboardInterrupt: SIGTERM" and not (tmp_path / "run" / LOCK_FILE).exists()

# ---- 4. a config edited after training ---------------------------------------------------------------------------
def _edit_width(run:Path):
    (run / "config.yaml").write_text((run / "config.yaml").read_text().replace("d_model: 16", "d_model: 64"))

def test_finished_run_keeps_its_config_hash(tmp_path, finished_run):
    assert len(read_status(finished_run)["config_sha256"]) == 64 and Run(finished_run).config_edited is False
    shutil.copytree(finished_run, tmp_path / "run"); _edit_width(tmp_path / "run")
    assert Run(tmp_path / "run").config_edited is True
    with pytest.raises(ConfigError, match="edited after the run finished"):
        train(Run(tmp_path / "run").config, tmp_path / "run", resume=True, progress=False)

def test_eval_and_collect_report_an_edited_config(tmp_path, finished_run, capsys):
    sw = _sweep_dir(tmp_path, finished_run, ids=("a1b2c3", "d4e5f6")); _edit_width(sw / "runs" / "d4e5f6")
    capsys.readouterr()
    assert main(["eval", str(sw / "runs" / "d4e5f6")]) == 0
    one_line(capsys.readouterr().err, "config.yaml was edited after the run finished")
    assert main(["eval", str(sw / "runs" / "a1b2c3")]) == 0 and capsys.readouterr().err == ""
    assert main(["collect", str(sw)]) == 0
    one_line(capsys.readouterr().err, "config.yaml of 1 run(s) was edited", "d4e5f6")

def test_collect_has_a_config_edited_column(tmp_path, finished_run):
    from ssm_mech.results import collect
    sw = _sweep_dir(tmp_path, finished_run, ids=("a1b2c3", "d4e5f6")); _edit_width(sw / "runs" / "d4e5f6")
    df = collect(sw).drop_duplicates("run_id").set_index("run_id")
    assert df.loc["d4e5f6", "config_edited"] == True and df.loc["a1b2c3", "config_edited"] == False
