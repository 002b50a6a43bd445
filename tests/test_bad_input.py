"""Bad input, from the command line and from Python: each case ends with one clear error that names the field or
file and the value (exit status 2 on the CLI, a `ValueError` in the API), and leaves the file system as it was."""
import json, shutil, struct, subprocess, sys, time
from pathlib import Path

import pytest
import torch

from conftest import CLI, ROOT, cli_env, tiny_config
from ssm_mech.cli import main
from ssm_mech.experiments import dissect_run
from ssm_mech.model import load_model
from ssm_mech.results import collect
from ssm_mech.runs import (ConfigError, DirLock, ExperimentConfig, Run, TrainConfig, apply_overrides, read_status,
                           read_yaml)
from ssm_mech.sweep import SweepConfig, load_sweep, plan_sweep, run_sweep
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
# a 300-byte YAML alias bomb: nine lines of nine aliases stand for 9**9 values, which an error message would expand
BOMB_ITEMS = ["&a [x, x, x, x, x, x, x, x, x]"] + [f"&{c} [{', '.join([f'*{p}'] * 9)}]" for p, c in zip("abcdefgh", "bcdefghi")]
BOMB = "".join(f"{c}: {item}\n" for c, item in zip("abcdefghi", BOMB_ITEMS)) + "name: *i\n"
SWEEP_BOMB = "name: s\nbase: ar-cpu\ndescription:\n" + "".join(f"  - {item}\n" for item in BOMB_ITEMS) + "axes: {train.lr: *i}\n"
DEEP = "a: " + "[" * 20_000 + "]" * 20_000 + "\n"
GRID = "name: s\nbase: ar-cpu\naxes:\n" + "".join(f"  {p}: [{', '.join(map(str, range(1000)))}]\n" for p in ("train.seed", "task.seed"))
def _dup_train(tmp, finished): (tmp / "dup.yaml").write_text(tiny_config().to_yaml() + "train:\n  lr: 0.5\n")
def _change_final(run, **change):
    "Put `change` into the model config of `run`'s final.json."
    p = run / "final.json"; meta = json.loads(p.read_text()); meta["model"].update(change); p.write_text(json.dumps(meta))
def _final(**change):
    "A copy of the finished run whose final.json has `change` in its model config."
    def setup(tmp, finished): _run(tmp, finished); _change_final(tmp / "run", **change)
    return setup
def _results(text:bytes):
    "A results folder whose ci zoo table holds `text`."
    def setup(tmp, finished):
        (tmp / "res" / "report_card_ci").mkdir(parents=True); (tmp / "res" / "report_card_ci" / "results.csv").write_bytes(text)
    return setup
def _cpu_sweep(tmp, finished):
    "A results folder with one planned sweep on the CPU-scale AR proxy only."
    (tmp / "res" / "s").mkdir(parents=True); (tmp / "res" / "s" / "sweep.yaml").write_text("name: s\nbase: ar-cpu\nruns: [{model.mixer: mamba}]\n")
def _paper_sweep(tmp, finished):
    "A results folder with one planned sweep on the paper's AR data."
    (tmp / "res" / "s").mkdir(parents=True); (tmp / "res" / "s" / "sweep.yaml").write_text("name: s\nbase: ar\nruns: [{model.mixer: mamba}]\n")
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
    # issue #32: bounded inputs, tracebacks that became one line, silent acceptances that became refusals
    ("mixer argument of the wrong type", TRAIN + ["model.mixer_kwargs.n_heads=two"], None, ["model.mixer_kwargs.n_heads", "an integer", "'two'"]),
    ("device xpu", TRAIN + ["train.device=xpu"], None, ["train.device", "'xpu'", "'cuda:<index>'"]),
    ("device meta", TRAIN + ["train.device=meta"], None, ["train.device", "'meta'"]),
    ("device cpu:1", TRAIN + ["train.device=cpu:1"], None, ["train.device", "'cpu:1'", "only CUDA devices are numbered"]),
    ("d_model 1e308", TRAIN + ["model.d_model=1e308"], None, ["model.d_model", "[1, 65,536]", "1e+308"]),
    ("max_len 1e12", TRAIN + ["model.max_len=1e12"], None, ["model.max_len", "[1, 16,777,216]", "1000000000000"]),
    ("n_layers 1e6", TRAIN + ["model.n_layers=1e6"], None, ["model.n_layers", "[1, 1,024]"]),
    ("embedding too large", TRAIN + ["model.d_model=65536", "model.vocab_size=65536"], None, ["model.vocab_size x model.d_model", "2**31"]),
    ("n_keys 1e308", TRAIN + ["task.n_keys=1e308"], None, ["task.n_keys", "1e+308"]),
    ("n_keys of 401 digits", TRAIN + [f"task.n_keys={10**400}"], None, ["task.n_keys", "64 bits", "<an integer of 401 digits>"]),
    ("vocabulary too large", TRAIN + ["task.n_keys=100000000", "task.n_values=100000000"], None, ["task's vocabulary", "task.n_keys"]),
    ("mech_sites nonsense", TRAIN + ["train.mech_every=5", "train.mech_sites=[nonsense]"], None, ["train.mech_sites", "'nonsense'", "hook_resid_pre", "next_key"]),
    ("mech_sites layer out of range", TRAIN + ["train.mech_sites=[blocks.7.hook_resid_pre@value]"], None, ["train.mech_sites", "layer 7", "model.n_layers=2"]),
    ("train seed 2**63", TRAIN + [f"train.seed={2**63}"], None, ["train.seed", "64 bits", str(2**63)]),
    ("train seed 2**40", TRAIN + [f"train.seed={2**40}"], None, ["train.seed", "[0, 4294967295]", str(2**40)]),
    ("task seed 2**64", TRAIN + [f"task.seed={2**64}"], None, ["task.seed", "64 bits"]),
    ("lr of 401 digits", TRAIN + [f"train.lr={10**400}"], None, ["train.lr", "64 bits"]),
    ("override given twice", TRAIN + ["train.lr=0.002", "train.lr=0.003"], None, ["train.lr is set twice", "train.lr=0.002", "train.lr=0.003"]),
    ("override in a section and alone", TRAIN + ["train={lr: 0.002, max_steps: 8}", "train.lr=0.003"], None, ["train.lr is set twice"]),
    ("override section of unknown fields", TRAIN + ["train={lr: 0.002, lrr: 8}"], None, ["unknown field(s) ['lrr'] in train"]),
    ("newline in name", TRAIN + ["name=a\nb"], None, ["override 'name'", "newline"]),
    ("control character in name", TRAIN + ["name=a\x1bb"], None, ["override 'name'", "control"]),
    ("alias in an override", TRAIN + ["train.betas=[&a 0.9, *a]"], None, ["override 'train.betas'", "alias *a"]),
    ("duplicate key in an override", TRAIN + ["train={lr: 0.1, lr: 0.2}"], None, ["override 'train'", "duplicate key 'lr'"]),
    ("config alias bomb", ["train", "bomb.yaml"], _yaml(BOMB, "bomb.yaml"), ["bomb.yaml", "alias *a", "line 2"]),
    ("config nested 20,000 levels", ["train", "deep.yaml"], _yaml(DEEP, "deep.yaml"), ["deep.yaml", "nested more than 50 levels"]),
    ("config duplicate section", ["train", "dup.yaml"], _dup_train, ["dup.yaml", "duplicate key 'train'", "line"]),
    ("config integer of 5000 digits", ["train", "big.yaml"], _yaml("task: {task: ar, n_keys: " + "1" * 5000 + "}\n", "big.yaml"), ["big.yaml", "is not read"]),
    ("sweep alias bomb", ["sweep", "sw.yaml", "--no-progress"], _yaml(SWEEP_BOMB, "sw.yaml"), ["sw.yaml", "alias *a"]),
    ("sweep nested 20,000 levels", ["sweep", "sw.yaml", "--no-progress"], _yaml("name: s\nbase: ar-cpu\ndescription: " + DEEP[3:], "sw.yaml"), ["sw.yaml", "nested more than 50"]),
    ("sweep 1000 x 1000", ["sweep", "sw.yaml", "--no-progress"], _yaml(GRID, "sw.yaml"), ["plans 1,000,000 runs", "1000 train.seed x 1000 task.seed", "--max-runs"]),
    ("sweep above --max-runs", ["sweep", "ar_main-cpu", "--max-runs", "3", "--no-progress"], None, ["plans 14 runs", "max_runs=3"]),
    ("sweep dissect_n true", ["sweep", "sw.yaml", "--no-progress"], _yaml("name: s\nbase: ar-cpu\ndissect_n: true\n", "sw.yaml"), ["sweep.dissect_n", "True"]),
    ("sweep name dotdot", ["sweep", "sw.yaml", "--no-progress"], _yaml("name: '..'\nbase: ar-cpu\n", "sw.yaml"), ["sweep name", "'..'"]),
    ("sweep name with a newline", ["sweep", "sw.yaml", "--no-progress"], _yaml('name: "a\\nb"\nbase: ar-cpu\n', "sw.yaml"), ["sweep name", "newline", "'a\\nb'"]),
    ("sweep cpus-per-run inf", ["sweep", "ar_main-cpu", "--cpus-per-run", "inf", "--no-progress"], None, ["cpus_per_run", "inf"]),
    ("eval final.json d_model of 309 digits", ["eval", "run"], _final(d_model=10**308), ["final.json", "model.d_model", "<an integer of 309 digits>"]),
    ("eval final.json larger than its weights", ["eval", "run"], _final(vocab_size=2**24), ["final.json", "does not match", "embed.weight"]),
    ("eval final.json mixer argument", ["eval", "run"], _final(mixer_kwargs={"n_heads": "two"}), ["final.json", "model.mixer_kwargs.n_heads"]),
    ("eval final.json nested deep", ["eval", "run"], _run_then(lambda r: (r / "final.json").write_text("[" * 100_000 + "]" * 100_000)), ["final.json", "unreadable"]),
    ("report-card broken --results", ["report-card", "attention", "--results", "res"], _results(b"\x00\xffnot,a\ntable"), ["res/report_card_ci/results.csv", "cannot be used"]),
    ("report-card --results not a folder", ["report-card", "attention", "--results", "nowhere"], None, ["nowhere", "--results", "not a folder"]),
    ("report-card --name with a slash", ["report-card", "attention", "--name", "a/b"], None, ["--name", "'a/b'"]),
    ("report-card --name of a built-in", ["report-card", "attention", "--name", "mine"], None, ["--name", "'attention' is built in"]),
    ("report-card --check-timeout nan", ["report-card", "attention", "--check-timeout", "nan"], None, ["check_seconds", "nan"]),
    ("report-card --stored with training options", ["report-card", "deltanet", "--stored", "train.lr=1", "--name", "x"], None,
     ["--stored trains nothing", "overrides, --name"]),
    ("report-card --stored at paper scale", ["report-card", "deltanet", "--stored", "--scale", "paper"], None, ["scale 'paper'", "no stored zoo", "ci, cpu"]),
    ("report-card --stored unregistered", ["report-card", "nope", "--stored"], None, ["'nope'", "not a registered mixer", "deltanet"]),
    ("report-card --stored broken --results", ["report-card", "deltanet", "--stored", "--results", "res"], _results(b"\x00\xffnot,a\ntable"),
     ["res/report_card_ci", "cannot be used"]),
    ("scoreboard of a missing folder", ["scoreboard", "nowhere"], None, ["'nowhere'", "is not a folder"]),
    ("scoreboard without paper sweeps", ["scoreboard", "res"], _subdir("res"), ["'res'", "holds no sweep on the paper's data"]),
    ("scoreboard --task unknown", ["scoreboard", "res", "--task", "mqar"], _paper_sweep, ["--task 'mqar'", "valid: ar, atr-8192"]),
    ("scoreboard of CPU sweeps only", ["scoreboard", "res"], _cpu_sweep, ["'res'", "holds no sweep on the paper's data", "-cpu"]),
    ("scoreboard --seeds --all", ["scoreboard", "res", "--seeds", "--all"], _paper_sweep, ["--seeds", "--all", "give one of them"]),
    ("report-card --stored nothing stored", ["report-card", "deltanet", "--stored", "--results", "res"], _subdir("res"),
     ["no finished run of 'deltanet'", "scale 'ci'", "report_card_ci"]),
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
    assert len(err.splitlines()) == 1 and "Traceback" not in err and len(err) < 1500, err
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
    # issue #32
    ("yaml alias bomb", lambda t, f: lambda: read_yaml(BOMB), ConfigError, ["YAML text is refused", "alias *a"]),
    ("yaml nested 20,000 levels", lambda t, f: lambda: read_yaml(DEEP), ConfigError, ["nested more than 50 levels"]),
    ("yaml duplicate key", lambda t, f: lambda: read_yaml("train: {}\ntrain: {}"), ConfigError, ["duplicate key 'train'", "line 2"]),
    ("json nested deep", _api_run(lambda r: ((r / "run.json").write_text("[" * 100_000 + "]" * 100_000), lambda: read_status(r))[1]),
     ConfigError, ["run.json", "is not read"]),
    ("final.json larger than its weights", _api_run(lambda r: (_change_final(r, max_len=2**24), lambda: load_model(r / "final"))[1]),
     ValueError, ["final.json does not match final.safetensors", "pos_embed.weight"]),
    ("final.json n_layers", _api_run(lambda r: (_change_final(r, n_layers=1000), lambda: load_model(r / "final"))[1]),
     ValueError, ["model.n_layers=1000", "2 block(s)"]),
    ("sweep of a million runs", lambda t, f: lambda: plan_sweep(SweepConfig("s", TINY, axes={"train.seed": list(range(1000)), "task.seed": list(range(1000))})),
     ConfigError, ["plans 1,000,000 runs", "max_runs=1,000"]),
    ("section given as a mapping twice", lambda t, f: lambda: apply_overrides(TINY, {"train": {"lr": 0.1}, "train.lr": 0.2}), ConfigError, ["train.lr is set twice"]),
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

def test_case_count(): assert len(CLI_CASES) + 3 + len(API_CASES) + 2 >= 100

# ---- issue #32 through the installed command: inputs that used to hang end at once, with one line ----------------
SSM = [str(ROOT / ".venv" / "bin" / "ssm-mech")] if (ROOT / ".venv" / "bin" / "ssm-mech").exists() else CLI
@pytest.mark.parametrize("argv,text,expected", [
    (["train", "in.yaml", "--run-dir", "r"], BOMB, "alias *a"),
    (["train", "in.yaml", "--run-dir", "r"], DEEP, "nested more than 50 levels"),
    (["sweep", "in.yaml", "--dir", "s", "--no-progress"], SWEEP_BOMB, "alias *a"),
    (["sweep", "in.yaml", "--dir", "s", "--no-progress"], GRID, "plans 1,000,000 runs"),
    (["train", "ar-cpu", "--run-dir", "r", "model.d_model=1e308"], None, "model.d_model"),
    (["train", "ar-cpu", "--run-dir", "r", "train.device=meta"], None, "train.device"),
    (["sweep", "ar_main-cpu", "--dir", "s", "--cpus-per-run", "inf"], None, "cpus_per_run")],
    ids=["train alias bomb", "train nested", "sweep alias bomb", "sweep 1000x1000", "d_model 1e308", "device meta", "cpus inf"])
def test_cli_process_bounded(argv, text, expected, tmp_path):
    if text is not None: (tmp_path / "in.yaml").write_text(text)
    before = snapshot(tmp_path)
    t0 = time.time()
    r = subprocess.run(SSM + argv, cwd=tmp_path, env={**cli_env(), "PYTHONDONTWRITEBYTECODE": "1"}, capture_output=True, text=True, timeout=300)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and expected in r.stderr, r.stderr
    assert time.time() - t0 < 120, "took too long"          # an interpreter start and the check; the inputs alone took hours
    assert snapshot(tmp_path) == before

def test_mixer_module_that_exits_on_import(tmp_path, monkeypatch, capsys):
    "A module that calls sys.exit while it is imported is an import error, one line, not the end of the command."
    (tmp_path / "exitmix.py").write_text("import sys\nsys.exit(3)\n"); (tmp_path / "tiny.yaml").write_text(tiny_config().to_yaml())
    monkeypatch.chdir(tmp_path); monkeypatch.syspath_prepend(str(tmp_path)); monkeypatch.setattr(sys, "dont_write_bytecode", True)
    before = snapshot(tmp_path); capsys.readouterr()
    assert main(["train", "tiny.yaml", "--run-dir", "r", "--allow-mixer", "exitmix:Mixer", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "cannot import module 'exitmix'" in err and "SystemExit" in err, err
    assert snapshot(tmp_path) == before
    sys.modules.pop("exitmix", None)

def test_section_override_merges(tmp_path):
    "`train={lr: 0.002, max_steps: 8}` changes those two fields and keeps every other one (it used to reset them)."
    cfg = apply_overrides(TINY, ["train={lr: 0.002, max_steps: 5}"])
    assert (cfg.train.lr, cfg.train.max_steps) == (0.002, 5)
    assert {k: v for k, v in vars(cfg.train).items() if k not in ("lr", "max_steps")} == \
           {k: v for k, v in vars(TINY.train).items() if k not in ("lr", "max_steps")}
    assert apply_overrides(TINY, ["task={task: atr}"]).task.task == "atr"      # another kind of task: its own defaults
