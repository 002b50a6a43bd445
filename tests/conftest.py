"Shared fixtures: a tiny experiment (seconds to train on one core) and a finished run of it."
import os, shutil, sys
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
