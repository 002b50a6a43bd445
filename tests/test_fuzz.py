"""Random mutations of valid configs, overrides and run files (issue #32). Each mutated input is read, or refused with one
clean line: a `ValueError` (`ConfigError` and its kin) whose message names a field or the file; never another exception,
never a hang, and no file anywhere under the test's directory changes (readers only read). Seeded: about 150 cases, no
training beyond the one tiny run all of them copy, a few seconds in all."""
import copy, json, random, signal, tempfile
from dataclasses import fields
from pathlib import Path

import pytest
import yaml

from conftest import tiny_config
from ssm_mech.model import ModelConfig
from ssm_mech.runs import ExperimentConfig, Run, TrainConfig, apply_overrides
from ssm_mech.tasks import TASK_CONFIGS

SEED, N_CONFIG, N_OVERRIDE, N_RUN = 32, 50, 50, 50
FIELDS = sorted({f.name for c in (ModelConfig, TrainConfig, *TASK_CONFIGS.values()) for f in fields(c)})
WORDS = FIELDS + ["task", "model", "train", "name", "override", "mixer", "config", "YAML", "final.json", "final.safetensors",
                  "run.json", "config.yaml", "metrics.csv", "mechanism.json", "checkpoint"]
VALUES = [0, -1, 1, 3, 17, 2**31, 2**63, -2**63 - 1, 10**40, 1e308, -1e308, 1e-320, 0.5, float("nan"), float("inf"), True, False,
          None, "", " ", "x", "two", "a/b", "..", "a\nb", "é" * 300, "x" * 10_000, [], [1, 2], [[[[[]]]]], {}, {"a": 1},
          {"task": "atr"}, {"lr": 0.1}, "blocks.9.hook_resid_pre@value", "nonsense@value", "cuda:7", "meta", "cpu:1", "os:spawnv",
          "mamba", "hyena", "attention", 65536, 2**24, 1024, 1e12]
TEXT_VALUES = ["1", "0", "-1", "1e308", "1e-3", "nan", "inf", "-inf", "true", "null", "[]", "{}", "[1, 2]", "{a: 1}", "two", "''",
               "[&a 1, *a]", "{lr: 1, lr: 2}", "[" * 60 + "]" * 60, "1" * 5000, "9" * 30, "0x10", "1_000", "!!python/name:os.system",
               "{lr: 0.002, max_steps: 8}", "{task: atr}", "[blocks.-1.hook_resid_pre@value]", "[x@y]", "cuda", "xpu", "a/b", "é"]
BOMB = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(f"{c}: &{c} [{', '.join([f'*{p}'] * 9)}]\n" for p, c in zip("abcdefgh", "bcdefghi"))

class Hang(BaseException): "A case that ran past its time."

def _alarm(signum, frame): raise Hang()

def snapshot(root:Path) -> dict:
    return {str(p.relative_to(root)): (p.is_dir(), p.lstat().st_size, p.lstat().st_mtime_ns,
                                       p.read_bytes() if p.is_file() and not p.is_symlink() else None) for p in sorted(root.rglob("*"))}

def paths(d, prefix=()):
    "Every key path of a nested dict (lists are leaves)."
    for k, v in d.items():
        yield prefix + (k,)
        if isinstance(v, dict): yield from paths(v, prefix + (k,))

def mutate_dict(rng:random.Random, d:dict) -> dict:
    "`d` with one to three random changes: a value replaced, a key deleted or added, a value nested."
    d = copy.deepcopy(d)
    for _ in range(rng.randint(1, 3)):
        ps = list(paths(d))
        if not ps: break
        p = rng.choice(ps); node = d
        for k in p[:-1]: node = node[k]
        op = rng.random()
        if op < 0.55: node[p[-1]] = copy.deepcopy(rng.choice(VALUES))
        elif op < 0.7: del node[p[-1]]
        elif op < 0.85: node[rng.choice(["lrr", "n_kyes", "x", 1, "model", "name"])] = copy.deepcopy(rng.choice(VALUES))
        else: node[p[-1]] = [node[p[-1]]] if rng.random() < 0.5 else {"x": node[p[-1]]}
    return d

def mutate_text(rng:random.Random, t:str) -> str:
    "`t` with one to three random edits: truncated, a line dropped or doubled, garbage or YAML syntax inserted, a bomb, deep nesting."
    for _ in range(rng.randint(1, 3)):
        lines, i = t.splitlines(keepends=True), rng.randrange(max(1, len(t)))
        op = rng.random()
        if op < 0.15: t = t[:i]
        elif op < 0.3 and lines: del lines[rng.randrange(len(lines))]; t = "".join(lines)
        elif op < 0.45 and lines: j = rng.randrange(len(lines)); lines.insert(j, lines[j]); t = "".join(lines)
        elif op < 0.65: t = t[:i] + rng.choice("[]{}:,-&*!\"'\\\n\t\x00#|>?%@`") + t[i + 1:]
        elif op < 0.75: t = t[:i] + "".join(chr(rng.randrange(1, 0x3000)) for _ in range(rng.randint(1, 8))) + t[i:]
        elif op < 0.83: t = BOMB + t
        elif op < 0.9: t = t[:i] + "[" * 3000 + "]" * 3000 + t[i:]
        else: t = t.replace(rng.choice(["16", "true", "attention", "0.001", "ar", "8"]), rng.choice(TEXT_VALUES))
    return t

def check(fn, root:Path, what:str):
    "Run `fn`: success, or a clean one-line ValueError naming a field or file; never another exception, a hang, or a change under `root`."
    before = snapshot(root)
    signal.signal(signal.SIGALRM, _alarm); signal.alarm(30)
    try: fn()
    except (ValueError, FileNotFoundError) as e:
        msg = str(e)
        assert msg and "\n" not in msg and len(msg) <= 2000, (what, msg[:3000])
        assert any(w in msg for w in WORDS), (what, msg)
    except Hang: pytest.fail(f"{what}: no answer within 30 s")
    except Exception as e: pytest.fail(f"{what}: {type(e).__name__}: {str(e)[:500]}")
    finally: signal.alarm(0)
    assert snapshot(root) == before, what

@pytest.fixture
def root(tmp_path, monkeypatch):
    "The test's directory: the working directory and the temporary folder are inside it, with a file that must stay as it is."
    (tmp_path / "cwd").mkdir(); (tmp_path / "systmp").mkdir(); (tmp_path / "outside.txt").write_text("keep")
    monkeypatch.chdir(tmp_path / "cwd"); monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "systmp"))
    return tmp_path

def test_mutated_configs(root):
    rng, base = random.Random(SEED), tiny_config().to_dict()
    text = yaml.safe_dump(base, sort_keys=False)
    for i in range(N_CONFIG):
        p = root / f"c{i}.yaml"
        if i % 2: p.write_text(mutate_text(rng, text))
        else:
            try: p.write_text(yaml.safe_dump(mutate_dict(rng, base), sort_keys=False))
            except (yaml.YAMLError, ValueError): continue
        check(lambda: ExperimentConfig.from_yaml(p).resolve(), root, f"config {i}: {p.read_text()[:300]!r}")
        d = mutate_dict(rng, base)
        check(lambda: ExperimentConfig.from_dict(d).resolve(), root, f"config dict {i}: {str(d)[:300]}")

def test_mutated_overrides(root):
    rng, cfg = random.Random(SEED + 1), tiny_config()
    leaves = [".".join(p) for p in paths(cfg.to_dict())] + ["model.mixer_kwargs.n_heads", "model.mixer_kwargs.x", "train.lrr",
                                                            "", ".", "train.", "task.n_keys.x", "model.mixer_kwargs.n_heads.x"]
    for i in range(N_OVERRIDE):
        ov = [f"{rng.choice(leaves)}={rng.choice(TEXT_VALUES)}" for _ in range(rng.randint(1, 3))]
        check(lambda: apply_overrides(cfg, ov).resolve(), root, f"overrides {i}: {ov}")

def test_mutated_run_files(root, finished_run):
    rng = random.Random(SEED + 2)
    readers = {"status": lambda r: r.status, "config": lambda r: r.config.resolve(), "config_edited": lambda r: r.config_edited,
               "metrics": lambda r: r.metrics.rows(), "model": lambda r: r.model(), "repr": repr, "mechanism": lambda r: r.mechanism}
    for i in range(N_RUN):
        run = root / f"run{i}"; shutil_copy(finished_run, run)
        name = rng.choice(["final.json", "run.json", "config.yaml", "metrics.csv", "mechanism.json"])
        f = run / name
        if name == "mechanism.json": f.write_text(json.dumps({"mechanism": "induction", "association": {"value": 0.9}}))
        t = f.read_text()
        if name.endswith(".json") and rng.random() < 0.5:
            f.write_text(json.dumps(mutate_dict(rng, json.loads(t))))
        elif name == "config.yaml" and rng.random() < 0.5:
            try: f.write_text(yaml.safe_dump(mutate_dict(rng, yaml.safe_load(t)), sort_keys=False))
            except (yaml.YAMLError, ValueError): f.write_text(mutate_text(rng, t))
        else: f.write_text(mutate_text(rng, t))
        for k, read in readers.items():
            check(lambda: read(Run(run)), root, f"run {i}, {name} mutated, {k}: {f.read_text()[:300]!r}")
        shutil_rm(run)

def shutil_copy(src, dst):
    import shutil; shutil.copytree(src, dst)

def shutil_rm(d):
    import shutil; shutil.rmtree(d)

def test_case_count(): assert N_CONFIG * 2 + N_OVERRIDE + N_RUN >= 150
