"""The ``maixemu`` command: ``run`` a MaixPy script, plus the model tools in ``maixemu.commands``.

``run`` lives here because it is the main job; every other subcommand is a module in
``maixemu/commands/`` with ``add_arguments(parser)`` and ``run(args) -> int``, found at start-up,
so a new tool needs no edit here.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import re
import sys
import textwrap
from pathlib import Path
from typing import Protocol, cast

from . import __version__


def add_run_arguments(parser: argparse.ArgumentParser) -> None:
    """``maixemu run``'s arguments: the script, ``--sample``, and one flag per run option
    (:func:`maixemu.session.spec.add_arguments`)."""
    from .session.spec import add_arguments

    parser.add_argument("script", nargs="?", type=Path, help="MaixPy script (default: the bundled sample)")
    parser.add_argument("--sample", metavar="NAME", help="run one of the samples installed with maixemu (maixemu samples lists them)")
    add_arguments(parser)


def command_run(args: argparse.Namespace) -> int:
    from .session.lifecycle import run_command
    from .session.run import default_sample
    from .session.spec import OptionError, RunSpec, given_by_cli

    own_script = args.script is not None  # a bundled sample belongs to no project
    if args.sample is not None:
        from .commands.samples import UnknownSample, find_sample

        if args.script is not None:
            print("maixemu: give a SCRIPT or --sample NAME, not both", file=sys.stderr)
            return 2
        try:
            args.script = find_sample(args.sample).path
        except UnknownSample as exc:
            print(f"maixemu: {exc}", file=sys.stderr)
            return 2
    script = args.script or default_sample()
    try:
        given = given_by_cli(args)
    except OptionError as exc:
        print(f"maixemu: {exc}", file=sys.stderr)
        return 2
    project = None
    if own_script:
        from .session.project import ProjectFileError, copy_on_write_line, load_project

        try:
            project = load_project(Path(args.script).resolve().parent)
        except ProjectFileError as exc:
            print(f"maixemu: {exc}", file=sys.stderr)
            return 2
    spec = RunSpec().merged(project.values if project is not None else None, given)
    if project is not None:
        if not spec.quiet:
            print(f"[maixemu] project file: {project.file} (command-line options override it)", file=sys.stderr)
        said = copy_on_write_line(project.file, project.values, given)
        if said is not None:  # never hidden by quiet: the file switched copy-on-write off
            print(said, file=sys.stderr)
    if args.script is None and not spec.quiet:
        print(f"[maixemu] no script given: running the bundled sample {script.name}", file=sys.stderr)
    # A broken --flash-image or --lcd is reported by the session as one line with exit 2.
    return run_command(spec, script, argv=getattr(args, "script_args", []))


#: reStructuredText/Markdown mark-up in docstrings, and what help shows instead: ``x``, `x` and
#: :role:`x` become x; **x** becomes x.
_MARKUP = [(re.compile(r":[a-z]+:`~?([^`]+)`"), r"\1"), (re.compile(r"``([^`]+)``"), r"\1"),
           (re.compile(r"`([^`]+)`"), r"\1"), (re.compile(r"\*\*([^*]+)\*\*"), r"\1")]


def plain_text(text: str) -> str:
    """A docstring as a terminal shows it: mark-up removed, paragraphs and bullets kept."""
    for pattern, replacement in _MARKUP:
        text = pattern.sub(replacement, text)
    return text


class PlainHelpFormatter(argparse.HelpFormatter):
    """Help in plain text: docstring mark-up removed; paragraphs and ``*`` bullets keep their breaks
    (argparse's default formatter runs every paragraph of a description into one)."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        out = []
        for paragraph in re.split(r"\n\s*\n", plain_text(text).strip()):
            lines = [line.strip() for line in paragraph.splitlines()]
            items: list[str] = []
            for line in lines:
                if line.startswith(("* ", "- ")) or not items:
                    items.append(line)
                else:
                    items[-1] += " " + line
            for item in items:
                bullet = item[:2] if item.startswith(("* ", "- ")) else ""
                out.append(textwrap.fill(item, width, initial_indent=indent,
                                         subsequent_indent=indent + " " * len(bullet)))
            out.append("")
        return "\n".join(out[:-1])

    def _get_help_string(self, action: argparse.Action) -> str | None:
        return plain_text(action.help) if action.help else action.help


class CommandModule(Protocol):
    """A module of ``maixemu.commands``: one subcommand (its docstring is the command's help)."""

    __doc__: str | None

    def add_arguments(self, parser: argparse.ArgumentParser) -> None: ...

    def run(self, args: argparse.Namespace) -> int | None: ...


def _command_names() -> list[str]:
    """The subcommands: the public modules of ``maixemu.commands``, found without importing them."""
    from . import commands

    return sorted(info.name for info in pkgutil.iter_modules(commands.__path__) if not info.name.startswith("_"))


def _discover_commands(names: list[str]) -> dict[str, CommandModule]:
    from . import commands

    found: dict[str, CommandModule] = {}
    for name in names:
        module = importlib.import_module(f"{commands.__name__}.{name}")
        if hasattr(module, "add_arguments") and hasattr(module, "run"):
            found[name] = cast(CommandModule, module)  # (a module is no Protocol instance to mypy; hasattr checked it)
    return found


def _needed_commands(argv: list[str] | None, names: list[str]) -> list[str]:
    """Which command modules a command line needs: the one it names, none for ``run`` (the
    default), all for the help or an unknown word (argparse lists every choice). A command's
    module may import what only it needs (the bench its yardsticks and the kmodel engine, cameras
    OpenCV's capture): importing all of them cost every start 0.3–0.4 s of CPU, ``--version`` too."""
    if argv is None:
        return names
    if not argv or argv[0] == "run" or argv[0] == "--version":
        return []
    return [argv[0]] if argv[0] in names else names


def build_parser(argv: list[str] | None = None) -> tuple[argparse.ArgumentParser, dict[str, CommandModule]]:
    """The parser and the command modules it holds: with ``argv``, only those it needs
    (``_needed_commands``); without, every command (the help and its tests)."""
    parser = argparse.ArgumentParser(prog="maixemu", description="Run MaixPy (K210) scripts and kmodels on a PC.",
                                     formatter_class=PlainHelpFormatter)
    parser.add_argument("--version", action="version", version=f"maixemu {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    run_parser = sub.add_parser("run", help="run a MaixPy script (default: the bundled sample)",
                                formatter_class=PlainHelpFormatter)
    add_run_arguments(run_parser)
    commands = _discover_commands(_needed_commands(argv, _command_names()))
    for name, module in sorted(commands.items()):
        doc = plain_text(module.__doc__ or "").strip().splitlines()
        sub_parser = sub.add_parser(name, help=doc[0] if doc else None, description=(module.__doc__ or "").strip(),
                                    formatter_class=PlainHelpFormatter)
        module.add_arguments(sub_parser)
    return parser, commands


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    # Everything after a lone "--" goes to the script's sys.argv.
    script_args: list[str] = []
    if "--" in argv:
        cut = argv.index("--")
        argv, script_args = argv[:cut], argv[cut + 1 :]
    parser, commands = build_parser(argv)
    if argv and not argv[0].startswith("-") and argv[0] != "run" and argv[0] not in commands:
        from .session.script_hint import not_a_command_hint

        hint = not_a_command_hint(argv[0])  # `maixemu main.py`: the user meant `maixemu run main.py`
        if hint is not None:
            print(f"maixemu: {hint}", file=sys.stderr)
            return 2
    args = parser.parse_args(argv or ["run"])
    from .session.compute import limited_threads

    with limited_threads():  # one BLAS thread (MAIXEMU_THREADS for more), see session.compute
        if args.command == "run":
            args.script_args = script_args
            if args.script is not None and args.sample is None and not Path(args.script).is_file():
                from .session.script_hint import missing_script_message

                print(f"maixemu: {missing_script_message(Path(args.script), str(args.script))}", file=sys.stderr)
                return 2
            return command_run(args)
        return int(commands[args.command].run(args) or 0)


def console_main() -> int:
    """Entry point of the console script: ``maixemu ... | head`` ends quietly, as CLI tools do.

    A script thread that would not end with its run (no firmware call, every end swallowed) is left
    behind; the process then leaves without Python's shutdown, which would tear modules down under
    that thread (a crash at exit, not the script's result).
    """
    import os

    try:
        code = main()
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    from .session.run import stray_script_threads

    if stray_script_threads():
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        os._exit(code)
    return code


if __name__ == "__main__":
    sys.exit(console_main())
