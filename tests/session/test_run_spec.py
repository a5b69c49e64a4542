"""Issue 25: every user-facing run option is one ``RunSpec`` field, and the command line, the project
file and the plugin's keywords are generated from it; one merge rule (defaults < project < given)."""

from __future__ import annotations

import inspect
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from maixemu.cli import build_parser
from maixemu.session import spec as spec_mod
from maixemu.session.board import DEMO_MODEL
from maixemu.session.spec import Not, OptionError, RunSpec
from maixemu.testing import MaixPyRunner

#: per field: (command-line words, TOML value, plugin value, the field's value from each) — one
#: example each surface can say; a field added without one fails test_every_field_has_an_example.
EXAMPLES: dict[str, tuple[list[str], object, object, object]] = {
    "camera": (["synthetic"], "synthetic", "synthetic", "synthetic"),
    "lcd": (["none"], "none", None, "none"),
    "sd_dir": (["DIR"], "DIR", "DIR", "DIR"),
    "flash_dir": (["DIR"], "DIR", "DIR", "DIR"),
    "writable": ([], True, None, True),
    "flash": (["0x300000=MODEL"], {"0x300000": "MODEL"}, {0x300000: "MODEL"}, {0x300000: "MODEL"}),
    "flash_image": (["MODEL"], "MODEL", "MODEL", "MODEL"),
    "board": (["m5stickv"], "m5stickv", "m5stickv", "m5stickv"),
    "sensor": (["gc0328"], "gc0328", "gc0328", "gc0328"),
    "uart_loop": (["1:2"], ["1:2"], ["1:2"], ("1:2",)),
    "frames": (["7"], 7, 7, 7),
    "timeout": (["2.5"], 2.5, 2.5, 2.5),
    "ai_memory": (["warn"], "warn", "warn", "warn"),
    "firmware": (["minimum"], "minimum", "minimum", "minimum"),
    "kpu_log": (["LOG"], "LOG", None, "LOG"),
    "show_ai": (["none"], "none", None, "none"),
    "ide": (["0"], None, None, 0),
    "ide_host": (["127.0.0.1"], None, None, "127.0.0.1"),
    "audio_out": (["none"], "none", None, "none"),
    "audio_in": (["silence"], "silence", "silence", "silence"),
    "overwrite": ([], None, None, True),
    "debug": ([], None, True, True),
    "quiet": ([], True, True, True),
}


def _fill(value: object, folder: Path) -> object:
    """An example with its placeholders made real: DIR a folder, MODEL a file, LOG a new file's name."""
    names = {"DIR": folder / "dir", "MODEL": folder / "m.kmodel", "LOG": folder / "calls.jsonl"}
    if isinstance(value, str):
        for placeholder, path in names.items():
            value = value.replace(placeholder, str(path))
        return value
    if isinstance(value, list):
        return [_fill(item, folder) for item in value]
    if isinstance(value, dict):
        return {key: _fill(item, folder) for key, item in value.items()}
    return value


def _expected(name: str, value: object, folder: Path) -> object:
    filled = _fill(value, folder)
    if name in ("sd_dir", "flash_dir", "flash_image", "kpu_log"):
        return Path(str(filled))
    if name == "flash":
        return {address: Path(path) for address, path in filled.items()}
    return filled


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "dir").mkdir()
    (tmp_path / "m.kmodel").write_bytes(DEMO_MODEL.read_bytes())
    return tmp_path


def _run_parser():
    parser, _ = build_parser()
    action = next(a for a in parser._actions if a.dest == "command")
    return action.choices["run"]


def test_every_field_has_an_example():
    assert set(EXAMPLES) == set(RunSpec.FIELDS)


def test_every_surface_names_the_option_or_says_why_not():
    for name, option in spec_mod.options():
        for surface in (option.cli, option.project, option.plugin):
            assert isinstance(surface, str) and surface or isinstance(surface, Not) and len(surface.why) > 10, name
        assert option.help and not option.help.endswith(".")


@pytest.mark.parametrize("name", RunSpec.FIELDS)
def test_the_command_line_reaches_every_field(name, folder):
    option = spec_mod.option_of(name)
    words, _, _, value = EXAMPLES[name]
    if isinstance(option.cli, Not):
        pytest.fail(f"{name} has no command-line flag")  # every option is a flag today
    args = _run_parser().parse_args(["main.py", option.cli, *[_fill(w, folder) for w in words]])
    given = spec_mod.given_by_cli(args)
    assert given == {name: _expected(name, value, folder)}
    assert getattr(RunSpec().merged(None, given), name) == given[name]


@pytest.mark.parametrize("name", RunSpec.FIELDS)
def test_the_project_file_reaches_every_field_or_says_why_not(name, folder):
    option = spec_mod.option_of(name)
    _, toml, _, value = EXAMPLES[name]
    if isinstance(option.project, Not):
        assert toml is None
        with pytest.raises(spec_mod.ProjectValueError, match="not a maixemu option"):
            spec_mod.read_project_table({name.replace("_", "-"): "x"}, folder)
        return
    values = spec_mod.read_project_table({option.project: _fill(toml, folder)}, folder)
    assert values == {name: _expected(name, value, folder)}


@pytest.mark.parametrize("name", RunSpec.FIELDS)
def test_the_plugin_reaches_every_field_or_says_why_not(name, folder):
    option = spec_mod.option_of(name)
    _, _, keyword_value, value = EXAMPLES[name]
    parameters = inspect.signature(MaixPyRunner.run).parameters
    if isinstance(option.plugin, Not):
        assert keyword_value is None and name not in spec_mod.plugin_keywords().values()
        return
    assert option.plugin in parameters  # maixpy.run's signature names it (help(), IDE completion)
    given = spec_mod.given_by_plugin({option.plugin: _fill(keyword_value, folder)})
    assert given == {name: _expected(name, value, folder)}


def test_one_merge_rule_defaults_then_project_then_given(folder):
    model = folder / "m.kmodel"
    project = {"firmware": "minimum", "frames": 10, "flash": {0x300000: model, 0x400000: model}}
    given = {"firmware": "none", "flash": {0x300000: folder / "other.kmodel"}}
    spec = RunSpec(ai_memory="warn").merged(project, given)
    assert (spec.firmware, spec.frames, spec.ai_memory) == ("none", 10, "warn")
    assert spec.flash == {0x300000: folder / "other.kmodel", 0x400000: model}  # maps merge by address
    assert RunSpec().merged(None, {"ide_host": "0.0.0.0"}).ide == spec_mod.DEFAULT_IDE_PORT


def test_tests_inherit_the_project_not_its_folders_and_outputs(folder):
    values = spec_mod.read_project_table({"firmware": "minimum", "sd": "dir", "lcd": "none", "frames": 3,
                                          "board": "amigo"}, folder)
    assert spec_mod.inherited_by_tests(values) == {"firmware": "minimum", "board": "amigo"}


def test_bad_values_name_the_surface_and_what_is_allowed(folder):
    with pytest.raises(OptionError, match=r"^--frames must be a whole number >= 0$"):
        spec_mod.given_by_cli(_run_parser().parse_args(["x.py", "--frames", "-1"]))
    with pytest.raises(OptionError, match=r"maixpy.run\(firmware='big'\): must be one of 'full', 'minimum'"):
        spec_mod.given_by_plugin({"firmware": "big"})
    with pytest.raises(TypeError, match=r"unexpected keyword argument 'frame'; did you mean 'frames'\?"):
        spec_mod.given_by_plugin({"frame": 3})
    with pytest.raises(spec_mod.ProjectValueError, match=r"^board = 'nano': must be a board name"):
        spec_mod.read_project_table({"board": "nano"}, folder)


# ---------------------------------------------------------------------------------- the option added
WINDOW_PROBE = """
import sensor
sensor.reset()
sensor.set_pixformat(sensor.RGB565)
sensor.set_framesize(sensor.QVGA)
sensor.set_windowing((16, 8, 64, 32))
img = sensor.snapshot()
print(hex(sensor.get_id()), img.width(), img.height())
"""


def test_sensor_is_one_field_reaching_every_surface(tmp_path):
    """--sensor was added as one RunSpec field plus its use (the board's SensorState): the command
    line, the project file and the plugin all reach it."""
    script = tmp_path / "app" / "main.py"
    script.parent.mkdir()
    script.write_text(textwrap.dedent(WINDOW_PROBE))
    run = [sys.executable, "-m", "maixemu", "run", str(script), "--lcd", "none", "--camera", "synthetic", "-q"]
    plain = subprocess.run(run, capture_output=True, text=True, timeout=180, stdin=subprocess.DEVNULL)
    chosen = subprocess.run([*run, "--sensor", "gc0328"], capture_output=True, text=True, timeout=180,
                            stdin=subprocess.DEVNULL)
    assert plain.stdout.split() == ["0x26", "64", "32"], plain.stderr
    assert chosen.stdout.split() == ["0x9d", "64", "32"], chosen.stderr
    assert MaixPyRunner(tmp_path / "w1").run(script, sensor="gc0328").lines == ["0x9d 64 32"]
    (tmp_path / ".git").mkdir()  # tmp_path is the project's top: its file applies to app/main.py
    (tmp_path / "maixemu.toml").write_text('sensor = "gc0328"\n')
    assert MaixPyRunner(tmp_path / "w2").run(script).lines == ["0x9d 64 32"]  # the project's camera chip
