"""The ``relimpute`` command line: ``main(argv=None)`` so tests call it directly.

Each subcommand is one module in this package defining ``COMMAND`` (its
name), ``HELP`` (one line), ``add_arguments(parser)`` and ``run(args) -> int``.
Modules are discovered, so a new subcommand is one new file. Only the module
of the subcommand given is imported: the list in ``relimpute --help`` is
read from the modules' source (``COMMAND`` and ``HELP`` as string literals;
a module whose are not is imported), so start-up does not pay for numpy,
pandas and the rest.
"""

from __future__ import annotations

import argparse
import errno
import importlib
import os
import re
import sys
import warnings
from collections.abc import Collection

from ..errors import InputError
from ._process import tuned, untranslated


def _module_names() -> list[str]:
    """The public modules of this package, sorted (``pkgutil.iter_modules`` imports
    ``inspect``: a quarter of ``relimpute COMMAND --help``'s own CPU time)."""
    names = set()
    for folder in __path__:
        try:
            entries = os.listdir(folder)
        except OSError:
            continue
        for entry in entries:
            stem, dot, suffix = entry.partition(".")
            if dot and suffix == "py" and stem.isidentifier() and not stem.startswith("_"):
                names.add(stem)
    return sorted(names)


def _subcommand_modules():
    for name in _module_names():
        module = importlib.import_module(f"{__name__}.{name}")
        if hasattr(module, "COMMAND"):
            yield module


#: a top-level ``NAME = "text"``, or ``NAME = ("text" "text")`` over lines, no escapes: read
#: without parsing the module
_SIMPLE_LITERAL = re.compile(
    r"""^([A-Z_]+) = (?:("[^"\\\n]*")|\(((?:\s*"[^"\\\n]*")+)\s*\))[ \t]*$""", re.MULTILINE
)
_PIECE = re.compile(r'"([^"\\\n]*)"')


def _literals(module_name: str) -> dict[str, str]:
    """The top-level ``NAME = "string"`` assignments of a module, read without importing it
    (``COMMAND`` and ``HELP`` on one line each by a regular expression, else by ``ast``)."""
    try:
        with open(_source_file(module_name), encoding="utf-8") as handle:
            source = handle.read()
    except (OSError, TypeError):
        return {}
    # only the module's head, up to its first function or class: parsing every subcommand
    # whole was half of `relimpute COMMAND --help`'s CPU time
    first = re.search(r"^(?:def|class|async def|@)\b", source, re.MULTILINE)
    head = source[: first.start()] if first else source
    found = {m[1]: "".join(_PIECE.findall(m[2] or m[3])) for m in _SIMPLE_LITERAL.finditer(head)}
    if "COMMAND" in found and "HELP" in found:
        return found  # importing and running ast: a tenth of `COMMAND --help`'s own CPU time
    return _parsed_literals(source, head)


def _source_file(module_name: str) -> str | None:
    """The ``.py`` file of a module of this package (as ``find_spec`` would say, without
    loading ``importlib.util``), or None."""
    stem = module_name.rpartition(".")[2]
    for folder in __path__:
        path = os.path.join(folder, f"{stem}.py")
        if os.path.isfile(path):
            return path
    return None


def _parsed_literals(source: str, head: str) -> dict[str, str]:
    import ast

    try:
        try:
            tree = ast.parse(head)
        except SyntaxError:
            tree = ast.parse(source)
    except SyntaxError:
        return {}
    found = {}
    for node in tree.body:
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ):
            found[node.targets[0].id] = node.value.value
    return found


def _subcommand_index() -> dict[str, tuple[str, str]]:
    """``COMMAND -> (module name, HELP)`` of every subcommand module, importing as few as can be."""
    index = {}
    for module_name in _module_names():
        name = f"{__name__}.{module_name}"
        values = _literals(name)
        if "COMMAND" not in values or "HELP" not in values:
            module = importlib.import_module(name)
            if not hasattr(module, "COMMAND"):
                continue
            values = {"COMMAND": module.COMMAND, "HELP": module.HELP}
        index[values["COMMAND"]] = (name, values["HELP"])
    return index


def build_parser(commands: Collection[str] | None = None) -> argparse.ArgumentParser:
    """The parser, every subcommand listed; the arguments only of ``commands`` (None: all)."""
    from .. import __version__

    parser = argparse.ArgumentParser(
        prog="relimpute",
        formatter_class=_HelpFormatter,
        description=(
            "IR evaluation with incomplete relevance judgments: score runs, fit relevance "
            "models to partial qrels, and say how sure we are that one system beats another."
        ),
    )
    parser.add_argument("--version", action="version", version=f"relimpute {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for command, (module_name, help_text) in _subcommand_index().items():
        if commands is not None and command not in commands:
            sub.add_parser(command, help=help_text, add_help=False)  # listed, never parsed
            continue
        module = importlib.import_module(module_name)
        p = sub.add_parser(
            module.COMMAND,
            help=module.HELP,
            description=getattr(module, "DESCRIPTION", module.HELP),
            formatter_class=_RawDescriptionHelpFormatter,
        )
        module.add_arguments(p)
        p.set_defaults(_run=module.run)
    return parser


def _terminal_width() -> int:
    """``shutil.get_terminal_size().columns`` (``$COLUMNS``, else the terminal's, else 80),
    without importing shutil (and its bz2, lzma and zlib): argparse's formatter imports it
    for the width alone."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns or 80


class _HelpFormatter(argparse.HelpFormatter):
    """argparse's formatter at the width it would choose itself (:func:`_terminal_width`)."""

    def __init__(self, prog, indent_increment=2, max_help_position=24, width=None):
        width = _terminal_width() - 2 if width is None else width
        super().__init__(prog, indent_increment, max_help_position, width)


class _RawDescriptionHelpFormatter(_HelpFormatter, argparse.RawDescriptionHelpFormatter):
    """The subcommands' formatter: descriptions as written, at :func:`_terminal_width`."""


def _chosen_command(argv: list[str]) -> list[str]:
    """The subcommand named in ``argv`` (the first word that is not an option), as a list."""
    return [word for word in argv if not word.startswith("-")][:1]


class _OutputFailed(Exception):
    """Writing to standard output failed (a closed pipe, a full disk): ``args[0]`` the OSError."""


class _GuardedStdout:
    """``sys.stdout`` while a command runs: a failed write or flush raises _OutputFailed, so
    that it is told apart from the OSErrors of the files the command reads or writes."""

    def __init__(self, stream):
        self._stream = stream

    def write(self, text):
        try:
            return self._stream.write(text)
        except OSError as exc:
            raise _OutputFailed(exc) from exc

    def flush(self):
        try:
            self._stream.flush()
        except OSError as exc:
            raise _OutputFailed(exc) from exc

    def __getattr__(self, name):
        return getattr(self._stream, name)


def _drop_stdout(stream) -> None:
    """Point the process's standard output at /dev/null when ``stream`` is it, so that the
    interpreter's last flush cannot fail again (a stream of the caller's is left alone)."""
    if stream is not sys.__stdout__:
        return
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.__stdout__.fileno())
        os.close(devnull)
    except (OSError, AttributeError, ValueError):  # no real stdout (tests, embedding)
        pass


def main(argv: list[str] | None = None) -> int:
    """Run the command ``argv`` (default ``sys.argv[1:]``); its exit status. The process
    tuning it runs under (:mod:`._process`) is undone when it returns."""
    with tuned():  # (parsing may import numpy and pandas: a measure's name)
        return _main(argv)


class OptionError(Exception):
    """A bad option value, said in one line without argparse's usage block: raised by an
    argparse ``type`` whose message names the option (not a ValueError, which argparse
    would catch and print under the usage)."""


def _main(argv: list[str] | None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    with untranslated():
        parser = build_parser(_chosen_command(argv))
        try:
            args = parser.parse_args(argv)
        except OptionError as exc:
            print(f"relimpute {_chosen_command(argv)[0]}: error: {exc}", file=sys.stderr)
            return 2
        if not getattr(args, "_run", None):
            parser.print_help()
            return 2
    from ..progress import quiet

    stdout, sys.stdout = sys.stdout, _GuardedStdout(sys.stdout)
    formatwarning = _own_warnings(args.command)
    try:
        with quiet(getattr(args, "quiet", False)):
            code = int(args._run(args) or 0)
        sys.stdout.flush()  # a closed pipe or full disk shows here, not at interpreter exit
        return code
    except InputError as exc:
        print(f"relimpute {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except _OutputFailed as failed:
        error = failed.args[0]
        _drop_stdout(stdout)
        if error.errno == errno.EPIPE:  # the reader left (`| head`): stop quietly, as Unix tools
            import signal

            return 128 + signal.SIGPIPE
        reason = error.strerror or error
        print(f"relimpute {args.command}: error: cannot write the output: {reason}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # Ctrl-C, or SIGTERM while a study runs
        return _interrupted(args.command)
    except Exception as error:
        if _an_interrupt(error):  # raised inside C code (numba's unpickling): wrapped, as cause
            return _interrupted(args.command)
        raise
    finally:
        sys.stdout = stdout
        warnings.formatwarning = formatwarning


def _interrupted(command: str) -> int:
    """Say that the command was interrupted, and what its study kept: exit status 130."""
    study = sys.modules.get(f"{__name__.rpartition('.')[0]}.studies.folder")
    note = study.interrupted() if study is not None else None
    print(f"relimpute {command}: interrupted" + (f": {note}" if note else ""), file=sys.stderr)
    return 130


def _an_interrupt(error: BaseException) -> bool:
    """Whether ``error`` was caused by a KeyboardInterrupt (a signal that arrived inside C code
    calling back into Python comes out as, e.g., a SystemError from it)."""
    seen = set()
    while error is not None and id(error) not in seen:
        if isinstance(error, KeyboardInterrupt):
            return True
        seen.add(id(error))
        error = error.__cause__ or error.__context__
    return False


def _own_warnings(command: str):
    """Warnings raised in relimpute's code print as one ``relimpute COMMAND: warning: ...``
    line, not Python's file:line and source; returns the formatter to restore."""
    saved = warnings.formatwarning
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep

    def own(message, category, filename, lineno, line=None):
        if issubclass(category, UserWarning) and os.path.abspath(filename).startswith(package):
            return f"relimpute {command}: warning: {message}\n"
        return saved(message, category, filename, lineno, line)

    warnings.formatwarning = own
    return saved


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
