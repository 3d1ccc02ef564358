"""The documentation site builds with warnings as errors; its generated pages match the code.

``mkdocs build --strict`` runs once, in one test, into a temporary folder (a few seconds of CPU):
a broken link, a page missing from the nav, a docstring mkdocstrings cannot render or a study
README linking to a file that is gone fails here, not on the published site.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
HOOK = ROOT / "docs" / "_hooks" / "relimpute_docs.py"

if os.environ.get("CI"):
    import mkdocs  # noqa: F401  (the test extra installs it: CI must build the site, not skip)
else:
    pytest.importorskip("mkdocs", reason='the docs extra is missing (pip install -e ".[docs]")')


def build_site(out: Path) -> str:
    """``mkdocs build --strict`` into ``out``; mkdocs' log."""
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "PYTHONPATH": str(ROOT / "src")}
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        check=False,
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    log = done.stdout + done.stderr
    assert done.returncode == 0, f"mkdocs build --strict failed:\n{log}"
    return log


def _page(site_dir: Path, uri: str) -> str:
    return (site_dir / uri / "index.html").read_text(encoding="utf-8")


def _commands() -> list[str]:
    sys.path.insert(0, str(HOOK.parent))
    try:
        import relimpute_docs
    finally:
        sys.path.remove(str(HOOK.parent))
    return list(relimpute_docs._parsers()[1])


def _help(argv: list[str]) -> str:
    from relimpute.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit) as stop:
        main(argv)
    assert stop.value.code == 0
    return out.getvalue()


def check_cli_reference(site_dir: Path, commands: list[str]) -> None:
    """Every subcommand has a section holding exactly its ``--help``, at the hook's width."""
    import html

    text = html.unescape(re.sub(r"<[^>]+>", "", _page(site_dir, "cli/reference")))
    assert {"compare", "evaluate", "judge", "calibrate", "fit"} <= set(commands)
    for command in commands:
        expected = _help([command, "--help"])
        assert expected.strip() in text, f"relimpute {command} --help is not on the reference page"


def check_vocabulary(site_dir: Path, commands: list[str]) -> None:
    page = _page(site_dir, "cli/vocabulary")
    table = page[page.index("<table") :]
    for option in ("--rel-threshold", "--confidence", "--systems", "--depth", "--quiet"):
        assert f"<code>{option}</code>" in table
    for command in commands:
        assert f"<code>{command}</code>" in table


def check_math(site_dir: Path) -> None:
    page = _page(site_dir, "math/average-precision")
    assert page.count('class="arithmatex"') > 10
    assert "javascripts/mathjax.js" in page


def check_api(site_dir: Path) -> None:
    page = _page(site_dir, "api/data")
    assert 'id="relimpute.data.Campaign"' in page
    assert 'id="relimpute.data.Campaign.from_files"' in page
    assert ":func:<code>" not in _page(site_dir, "api/measures")  # Sphinx roles cleaned


def check_studies(site_dir: Path) -> None:
    readmes = sorted((ROOT / "examples").glob("*/README.md"))
    assert readmes
    studies = _page(site_dir, "studies")
    for readme in readmes:
        name = readme.parent.name
        assert (site_dir / "studies" / name / "index.html").is_file()
        assert f'href="{name}/' in studies or f"studies/{name}/" in studies


def test_site_builds_strict_and_its_generated_pages_hold(tmp_path, monkeypatch):
    """One build (a few seconds of CPU), then every generated page checked against the code."""
    log = build_site(tmp_path)
    warnings = [line for line in log.splitlines() if re.match(r"\s*(WARNING|ERROR)\b", line)]
    assert warnings == []
    monkeypatch.setenv("COLUMNS", "100")
    commands = _commands()
    check_cli_reference(tmp_path, commands)
    check_vocabulary(tmp_path, commands)
    check_math(tmp_path)
    check_api(tmp_path)
    check_studies(tmp_path)


def test_code_cites_only_documents_that_ship():
    """Docstrings and comments cite ``docs/...md`` pages that exist, never the unshipped notes."""
    cited: dict[str, list[str]] = {}
    stale = []
    for folder in ("src", "tests", "benchmarks", "models"):
        for path in sorted((ROOT / folder).rglob("*")):
            if path.suffix not in (".py", ".md", ".json") or path == Path(__file__):
                continue
            text = path.read_text(encoding="utf-8")
            where = str(path.relative_to(ROOT))
            for page in re.findall(r"docs/[\w./-]+?\.md", text):
                cited.setdefault(page, []).append(where)
            if re.search(r"math\.md|shared/docs|style\.md|style guide", text):
                stale.append(where)
    assert stale == []
    assert cited, "no docstring cites a docs page"
    missing = {page: files for page, files in cited.items() if not (ROOT / page).is_file()}
    assert missing == {}


def test_readme_links_point_at_files_that_exist():
    """The README is the front page of the site: every relative link it makes resolves."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    targets = re.findall(r"\]\(([^)\s#]+)(?:#[^)]*)?\)", text)
    assert any(t.startswith("docs/") for t in targets)
    missing = [t for t in targets if "://" not in t and not (ROOT / t).exists()]
    assert missing == []
