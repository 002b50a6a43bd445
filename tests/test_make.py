"""The two commands of the README (`make demo`, `make test`) set up the project environment once and reuse it.

These tests read the Makefile's decisions with `make -q` (is the target up to date?) and `make -n`
(what would run?), so they install nothing. The first test copies the Makefile beside a
pyproject.toml into a scratch folder with a stand-in virtualenv, then edits the copy.
"""
import shutil, subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="GNU make is not installed")


def make(*args, cwd=ROOT):
    return subprocess.run(["make", "--no-print-directory", *args], cwd=cwd, capture_output=True, text=True)


def test_environment_is_rebuilt_only_when_pyproject_changes(tmp_path):
    shutil.copy(ROOT / "Makefile", tmp_path)
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n')
    (tmp_path / ".venv" / "bin").mkdir(parents=True)
    assert make("-q", "env", cwd=tmp_path).returncode == 1          # no stamp yet: set-up would run
    plan = make("-n", "env", cwd=tmp_path).stdout
    assert "pip install" in plan and "-e \".[dev]\"" in plan
    # Mark the stand-in environment as installed for this pyproject.toml, the way the recipe does.
    stamp = [l for l in plan.splitlines() if l.startswith("touch ")][0].split()[1]
    (tmp_path / stamp).touch()
    assert make("-q", "env", cwd=tmp_path).returncode == 0          # up to date: nothing to install
    assert "pip install" not in make("-n", "test", cwd=tmp_path).stdout
    (tmp_path / "pyproject.toml").touch()                           # a touch alone changes nothing
    assert make("-q", "env", cwd=tmp_path).returncode == 0
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\ndependencies = ["numpy"]\n')
    assert make("-q", "env", cwd=tmp_path).returncode == 1          # an edit triggers a re-install


def test_commands_run_what_the_readme_and_ci_say():
    test_plan = make("-n", "test", "SYSTEM_TORCH=").stdout.splitlines()[-1]
    assert test_plan.endswith("-m pytest -n 2"), test_plan
    assert make("-n", "demo").stdout.splitlines()[-1].endswith("ssm-mech demo ")
    ci = (ROOT / ".ci" / "run").read_text()
    assert "make env" in ci and ci.rstrip().endswith("make test")
    readme = (ROOT / "README.md").read_text()
    assert "make demo" in readme and "make test" in readme


@pytest.mark.skipif(not list((ROOT / ".venv").glob(".installed-*")), reason="no project environment made by `make env`")
def test_second_run_installs_nothing():
    assert make("-q", "env").returncode == 0, "the project environment is out of date with pyproject.toml"
    for target in ("demo", "test"):
        assert "pip install" not in make("-n", target).stdout
