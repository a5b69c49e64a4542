"""Issue 17: a project file (``maixemu.toml`` or ``[tool.maixemu]``) found from the script's folder
upwards gives ``maixemu run`` and the plugin their options; the command line overrides it."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from maixemu.session.project import ProjectFileError, find_project_file, load_project
from maixemu.session.spec import RunSpec
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
