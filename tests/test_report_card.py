"""The report card as a pip user meets it: the zoo it compares with ships with the package (and cannot drift from
`results/`), the report says which zoo it used, what its scale can and cannot show, why a verdict is unresolved
(with the gate actually applied) and what to run next; its folder has the user's permissions, and a report card
killed with kill -9 leaves hidden folders that the next one removes."""
import json, os, signal, subprocess, time
from pathlib import Path

import pandas as pd
import pytest

from conftest import CLI, ROOT, cli_env
from ssm_mech.report import (SCALE_NOTES, ZOO_COLUMNS, clean_stale, derive_zoo, report_card, zoo_dir, zoo_label,
                             zoo_models)


def test_shipped_zoo_is_what_results_gives():
    "The package's copy equals what `derive_zoo` makes of the repository's results/ (regenerate: tools/report_card_zoo.py)."
    shipped = {p.name: p.read_text() for p in zoo_dir().iterdir() if p.is_file()}
    assert shipped == derive_zoo(ROOT / "results"), "ssm_mech/data/zoo/ is stale: run `python -c 'from ssm_mech.report import " \
        "write_zoo; write_zoo(\"results\")'`"
    assert set(shipped) == {"ci.csv", "cpu.csv", "sources.json"}
    assert sum(len(t) for t in shipped.values()) < 100_000          # a compact derived form, not the folders


@pytest.mark.parametrize("scale,task,d", [("ci", "ar", 32), ("ci", "atr", 32), ("cpu", "atr", 64), ("cpu", "mqar", 64)])
def test_shipped_zoo_reads_as_the_results_folder(scale, task, d):
    "Two independent reads: the shipped CSV and the folders under results/ give the same models, numbers and sources."
    z, used = zoo_models(scale, task, d)
    zf, used_f = zoo_models(scale, task, d, results_dir=ROOT / "results")
    assert len(z) >= 4 and used == used_f
    pd.testing.assert_frame_equal(z[ZOO_COLUMNS], zf[ZOO_COLUMNS].astype({"model.d_model": int}), check_dtype=False)


def test_results_points_elsewhere(tmp_path):
    "`--results` replaces the shipped zoo: a folder holding only attention's ci runs gives a zoo of attention alone."
    src = pd.read_csv(ROOT / "results" / "report_card_ci" / "results.csv")
    (tmp_path / "report_card_ci").mkdir()
    src[src["model.mixer"] == "attention"].to_csv(tmp_path / "report_card_ci" / "results.csv", index=False)
    z, used = zoo_models("ci", "ar", 32, results_dir=tmp_path)
    assert list(z["model.mixer"]) == ["attention"] and used == ["results/report_card_ci"]
    assert len(zoo_models("ci", "ar", 32)[0]) > 1
    assert "shipped with ssm_mech" in zoo_label("ci") and str(tmp_path) in zoo_label("ci", tmp_path)
    assert "no zoo" in zoo_label("paper")


def test_card_says_what_it_shows_why_and_what_next(tmp_path):
    "A short ci card: scale box, the zoo it used, the gate applied on ATR beside its unresolved verdict, the next command, the umask."
    old = os.umask(0o027)
    try: card = report_card("attention", out=tmp_path / "card", overrides=["train.max_steps=2"], progress=False)
    finally: os.umask(old)
    md = (card.path / "report.md").read_text()
    assert "## What this shows and what it cannot (scale `ci`)" in md and SCALE_NOTES["ci"] in md
    assert "Next: `ssm-mech report-card attention --scale cpu`" in md
    assert "Compared with the zoo shipped with ssm_mech" in md
    atr = card.mechanisms[card.mechanisms.task == "atr"].iloc[0]
    assert atr.mechanism == "unresolved" and 0.5 < atr.gate < 1 and atr.gate == pytest.approx(atr.floor + 0.1)
    assert f"ATR (easy) {atr.gate:.3g} = its no-retrieval floor {atr.floor:.3g} + 0.1" in md
    assert "accuracy ≥ 0.5" not in md                                  # the gate named is the one applied
    row = next(l for l in md.splitlines() if l.startswith("| ATR (easy) |"))
    assert row.rstrip(" |").endswith(atr.reason) and f"< {atr.gate:.3g}" in atr.reason
    assert json.loads((card.path / "report.json").read_text())["zoo"].startswith("the zoo shipped")
    assert (card.path.stat().st_mode & 0o777) == 0o750                  # the umask's, not a temporary folder's 0700


def _hidden(d: Path) -> list[str]: return sorted(p.name for p in d.iterdir() if p.name.startswith(".card."))


def test_killed_report_card_is_cleaned_by_the_next(tmp_path):
    "kill -9 leaves `.card.runs-<pid>-*`; the next report card into the same folder removes it (issue 32)."
    env = cli_env()
    p = subprocess.Popen(CLI + ["report-card", "attention", "train.max_steps=100000", "--out", "card", "--no-progress"],
                         cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(1200):
        if any(r.glob("*/metrics.csv") for r in tmp_path.glob(".card.runs-*")): break
        time.sleep(0.1)
    p.send_signal(signal.SIGKILL); p.wait(timeout=60)
    left = _hidden(tmp_path)
    assert left and all(n.startswith(f".card.runs-{p.pid}-") for n in left), left
    r = subprocess.run(CLI + ["report-card", "attention", "train.max_steps=2", "--out", "card", "--no-progress"],
                       cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    assert _hidden(tmp_path) == [] and (tmp_path / "card" / "report.html").exists()
    assert clean_stale(tmp_path / "card") == []
