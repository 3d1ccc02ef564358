"""What a user reads says the thing itself: no issue numbers in the code, the help, the docs or
the examples; and each study's README stays short (question, command, headline, figure, what it
means)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: "issue 28", "Issues 24, 27", "issue #5": a tracker a user cannot follow
ISSUE = re.compile(r"\bissues?\s*#?\d+", re.IGNORECASE)

#: files another change rewrites this release; the lead removes each entry once it is merged
NOT_YET: set[str] = set()

#: the longest a study's README may be
README_LINES = 150


def _read_by_users() -> list[Path]:
    files = [ROOT / "README.md", ROOT / "benchmarks" / "README.md"]
    files += (ROOT / "src" / "relimpute").rglob("*.py")
    files += [p for p in (ROOT / "docs").rglob("*") if p.suffix in {".md", ".py", ".yml"}]
    kinds = {".md", ".py", ".sh", ".json"}
    files += [p for p in (ROOT / "examples").rglob("*") if p.suffix in kinds]
    return sorted(p for p in files if not _not_yet(p))


def _not_yet(path: Path) -> bool:
    name = path.relative_to(ROOT).as_posix()
    return any(name == entry or name.startswith(entry + "/") for entry in NOT_YET)


def test_no_issue_numbers_where_a_user_reads():
    found = [
        f"{path.relative_to(ROOT).as_posix()}:{number}: {line.strip()}"
        for path in _read_by_users()
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if ISSUE.search(line)
    ]
    assert not found, "say the thing itself, not its issue number:\n" + "\n".join(found)


def test_the_pattern_finds_the_spellings_used():
    for text in ("(issue 28)", "Issue 24, item 2", "issues 24, 27", "issue #5", "issue 25's"):
        assert ISSUE.search(text), text
    assert not ISSUE.search("no issue here; tissue 5")


def test_every_study_readme_is_short():
    """A study's README is its question, command, headline table, figure and what it means; the
    history of how it got there is not kept in it."""
    readmes = sorted((ROOT / "examples").glob("*/README.md"))
    assert readmes
    lines = {p.parent.name: len(p.read_text(encoding="utf-8").splitlines()) for p in readmes}
    long = {
        name: n
        for (name, n), path in zip(lines.items(), readmes)
        if n > README_LINES and not _not_yet(path)
    }
    assert not long, f"study READMEs over {README_LINES} lines: {long}"
