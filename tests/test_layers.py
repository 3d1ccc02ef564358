"""The package's import graph points down: no cycle between modules, no edge to a higher layer.

Read from the source with ``ast`` (nothing is imported), every import counts: at the top of a
module, inside a function, or under ``TYPE_CHECKING``.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = "relimpute"

#: The layers, lowest first, by the name under ``relimpute`` (a module or a subpackage). A
#: module may import its own layer or lower ones; ``__main__`` is the entry point into ``cli``;
#: the package itself (``relimpute/__init__.py``) is the facade over all of them.
LAYERS = (
    ("errors", "_deprecation", "_vocabulary", "_display", "_jit", "progress", "parallel", "_files",
     "studies", "stats", "_registry", "_defaults", "_normal"),
    ("io", "collection_settings", "adapters", "groups"),
    ("labels",),
    ("data",),
    ("measures",),
    ("relevance", "confidence"),
    ("selection", "bias", "precision", "simulate"),
    ("calibration", "testing"),
    ("cli",),
    ("__main__", "__init__"),
)

#: (importer, imported name) that are not code: the version string the package sets first.
ALLOWED = {("studies", "__version__"), ("cli", "__version__")}


def _modules() -> dict[str, Path]:
    found = {}
    for path in sorted((SRC / PACKAGE).rglob("*.py")):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _edges(modules: dict[str, Path]) -> dict[str, set[tuple[str, str]]]:
    """Module -> {(imported module, name taken from it)}; a name that is a submodule is an
    edge to that submodule."""
    edges: dict[str, set[tuple[str, str]]] = defaultdict(set)
    for module, path in modules.items():
        package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name in modules:
                        edges[module].add((alias.name, ""))
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package[: len(package) - node.level + 1]
                    target = ".".join(base + ([node.module] if node.module else []))
                else:
                    target = node.module or ""
                for alias in node.names:
                    sub = f"{target}.{alias.name}"
                    if sub in modules:
                        edges[module].add((sub, ""))
                    elif target in modules and target != module:
                        edges[module].add((target, alias.name))
    return edges


def _part(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _layer(module: str) -> int:
    part = _part(module)
    for level, names in enumerate(LAYERS):
        if part in names:
            return level
    raise AssertionError(f"{module}: {part!r} has no layer; add it to LAYERS in {__file__}")


def test_every_module_has_a_layer():
    for module in _modules():
        _layer(module)


def test_no_import_points_up():
    upward = []
    for module, targets in _edges(_modules()).items():
        for target, name in targets:
            if (_part(module), name) in ALLOWED:
                continue
            if _layer(target) > _layer(module):
                upward.append(f"{module} -> {target}" + (f" ({name})" if name else ""))
    assert not upward, "imports pointing to a higher layer:\n" + "\n".join(sorted(upward))


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_import_cycle():
    modules = _modules()
    graph = {
        module: {
            target
            for target, name in targets
            # a submodule importing a name its own package's __init__ defines first (the
            # version) is not a cycle of code
            if (_part(module), name) not in ALLOWED
        }
        for module, targets in _edges(modules).items()
    }
    assert not _cycles(graph), f"import cycles: {_cycles(graph)}"


@pytest.mark.parametrize(
    "graph, expected",
    [
        ({"a": {"b"}, "b": {"c"}, "c": set()}, []),
        ({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}, [["a", "b", "c"]]),
        ({"a": {"a"}}, []),  # a module naming itself is no cycle between modules
    ],
)
def test_cycle_finder_on_small_graphs(graph, expected):
    assert _cycles(graph) == expected


def test_the_walk_sees_relative_lazy_and_type_checking_imports():
    edges = _edges(_modules())
    # measures.significance imports the base statistics lazily, inside a function
    assert ("relimpute.stats", "paired_test") in edges["relimpute.measures.significance"]
    # data takes the campaign assembly from the I/O package below it
    assert any(t == "relimpute.io.assembly" for t, _ in edges["relimpute.data"])


#: Imports of a ``_private`` name from another part of the package that are still to be mended
#: (importer, imported module, name): none now. This list only shrinks: a new entry is a new
#: private import (make the name public where it is defined, or move the code).
PRIVATE_ALLOWED: set[tuple[str, str, str]] = set()


def _private_imports(modules: dict[str, Path]) -> set[tuple[str, str, str]]:
    """(importer, module, name) for every ``from X import _name`` (a private name: one
    underscore, not a dunder) whose module lies in another part of the package: another
    subpackage or another top-level module (:func:`_part`)."""
    found = set()
    for module, path in modules.items():
        package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ImportFrom):
                continue
            if node.level:
                base = package[: len(package) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target != PACKAGE and not target.startswith(PACKAGE + "."):
                continue
            for alias in node.names:
                name = alias.name
                if name.startswith("_") and not name.startswith("__") and _part(target) != _part(module):
                    found.add((module, target, name))
    return found


def test_no_private_name_is_imported_from_another_part():
    found = _private_imports(_modules())
    new = sorted(found - PRIVATE_ALLOWED)
    assert not new, (
        "private names imported from another part of the package (make them public there):\n"
        + "\n".join(f"{m}: from {t} import {n}" for m, t, n in new)
    )
    mended = sorted(PRIVATE_ALLOWED - found)
    assert not mended, (
        "no longer imported (remove them from PRIVATE_ALLOWED in tests/test_layers.py):\n"
        + "\n".join(f"{m}: from {t} import {n}" for m, t, n in mended)
    )


def test_the_private_walk_sees_a_private_submodule_and_relative_imports(tmp_path):
    package = tmp_path / PACKAGE
    (package / "low").mkdir(parents=True)
    (package / "high").mkdir()
    for init in (package, package / "low", package / "high"):
        (init / "__init__.py").write_text("")
    (package / "low" / "engine.py").write_text("def _select(): pass\n")
    (package / "low" / "user.py").write_text("from .engine import _select\n")  # its own part
    (package / "high" / "user.py").write_text(
        "from ..low.engine import _select\nfrom ..low import _kernels\nfrom ..low import engine\n"
        "from relimpute.low.engine import __doc__\n"
    )
    modules = {PACKAGE: package / "__init__.py"}
    for path in package.glob("*/*.py"):
        name = f"{PACKAGE}.{path.parent.name}"
        modules[name if path.stem == "__init__" else f"{name}.{path.stem}"] = path
    assert _private_imports(modules) == {
        (f"{PACKAGE}.high.user", f"{PACKAGE}.low.engine", "_select"),
        (f"{PACKAGE}.high.user", f"{PACKAGE}.low", "_kernels"),
    }


def test_the_design_based_side_stands_on_the_measures_alone():
    """``confidence.survey``'s estimators (design-based and model-assisted estimates) take
    predictions as numbers: they import no relevance model and nothing of the model-based
    engine, so their guarantee cannot depend on them; only ``survey.control`` (which turns a
    model or label file into predictions) reads models and labels."""
    edges = _edges(_modules())
    survey = [m for m in _modules() if m.startswith("relimpute.confidence.survey")]
    assert "relimpute.confidence.survey.estimate" in survey
    for module in survey:
        if module.endswith(".control"):
            continue
        for target, _ in edges.get(module, ()):
            inside = target.startswith("relimpute.confidence.survey")
            allowed = target in ("relimpute.io.trec", "relimpute.errors", "relimpute._jit",
                                 "relimpute._normal")
            assert inside or allowed or _part(target) == "measures", (module, target)
            assert not target.endswith(".control"), (module, target)
