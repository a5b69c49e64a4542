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

from . import __version__


def parse_flash_mapping(text: str) -> tuple[int, Path]:
    """``0x300000=face.kmodel`` → (0x300000, Path)."""
    address, sep, path = text.partition("=")
    if not sep or not path:
        raise argparse.ArgumentTypeError(f"--flash takes ADDRESS=FILE (e.g. 0x300000=face.kmodel), got {text!r}")
    try:
        value = int(address, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--flash address {address!r} is not a number (e.g. 0x300000)") from None
    if value <= 0:
        raise argparse.ArgumentTypeError("--flash address must be > 0, as kpu.load requires")
    file = Path(path)
    if not file.is_file():
        raise argparse.ArgumentTypeError(f"--flash {text}: no such file {path}")
    return value, file


def add_run_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("script", nargs="?", type=Path, help="MaixPy script (default: the bundled sample)")
    parser.add_argument("--sample", metavar="NAME", help="run one of the samples installed with maixemu (maixemu samples lists them)")
    parser.add_argument("--camera", help="0 (webcam index) | VIDEO | DIR of images | IMAGE | synthetic (default: webcam 0, else synthetic)")
    parser.add_argument("--lcd", help="window | none | record:PATH (.mp4/.avi or a folder of PNGs) (default: window if a display exists)")
    parser.add_argument("--sd", dest="sd_dir", type=Path, help="local folder mounted as /sd; the script's writes change it (default: the script's folder, copy-on-write into .maixemu/sd)")
    parser.add_argument("--flash-dir", type=Path, help="local folder mounted as /flash; the script's writes change it (default: the script's folder, copy-on-write into .maixemu/flash)")
    parser.add_argument("--writable", action="store_true", help="let the script write into its own folder for real (no .maixemu copy-on-write layer)")
    parser.add_argument("--flash", action="append", type=parse_flash_mapping, default=[], metavar="ADDR=FILE", help="map a flash address to a model file, e.g. 0x300000=face.kmodel (repeatable)")
    parser.add_argument("--flash-image", type=Path, help="a .kfpkg flash package; its flash-list.json gives the addresses")
    parser.add_argument("--board", metavar="NAME", help="board profile: default | bit | dock | go | duino | cube | amigo | m5stickv | unitv (its board_info pins, LCD, keys and LEDs)")
    parser.add_argument("--uart-loop", action="append", default=[], metavar="TX:RX", help="wire a UART's TX to a UART's RX so the script receives what it sends, e.g. 1:2 (UART1 -> UART2) or 1:1 (repeatable)")
    parser.add_argument("--frames", type=int, help="end cleanly after N camera frames (LCD frames for scripts without a camera)")
    parser.add_argument("--timeout", type=float, help="end cleanly after S seconds")
    parser.add_argument("--ai-memory", choices=["device", "warn", "strict"], help="what happens when the KPU reads AI memory older than the pixels (default: device)")
    parser.add_argument("--firmware", choices=["full", "minimum", "none"], help="memory budget of the emulated firmware for models (default: full)")
    parser.add_argument("--kpu-log", type=Path, help="write one JSON line per kpu.forward/run_yolo2 call (model, shapes, boxes)")
    parser.add_argument("--show-ai", nargs="?", const="window", metavar="SINK", help="a second view with the AI buffers the KPU read, next to the LCD: window (default) | record:PATH | none")
    parser.add_argument("--ide", nargs="?", const=8210, type=int, metavar="PORT", help="serve an IDE page (frame buffer, terminal, histogram, thresholds, buttons) at http://127.0.0.1:PORT/ (default 8210; 0: any free port)")
    parser.add_argument("--ide-host", metavar="ADDR", help="address the IDE page listens on (default 127.0.0.1; any other needs the token in the printed address)")
    parser.add_argument("--audio-out", metavar="SINK", help="I2S sound: wav:PATH | speaker | none (default: a WAV file in the temp folder, made at the first sound)")
    parser.add_argument("--audio-in", metavar="SOURCE", help="what the microphone hears: silence (default) | tone[:HZ[:AMPLITUDE]] | FILE.wav | mic")
    parser.add_argument("--overwrite", action="store_true", help="let --lcd record:, --show-ai record:, --audio-out wav: and --kpu-log replace a file maixemu did not write (without it only maixemu's own earlier outputs are replaced)")
    parser.add_argument("--debug", action="store_true", help="show maixemu's own frames in tracebacks")
    parser.add_argument("-q", "--quiet", action="store_true", help="no [maixemu] notices")


def command_run(args: argparse.Namespace) -> int:
    from .session.run import RunOptions, default_sample, run_command

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
    if args.frames is not None and args.frames < 0:
        print("maixemu: --frames must be >= 0", file=sys.stderr)
        return 2
    if args.timeout is not None and not 0 < args.timeout < 1e9:  # nan and inf fail too
        print("maixemu: --timeout must be a number of seconds > 0", file=sys.stderr)
        return 2
    if args.ide is not None and not 0 <= args.ide <= 65535:
        print("maixemu: --ide PORT must be 0..65535", file=sys.stderr)
        return 2
    if args.ide_host and args.ide is None:
        args.ide = 8210
    if own_script:
        from .session.project import ProjectFileError, apply_project_file, copy_on_write_line

        given = [f"{flag} {value}" if value is not True else flag
                 for flag, value in (("--writable", args.writable), ("--sd", args.sd_dir),
                                     ("--flash-dir", args.flash_dir)) if value]
        try:
            project = apply_project_file(args, Path(args.script).resolve().parent)
        except ProjectFileError as exc:
            print(f"maixemu: {exc}", file=sys.stderr)
            return 2
        if project is not None and not args.quiet:
            print(f"[maixemu] project file: {project.file} (command-line options override it)", file=sys.stderr)
        said = copy_on_write_line(project, given) if project is not None else None
        if said is not None:  # never hidden by quiet: the file switched copy-on-write off
            print(said, file=sys.stderr)
    options = RunOptions(
        script=script,
        camera=args.camera,
        lcd=args.lcd,
        sd_dir=args.sd_dir,
        flash_dir=args.flash_dir,
        writable=args.writable,
        flash=dict(args.flash),
        flash_image=args.flash_image,
        frames=args.frames,
        board=args.board,
        uart_loop=list(args.uart_loop),
        timeout=args.timeout,
        ai_memory=args.ai_memory or "device",
        firmware=args.firmware or "full",
        debug=args.debug,
        kpu_log=args.kpu_log,
        show_ai=args.show_ai,
        ide=args.ide,
        ide_host=args.ide_host,
        audio_out=args.audio_out,
        audio_in=args.audio_in,
        overwrite=args.overwrite,
        quiet=args.quiet,
        argv=list(getattr(args, "script_args", [])),
    )
    if args.script is None and not args.quiet:
        print(f"[maixemu] no script given: running the bundled sample {script.name}", file=sys.stderr)
    # A broken --flash-image or --lcd is reported by the session as one line with exit 2.
    return run_command(options)


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


def _discover_commands() -> dict[str, object]:
    from . import commands

    found = {}
    for info in pkgutil.iter_modules(commands.__path__):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{commands.__name__}.{info.name}")
        if hasattr(module, "add_arguments") and hasattr(module, "run"):
            found[info.name] = module
    return found


def build_parser() -> tuple[argparse.ArgumentParser, dict[str, object]]:
    parser = argparse.ArgumentParser(prog="maixemu", description="Run MaixPy (K210) scripts and kmodels on a PC.",
                                     formatter_class=PlainHelpFormatter)
    parser.add_argument("--version", action="version", version=f"maixemu {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    run_parser = sub.add_parser("run", help="run a MaixPy script (default: the bundled sample)",
                                formatter_class=PlainHelpFormatter)
    add_run_arguments(run_parser)
    commands = _discover_commands()
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
    parser, commands = build_parser()
    args = parser.parse_args(argv or ["run"])
    if args.command == "run":
        args.script_args = script_args
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
