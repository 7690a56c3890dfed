"""``flowmesh <command> ...``: a small registry of subcommands, imported lazily.

Each subcommand lives in its own module exposing::

    HELP = "one line shown by `flowmesh --help`"
    INTERMIXED_ARGS = True  # optional: positionals may come between options
    def add_arguments(parser: argparse.ArgumentParser) -> None: ...
    def run(args: argparse.Namespace) -> int: ...   # the process exit status

and is listed in :data:`COMMANDS` (or added with :func:`register_command`), so adding a
command is one line here plus its module.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

COMMANDS: dict[str, str] = {
    "server": "flowmesh.cli.server",
    "launch": "flowmesh.cli.launch",
    "run": "flowmesh.cli.run",
    "k8s": "flowmesh.cli.k8s",
    "sweep": "flowmesh.cli.sweep",
}


def register_command(name: str, module: str) -> None:
    """Adds (or replaces) subcommand ``name`` implemented by ``module``."""
    COMMANDS[name] = module


def _usage() -> str:
    lines = ["usage: flowmesh COMMAND [ARGS]", "", "commands:"]
    for name, module_name in COMMANDS.items():
        try:
            summary = getattr(importlib.import_module(module_name), "HELP", "")
        except Exception as exc:  # noqa: BLE001 - one broken command must not hide the others
            summary = f"(unavailable: {type(exc).__name__}: {exc})"
        lines.append(f"  {name:<10} {summary}")
    lines.append("")
    lines.append("Run `flowmesh COMMAND --help` for a command's options.")
    return "\n".join(lines)


def build_parser(name: str) -> argparse.ArgumentParser:
    """The argument parser of subcommand ``name`` (importing only its module)."""
    module = importlib.import_module(COMMANDS[name])
    parser = argparse.ArgumentParser(
        prog=f"flowmesh {name}", description=(module.__doc__ or "").strip(),
        formatter_class=argparse.RawDescriptionHelpFormatter)
    module.add_arguments(parser)
    parser.set_defaults(_module=module)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``flowmesh`` console script; returns the exit status."""
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help", "help"):
        print(_usage())
        return 0 if args else 2
    if args[0] not in COMMANDS:
        print(f"flowmesh: unknown command {args[0]!r}\n\n{_usage()}", file=sys.stderr)
        return 2
    parser = build_parser(args[0])
    # A command whose positionals are interleaved with options (``k8s manifest --ps 1 -- CMD``)
    # says so with INTERMIXED_ARGS = True.
    intermixed = getattr(parser.get_default("_module"), "INTERMIXED_ARGS", False)
    parsed = parser.parse_intermixed_args(args[1:]) if intermixed else parser.parse_args(args[1:])
    return int(parsed._module.run(parsed) or 0)


if __name__ == "__main__":
    sys.exit(main())
