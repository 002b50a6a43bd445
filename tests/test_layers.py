"""The package's import graph follows the floors drawn in `nbs/00_core.ipynb` (`ssm_mech.core.FLOORS`).

Every `import` and `from … import` of every module is read with `ast`, including the ones inside
functions and methods, so a lazy import cannot hide a step up. Each must go to a strictly lower
floor; that alone rules out cycles, and the graph is checked for cycles directly as well.
"""
import ast
from pathlib import Path

from ssm_mech.core import FLOORS, floor_of

PKG = Path(__file__).resolve().parents[1] / "ssm_mech"
MODULES = sorted(p.stem for p in PKG.glob("*.py") if not p.stem.startswith("_"))


def imports_in(source: str) -> set:
    "The `ssm_mech` modules that `source` imports anywhere (module level, functions, methods)."
    out = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom):
            if node.level == 1: base = node.module or ""                 # from .x import y, from . import x
            elif node.module and node.module.split(".")[0] == "ssm_mech": base = node.module.removeprefix("ssm_mech").lstrip(".")
            else: continue
            out |= {n.split(".")[0] for n in ([base] if base else [a.name for a in node.names])}
        elif isinstance(node, ast.Import):
            out |= {a.name.split(".")[1] for a in node.names if a.name.startswith("ssm_mech.")}
    return out


GRAPH = {m: imports_in((PKG / f"{m}.py").read_text()) - {m} for m in MODULES}


def test_every_module_is_on_a_floor():
    on_floors = {m for f in FLOORS for m in f}
    assert set(MODULES) == on_floors, f"modules without a floor: {set(MODULES) - on_floors}; floors without a module: {on_floors - set(MODULES)}"


def test_imports_go_down():
    up = [(m, d, floor_of(m), floor_of(d)) for m, deps in GRAPH.items() for d in deps if floor_of(d) >= floor_of(m)]
    assert not up, "imports that do not go to a lower floor (module, imported, floors): " + repr(up)


def test_no_cycle():
    state = {}
    def visit(m, path):
        if state.get(m) == "done": return
        assert state.get(m) != "open", "import cycle: " + " -> ".join(path + [m])
        state[m] = "open"
        for d in sorted(GRAPH[m]): visit(d, path + [m])
        state[m] = "done"
    for m in MODULES: visit(m, [])


def test_function_level_imports_count():
    src = ("from ssm_mech.core import atomic_write\nimport numpy\n"
           "def f():\n    from ssm_mech.sweep import run_sweep\n    from .viz import Explorer\n"
           "class A:\n    def g(self):\n        import ssm_mech.cli\n        from . import results\n")
    assert imports_in(src) == {"core", "sweep", "viz", "cli", "results"}


def test_interventions_gathers_its_three_parts():
    "`ssm_mech.interventions` holds no code of its own: it re-exports `sites`, `patching` and `verdict`, which build on each other in that order."
    assert GRAPH["interventions"] == {"sites", "patching", "verdict"}, GRAPH["interventions"]
    assert "sites" in GRAPH["patching"] and {"sites", "patching"} <= GRAPH["verdict"], (GRAPH["patching"], GRAPH["verdict"])
    assert not GRAPH["sites"] & {"patching", "verdict", "fast_patching"}, GRAPH["sites"]
