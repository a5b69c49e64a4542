"""The IDE run's terminal streams: output copied to the page, input read from it, end of input when nobody can type."""

from __future__ import annotations

import io

from maixemu.host.ide.channel import IdeChannel
from maixemu.host.ide.terminal import ChannelInput, ConsoleReader, TerminalTee


class EndedConsole(ConsoleReader):
    """maixemu's own stdin at its end (CI has none)."""

    def start(self) -> None:
        self.ended = True


def test_tee_writes_both_and_marks_notices():
    channel, real, calls = IdeChannel(), io.StringIO(), []
    tee = TerminalTee(real, channel, "err", on_io=lambda: calls.append(1))
    print("boom", file=tee)
    print("[maixemu] a hint", file=tee)
    assert real.getvalue() == "boom\n[maixemu] a hint\n"
    _, chunks, _ = channel.read_terminal(0)
    assert ("err", "boom") in chunks and ("notice", "[maixemu] a hint") in chunks
    assert calls  # every write is a safe point for the run
    assert tee.getvalue() == real.getvalue()  # other attributes are the real stream's


def test_tee_can_be_closed_to_the_page():
    channel, real = IdeChannel(), io.StringIO()
    TerminalTee(real, channel, "out", on_io=lambda: None, is_open=lambda: False).write("only here\n")
    assert real.getvalue() == "only here\n" and channel.read_terminal(0)[1] == []


def test_input_lines_read_and_readline_sizes():
    channel = IdeChannel()
    for line in ("first", "second", "third"):
        channel.send_input(line)
    stdin = ChannelInput(channel, EndedConsole(channel), on_io=lambda: None)
    assert stdin.readline() == "first\n"
    assert stdin.read(3) == "sec"
    assert stdin.readline(2) == "on"
    assert stdin.readline() == "d\n"
    channel.viewer_joined()  # a page is open: the rest waits for it
    channel.send_input("typed later")
    assert stdin.read(4) == "thir"
    channel.viewer_left()
    assert stdin.read() == "d\ntyped later\n"  # then the end: no page, no console
    assert stdin.readline() == ""


def test_input_waits_run_the_safe_point():
    channel, calls = IdeChannel(), []
    stdin = ChannelInput(channel, EndedConsole(channel), on_io=lambda: calls.append(1))
    assert stdin.readline() == "" and calls
