"""The ``relimpute`` command line: ``main(argv=None)`` so tests call it directly.

Each subcommand is one module in this package defining ``COMMAND`` (its
name), ``HELP`` (one line), ``add_arguments(parser)`` and ``run(args) -> int``.
Modules are discovered, so a new subcommand is one new file.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys

from ..errors import InputError


def _subcommand_modules():
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if not info.name.startswith("_"):
            module = importlib.import_module(f"{__name__}.{info.name}")
            if hasattr(module, "COMMAND"):
                yield module


def build_parser() -> argparse.ArgumentParser:
    from .. import __version__

    parser = argparse.ArgumentParser(
        prog="relimpute",
        description=(
            "IR evaluation with incomplete relevance judgments: score runs, fit relevance "
            "models to partial qrels, and say how sure we are that one system beats another."
        ),
    )
    parser.add_argument("--version", action="version", version=f"relimpute {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module in _subcommand_modules():
        p = sub.add_parser(
            module.COMMAND,
            help=module.HELP,
            description=getattr(module, "DESCRIPTION", module.HELP),
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        module.add_arguments(p)
        p.set_defaults(_run=module.run)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "_run", None):
        parser.print_help()
        return 2
    from ..progress import quiet

    try:
        with quiet(getattr(args, "quiet", False)):
            return int(args._run(args) or 0)
    except InputError as exc:
        print(f"relimpute {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"relimpute {args.command}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
