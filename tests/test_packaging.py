"""What a release ships, checked the way the release workflow builds it.

The sdist and the wheel are built (`python -m build --no-isolation`: the wheel from the sdist, as PyPI users'
source builds do) from a copy of the files a build reads, so the checkout is left untouched: the sdist holds
no `tests/` (they execute `nbs/`, which it does not ship), every file of the package (code and package data)
is in both, and the wheel runs on its own, from outside the repository. `.github/workflows/release.yml` parses,
runs on version tags, checks the tag against the version, runs `twine check` and publishes by trusted
publishing. The package docstring (`help(ssm_mech)`) lists every module, floor by floor.
"""
import ast, json, os, re, shutil, subprocess, sys, tarfile, zipfile
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "ssm_mech"
WORKFLOW = ROOT / ".github" / "workflows" / "release.yml"


def version() -> str:
    return re.search(r'^__version__ = "([^"]+)"', (PKG / "__init__.py").read_text(encoding="utf-8"), re.M).group(1)


def package_files() -> list[str]:
    "Every file of the package as the checkout has it (code and data), relative to the repository root."
    return sorted(str(p.relative_to(ROOT)) for p in PKG.rglob("*")
                  if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc")


@pytest.fixture(scope="module")
def dist(tmp_path_factory) -> dict:
    "The sdist and the wheel built from a copy of the files a build reads (no egg-info or build/ in the checkout)."
    pytest.importorskip("build")
    src = tmp_path_factory.mktemp("src")
    for name in ("pyproject.toml", "setup.py", "MANIFEST.in", "README.md", "LICENSE", "CHANGELOG.md"):
        shutil.copy2(ROOT / name, src / name)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info")
    for d in ("ssm_mech", "tests"):                     # tests/ too, so that leaving it out is the build's doing
        shutil.copytree(ROOT / d, src / d, ignore=ignore)
    out = tmp_path_factory.mktemp("dist")
    r = subprocess.run([sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), str(src)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    v = version()
    sdist, wheel = out / f"ssm_mech-{v}.tar.gz", out / f"ssm_mech-{v}-py3-none-any.whl"
    assert sdist.exists() and wheel.exists(), sorted(p.name for p in out.iterdir())
    with tarfile.open(sdist) as t: sdist_names = [n.split("/", 1)[1] for n in t.getnames() if "/" in n]
    return dict(sdist=sdist, wheel=wheel, sdist_names=sdist_names, wheel_names=zipfile.ZipFile(wheel).namelist())


def test_sdist_has_no_tests(dist):
    tests = [n for n in dist["sdist_names"] if n == "tests" or n.startswith("tests/")]
    assert not tests, f"the sdist ships tests that need nbs/: {tests[:5]}"


def test_sdist_has_the_package_and_its_documents(dist):
    names = set(dist["sdist_names"])
    missing = [f for f in package_files() + ["pyproject.toml", "README.md", "LICENSE", "CHANGELOG.md"] if f not in names]
    assert not missing, f"not in the sdist: {missing}"
    assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc")]


def test_wheel_has_every_package_file(dist):
    names = set(dist["wheel_names"])
    missing = [f for f in package_files() if f not in names]
    assert not missing, f"not in the wheel (add them to [tool.setuptools.package-data] in pyproject.toml): {missing}"
    assert any(n.startswith("ssm_mech/data/") and n.endswith(".csv") for n in names), "no package data in the wheel"
    assert not [n for n in names if n.startswith("tests/")]


def test_wheel_runs_on_its_own(dist, tmp_path):
    "The wheel's package, unpacked outside the checkout: its data, one patched site named as text, the command line."
    site = tmp_path / "site"
    zipfile.ZipFile(dist["wheel"]).extractall(site)
    code = """
import ssm_mech, torch
from ssm_mech.results import paper_numbers
from ssm_mech.tasks import task_preset, build_datasets, token_classes
from ssm_mech.model import LanguageModel, ModelConfig
from ssm_mech.interventions import patch_sweep
print(ssm_mech.__file__)
assert len(paper_numbers()) > 0
task = task_preset("ar_32", n_keys=16, n_values=16, n_pairs=2, n_train=8, n_dev=8, n_test=32)
ds = build_datasets(task)["test"]
torch.manual_seed(0)
model = LanguageModel(ModelConfig("attention", d_model=16, vocab_size=task.vocab_size))
res = patch_sweep(model, ds.tokens, ds.positions, ["blocks.1.hook_resid_pre@value"], corruptions=["key"],
                  classes=token_classes(task), progress=False)
assert res.summary.site.tolist() == ["blocks.1.hook_resid_pre@value"]
"""
    env = {**os.environ, "PYTHONPATH": str(site), "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    r = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    assert Path(r.stdout.splitlines()[0]).is_relative_to(site), f"imported {r.stdout.splitlines()[0]}, not the wheel's package"
    r = subprocess.run([sys.executable, "-c", "import sys; from ssm_mech.cli import main; sys.exit(main(['--help']))"],
                       cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and "report-card" in r.stdout, r.stdout[-2000:] + r.stderr[-2000:]


def test_twine_check(dist):
    pytest.importorskip("twine")
    r = subprocess.run([sys.executable, "-m", "twine", "check", "--strict", str(dist["sdist"]), str(dist["wheel"])],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def test_manifest_and_package_data_settings():
    "Settings the release relies on, readable without building: tests pruned from the sdist, the data a package file."
    manifest = (ROOT / "MANIFEST.in").read_text(encoding="utf-8").splitlines()
    assert "prune tests" in manifest
    tomllib = pytest.importorskip("tomllib")            # Python 3.11+
    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "data/*.csv" in cfg["tool"]["setuptools"]["package-data"]["ssm_mech"]


# ------------------------------------------------------------------------------------------ the release workflow

def workflow() -> dict:
    return yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))


def steps(job:str) -> list[dict]: return workflow()["jobs"][job]["steps"]


def test_workflow_runs_on_version_tags_only():
    wf = workflow()
    on = wf.get("on", wf.get(True))                      # YAML 1.1 reads a bare `on` as true
    assert on == {"push": {"tags": ["v*"]}}
    assert wf["permissions"] == {"contents": "read"}    # nothing more, except where publishing needs it


def test_workflow_builds_checks_and_publishes_by_trusted_publishing():
    jobs = workflow()["jobs"]
    runs = " ".join(s.get("run", "") for s in steps("build"))
    assert "python -m build" in runs and "twine check --strict dist/*" in runs
    assert 'tag != f"v{version}"' in runs, "the tag is compared with the package's version"
    pub = jobs["publish"]
    assert set(pub["needs"]) == {"build", "smoke"}
    assert pub["permissions"] == {"id-token": "write"}
    assert pub["environment"]["name"] == "pypi"
    uses = [s.get("uses", "") for s in pub["steps"]]
    assert any(u.startswith("pypa/gh-action-pypi-publish@") for u in uses)
    assert not any("password" in s.get("with", {}) for s in pub["steps"]), "trusted publishing needs no token"
    assert [j for j, v in jobs.items() if "id-token" in v.get("permissions", {})] == ["publish"]


def test_workflow_scripts_compile():
    "The Python each step runs (heredocs between <<'PY' and PY) is valid Python."
    scripts = [m.group(1) for job in workflow()["jobs"] for s in steps(job)
               for m in re.finditer(r"<<'PY'\n(.*?)\nPY(?:\n|$)", s.get("run", ""), re.S)]
    assert len(scripts) == 3
    for src in scripts: compile(src, "release.yml", "exec")


def test_changelog_has_this_version():
    log = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    heads = re.findall(r"^## \[([^\]]+)\]", log, re.M)
    assert heads[0] == "Unreleased" and version() in heads, heads
    for h in heads: assert re.search(rf"^\[{re.escape(h)}\]: https://", log, re.M), f"no link for [{h}]"


# ------------------------------------------------------------------------------------------ the package docstring

def package_doc() -> str:
    return ast.get_docstring(ast.parse((PKG / "__init__.py").read_text(encoding="utf-8")))


def test_package_docstring_lists_every_module_by_floor():
    "`help(ssm_mech)` names every module of `core.FLOORS`, bottom floor first, each on a line of its own."
    from ssm_mech.core import FLOORS
    doc = package_doc()
    order = [m for floor in FLOORS for m in floor]
    lines = {m: next((i for i, l in enumerate(doc.splitlines()) if f"`ssm_mech.{m}`" in l), None) for m in order}
    missing = [m for m, i in lines.items() if i is None]
    assert not missing, f"modules the package docstring does not list: {missing}"
    at = [lines[m] for m in order]
    assert at == sorted(at) and len(set(at)) == len(at), f"not one line each, floor by floor: {lines}"


def test_interventions_docstring_has_the_example():
    doc = ast.get_docstring(ast.parse((PKG / "interventions.py").read_text(encoding="utf-8")))
    assert 'patch_sweep(model, tokens, positions, ["blocks.1.hook_resid_pre@query"]' in doc


# ------------------------------------------------------------------------------------------ the wheel in a fresh virtualenv

OUTSIDE_MIXER = '''
import torch, torch.nn as nn
class CumMean(nn.Module):
    "A mixer from outside the package: a gated running mean over the positions so far (causal)."
    def __init__(self, d_model):
        super().__init__(); self.gate, self.out = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)
    def forward(self, x):                                         # (b, l, d)
        n = torch.arange(1, x.shape[1] + 1, device=x.device, dtype=x.dtype)[:, None]   # (l, 1)
        return self.out(torch.sigmoid(self.gate(x)) * x.cumsum(1) / n)            # (b, l, d)
'''


def required_closure(wheel: Path) -> list:
    "The installed distributions the wheel's required dependencies (no extras) need, transitively, as this environment has them."
    import importlib.metadata as md
    from packaging.requirements import Requirement
    meta = zipfile.ZipFile(wheel).read(next(n for n in zipfile.ZipFile(wheel).namelist() if n.endswith(".dist-info/METADATA")))
    todo = [Requirement(l.split(":", 1)[1].strip()) for l in meta.decode().splitlines() if l.startswith("Requires-Dist:")]
    seen = {}
    while todo:
        r = todo.pop()
        if r.marker is not None and not r.marker.evaluate({"extra": ""}): continue
        key = r.name.lower().replace("_", "-")
        if key in seen: continue
        seen[key] = d = md.distribution(r.name)
        todo += [Requirement(x) for x in (d.requires or [])]
    return list(seen.values())


def test_wheel_in_a_fresh_virtualenv(dist, tmp_path):
    """The wheel installed (pip, no index) into a fresh virtualenv that sees only its required dependencies (linked from
    this environment: nothing is downloaded, no dev extra is visible): the README's "Try it" snippet runs, and
    `ssm-mech report-card` on a mixer from outside the package compares it with the shipped zoo. About 30 s on one
    thread of a 2-core machine (2026-12-03), the wheel's build (shared with the tests above) not counted."""
    deps = tmp_path / "deps"; deps.mkdir()
    for d in required_closure(dist["wheel"]):
        for top in {Path(str(f)).parts[0] for f in d.files or [] if not str(f).startswith("..")}:
            src = Path(d.locate_file(top))
            if src.exists() and not (deps / top).exists(): (deps / top).symlink_to(src)
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    py = venv / "bin" / "python"
    site = Path(subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               capture_output=True, text=True, check=True).stdout.strip())
    (site / "required_deps.pth").write_text(str(deps) + "\n")
    r = subprocess.run([sys.executable, "-m", "pip", "--python", str(py), "install", "--no-index", "--disable-pip-version-check",
                        str(dist["wheel"])], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")} | {"OMP_NUM_THREADS": "1"}
    work = tmp_path / "work"; work.mkdir()
    cells = {c.get("id"): "".join(c["source"]) for c in json.loads((ROOT / "nbs" / "index.ipynb").read_text())["cells"]}
    lines = (cells["0c28268e"] + "\n" + cells["f83d08a6"]).rstrip().splitlines()
    last = max(i for i, l in enumerate(lines) if l.startswith("{"))           # the cell's last expression: its shown result
    snippet = "\n".join(lines[:last]) + "\nprint(" + "\n".join(lines[last:]) + ")\nimport ssm_mech; print(ssm_mech.__file__)"
    r = subprocess.run([str(py), "-c", snippet], cwd=work, env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    out = r.stdout.strip().splitlines()
    assert Path(out[-1]).is_relative_to(site), f"imported {out[-1]}, not the installed wheel"
    res = ast.literal_eval(out[-2])
    assert res["mechanism"] in ("induction", "direct retrieval", "unresolved") and 0 <= res["test acc"] <= 1
    (work / "outside_mixer.py").write_text(OUTSIDE_MIXER)
    r = subprocess.run([str(venv / "bin" / "ssm-mech"), "report-card", "outside_mixer:CumMean", "train.max_steps=30", "--out", "card",
                        "--no-progress"], cwd=work, env=env, capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    md = (work / "card" / "report.md").read_text()
    assert "Compared with the zoo shipped with ssm_mech" in md and "none stored" not in md
    assert "Next: `ssm-mech report-card outside_mixer:CumMean --scale cpu`" in md
    assert "ssm-mech report-card outside_mixer:CumMean --scale cpu" in r.stdout
