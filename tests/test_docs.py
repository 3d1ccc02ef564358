"""The documentation site builds with warnings as errors, and its generated pages say what the code does.

``mkdocs build --strict`` runs once per session into a temporary folder (a few seconds of CPU):
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
    pytest.importorskip("mkdocs", reason='the docs extra is not installed (pip install -e ".[docs]")')


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> tuple[Path, str]:
    """The built site's folder and mkdocs' log."""
    out = tmp_path_factory.mktemp("site")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "PYTHONPATH": str(ROOT / "src")}
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    log = done.stdout + done.stderr
    assert done.returncode == 0, f"mkdocs build --strict failed:\n{log}"
    return out, log


def _page(site_dir: Path, uri: str) -> str:
    return (site_dir / uri / "index.html").read_text(encoding="utf-8")


def test_site_builds_without_warnings(site):
    _, log = site
    warnings = [line for line in log.splitlines() if re.match(r"\s*(WARNING|ERROR)\b", line)]
    assert warnings == []


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


def test_cli_reference_is_what_help_prints(site, monkeypatch):
    """Every subcommand has a section holding exactly its ``--help``, at the hook's width."""
    import html

    monkeypatch.setenv("COLUMNS", "100")
    text = html.unescape(re.sub(r"<[^>]+>", "", _page(site[0], "cli/reference")))
    commands = _commands()
    assert {"compare", "evaluate", "judge", "calibrate", "fit"} <= set(commands)
    for command in commands:
        expected = _help([command, "--help"])
        assert expected.strip() in text, f"relimpute {command} --help is not on the reference page"


def test_vocabulary_lists_every_option_of_every_command(site):
    page = _page(site[0], "cli/vocabulary")
    table = page[page.index("<table") :]
    for option in ("--rel-threshold", "--confidence", "--systems", "--depth", "--quiet"):
        assert f"<code>{option}</code>" in table
    for command in _commands():
        assert f"<code>{command}</code>" in table


def test_math_is_marked_for_mathjax(site):
    page = _page(site[0], "math/average-precision")
    assert page.count('class="arithmatex"') > 10
    assert "javascripts/mathjax.js" in page


def test_api_reference_renders_the_docstrings(site):
    page = _page(site[0], "api/data")
    assert 'id="relimpute.data.Campaign"' in page
    assert 'id="relimpute.data.Campaign.from_files"' in page


def test_study_pages_are_the_example_readmes(site):
    readmes = sorted((ROOT / "examples").glob("*/README.md"))
    assert readmes
    studies = _page(site[0], "studies")
    for readme in readmes:
        name = readme.parent.name
        assert (site[0] / "studies" / name / "index.html").is_file()
        assert f'href="{name}/' in studies or f'href="../studies/{name}/' in studies or (
            f"studies/{name}/" in studies
        )


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
