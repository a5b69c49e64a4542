"""Every ``maixemu ... --help`` reads as plain text: no docstring mark-up, paragraphs kept apart."""

from __future__ import annotations

import re

import pytest

from maixemu.cli import PlainHelpFormatter, build_parser, plain_text

MARKUP = re.compile(r"``|`[^`\s][^`]*`|:(func|class|data|meth|mod|attr):|\*\*")


def _subcommands() -> dict:
    parser, _ = build_parser()
    action = next(a for a in parser._actions if a.dest == "command")
    return dict(action.choices)


def test_every_command_is_covered():
    assert {"run", "info", "forward", "bench", "trace", "eval", "samples"} <= set(_subcommands())


@pytest.mark.parametrize("name", sorted(_subcommands()))
def test_help_has_no_markup(name):
    text = _subcommands()[name].format_help()
    assert not MARKUP.search(text), MARKUP.search(text).group(0) + " in:\n" + text
    assert text.startswith(f"usage: maixemu {name}")


def test_top_level_help_lists_commands_in_plain_text():
    parser, _ = build_parser()
    text = parser.format_help()
    assert not MARKUP.search(text)
    assert "samples" in text and "trace" in text


def test_markup_forms_become_plain():
    assert plain_text("``kpu.forward`` and `x` and :func:`~a.b` and **bold**") == "kpu.forward and x and a.b and bold"


def test_paragraphs_and_bullets_keep_their_breaks():
    formatter = PlainHelpFormatter("prog", width=60)
    text = formatter._fill_text("First paragraph\nrunning on.\n\n* one item\n  continued\n* two", 60, "")
    assert text == "First paragraph running on.\n\n* one item continued\n* two"


def test_a_command_line_imports_only_the_command_it_names():
    """Importing every command module cost each start 0.3-0.4 s of CPU (the bench's yardsticks
    and kmodel engine, OpenCV's capture for cameras), ``--version`` too."""
    import subprocess
    import sys

    probe = ("import atexit, sys; from maixemu.cli import main\n"
             "atexit.register(lambda: print(sorted(m.rsplit('.', 1)[1] for m in sys.modules if m.startswith("
             "'maixemu.commands.') and not m.rsplit('.', 1)[1].startswith('_')), file=sys.stderr))\n"
             "sys.exit(main(sys.argv[1:]))")
    for argv, wanted in ((["samples"], ["samples"]), (["--version"], [])):
        done = subprocess.run([sys.executable, "-c", probe, *argv], capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        assert done.stderr.strip().splitlines()[-1] == repr(wanted), done.stderr
    parser, commands = build_parser(["info", "m.kmodel"])
    assert set(commands) == {"info"} and parser.parse_args(["info", "m.kmodel"]).command == "info"
    assert build_parser(["run", "main.py"])[1] == {} and build_parser([])[1] == {}
    assert set(build_parser(["--help"])[1]) == set(build_parser()[1])  # the help lists them all
