"""Every user-facing run option, once: :class:`RunSpec`.

Each field of :class:`RunSpec` carries, in its :class:`Option` metadata, the names it has on the
three surfaces a user sets options on — the command line (``--camera``), the project file
(``camera = "..."`` in ``maixemu.toml``) and the pytest plugin (``maixpy.run(camera=...)``) — or a
:class:`Not` saying why it is not there, plus its help text and its :class:`Kind` (how a value is
read from each surface and what is allowed). From those fields alone come:

* the arguments of ``maixemu run`` (:func:`add_arguments`, :func:`given_by_cli`);
* the project file's keys and their checks (:func:`read_project_table`);
* the plugin's keywords (:func:`given_by_plugin`, :func:`plugin_signature`);

and one merge rule, :meth:`RunSpec.merged`: defaults < project file < what was given (a flash map
merges address by address). Adding an option is one field here plus the code that uses it.
"""

from __future__ import annotations

import argparse
import difflib
import inspect
import math
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any, ClassVar

#: ``--ide`` with no port, and the port ``--ide-host`` alone opens
DEFAULT_IDE_PORT = 8210


class Not:
    """A surface an option is deliberately not on, and why (the reachability test reads the reason)."""

    def __init__(self, why: str) -> None:
        self.why = why

    def __repr__(self) -> str:
        return f"Not({self.why!r})"


Surface = str | Not


# ---------------------------------------------------------------------------------- kinds of values
class Kind:
    """How one option's value is read from each surface, checked and merged.

    ``allowed`` ends the error messages: ``maixemu: --frames must be a whole number >= 0``,
    ``maixemu.toml: frames = -3: must be a whole number >= 0``. Readers raise ``ValueError`` for a
    value that is not allowed.
    """

    allowed = "a value"

    def arguments(self) -> dict[str, Any]:
        """``argparse`` keywords of the option's flag (besides its name and help)."""
        return {}

    def from_cli(self, value: Any) -> Any:
        """The parsed command-line value as the spec keeps it."""
        return value

    def from_project(self, value: Any, base: Path) -> Any:
        """A TOML value of the project file (relative paths are relative to ``base``)."""
        return self.from_plugin(value)

    def from_plugin(self, value: Any) -> Any:
        """A Python value given to ``maixpy.run``."""
        return value

    def check(self, value: Any) -> None:
        """Raise ``ValueError`` for a value of the right type that is still not allowed."""

    def merge(self, below: Any, given: Any) -> Any:
        """The value when ``given`` overrides ``below`` (a project file's or a default)."""
        return given


def _text(value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValueError
    return value


def _relative(value: str, base: Path) -> Path:
    path = Path(value).expanduser()
    return path if path.is_absolute() else base / path


class Text(Kind):
    """A word or spec string (``--board m5stickv``, ``--audio-out wav:PATH``)."""

    def __init__(self, allowed: str, *, metavar: str | None = None, nargs_const: str | None = None) -> None:
        self.allowed = allowed
        self.metavar = metavar
        #: ``--show-ai`` alone means this value
        self.nargs_const = nargs_const

    def arguments(self) -> dict[str, Any]:
        found: dict[str, Any] = {"metavar": self.metavar} if self.metavar else {}
        if self.nargs_const is not None:
            found.update(nargs="?", const=self.nargs_const)
        return found

    def from_plugin(self, value: Any) -> str:
        return _text(os.fspath(value) if isinstance(value, os.PathLike) else value)


class BoardName(Text):
    """``--board``: a board profile's name (checked when the board opens; a project file's at once,
    so its mistake names the file)."""

    def from_project(self, value: Any, base: Path) -> str:
        from ..firmware.board_profiles import profile_name

        text = _text(value)
        profile_name(text)  # ValueError for a board maixemu does not know
        return text


class Choice(Text):
    """One of a few words (``--firmware full|minimum|none``)."""

    def __init__(self, choices: tuple[str, ...]) -> None:
        super().__init__(f"one of {', '.join(map(repr, choices))}")
        self.choices = choices

    def arguments(self) -> dict[str, Any]:
        return {"choices": list(self.choices)}

    def check(self, value: Any) -> None:
        if value not in self.choices:
            raise ValueError


class CameraSource(Text):
    """``--camera``: a webcam index, ``synthetic``, or a video, image or folder."""

    def __init__(self) -> None:
        super().__init__("a webcam index, \"synthetic\", or a path to a video, image or folder", metavar="SRC")

    def from_project(self, value: Any, base: Path) -> str:
        if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
            return str(value)  # a webcam index
        text = _text(value)
        if text.isdigit() or text.lower() in ("synthetic", "auto"):
            return text
        return str(_relative(text, base))


class Output(Text):
    """``--lcd`` / ``--show-ai``: ``window``, ``none`` or ``record:PATH`` (a project file's PATH is
    relative to the file)."""

    def from_project(self, value: Any, base: Path) -> str:
        text = _text(value)
        if text.startswith("record:"):
            return "record:" + str(_relative(text.removeprefix("record:"), base))
        return text


class PathKind(Kind):
    """A file or folder (``--sd DIR``, ``--flash-image PKG``); a project file's must exist when ``exists``
    says so (``"file"`` or ``"folder"``)."""

    def __init__(self, metavar: str, exists: str | None = None) -> None:
        self.metavar, self.exists = metavar, exists
        self.allowed = {"file": "a path to a file", "folder": "a path to a folder"}.get(exists or "", "a path")

    def arguments(self) -> dict[str, Any]:
        return {"type": Path, "metavar": self.metavar}

    def from_project(self, value: Any, base: Path) -> Path:
        path = _relative(_text(value), base)
        missing = (self.exists == "file" and not path.is_file()) or (self.exists == "folder" and not path.is_dir())
        if missing:
            raise MissingPath(f"no such {self.exists} {path}")
        return path

    def from_plugin(self, value: Any) -> Path:
        if not isinstance(value, (str, os.PathLike)) or not os.fspath(value):
            raise ValueError
        return Path(value)


class MissingPath(ValueError):
    """A project file names a file or folder that is not there (the message says which)."""


class Flag(Kind):
    """On or off (``--quiet``); the command line can only turn it on."""

    allowed = "true or false"

    def arguments(self) -> dict[str, Any]:
        return {"action": "store_true", "default": None}

    def from_plugin(self, value: Any) -> bool:
        if not isinstance(value, bool):
            raise ValueError
        return value


class Number(Kind):
    """A number of one type within bounds (``--frames N``, ``--timeout S``, ``--ide [PORT]``); a bool is
    never one. ``const``: the value of the flag given alone."""

    def __init__(self, kind: type[int] | type[float], allowed: str, metavar: str, within: Callable[[Any], bool],
                 *, const: int | None = None) -> None:
        self.kind, self.allowed, self.metavar, self.within, self.const = kind, allowed, metavar, within, const

    def arguments(self) -> dict[str, Any]:
        found: dict[str, Any] = {"type": self.kind, "metavar": self.metavar}
        if self.const is not None:
            found.update(nargs="?", const=self.const)
        return found

    def from_plugin(self, value: Any) -> int | float:
        accepted = (int, float) if self.kind is float else (int,)
        if isinstance(value, bool) or not isinstance(value, accepted):
            raise ValueError
        return self.kind(value)

    def check(self, value: Any) -> None:
        if math.isnan(value) or not self.within(value):
            raise ValueError


#: ``--frames N``: a whole number >= 0
COUNT = Number(int, "a whole number >= 0", "N", lambda n: n >= 0)
#: ``--timeout S``: seconds > 0, below a billion (NaN never)
SECONDS = Number(float, "a number of seconds > 0", "S", lambda s: 0 < s < 1e9)
#: ``--ide [PORT]``: a TCP port, 0 for any free one
PORT = Number(int, "a port number 0..65535", "PORT", lambda p: 0 <= p <= 65535, const=DEFAULT_IDE_PORT)


def parse_flash_mapping(text: str) -> tuple[int, Path]:
    """``0x300000=face.kmodel`` → (0x300000, Path): one ``--flash`` (argparse's error when wrong)."""
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


class FlashMap(Kind):
    """Files at flash addresses (``--flash ADDR=FILE``, repeatable; a table in the project file).
    Merging keeps the addresses below and lets the given ones win."""

    allowed = 'a table of address = "file", e.g. flash = { 0x300000 = "face.kmodel" }'

    def arguments(self) -> dict[str, Any]:
        return {"action": "append", "type": parse_flash_mapping, "metavar": "ADDR=FILE"}

    def from_cli(self, value: Any) -> dict[int, Path]:
        return dict(value)

    def from_project(self, value: Any, base: Path) -> dict[int, Path]:
        if not isinstance(value, dict):
            raise ValueError
        mapping: dict[int, Path] = {}
        for address_text, path_text in value.items():
            try:
                address = int(address_text, 0)
            except ValueError:
                address = -1
            if address <= 0:
                raise EntryError(address_text, "the address must be a number > 0 (e.g. 0x300000)")
            if not isinstance(path_text, str) or not path_text:
                raise EntryError(address_text, "must be a path to a model file")
            path = _relative(path_text, base)
            if not path.is_file():
                raise EntryError(address_text, f"no such file {path}")
            mapping[address] = path
        return mapping

    def from_plugin(self, value: Any) -> dict[int, Path]:
        if not isinstance(value, Mapping):
            raise ValueError
        return {int(address): Path(path) for address, path in value.items()}

    def merge(self, below: Any, given: Any) -> Any:
        return {**below, **given}


class EntryError(ValueError):
    """One entry of a table in the project file is wrong (``flash.0x300000: no such file ...``)."""

    def __init__(self, key: str, why: str) -> None:
        super().__init__(why)
        self.key, self.why = key, why


class Words(Kind):
    """Repeatable words (``--uart-loop 1:2 --uart-loop 3:3``; a list in the project file)."""

    def __init__(self, metavar: str, allowed: str) -> None:
        self.metavar, self.allowed = metavar, allowed

    def arguments(self) -> dict[str, Any]:
        return {"action": "append", "metavar": self.metavar}

    def from_cli(self, value: Any) -> tuple[str, ...]:
        return tuple(value)

    def from_project(self, value: Any, base: Path) -> tuple[str, ...]:
        if not isinstance(value, list):
            raise ValueError
        return tuple(_text(item) for item in value)

    def from_plugin(self, value: Any) -> tuple[str, ...]:
        if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
            raise ValueError
        return tuple(_text(item) for item in value)


# ---------------------------------------------------------------------------------- the options
@dataclass(frozen=True)
class Option:
    """What one :class:`RunSpec` field is called on each surface, its help and its :class:`Kind`."""

    help: str
    kind: Kind
    cli: Surface
    project: Surface
    plugin: Surface
    #: the plugin takes the project file's value as its default (False: a test's own folders,
    #: outputs and frame budget are not the project's)
    tests_inherit: bool = True
    #: a short flag beside ``cli`` (``-q``)
    short: str | None = None


def opt(default: Any, help: str, kind: Kind, *, cli: Surface, project: Surface, plugin: Surface,  # noqa: A002
        tests_inherit: bool = True, short: str | None = None, mutable: bool = False) -> Any:
    """A :class:`RunSpec` field with its :class:`Option`."""
    option = Option(help, kind, cli, project, plugin, tests_inherit, short)
    if mutable:
        return field(default_factory=lambda: type(default)(default), metadata={"option": option})
    return field(default=default, metadata={"option": option})


_TESTS_HAVE_FOLDERS = "a test's /sd and /flash are fresh folders of its own (sd= and flash_dir= name others)"


@dataclass(frozen=True)
class RunSpec:
    """Every user-facing option of a run; the defaults are what a user gets with no option."""

    camera: str | None = opt(
        None, "0 (webcam index) | VIDEO | DIR of images | IMAGE | synthetic (default: webcam 0, else synthetic)",
        CameraSource(), cli="--camera", project="camera", plugin="camera")
    lcd: str | None = opt(
        None, "window | none | record:PATH (.mp4/.avi or a folder of PNGs) (default: window if a display exists)",
        Output("\"window\", \"none\" or \"record:PATH\"", metavar="SINK"), cli="--lcd", project="lcd",
        plugin=Not("the plugin keeps every LCD frame in result.lcd_frames"))
    sd_dir: Path | None = opt(
        None, "local folder mounted as /sd; the script's writes change it (default: the script's folder, "
        "copy-on-write into .maixemu/sd)", PathKind("DIR", "folder"), cli="--sd", project="sd", plugin="sd",
        tests_inherit=False)
    flash_dir: Path | None = opt(
        None, "local folder mounted as /flash; the script's writes change it (default: the script's folder, "
        "copy-on-write into .maixemu/flash)", PathKind("DIR", "folder"), cli="--flash-dir", project="flash-dir",
        plugin="flash_dir", tests_inherit=False)
    writable: bool = opt(
        False, "let the script write into its own folder for real (no .maixemu copy-on-write layer)", Flag(),
        cli="--writable", project="writable", plugin=Not(_TESTS_HAVE_FOLDERS), tests_inherit=False)
    flash: dict[int, Path] = opt(
        {}, "map a flash address to a model file, e.g. 0x300000=face.kmodel (repeatable)", FlashMap(),
        cli="--flash", project="flash", plugin="flash", mutable=True)
    flash_image: Path | None = opt(
        None, "a .kfpkg flash package; its flash-list.json gives the addresses", PathKind("PKG", "file"),
        cli="--flash-image", project="flash-image", plugin="flash_image")
    board: str | None = opt(
        None, "board profile: default | bit | dock | go | duino | cube | amigo | m5stickv | unitv (its board_info "
        "pins, LCD, keys and LEDs)", BoardName("a board name (default, bit, dock, go, duino, cube, amigo, m5stickv, "
                                          "unitv)", metavar="NAME"), cli="--board", project="board", plugin="board")
    sensor: str = opt(
        "ov2640", "the board's camera chip: ov2640 (most boards: set_windowing keeps the top-left corner) | gc0328 "
        "(set_windowing honours (x, y) and centres (w, h); sensor.get_id() is the GC0328's)",
        Choice(("ov2640", "gc0328")), cli="--sensor", project="sensor", plugin="sensor")
    uart_loop: tuple[str, ...] = opt(
        (), "wire a UART's TX to a UART's RX so the script receives what it sends, e.g. 1:2 (UART1 -> UART2) or "
        "1:1 (repeatable)", Words("TX:RX", "a list of \"TX:RX\" wires, e.g. [\"1:2\"]"),
        cli="--uart-loop", project="uart-loop", plugin="uart_loop")
    frames: int | None = opt(
        None, "end cleanly after N camera frames (LCD frames for scripts without a camera)", COUNT,
        cli="--frames", project="frames", plugin="frames", tests_inherit=False)
    timeout: float | None = opt(
        None, "end cleanly after S seconds", SECONDS, cli="--timeout", project="timeout", plugin="timeout")
    ai_memory: str = opt(
        "device", "what happens when the KPU reads AI memory older than the pixels (default: device)",
        Choice(("device", "warn", "strict")), cli="--ai-memory", project="ai-memory", plugin="ai_memory")
    firmware: str = opt(
        "full", "memory budget of the emulated firmware for models (default: full)",
        Choice(("full", "minimum", "none")), cli="--firmware", project="firmware", plugin="firmware")
    kpu_log: Path | None = opt(
        None, "write one JSON line per kpu.forward/run_yolo2 call (model, shapes, boxes)", PathKind("FILE"),
        cli="--kpu-log", project="kpu-log", plugin=Not("result.kpu_calls holds every call"), tests_inherit=False)
    show_ai: str | None = opt(
        None, "a second view with the AI buffers the KPU read, next to the LCD: window (default) | record:PATH | none",
        Output("\"window\", \"none\" or \"record:PATH\"", metavar="SINK", nargs_const="window"),
        cli="--show-ai", project="show-ai",
        plugin=Not("a view for people: keep_ai=True keeps the buffers in result.kpu_inputs"), tests_inherit=False)
    ide: int | None = opt(
        None, "serve an IDE page (frame buffer, terminal, histogram, thresholds, buttons) at http://127.0.0.1:PORT/ "
        f"(default {DEFAULT_IDE_PORT}; 0: any free port)", PORT, cli="--ide",
        project=Not("the IDE page belongs to one session at the terminal, not to every run of the project"),
        plugin=Not("a test runs without a person at the page"))
    ide_host: str | None = opt(
        None, "address the IDE page listens on (default 127.0.0.1; any other needs the token in the printed address)",
        Text("an address", metavar="ADDR"), cli="--ide-host",
        project=Not("letting other machines reach the page is asked for at the terminal, never by a file"),
        plugin=Not("a test runs without a person at the page"))
    audio_out: str | None = opt(
        None, "I2S sound: wav:PATH | speaker | none (default: a WAV file in the temp folder, made at the first sound)",
        Text("a sink as --audio-out takes it (wav:PATH, speaker, none)", metavar="SINK"),
        cli="--audio-out", project="audio-out", plugin=Not("result.audio holds every sound the script played"),
        tests_inherit=False)
    audio_in: str | None = opt(
        None, "what the microphone hears: silence (default) | tone[:HZ[:AMPLITUDE]] | FILE.wav | mic",
        Text("a source as --audio-in takes it (silence, tone:HZ, FILE.wav, mic)", metavar="SOURCE"),
        cli="--audio-in", project="audio-in", plugin="audio_in", tests_inherit=False)
    overwrite: bool = opt(
        False, "let --lcd record:, --show-ai record:, --audio-out wav: and --kpu-log replace a file maixemu did "
        "not write (without it only maixemu's own earlier outputs are replaced)", Flag(), cli="--overwrite",
        project=Not("replacing files maixemu did not write is asked for at the terminal, for one run, never by a "
                    "file; maixemu's own earlier outputs are replaced without it"),
        plugin=Not("a test writes no output file: its LCD frames, sound and KPU calls are kept in its result"),
        tests_inherit=False)
    debug: bool = opt(
        False, "show maixemu's own frames in tracebacks", Flag(), cli="--debug",
        project=Not("a choice for one run while hunting a bug in maixemu"), plugin="debug")
    quiet: bool = opt(
        False, "no [maixemu] notices", Flag(), cli="--quiet", short="-q", project="quiet", plugin="quiet")

    # -- one merge rule ---------------------------------------------------------------------------
    def merged(self, project: Mapping[str, Any] | None = None, given: Mapping[str, Any] | None = None) -> RunSpec:
        """This spec (the defaults) overridden by a project file's values, then by what was given
        (both by field name; :func:`read_project_table`, :func:`given_by_cli`, :func:`given_by_plugin`)."""
        values: dict[str, Any] = {}
        for layer in (project or {}, given or {}):
            for name, value in layer.items():
                below = values.get(name, getattr(self, name))
                values[name] = option_of(name).kind.merge(below, value)
        spec = replace(self, **values)
        if spec.ide_host and spec.ide is None:  # --ide-host alone asks for the page too
            spec = replace(spec, ide=DEFAULT_IDE_PORT)
        return spec

    FIELDS: ClassVar[tuple[str, ...]]


RunSpec.FIELDS = tuple(f.name for f in fields(RunSpec))


def option_of(name: str) -> Option:
    """The :class:`Option` of field ``name``."""
    for item in fields(RunSpec):
        if item.name == name:
            return item.metadata["option"]
    raise KeyError(name)


def options() -> list[tuple[str, Option]]:
    """Every field's name and :class:`Option`, in the order of the command line's help."""
    return [(item.name, item.metadata["option"]) for item in fields(RunSpec)]


def _named(word: str, names: Mapping[str, str]) -> tuple[str | None, str | None]:
    """The field a surface's ``word`` names (``names``: word -> field), else None and the nearest word."""
    if word in names:
        return names[word], None
    close = difflib.get_close_matches(word, list(names), n=1)
    return None, close[0] if close else None


# ---------------------------------------------------------------------------------- the command line
def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``maixemu run``'s option flags: one per field with a command-line name (an unset flag is None)."""
    for name, option in options():
        if isinstance(option.cli, Not):
            continue
        flags = [option.short, option.cli] if option.short else [option.cli]
        arguments = {"dest": name, "help": option.help, "default": None, **option.kind.arguments()}
        parser.add_argument(*flags, **arguments)


class OptionError(ValueError):
    """A value a surface was given is not allowed (the text is the whole line to show)."""


def given_by_cli(args: argparse.Namespace) -> dict[str, Any]:
    """The fields the command line set, read and checked (:class:`OptionError` naming the flag)."""
    given: dict[str, Any] = {}
    for name, option in options():
        value = getattr(args, name, None)
        if isinstance(option.cli, Not) or value is None:
            continue
        value = option.kind.from_cli(value)
        try:
            option.kind.check(value)
        except ValueError:
            raise OptionError(f"{option.cli} must be {option.kind.allowed}") from None
        given[name] = value
    return given


# ---------------------------------------------------------------------------------- the project file
class ProjectValueError(ValueError):
    """A project file's key with a value that is not allowed: ``key = value: must be ...`` (or the
    entry of a table that is wrong); the caller adds the file's name."""


def project_keys() -> dict[str, str]:
    """Project-file key -> field name, in the order of the command line's help."""
    return {option.project: name for name, option in options() if not isinstance(option.project, Not)}


def _not_a_key(key: str) -> str | None:
    """Why ``key`` (an option's flag without its dashes, e.g. ``overwrite``) has no project-file key, or
    None when it names no such option."""
    for name, option in options():
        flag = option.cli.lstrip("-") if isinstance(option.cli, str) else name.replace("_", "-")
        if isinstance(option.project, Not) and key in (flag, name, name.replace("_", "-")):
            return option.project.why
    return None


def read_project_table(table: Mapping[str, Any], base: Path, *, prefix: str = "") -> dict[str, Any]:
    """A project file's table as field values, every key checked (:class:`ProjectValueError` naming
    the key as the file writes it: ``prefix`` is ``"tool.maixemu."`` in a ``pyproject.toml``)."""
    keys = project_keys()
    values: dict[str, Any] = {}
    for key, value in table.items():
        name, close = _named(key, keys)
        if name is None:
            kept_out = _not_a_key(key)
            if kept_out is not None:  # an option of the command line only: say why, not just "unknown"
                raise ProjectValueError(f"{prefix}{key}: not a maixemu option in a project file ({kept_out})")
            hint = f"did you mean {close}? " if close else ""
            raise ProjectValueError(f"{prefix}{key}: not a maixemu option ({hint}allowed: {', '.join(keys)})")
        kind = option_of(name).kind
        try:
            read = kind.from_project(value, base)
            kind.check(read)
        except EntryError as exc:
            raise ProjectValueError(f"{prefix}{key}.{exc.key}: {exc.why}") from None
        except MissingPath as exc:
            raise ProjectValueError(f"{prefix}{key}: {exc}") from None
        except ValueError:
            if isinstance(kind, FlashMap):
                raise ProjectValueError(f"{prefix}{key}: must be {kind.allowed}") from None
            raise ProjectValueError(f"{prefix}{key} = {value!r}: must be {kind.allowed}") from None
        values[name] = read
    return values


def inherited_by_tests(values: Mapping[str, Any]) -> dict[str, Any]:
    """The project file's values the pytest plugin takes as its defaults (see ``Option.tests_inherit``)."""
    return {name: value for name, value in values.items()
            if option_of(name).tests_inherit and not isinstance(option_of(name).plugin, Not)}


# ---------------------------------------------------------------------------------- the pytest plugin
def plugin_keywords() -> dict[str, str]:
    """Plugin keyword -> field name."""
    return {option.plugin: name for name, option in options() if not isinstance(option.plugin, Not)}


def given_by_plugin(keywords: Mapping[str, Any], *, call: str = "maixpy.run") -> dict[str, Any]:
    """The fields ``maixpy.run(**keywords)`` set, read and checked. ``None`` leaves a field to the
    project file and the defaults, except ``timeout=None`` (no time limit). An unknown keyword is
    Python's own ``TypeError``, with the nearest keyword suggested."""
    names = plugin_keywords()
    given: dict[str, Any] = {}
    for keyword, value in keywords.items():
        name, close = _named(keyword, names)
        if name is None:
            raise TypeError(f"{call}() got an unexpected keyword argument {keyword!r}"
                            + (f"; did you mean {close!r}?" if close else ""))
        kind = option_of(name).kind
        if value is None:
            if kind is SECONDS:  # timeout=None: no time limit
                given[name] = None
            continue
        try:
            read = kind.from_plugin(value)
            kind.check(read)
        except (TypeError, ValueError):
            raise OptionError(f"{call}({keyword}={value!r}): must be {kind.allowed}") from None
        given[name] = read
    return given


def plugin_parameters() -> list[inspect.Parameter]:
    """The plugin's option keywords as keyword-only parameters (for ``maixpy.run``'s signature)."""
    return [inspect.Parameter(option.plugin, inspect.Parameter.KEYWORD_ONLY, default=None)
            for _, option in options() if isinstance(option.plugin, str)]


def plugin_help() -> str:
    """One line per plugin keyword: the keyword and its help (for ``maixpy.run``'s docstring)."""
    return "\n".join(f"* ``{option.plugin}``: {option.help}" for _, option in options()
                     if isinstance(option.plugin, str))


def with_plugin_signature(function: Callable[..., Any]) -> Callable[..., Any]:
    """Give ``function(..., **options)`` a signature naming every plugin keyword (``help()``, IDEs)."""
    signature = inspect.signature(function)
    params = [p for p in signature.parameters.values() if p.kind is not inspect.Parameter.VAR_KEYWORD]
    own = {p.name for p in params}
    params += [p for p in plugin_parameters() if p.name not in own]
    function.__signature__ = signature.replace(parameters=params)  # type: ignore[attr-defined]
    return function


__all__ = ["DEFAULT_IDE_PORT", "Kind", "Not", "Option", "OptionError", "ProjectValueError", "RunSpec",
           "add_arguments", "given_by_cli", "given_by_plugin", "inherited_by_tests", "option_of", "options",
           "parse_flash_mapping", "plugin_help", "plugin_keywords", "project_keys", "read_project_table",
           "with_plugin_signature"]
