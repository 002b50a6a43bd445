"""The stored result tables stay valid: every site a stored patching table names is a hook point of
the model its run trained, under today's hook names (see `upgrade_hook` in the interventions page)."""
from pathlib import Path

import pandas as pd
import pytest

from ssm_mech.model import LanguageModel
from ssm_mech.runs import ExperimentConfig

ROOT = Path(__file__).resolve().parents[1]
TABLES = sorted((ROOT / "results").glob("*/patching/*.csv"))


@pytest.mark.parametrize("table", TABLES, ids=[f"{p.parts[-3]}/{p.stem}" for p in TABLES])
def test_stored_sites_are_hook_points(table):
    cfg = ExperimentConfig.from_yaml((table.parents[1] / "configs" / f"{table.stem}.yaml").read_text())
    hooks = set(LanguageModel(cfg.resolve().model).hook_names())
    sites = set(pd.read_csv(table).hook)
    assert sites <= hooks, f"{table}: {sorted(sites - hooks)} are not hook points of a {cfg.model.mixer} model"
