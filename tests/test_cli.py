"""The command line as a user first meets it: `--help` at once (no torch loaded), the thread policy, and the
demo's table as the README prints it (slow: `SSM_MECH_TEST_FLAGS=slow`)."""
import json, os, re, resource, subprocess, sys

import pytest

from conftest import CLI, ROOT, cli_env

slow = pytest.mark.skipif("slow" not in os.environ.get("SSM_MECH_TEST_FLAGS", "").split(),
                          reason="minutes of training: set SSM_MECH_TEST_FLAGS=slow")

LOADED = "import sys; from ssm_mech.cli import main; main({argv!r}); print([m for m in ('torch', 'pandas', 'numpy', 'ssm_mech.core') if m in sys.modules], file=sys.stderr)"


@pytest.mark.parametrize("argv", [["--help"], ["report-card", "--help"], ["train", "--nonsense"]])
def test_help_loads_no_torch(argv):
    "`--help` (and an argparse error) answers without importing torch, pandas or the library: well under a second."
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    r = subprocess.run([sys.executable, "-c", LOADED.format(argv=argv)], env=cli_env(), capture_output=True, text=True, timeout=120)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    assert r.stderr.strip().splitlines()[-1] == "[]", r.stderr[-2000:]
    assert ("usage: ssm-mech" in r.stdout) == (argv[-1] == "--help")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)   # CPU time: not inflated by a busy machine
    assert cpu < 1.0, f"{argv}: {cpu:.2f} s of CPU"


def _threads_of_card(tmp_path, name, extra=(), **env):
    e = {k: v for k, v in cli_env().items() if k not in ("OMP_NUM_THREADS", "MKL_NUM_THREADS")} | env
    r = subprocess.run(CLI + ["report-card", "attention", "train.max_steps=2", "--out", name, "--no-progress", *extra],
                       cwd=tmp_path, env=e, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    return json.loads((tmp_path / name / "report.json").read_text())["threads"]


def test_thread_policy(tmp_path):
    "One math thread by default for these small models; --threads wins over OMP_NUM_THREADS (which `default_threads` obeys: 08b)."
    assert _threads_of_card(tmp_path, "default") == 1
    assert _threads_of_card(tmp_path, "flag", ["--threads", "2"], OMP_NUM_THREADS="1") == 2


def readme_demo_table() -> dict:
    "{model: {column: value}} of the demo table printed in README.md."
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"```\n( +test acc .*?)\n```", text, re.S).group(1).splitlines()
    cols = re.split(r"\s{2,}", block[0].strip())
    rows = {}
    for line in block[2:]:
        model, *vals = re.split(r"\s{2,}", line.strip())
        if len(vals) == len(cols): rows[model] = dict(zip(cols, vals))        # not the "why ..." lines under the table
    return rows


@slow
def test_demo_is_the_readmes_on_one_thread(tmp_path):
    "The demo (about 2.5 min on one thread of a 2-core machine) prints the README's table: accuracy, associations, verdicts."
    from ssm_mech.cli import demo
    table = demo(tmp_path / "demo", progress=False, threads=1)
    readme = readme_demo_table()
    assert list(readme) == list(table.index)
    whys = dict(re.findall(r"^why (\w+) is \w+: (.*)$", (ROOT / "README.md").read_text(encoding="utf-8"), re.M))
    assert whys == {m: w for m, w in table.why.items() if w}
    for m, row in readme.items():
        got = table.loc[m]
        assert row["mechanism"] == got["mechanism"]
        for c in ("test acc", "assoc@value", "assoc@key", "assoc@query"):
            assert float(row[c]) == pytest.approx(float(got[c]), abs=0.011), (m, c, row[c], got[c])
