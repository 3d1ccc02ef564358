"""Every ``from relimpute... import name`` in benchmarks/ and examples/ resolves.

The benchmarks and example scripts are run by hand, not by the suite, so a rename in the
package can leave them broken until someone runs them (``bench_hierarchical.py`` imported
``_markdown`` from a module it had left). This reads their imports with ``ast`` and checks each
name exists, without running the scripts.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = sorted(
    p for folder in ("benchmarks", "examples") for p in (ROOT / folder).rglob("*.py")
)


def _package_imports(path: Path) -> list[tuple[int, str, str | None]]:
    """(line, module, name) for each import of relimpute in ``path`` (name None: the module)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module \
                and node.module.split(".")[0] == "relimpute":
            found += [(node.lineno, node.module, alias.name) for alias in node.names]
        elif isinstance(node, ast.Import):
            found += [(node.lineno, alias.name, None) for alias in node.names
                      if alias.name.split(".")[0] == "relimpute"]
    return found


def test_the_scripts_are_found():
    names = {p.name for p in SCRIPTS}
    assert {"bench_hierarchical.py", "bench_default_scale.py"} <= names


@pytest.mark.parametrize("path", SCRIPTS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relimpute_import_resolves(path):
    missing = []
    for line, module_name, name in _package_imports(path):
        try:
            module = importlib.import_module(module_name)
        except ImportError as exc:
            missing.append(f"line {line}: {module_name} ({exc})")
            continue
        if name is not None and name != "*" and not hasattr(module, name):
            try:
                importlib.import_module(f"{module_name}.{name}")
            except ImportError:
                missing.append(f"line {line}: {module_name} has no {name}")
    assert not missing, f"{path.relative_to(ROOT)}: " + "; ".join(missing)
