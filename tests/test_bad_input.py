"""Bad input, from the command line and from Python: each case ends with one clear error that names the field or
file and the value (exit status 2 on the CLI, a `ValueError` in the API), and leaves the file system as it was."""
import json, os, shutil, struct, subprocess
from pathlib import Path

import pytest
import torch

from conftest import CLI, cli_env, tiny_config
from ssm_mech.cli import main
from ssm_mech.experiments import dissect_run
from ssm_mech.model import load_model
from ssm_mech.results import collect
from ssm_mech.runs import (ConfigError, DirLock, ExperimentConfig, Run, TrainConfig, apply_overrides, read_status,
                           read_yaml)
from ssm_mech.sweep import SweepConfig, load_sweep, run_sweep
from ssm_mech.train import evaluate, load_checkpoint, train

def snapshot(root:Path) -> dict:
    "Every path under `root` with its size and modification time."
    return {str(p.relative_to(root)): (p.is_dir(), p.stat().st_size if p.is_file() else 0, p.stat().st_mtime_ns)
            for p in sorted(root.rglob("*"))}

# ---- setups: each prepares `tmp` (the working directory) and returns nothing -------------------------------------
def _run(tmp, finished): shutil.copytree(finished, tmp / "run")
def _yaml(text:str | bytes, name="bad.yaml"):
    def setup(tmp, finished): (tmp / name).write_bytes(text if isinstance(text, bytes) else text.encode())
    return setup
def _tiny_yaml(tmp, finished): _run(tmp, finished); (tmp / "tiny.yaml").write_text(tiny_config().to_yaml())
def _run_then(fn):
    def setup(tmp, finished): _run(tmp, finished); fn(tmp / "run")
    return setup
def _relabel(run):
    "Rewrite the dtype in final.safetensors' header: the same bytes now read as int32."
    p = run / "final.safetensors"; b = p.read_bytes(); n = struct.unpack("<Q", b[:8])[0]
    header = b[8:8 + n].replace(b'"F32"', b'"I32"')
    p.write_bytes(b[:8] + header + b[8 + n:])
def _nan(run):
    from safetensors.torch import load_file, save_file
    sd = load_file(str(run / "final.safetensors")); sd["embed.weight"][0, 0] = float("nan"); save_file(sd, str(run / "final.safetensors"))
def _empty_test(tmp, finished):
    _run(tmp, finished)
    cfg = apply_overrides(Run(tmp / "run").config, {"task.n_test": 0}); (tmp / "run" / "config.yaml").write_text(cfg.to_yaml())
def _file(tmp, finished): (tmp / "afile").write_text("x")
def _empty_sweep(tmp, finished): (tmp / "sw" / "runs").mkdir(parents=True); (tmp / "sw" / "runs.csv").write_text("id,label,status\n")
def _subdir(name):
    def setup(tmp, finished): (tmp / name).mkdir()
    return setup

TRAIN = ["train", "ar-cpu", "--no-progress"]
# (id, argv, setup, substrings the one-line message must contain)
CLI_CASES = [
    ("warmup_frac string", TRAIN + ["train.warmup_frac=abc"], None, ["train.warmup_frac", "'abc'"]),
    ("weight_decay string", TRAIN + ["train.weight_decay=abc"], None, ["train.weight_decay", "'abc'"]),
    ("betas string", TRAIN + ["train.betas=ab"], None, ["train.betas", "'ab'"]),
    ("betas one number", TRAIN + ["train.betas=[0.9]"], None, ["train.betas", "0.9"]),
    ("lr inf", TRAIN + ["train.lr=inf"], None, ["train.lr", "inf"]),
    ("lr 1e300", TRAIN + ["train.lr=1e300"], None, ["train.lr", "1e+300"]),
    ("lr nan", TRAIN + ["train.lr=nan"], None, ["train.lr", "nan"]),
    ("lr negative", TRAIN + ["train.lr=-1"], None, ["train.lr", "-1"]),
    ("lr boolean", TRAIN + ["train.lr=true"], None, ["train.lr", "True"]),
    ("batch_size boolean", TRAIN + ["train.batch_size=true"], None, ["train.batch_size", "True"]),
    ("eval_every boolean", TRAIN + ["train.eval_every=true"], None, ["train.eval_every", "True"]),
    ("shuffle number", TRAIN + ["train.shuffle=3"], None, ["train.shuffle", "3"]),
    ("train seed negative", TRAIN + ["train.seed=-1"], None, ["train.seed", "-1"]),
    ("task seed negative", TRAIN + ["task.seed=-1"], None, ["task.seed=-1"]),
    ("max_steps zero", TRAIN + ["train.max_steps=0"], None, ["train.max_steps", "0"]),
    ("max_steps fraction", TRAIN + ["train.max_steps=2.5"], None, ["train.max_steps", "2.5"]),
    ("eval_batch_size zero", TRAIN + ["train.eval_batch_size=0"], None, ["train.eval_batch_size", "0"]),
    ("schedule unknown", TRAIN + ["train.schedule=exp"], None, ["train.schedule", "'exp'"]),
    ("device unknown", TRAIN + ["train.device=tpu"], None, ["train.device", "'tpu'"]),
    ("d_model string", TRAIN + ["model.d_model=abc"], None, ["model.d_model", "'abc'"]),
    ("mixer unknown", TRAIN + ["model.mixer=nope"], None, ["mixer", "'nope'"]),
    ("mixer argument unknown", TRAIN + ["model.mixer_kwargs.d_conv=2"], None, ["d_conv", "valid arguments"]),
    ("n_train zero", TRAIN + ["task.n_train=0"], None, ["task.n_train=0"]),
    ("n_train below batch", TRAIN + ["task.n_train=8"], None, ["train.batch_size=32", "task.n_train=8"]),
    ("n_pairs above keys", TRAIN + ["task.n_pairs=100"], None, ["task.n_keys=32", "n_pairs=100"]),
    ("unknown field", TRAIN + ["train.lrr=1"], None, ["unknown field 'lrr'"]),
    ("unknown section", TRAIN + ["optim.lr=1"], None, ["'optim.lr'"]),
    ("override without =", TRAIN + ["train.lr"], None, ["'train.lr'", "section.field=value"]),
    ("name absolute path", TRAIN + ["name=/abs/path"], None, ["name", "'/abs/path'"]),
    ("name escapes runs", TRAIN + ["name=../escape"], None, ["name", "'../escape'"]),
    ("name dotdot", TRAIN + ["name=.."], None, ["name", "'..'"]),
    ("unknown preset", ["train", "ar_99"], None, ["unknown experiment preset", "'ar_99'"]),
    ("config missing", ["train", "missing.yaml"], None, ["missing.yaml", "does not exist"]),
    ("config unclosed bracket", ["train", "bad.yaml"], _yaml("task: {task: ar\nmodel: [1\n"), ["bad.yaml", "not valid YAML", "line"]),
    ("config tab", ["train", "bad.yaml"], _yaml("task:\n\ttask: ar\n"), ["bad.yaml", "not valid YAML", "line 2"]),
    ("config python tag", ["train", "bad.yaml"], _yaml("!!python/object/apply:os.system ['true']\n"), ["bad.yaml", "python/object/apply", "no tags"]),
    ("config binary", ["train", "bad.yaml"], _yaml(bytes(range(256))), ["bad.yaml", "not UTF-8"]),
    ("config a list", ["train", "bad.yaml"], _yaml("- 1\n- 2\n"), ["bad.yaml", "must be a mapping", "list"]),
    ("config task not a mapping", ["train", "bad.yaml"], _yaml("task: ar\n"), ["bad.yaml", "'task'", "'ar'"]),
    ("config is a directory", ["train", "cfg.yaml"], _subdir("cfg.yaml"), ["cfg.yaml", "is a directory"]),
    ("config is a plain directory", ["train", "cfgdir"], _subdir("cfgdir"), ["cfgdir", "is a directory"]),
    ("run dir under a file", TRAIN + ["--run-dir", "afile/run"], _file, ["afile", "is a file, not a directory"]),
    ("run dir is a file", TRAIN + ["--run-dir", "afile"], _file, ["afile", "is a file, not a directory"]),
    ("resume and overwrite", TRAIN + ["--resume", "--overwrite", "--run-dir", "r"], None, ["resume and overwrite", "exclude each other"]),
    ("existing finished run", ["train", "tiny.yaml", "--run-dir", "run"], _tiny_yaml, ["run", "already holds a finished run"]),
    ("resume another config", ["train", "tiny.yaml", "--resume", "--run-dir", "run", "train.lr=0.01"], _tiny_yaml, ["config differs", "train.lr", "0.01"]),
    ("resume without config.yaml", ["train", "tiny.yaml", "--resume", "--run-dir", "run"],
     lambda t, f: (_tiny_yaml(t, f), (t / "run" / "config.yaml").unlink()), ["run", "config.yaml is missing"]),
    ("resume garbage run.json", ["train", "tiny.yaml", "--resume", "--run-dir", "run"],
     lambda t, f: (_tiny_yaml(t, f), (t / "run" / "run.json").write_text("garbage")), ["run.json", "not valid JSON"]),
    ("unknown option", TRAIN + ["--bogus"], None, ["unrecognized arguments", "--bogus"]),
    ("dissect n zero", ["dissect", "run", "--n", "0"], _run, ["n must be a positive", "0"]),
    ("dissect n negative", ["dissect", "run", "--n", "-5"], _run, ["n must be a positive", "-5"]),
    ("dissect n not a number", ["dissect", "run", "--n", "abc"], None, ["--n", "'abc'"]),
    ("dissect no run", ["dissect", "nothing"], None, ["nothing", "holds no finished run"]),
    ("eval relabelled dtype", ["eval", "run"], _run_then(_relabel), ["final.safetensors", "stored as torch.int32"]),
    ("eval NaN weights", ["eval", "run"], _run_then(_nan), ["final.safetensors", "embed.weight", "non-finite"]),
    ("eval garbage final.json", ["eval", "run"], _run_then(lambda r: (r / "final.json").write_text("{")), ["final.json", "unreadable"]),
    ("eval empty test split", ["eval", "run"], _empty_test, ["test split is empty", "task.n_test=0"]),
    ("eval malformed config.yaml", ["eval", "run"], _run_then(lambda r: (r / "config.yaml").write_text("task:\n\tx: 1\n")), ["config.yaml", "not valid YAML"]),
    ("eval without config.yaml", ["eval", "run"], _run_then(lambda r: (r / "config.yaml").unlink()), ["run", "no config.yaml"]),
    ("eval split unknown", ["eval", "run", "--split", "val"], _run, ["--split", "'val'"]),
    ("collect empty sweep", ["collect", "sw"], _empty_sweep, ["sw", "holds no runs"]),
    ("collect not a sweep", ["collect", "nowhere"], None, ["nowhere", "not a sweep directory"]),
    ("sweep unknown", ["sweep", "nope", "--no-progress"], None, ["'nope'", "neither a sweep YAML file nor a sweep preset"]),
    ("sweep malformed YAML", ["sweep", "bad.yaml", "--no-progress"], _yaml("name: [x\n"), ["sweep file bad.yaml", "not valid YAML"]),
    ("sweep workers zero", ["sweep", "ar_main-cpu", "--workers", "0", "--no-progress"], None, ["workers", "0"]),
    ("sweep unknown axis", ["sweep", "bad.yaml", "--no-progress"], _yaml("name: s\nbase: ar-cpu\naxes: {train.lrr: [1]}\n"), ["'train.lrr'", "unknown field"]),
    ("demo zero steps", ["demo", "--steps", "0", "--no-progress"], None, ["train.max_steps", "0"]),
]

@pytest.mark.parametrize("argv,setup,expected", [c[1:] for c in CLI_CASES], ids=[c[0] for c in CLI_CASES])
def test_cli(argv, setup, expected, tmp_path, finished_run, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    if setup: setup(tmp_path, finished_run)
    before = snapshot(tmp_path)
    capsys.readouterr()
    try: code = main(argv)
    except SystemExit as e: code = e.code          # argparse's own errors
    err = capsys.readouterr().err.strip()
    assert code == 2, (code, err)
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    for s in expected: assert s in err, (s, err)
    assert snapshot(tmp_path) == before

# ---- the same through a real process: one line on stderr, status 2, no traceback --------------------------------
@pytest.mark.parametrize("argv,expected", [(["train", "ar-cpu", "train.warmup_frac=abc"], "train.warmup_frac"),
                                           (["train", "ar-cpu", "--run-dir", "r", "name=/abs"], "'/abs'"),
                                           (["dissect", "nothing", "--n", "-5"], "n must be a positive")])
def test_cli_process(argv, expected, tmp_path):
    r = subprocess.run(CLI + argv, cwd=tmp_path, env=cli_env(), capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and expected in r.stderr, r.stderr
    assert list(tmp_path.iterdir()) == []

# ---- the Python API: ValueError (ConfigError where the input is a config, a file or a run directory) ------------
def _api_run(fn):
    "A case on a copy of the finished run: `fn(run_dir)`."
    def case(tmp, finished): _run(tmp, finished); return fn(tmp / "run")
    return case
def _ckpt_without_param_groups(run):
    from ssm_mech.train import latest_checkpoint, _fresh
    cfg = tiny_config(); train(cfg, run.parent / "part", progress=False, stop_at=4)
    j = latest_checkpoint(run.parent / "part" / "checkpoints"); meta = json.loads(j.read_text()); del meta["param_groups"]; j.write_text(json.dumps(meta))
    model, opt = _fresh(cfg.resolve(), torch.device("cpu"))
    return lambda: load_checkpoint(j, model, opt)
TINY = tiny_config()
API_CASES = [
    ("config not a mapping", lambda t, f: lambda: ExperimentConfig.from_dict("ar"), ConfigError, ["a config must be a mapping", "'ar'"]),
    ("task section a string", lambda t, f: lambda: ExperimentConfig.from_dict({"task": "ar"}), ConfigError, ["'task'", "'ar'"]),
    ("train section a list", lambda t, f: lambda: ExperimentConfig.from_dict({"task": {"task": "ar"}, "train": [1]}), ConfigError, ["'train'", "[1]"]),
    ("task unknown", lambda t, f: lambda: ExperimentConfig.from_dict({"task": {"task": "xyz"}}), ConfigError, ["task.task='xyz'"]),
    ("task key unknown", lambda t, f: lambda: ExperimentConfig.from_dict({"task": {"task": "ar", "n_kyes": 3}}), ConfigError, ["n_kyes"]),
    ("lr string", lambda t, f: lambda: TrainConfig(lr="x").validate(), ConfigError, ["train.lr", "'x'"]),
    ("betas None", lambda t, f: lambda: TrainConfig(betas=None).validate(), ConfigError, ["train.betas", "None"]),
    ("device a number", lambda t, f: lambda: TrainConfig(device=5).validate(), ConfigError, ["train.device", "5"]),
    ("mech_sites a string", lambda t, f: lambda: TrainConfig(mech_sites="x").validate(), ConfigError, ["train.mech_sites", "'x'"]),
    ("task is None", lambda t, f: lambda: ExperimentConfig(task=None).resolve(), ConfigError, ["task must be", "None"]),
    ("mixer a list", lambda t, f: lambda: apply_overrides(TINY, {"model.mixer": ["a"]}).resolve(), ConfigError, ["model.mixer", "['a']"]),
    ("name a path", lambda t, f: lambda: apply_overrides(TINY, {"name": "a/b"}).resolve(), ConfigError, ["name", "'a/b'"]),
    ("overrides a string", lambda t, f: lambda: apply_overrides(TINY, "train.lr=1"), ConfigError, ["overrides must be", "'train.lr=1'"]),
    ("override not a string", lambda t, f: lambda: apply_overrides(TINY, [5]), ConfigError, ["override 5"]),
    ("override path too deep", lambda t, f: lambda: apply_overrides(TINY, {"train.lr.x": 1}), ConfigError, ["'train.lr.x'"]),
    ("yaml file a directory", lambda t, f: (lambda: read_yaml(t)), ConfigError, ["config file", "is a directory"]),
    ("yaml python tag", lambda t, f: ((t / "x.yaml").write_text("!!python/object/apply:os.system ['true']"),
                                      lambda: ExperimentConfig.from_yaml(t / "x.yaml"))[1], ConfigError, ["x.yaml", "no tags"]),
    ("yaml binary", lambda t, f: ((t / "x.yaml").write_bytes(b"\xff\xfe\x00"), lambda: read_yaml(t / "x.yaml"))[1], ConfigError, ["x.yaml", "UTF-8"]),
    ("sweep YAML malformed", lambda t, f: ((t / "s.yaml").write_text("name: [x"), lambda: load_sweep(t / "s.yaml"))[1], ConfigError, ["sweep file", "s.yaml"]),
    ("resume and overwrite", lambda t, f: lambda: train(TINY, t / "r", resume=True, overwrite=True), ConfigError, ["exclude each other"]),
    ("stop_at zero", lambda t, f: lambda: train(TINY, t / "r", stop_at=0), ConfigError, ["stop_at", "0"]),
    ("stop_at boolean", lambda t, f: lambda: train(TINY, t / "r", stop_at=True), ConfigError, ["stop_at", "True"]),
    ("dissect n negative", _api_run(lambda r: lambda: dissect_run(r, n=-5)), ConfigError, ["n must be a positive", "-5"]),
    ("dissect n zero", _api_run(lambda r: lambda: dissect_run(r, n=0)), ConfigError, ["n must be a positive", "0"]),
    ("dissect split unknown", _api_run(lambda r: lambda: dissect_run(r, split="val")), ConfigError, ["split", "'val'"]),
    ("garbage run.json", _api_run(lambda r: ((r / "run.json").write_text("garbage"), lambda: read_status(r))[1]), ConfigError, ["run.json", "not valid JSON"]),
    ("run.json a list", _api_run(lambda r: ((r / "run.json").write_text("[1]"), lambda: read_status(r))[1]), ConfigError, ["run.json", "JSON object", "[1]"]),
    ("garbage mechanism.json", _api_run(lambda r: ((r / "mechanism.json").write_text("{x"), lambda: Run(r).mechanism)[1]), ConfigError, ["mechanism.json", "not valid JSON"]),
    ("config.yaml deleted", _api_run(lambda r: ((r / "config.yaml").unlink(), lambda: Run(r).config)[1]), ConfigError, ["no config.yaml"]),
    ("resume without config.yaml", _api_run(lambda r: ((r / "config.yaml").unlink(), lambda: train(TINY, r, resume=True))[1]), ConfigError, ["config.yaml is missing"]),
    ("checkpoint without param_groups", _api_run(_ckpt_without_param_groups), ConfigError, ["step_0000004", "param_groups"]),
    ("relabelled dtype", _api_run(lambda r: (_relabel(r), lambda: load_model(r / "final"))[1]), ValueError, ["final.safetensors", "torch.int32"]),
    ("empty test split", _api_run(lambda r: ((r / "config.yaml").write_text(apply_overrides(Run(r).config, {"task.n_test": 0}).to_yaml()),
                                             lambda: Run(r).dataset("test"))[1]), ConfigError, ["test split is empty", "task.n_test=0"]),
    ("evaluate empty dataset", _api_run(lambda r: lambda: evaluate(Run(r).model(), type("D", (), {"tokens": torch.zeros(0, 5)})())), ConfigError, ["dataset is empty"]),
    ("lock under a file", lambda t, f: ((t / "f").write_text("x"), lambda: DirLock(t / "f" / "run").acquire())[1], ConfigError, ["is a file, not a directory"]),
    ("collect empty sweep", lambda t, f: (_empty_sweep(t, f), lambda: collect(t / "sw"))[1], ConfigError, ["holds no runs"]),
    ("sweep workers zero", lambda t, f: lambda: run_sweep(SweepConfig("s", TINY), t / "sw", workers=0), ValueError, ["workers", "0"]),
    ("sweep axis unknown", lambda t, f: lambda: run_sweep(SweepConfig("s", TINY, axes={"train.lrr": [1]}), t / "sw"), ValueError, ["'train.lrr'"]),
]

@pytest.mark.parametrize("make,exc,expected", [c[1:] for c in API_CASES], ids=[c[0] for c in API_CASES])
def test_api(make, exc, expected, tmp_path, finished_run):
    fn = make(tmp_path, finished_run)
    before = snapshot(tmp_path)
    with pytest.raises(exc) as e: fn()
    assert isinstance(e.value, ValueError)
    for s in expected: assert s in str(e.value), (s, str(e.value))
    assert "\n" not in str(e.value)
    assert snapshot(tmp_path) == before

# ---- a run that fails while training is marked failed (or interrupted), never left running ----------------------
@pytest.mark.parametrize("raised,status", [(RuntimeError("boom"), "failed"), (KeyboardInterrupt(), "interrupted")])
def test_failed_run_is_marked(raised, status, tmp_path):
    def cb(step, *_):
        if step == 5: raise raised
    with pytest.raises(type(raised)): train(tiny_config(), tmp_path / "r", progress=False, callbacks=[cb])
    st = read_status(tmp_path / "r")
    assert st["status"] == status and type(raised).__name__ in st["error"] and st["seconds"] > 0
    assert not (tmp_path / "r" / ".lock").exists()

def test_case_count(): assert len(CLI_CASES) + 3 + len(API_CASES) + 2 >= 60
