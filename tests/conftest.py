"Shared fixtures: a tiny experiment (seconds to train on one core) and a finished run of it."
import os, sys
from pathlib import Path

import pytest
import torch

# One math thread in this process, as in the CLI subprocesses the tests start (`cli_env`): runs compared
# bit for bit across processes must reduce in the same order, whatever the machine's core count.
torch.set_num_threads(1)

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path: sys.path.insert(0, str(ROOT))   # this checkout's ssm_mech, not an installed one

from ssm_mech.model import ModelConfig
from ssm_mech.runs import ExperimentConfig, TrainConfig
from ssm_mech.tasks import task_preset

def tiny_config(**train) -> ExperimentConfig:
    "AR with 8 keys, 8 values and 2 pairs; a 2-layer width-16 attention model; 8 steps."
    tc = dict(max_steps=8, batch_size=16, checkpoint_every=4, log_every=3, eval_every=4, eval_batch_size=64)
    return ExperimentConfig(task_preset("ar_32", n_keys=8, n_values=8, n_pairs=2, n_train=64, n_dev=16, n_test=16),
                            ModelConfig("attention", d_model=16, init="torch"), TrainConfig(**{**tc, **train}), name="tiny")

@pytest.fixture(scope="session")
def finished_run(tmp_path_factory) -> Path:
    "A finished tiny run (copy it before changing it)."
    from ssm_mech.train import train
    d = tmp_path_factory.mktemp("finished") / "run"
    train(tiny_config(), d, progress=False)
    return d

def cli_env() -> dict:
    "Environment for a CLI subprocess that imports this checkout."
    return {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}

CLI = [sys.executable, "-c", "import sys; from ssm_mech.cli import main; sys.exit(main())"]

# The slowest tests first, handed out one at a time. `pytest -n 2` otherwise sends each worker a run of
# consecutive tests, and the chapters collected last (several minutes together) ended the suite on one worker
# while the other idled: 30 min of wall time for 17 min of tests per worker. Ordered by the durations of a
# full `pytest -n 2 --durations=60` run; a test missing from the list keeps its place after these.
SLOW_FIRST = ["test_notebook[07c_experiments.ipynb]", "test_saved_outputs_reproduce[01b_tasks.ipynb]",
              "test_notebook[05_train.ipynb]", "test_site_pages_in_browser", "test_notebook[08_sweep.ipynb]",
              "test_saved_outputs_reproduce[01_pcfg.ipynb]", "test_notebook[17_your_mixer.ipynb]",
              "test_notebook[07b_viz.ipynb]", "test_notebook[07a_explorer.ipynb]", "test_notebook[01b_tasks.ipynb]", "test_notebook[01_pcfg.ipynb]",
              "test_notebook[06_fast_patching.ipynb]", "test_notebook[05b_packed.ipynb]", "test_notebook[10_ar_main.ipynb]",
              "test_notebook[09_cli.ipynb]", "test_notebook[index.ipynb]", "test_notebook[12_atr.ipynb]",
              "test_notebook[11_conv_ablations.ipynb]", "test_notebook[16_sibling.ipynb]", "test_notebook[15_positions.ipynb]",
              "test_notebook[13_generalisation.ipynb]", "test_notebook[14_depth.ipynb]"]

def pytest_collection_modifyitems(items):
    rank = {name: i for i, name in enumerate(SLOW_FIRST)}
    items.sort(key=lambda it: rank.get(it.name, len(rank)))                 # stable: the rest keep their order

def pytest_configure(config):
    if getattr(config.option, "maxschedchunk", False) is None: config.option.maxschedchunk = 1   # pytest-xdist's load scheduler


def interrupt_cli_train(tmp_path, sig, cli=CLI):
    """Start `ssm-mech train` on a long tiny run in `tmp_path/run` with `sig` at its default (as at a terminal: a
    launcher that ignores SIGINT would otherwise pass that on), send `sig` once it has logged, and return
    (returncode, stderr)."""
    import signal, subprocess, time
    cfg = tmp_path / "slow.yaml"; cfg.write_text(tiny_config(max_steps=100000, checkpoint_every=1000).to_yaml())
    p = subprocess.Popen(cli + ["train", str(cfg), "--run-dir", "run", "--no-progress"], cwd=tmp_path, env=cli_env(),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         preexec_fn=lambda: signal.signal(sig, signal.SIG_DFL))
    for _ in range(600):
        if (tmp_path / "run" / "metrics.csv").exists(): break
        time.sleep(0.1)
    p.send_signal(sig); _, err = p.communicate(timeout=60)
    return p.returncode, err
