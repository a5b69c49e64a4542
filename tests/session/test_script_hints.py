"""Issue 28: a folder, a misspelt script or a missing ``run`` gets the command the user meant, as one line."""

from __future__ import annotations

import subprocess
import sys

import pytest

from maixemu.cli import main
from maixemu.session.script_hint import missing_script_message, not_a_command_hint


@pytest.fixture()
def project(tmp_path, monkeypatch):
    folder = tmp_path / "proj"
    folder.mkdir()
    (folder / "main.py").write_text("print('hi')\n")
    (folder / "helper.py").write_text("")
    monkeypatch.chdir(tmp_path)
    return folder


@pytest.mark.parametrize("argv, line", [
    (["proj/main.py"], "maixemu: 'proj/main.py' is not a command; to run the script: maixemu run proj/main.py"),
    (["proj"], "maixemu: 'proj' is not a command; proj is a folder, not a script; the board runs its main.py: "
               "maixemu run proj/main.py"),
    (["run", "proj"], "maixemu: proj is a folder, not a script; the board runs its main.py: maixemu run proj/main.py"),
    (["run", "proj/mian.py"], "maixemu: no such script: proj/mian.py; did you mean maixemu run proj/main.py?"),
    (["run", "proj/zzz.py"], "maixemu: no such script: proj/zzz.py"),
])
def test_what_the_user_meant_is_one_line_and_exit_2(project, capsys, argv, line):
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.err == line + "\n" and captured.out == ""


def test_a_folder_without_main_lists_its_scripts(tmp_path):
    folder = tmp_path / "demos"
    folder.mkdir()
    for name in ("a.py", "b.py", "notes.txt"):
        (folder / name).write_text("")
    assert missing_script_message(folder, "demos") == (
        "demos is a folder, not a script; give one of its scripts (a.py, b.py), e.g. maixemu run demos/a.py")
    (folder / "a.py").unlink()
    (folder / "b.py").unlink()
    assert missing_script_message(folder, "demos") == (
        "demos is a folder with no .py script in it; give the path of a MaixPy script")


def test_an_unknown_word_that_is_no_path_keeps_argparses_error(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert not_a_command_hint("frobnicate") is None
    proc = subprocess.run([sys.executable, "-m", "maixemu", "frobnicate"], capture_output=True, text=True,
                          timeout=120, stdin=subprocess.DEVNULL)
    assert proc.returncode == 2 and "invalid choice: 'frobnicate'" in proc.stderr


def test_the_plugin_says_the_same_for_a_folder(project):
    from maixemu.testing import MaixPyRunner

    result = MaixPyRunner(project.parent).run(project)
    assert result.exit_code == 2
    assert "proj is a folder, not a script; the board runs its main.py" in result.stderr
