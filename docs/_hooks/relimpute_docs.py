"""MkDocs hook: the pages that are generated from the code at build time.

- ``cli/reference.md``: every ``relimpute COMMAND --help``, rendered from the argparse
  parsers, so the reference cannot drift from the options the command takes.
- ``cli/vocabulary.md``: the charter's table of option spellings and meanings, with the
  subcommands that use each.
- ``studies/NAME/README.md``: each ``examples/NAME/README.md`` as it is in the repository
  (read at build time, never copied into ``docs/``); links to files that are not pages or
  figures become the file's path in the repository.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from contextlib import contextmanager
from pathlib import Path

from mkdocs.structure.files import File, InclusionLevel

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
IMAGES = (".png", ".svg", ".jpg", ".jpeg", ".gif")
HELP_COLUMNS = "100"
# Sphinx roles left in docstrings (:func:`name`), as mkdocstrings renders them
SPHINX_ROLE = re.compile(r":(?:py:)?(?:class|func|meth|attr|mod|data|exc|obj|const):<code>~?")
# [text](target) and ![alt](target), with an optional "title"
LINK = re.compile(r"(!?)\[([^\]]*)\]\(([^)\s]+)(\s+\"[^\"]*\")?\)")


@contextmanager
def _help_width():
    """argparse wraps help at $COLUMNS: fix it so the pages do not depend on the terminal."""
    old = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = HELP_COLUMNS
    try:
        yield
    finally:
        if old is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = old


def _parsers() -> tuple[argparse.ArgumentParser, dict[str, argparse.ArgumentParser]]:
    """The top-level parser and ``{command: subparser}`` of this source tree's CLI."""
    source = str(ROOT / "src")
    if source not in sys.path:
        sys.path.insert(0, source)
    from relimpute.cli import build_parser

    parser = build_parser()
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return parser, dict(sorted(action.choices.items()))
    raise RuntimeError("relimpute's parser has no subcommands")


def cli_reference() -> str:
    parser, commands = _parsers()
    with _help_width():
        parts = [
            "# Command-line reference\n",
            (
                "Generated from the argparse parsers when the site is built: each section is "
                "exactly what `relimpute COMMAND --help` prints. The option spellings side by "
                "side are in [the vocabulary table](vocabulary.md).\n"
            ),
            "## relimpute\n",
            f"```text\n{parser.format_help()}```\n",
        ]
        for name, sub in commands.items():
            parts.append(f"## relimpute {name}\n")
            parts.append(f"```text\n{sub.format_help()}```\n")
    return "\n".join(parts)


def _spelling(action: argparse.Action) -> str:
    if action.option_strings:
        return ", ".join(f"`{s}`" for s in action.option_strings)
    return f"`{action.metavar or action.dest}` (positional)"


def _takes(action: argparse.Action) -> str:
    if action.nargs == 0:
        return "flag"
    if action.choices is not None and not isinstance(action.choices, dict):
        return " \\| ".join(str(c) for c in action.choices)
    metavar = action.metavar or action.dest.upper()
    if isinstance(metavar, tuple):
        metavar = " ".join(metavar)
    count = {None: "", "?": " (optional)", "*": " ...", "+": " ..."}.get(action.nargs, "")
    if isinstance(action.nargs, int) and action.nargs > 1:
        count = f" (×{action.nargs})"
    return f"`{metavar}`{count}"


def vocabulary() -> str:
    """The charter's table (``relimpute.cli._vocabulary.VOCABULARY``): one row per option and
    meaning, with what it takes and every subcommand that uses it."""
    from relimpute.cli._vocabulary import VOCABULARY

    _, commands = _parsers()
    used: dict[str, list[str]] = {}
    takes: dict[str, str] = {}
    for name, sub in commands.items():
        for action in sub._actions:
            if action.option_strings and not isinstance(action, argparse._HelpAction):
                long = next((o for o in action.option_strings if o.startswith("--")), None)
                used.setdefault(long, []).append(f"`{name}`")
                takes.setdefault(long, _takes(action))
    lines = [
        "# CLI vocabulary\n",
        (
            "One spelling per meaning across the subcommands: the table below is the charter "
            "(`relimpute.cli._vocabulary.VOCABULARY`), with what each option takes and the "
            "subcommands that use it, read from the argparse parsers when the site is built. "
            "A test fails on an option outside the table or on two spellings of one meaning; "
            "`CHANGELOG.md` lists the spellings 0.2.0 replaced.\n"
        ),
        "| option | takes | meaning | commands |",
        "|---|---|---|---|",
    ]
    for spelled, meaning in VOCABULARY:
        long = spelled[0]
        if long not in used:
            continue
        option = ", ".join(f"`{s}`" for s in spelled)
        lines.append(f"| {option} | {takes[long]} | {meaning} | {', '.join(used[long])} |")
    return "\n".join(lines) + "\n"


def _studies() -> list[Path]:
    return sorted(EXAMPLES.glob("*/README.md"))


def _resolve(readme: Path, target: str) -> Path | None:
    """The file a relative link of ``readme`` points at (None for URLs and anchors)."""
    if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.IGNORECASE) or target.startswith(("#", "/")):
        return None
    path = target.split("#", 1)[0]
    if not path:
        return None
    return (readme.parent / path).resolve()


def _kept(path: Path) -> bool:
    """A link target that the site carries: a study README, or a figure under examples/."""
    examples = EXAMPLES.resolve()
    if examples not in path.parents or not path.is_file():
        return False
    study_readme = path.name == "README.md" and path.parent.parent == examples
    return study_readme or path.suffix.lower() in IMAGES


def _site_uri(path: Path) -> str:
    return "studies/" + path.relative_to(EXAMPLES.resolve()).as_posix()


def study_links(readme: Path, markdown: str) -> str:
    """Keep links to other studies and figures; a link to any other file becomes its path."""

    def replace(match: re.Match) -> str:
        _bang, text, target, _title = match.groups()
        path = _resolve(readme, target)
        if path is None or _kept(path):
            return match.group(0)
        try:
            shown = path.relative_to(ROOT).as_posix()
        except ValueError:
            shown = target
        if path.is_dir():
            shown += "/"
        return f"{text} (`{shown}`)" if text and text.strip("`") != shown else f"`{shown}`"

    return LINK.sub(replace, markdown)


def on_files(files, config):
    generated = {
        "cli/reference.md": cli_reference(),
        "cli/vocabulary.md": vocabulary(),
    }
    for uri, content in generated.items():
        files.append(File.generated(config, uri, content=content))
    figures: set[Path] = set()
    for readme in _studies():
        # linked from studies.md, not listed in the nav (the set of studies changes)
        page = File.generated(
            config,
            _site_uri(readme.resolve()),
            abs_src_path=str(readme),
            inclusion=InclusionLevel.NOT_IN_NAV,
        )
        files.append(page)
        for match in LINK.finditer(readme.read_text(encoding="utf-8")):
            path = _resolve(readme, match.group(3))
            if path is not None and _kept(path) and path.suffix.lower() in IMAGES:
                figures.add(path)
    for figure in sorted(figures):
        files.append(File.generated(config, _site_uri(figure), abs_src_path=str(figure)))
    return files


def unlisted_studies(markdown: str) -> str:
    """A list of the studies that ``studies.md`` does not link yet (a new examples/ folder)."""
    names = [readme.parent.name for readme in _studies()]
    missing = [name for name in names if f"studies/{name}/README.md" not in markdown]
    if not missing:
        return markdown
    items = "\n".join(f"- [{name}](studies/{name}/README.md)" for name in missing)
    return f"{markdown}\n## More studies\n\n{items}\n"


def on_page_markdown(markdown, page, config, files):
    uri = page.file.src_uri
    if uri == "studies.md":
        return unlisted_studies(markdown)
    if uri.startswith("studies/") and uri.endswith("/README.md"):
        return study_links(EXAMPLES / uri.removeprefix("studies/"), markdown)
    return markdown


def on_page_content(html, page, config, files):
    """Docstrings written for Sphinx: show ``:func:`name``` as the code name alone."""
    if page.file.src_uri.startswith("api/"):
        return SPHINX_ROLE.sub("<code>", html)
    return html
