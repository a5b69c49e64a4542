"""Issue 17: a project file (``maixemu.toml`` or ``[tool.maixemu]``) found from the script's folder
upwards gives ``maixemu run`` and the plugin their options; the command line overrides it.
Issue 24: only inside the script's own project (up to its version-control or ``pyproject.toml``
top, never the home folder or above, never a folder anyone may write to), and a file that switches
copy-on-write off says so, ``quiet`` or not."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from maixemu.session.project import (COPY_ON_WRITE_OFF, ProjectFileError, copy_on_write_line, find_project_file,
                                     load_project)
from maixemu.session.spec import RunSpec, inherited_by_tests
from maixemu.testing import MaixPyRunner
from maixemu.session.board import DEMO_MODEL

PROBE = """
import KPU as kpu, sys
task = kpu.load(0x300000)
print("loaded", task is not None)
print("argv", sys.argv[1:])
"""


def _maixemu(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "maixemu", *args], capture_output=True, text=True, timeout=180,
                          stdin=subprocess.DEVNULL, cwd=cwd)


def _project(tmp_path: Path, text: str, name: str = "maixemu.toml") -> Path:
    """``tmp_path`` as a project's top (a checkout) holding the file, with the script in ``app/``."""
    (tmp_path / ".git").mkdir(exist_ok=True)
    (tmp_path / "models").mkdir(exist_ok=True)
    (tmp_path / "models" / "demo.kmodel").write_bytes(DEMO_MODEL.read_bytes())
    (tmp_path / name).write_text(textwrap.dedent(text))
    app = tmp_path / "app"
    app.mkdir(exist_ok=True)
    (app / "main.py").write_text(textwrap.dedent(PROBE))
    return app / "main.py"


def test_run_needs_no_options_in_a_configured_project(tmp_path):
    script = _project(tmp_path, """
        flash = { 0x300000 = "models/demo.kmodel" }
        lcd = "none"
        camera = "synthetic"
        firmware = "minimum"
    """)
    proc = _maixemu("run", str(script))
    assert proc.returncode == 0, proc.stderr
    assert "loaded True" in proc.stdout
    said = [line for line in proc.stderr.splitlines() if "project file" in line]
    assert said == [f"[maixemu] project file: {tmp_path / 'maixemu.toml'} (command-line options override it)"]


def test_without_the_file_the_same_run_fails(tmp_path):
    script = _project(tmp_path, "")
    (tmp_path / "maixemu.toml").unlink()
    proc = _maixemu("run", str(script), "--lcd", "none", "--camera", "synthetic")
    assert proc.returncode == 1 and "nothing is mapped at flash address 0x300000" in proc.stderr


def test_pyproject_tool_table_is_read(tmp_path):
    script = _project(tmp_path, """
        [project]
        name = "thing"
        [tool.maixemu]
        flash = { 0x300000 = "models/demo.kmodel" }
        lcd = "none"
    """, name="pyproject.toml")
    proc = _maixemu("run", str(script), "--camera", "synthetic")
    assert proc.returncode == 0, proc.stderr
    assert f"project file: {tmp_path / 'pyproject.toml'}" in proc.stderr


def test_a_pyproject_without_the_table_is_passed_over(tmp_path):
    _project(tmp_path, '[project]\nname = "x"\n', name="pyproject.toml")
    assert find_project_file(tmp_path / "app") is None


def test_maixemu_toml_wins_in_the_same_folder(tmp_path):
    _project(tmp_path, '[tool.maixemu]\nfirmware = "none"\n', name="pyproject.toml")
    (tmp_path / "maixemu.toml").write_text('firmware = "minimum"\n')
    assert load_project(tmp_path / "app").values["firmware"] == "minimum"


def test_command_line_options_override_the_file(tmp_path):
    _project(tmp_path, """
        flash = { 0x300000 = "models/demo.kmodel", 0x400000 = "models/demo.kmodel" }
        firmware = "minimum"
        frames = 10
        ai-memory = "warn"
        quiet = true
    """)
    other = tmp_path / "other.kmodel"
    other.write_bytes(b"x")
    project = load_project(tmp_path / "app")
    assert project.file == tmp_path / "maixemu.toml"
    spec = RunSpec().merged(project.values, {"firmware": "none", "flash": {0x300000: other}})
    assert spec.firmware == "none" and spec.frames == 10 and spec.ai_memory == "warn" and spec.quiet is True
    assert spec.flash == {0x300000: other, 0x400000: tmp_path / "models" / "demo.kmodel"}


def test_the_cli_overrides_the_file_end_to_end(tmp_path):
    script = _project(tmp_path, 'flash = { 0x300000 = "models/demo.kmodel" }\nlcd = "none"\nframes = 0\n')
    proc = _maixemu("run", str(script), "--camera", "synthetic", "--firmware", "none", "--quiet")
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr


@pytest.mark.parametrize("text, expected", [
    ('firmware = "big"', "firmware = 'big': must be one of 'full', 'minimum', 'none'"),
    ("frames = -3", "frames = -3: must be a whole number >= 0"),
    ("quiet = 1", "quiet = 1: must be true or false"),
    ('cameras = "0"', "cameras: not a maixemu option (did you mean camera? allowed: camera, lcd, sd, flash-dir"),
    ('flash = { 0x300000 = "nope.kmodel" }', "flash.0x300000: no such file"),
    ('flash = { banana = "models/demo.kmodel" }', "flash.banana: the address must be a number > 0"),
    ("flash = 3", "flash: must be a table of address = \"file\""),
    ('sd = "missing"', "sd: no such folder"),
    ("overwrite = true", "overwrite: not a maixemu option in a project file (replacing files maixemu did not write "
                         "is asked for at the terminal, for one run, never by a file;"),
    ("firmware = ", "not valid TOML"),
])
def test_a_mistake_in_the_file_is_one_line_naming_file_and_key_exit_2(tmp_path, text, expected):
    script = _project(tmp_path, text + "\n")
    proc = _maixemu("run", str(script), "--lcd", "none")
    assert proc.returncode == 2
    assert proc.stdout == ""
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"maixemu: {tmp_path / 'maixemu.toml'}: "), proc.stderr
    assert expected in lines[0]


def test_a_mistake_in_the_pyproject_table_names_the_dotted_key(tmp_path):
    _project(tmp_path, '[tool.maixemu]\nai-memory = "loud"\n', name="pyproject.toml")
    with pytest.raises(ProjectFileError, match=r"pyproject.toml: tool.maixemu.ai-memory = 'loud': must be one of"):
        load_project(tmp_path / "app")


def test_the_plugin_takes_its_defaults_from_the_file(tmp_path):
    script = _project(tmp_path, 'flash = { 0x300000 = "models/demo.kmodel" }\nquiet = true\nfirmware = "minimum"\n')
    result = MaixPyRunner(tmp_path / "work").run(script)
    assert result.ok, result.stderr
    assert result.lines[0] == "loaded True"
    assert "[maixemu]" not in result.stderr  # quiet from the file
    loud = MaixPyRunner(tmp_path / "work2").run(script, quiet=False)
    assert "[maixemu]" in loud.stderr  # the test's own argument wins


def test_paths_in_the_file_are_relative_to_its_folder(tmp_path):
    _project(tmp_path, 'flash = { 0x300000 = "models/demo.kmodel" }\nlcd = "record:out/frames.mp4"\ncamera = "clip.mp4"\n')
    project = load_project(tmp_path / "app").values
    assert project["flash"] == {0x300000: tmp_path / "models" / "demo.kmodel"}
    assert project["lcd"] == f"record:{tmp_path / 'out' / 'frames.mp4'}"
    assert project["camera"] == str(tmp_path / "clip.mp4")


# ---------------------------------------------------------------------------------- issue 24: whose file applies
OVERWRITE = 'open("labels.txt", "w").write("")\n'


def _nested(tmp_path: Path, text: str, *, top: str | None = None) -> tuple[Path, Path]:
    """``tmp_path/shared/maixemu.toml`` above ``shared/team/app/main.py`` (which empties its labels.txt)."""
    shared = tmp_path / "shared"
    app = shared / "team" / "app"
    app.mkdir(parents=True)
    (shared / "maixemu.toml").write_text(text)
    (app / "main.py").write_text(OVERWRITE)
    (app / "labels.txt").write_text("cat\ndog\n")
    if top is not None:
        (shared / "team" / top).mkdir() if top.startswith(".") else (shared / "team" / top).write_text(
            '[project]\nname = "team"\n')
    return shared, app


def test_an_ancestors_file_outside_the_scripts_project_changes_nothing(tmp_path):
    """The probe: ``writable = true`` and ``quiet = true`` in a folder above the script made a run
    overwrite labels.txt with nothing said."""
    _, app = _nested(tmp_path, "writable = true\nquiet = true\n")
    proc = _maixemu("run", str(app / "main.py"), "--lcd", "none", "--camera", "synthetic")
    assert proc.returncode == 0, proc.stderr
    assert (app / "labels.txt").read_text() == "cat\ndog\n"
    assert "project file" not in proc.stderr
    assert find_project_file(app) is None


@pytest.mark.parametrize("top", [".git", ".hg", "pyproject.toml"])
def test_the_projects_top_ends_the_search(tmp_path, top):
    shared, app = _nested(tmp_path, 'firmware = "minimum"\n', top=top)
    assert find_project_file(app) is None  # the file lies above the project's top
    (shared / "team" / "maixemu.toml").write_text('firmware = "none"\n')
    assert load_project(app).values["firmware"] == "none"


def test_the_home_folder_and_above_never_apply(tmp_path, monkeypatch):
    home = tmp_path / "home"
    app = home / "code" / "app"
    app.mkdir(parents=True)
    (home / "maixemu.toml").write_text("writable = true\n")
    (home / ".git").mkdir()  # even a home folder that is a checkout (dotfiles)
    monkeypatch.setenv("HOME", str(home))
    assert find_project_file(app) is None
    (home / "code" / ".git").mkdir()
    (home / "code" / "maixemu.toml").write_text('firmware = "none"\n')
    assert load_project(app).values["firmware"] == "none"
    assert load_project(home).values["writable"] is True  # a script in the home folder itself: its own file


def test_a_folder_anyone_may_write_to_ends_the_search(tmp_path):
    shared, app = _nested(tmp_path, 'firmware = "minimum"\n')
    (shared / ".git").mkdir()
    assert load_project(app).values["firmware"] == "minimum"
    shared.chmod(0o1777)  # a shared temp folder: anyone may put a project file there
    try:
        assert find_project_file(app) is None
    finally:
        shared.chmod(0o755)


def test_a_file_that_switches_copy_on_write_off_says_so_even_when_quiet(tmp_path):
    shared, app = _nested(tmp_path, "writable = true\nquiet = true\n")
    (shared / ".git").mkdir()
    proc = _maixemu("run", str(app / "main.py"), "--lcd", "none", "--camera", "synthetic")
    assert proc.returncode == 0, proc.stderr
    assert (app / "labels.txt").read_text() == ""  # the project asked for it ...
    assert proc.stderr == (f"[maixemu] {shared / 'maixemu.toml'} sets writable = true: the script writes into real "
                           "folders, its writes and deletions change the files there (remove the key to keep your "
                           "files copy-on-write)\n")  # ... and it is said, quiet or not


def test_quiet_in_the_file_does_not_hide_a_writable_command_line(tmp_path):
    shared, app = _nested(tmp_path, "quiet = true\n")
    (shared / ".git").mkdir()
    proc = _maixemu("run", str(app / "main.py"), "--lcd", "none", "--camera", "synthetic", "--writable")
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.startswith("[maixemu] --writable: the script writes into real folders")
    assert "quiet = true" in proc.stderr


def test_the_plugin_inherits_no_key_that_switches_copy_on_write_off(tmp_path):
    """A test's /sd and /flash are its own: the file's writable, sd and flash-dir never reach it (so
    the plugin has no copy-on-write line to say), and the line's rule names exactly those fields."""
    (tmp_path / "dir").mkdir()
    values = {"writable": True, "sd_dir": tmp_path / "dir", "flash_dir": tmp_path / "dir", "firmware": "minimum"}
    assert set(COPY_ON_WRITE_OFF) == {"writable", "sd_dir", "flash_dir"}
    assert inherited_by_tests(values) == {"firmware": "minimum"}
    assert copy_on_write_line(tmp_path / "maixemu.toml", inherited_by_tests(values), {}) is None
    said = copy_on_write_line(tmp_path / "maixemu.toml", values, {"sd_dir": tmp_path / "dir"})
    assert said is not None and "sets writable = true, flash-dir = " in said and " sd = " not in said


def test_a_huge_project_file_is_one_line_not_read(tmp_path):
    script = _project(tmp_path, "")
    with open(tmp_path / "maixemu.toml", "wb") as handle:
        handle.truncate(2 * 1024 * 1024 * 1024)  # 2 GB (sparse): today's main read all of it
    with pytest.raises(ProjectFileError, match="bytes is too large for a project file"):
        load_project(script.parent)
