"""Every stored dissection (`results/*/mechanism/*.json`, `results/*/queries/*.json`) reads back through
`Dissection.from_json`, is in the current schema, and writes back every value it was stored with."""
import json, math
from pathlib import Path

import pytest

from ssm_mech.interventions import MIN_EFFECT, SCHEMA, Dissection, upgrade_mechanism

RESULTS = Path(__file__).resolve().parents[1] / "results"
FILES = sorted([*RESULTS.glob("*/mechanism/*.json"), *RESULTS.glob("*/queries/*.json")])


def entries(f: Path) -> list:
    data = json.loads(f.read_text())
    return data if isinstance(data, list) else [data]


def test_there_are_stored_dissections():
    assert len(FILES) > 200, f"only {len(FILES)} stored dissections under {RESULTS}"
    assert any(f.parent.name == "queries" for f in FILES), "no per-query (MQAR) files found"


@pytest.mark.parametrize("f", FILES, ids=lambda f: f"{f.parent.parent.name}/{f.parent.name}/{f.name}")
def test_stored_dissection_reads_back(f):
    for stored in entries(f):
        assert stored.get("schema") == SCHEMA, f"{f}: not migrated to schema {SCHEMA} (tools: upgrade_mechanism_file)"
        assert upgrade_mechanism(stored) == stored, f"{f}: migrating again would change it"
        d = Dissection.from_json(json.dumps(stored))
        back = json.loads(d.to_json())
        lost = {k: (v, back.get(k)) for k, v in stored.items() if back.get(k) != v}
        assert not lost, f"{f}: written back differently: {lost}"
        assert Dissection.from_json(back) == d                      # reading what it writes gives the same record
        assert d.mechanism in ("induction", "direct retrieval", "unresolved"), f"{f}: mechanism {d.mechanism!r}"
        if d.layer is not None and max(d.layer, 1) in d.by_layer:  # the association shown is the deciding layer's row
            assert d.association == d.by_layer[max(d.layer, 1)], f"{f}: association is not by_layer[{max(d.layer, 1)}]"
        if d.mechanism != "unresolved":                             # a verdict was only reached past the gates
            assert d.o_minus_c >= MIN_EFFECT, f"{f}: {d.mechanism} with O - C = {d.o_minus_c}"
            if d.min_accuracy is not None: assert d.accuracy >= d.min_accuracy, f"{f}: {d.mechanism} below its gate"
        if d.conv is not None and "blocks.0.mixer.hook_conv_out" in d.conv_binding:   # the two stored views of the binding agree
            for p, a in d.conv.items():                                 # NaN in both where O - C = 0 left the ratio undefined
                b = d.conv_binding["blocks.0.mixer.hook_conv_out"][p]
                assert b == a or (math.isnan(a) and math.isnan(b)), f"{f}: conv at {p}: {b} against {a}"


def test_old_forms_fill_what_they_can():
    old = {"mechanism": "induction", "reason": "r", "accuracy": 0.9, "o_minus_c": 0.5, "layer": 1,
           "by_layer": {"1": {"value": 0.9, "key": 0.0, "query": 0.1}}, "conv": {"value": 0.1, "next_key": 0.8, "value+2": 0.0},
           "interval": {"value": [0.8, 1.0]}, "n": 512, "split": "test", "seed": 0, "regated": {"rule": "x"}}
    d = Dissection.from_json(old)
    assert d.association == {"value": 0.9, "key": 0.0, "query": 0.1}         # from by_layer at the deciding layer
    assert d.by_layer_interval == {1: {"value": (0.8, 1.0)}}                   # from the deciding layer's interval
    assert d.conv_binding == {"blocks.0.mixer.hook_conv_out": old["conv"]}
    assert d.min_accuracy is None and d.extra == {"regated": {"rule": "x"}} and d.schema == SCHEMA
    with pytest.raises(ValueError, match="needs a newer ssm_mech"): Dissection.from_json({**old, "schema": SCHEMA + 1})
    with pytest.raises(ValueError, match="must be a JSON object"): Dissection.from_json("[1, 2]")
