"""The MaixPy stubs (``stubs/typings``) against ``maixemu.firmware``, and mypy over ``samples/`` with them.

1. Names: every public name of each firmware module the runner serves (``registry.MAIXPY_MODULES``),
   and every public member of its classes, is in the stub; every name the stub declares exists in
   the implementation. Where both sides have introspectable signatures without ``*args`` (the
   MicroPython-style argument parsing of most image/lcd functions), the parameter names match.
   Emulator-only hooks are listed in ``EMULATOR_ONLY`` and must stay out of the stubs.
2. mypy (``pip install -e .[dev]``) type-checks every script in ``samples/`` with the stubs on
   MYPYPATH without errors, the stubs themselves pass ``--strict``, and the stubs make mypy report
   the device pitfalls they describe (``run_yolo2`` may return None).
"""

from __future__ import annotations

import __future__
import ast
import importlib
import inspect
import keyword
import re
import types
from pathlib import Path

import pytest

from maixemu.firmware.registry import MAIXPY_MODULES, SHADOWS_STDLIB
from maixemu.runner import MICROPYTHON_ALIASES

ROOT = Path(__file__).resolve().parents[2]
TYPINGS = ROOT / "stubs" / "typings"
SAMPLES = ROOT / "samples"
FIRMWARE = "maixemu.firmware"

#: Public names of the implementation that are emulator hooks or constants, not MaixPy API.
EMULATOR_ONLY: dict[str, set[str]] = {
    "utime": {"CPU_HZ", "TICKS_MAX", "TICKS_PERIOD", "IDLE_SLICE_NS", "BOOT_TO_MAIN_MS", "ClockState", "strftime"},
    "mgc": {"HEAP_SIZE", "TYPICAL_ALLOC"},
    "uos": {"open_device"},
    "board": {"PROFILES", "BoardProfile", "board_profiles", "current_profile", "profile", "profile_controls",
              "profile_pins", "use_profile"},
    "machine": {"ScriptReset"},
    "lcd": {"DEFAULT_FREQ", "DEFAULT_SIZES", "DEV_NONE", "DEV_SHIELD", "DEV_CUBE_IPS_240x240",
            "DEV_M5STICK", "DEV_TWATCH", "DEV_CONVERTER", "FONT_W", "FONT_H",
            "PanelState", "boot", "current_sink", "flush", "pump", "screen"},
    "sensor": {"FRAME_MS", "RESOLUTION", "SKIP_TIME_MAX_FRAMES", "SUPPORTED_PIXFORMATS",
               "WINDOWING_MODES", "CameraPort", "SensorState", "fit_frame", "windowing_mode"},
    "image": {"ImageBase", "BasicMixin", "BinaryMixin", "BlobMixin", "ChannelHelpers", "DrawMixin", "ExtraMixin", "FilterMixin",
              "FindMixin", "GeometryMixin", "K210Mixin", "MathOpsMixin", "PoolMixin", "StatsMixin"},
    "Maix.utils": {"DEFAULT_GC_HEAP_SIZE", "HEAP_FREE"},
    "network": {"EMULATED_SSID", "EMULATED_RSSI", "ESP32_FIRMWARE_VERSION", "ESP32_ADC_CHANNELS", "NetworkState"},
    "usocket": {"DEFAULT_TIMEOUT_S"},
    "touchscreen": {"CALIBRATION_SIZE", "DEFAULT_CALIBRATION", "TouchState"},
    "modules": {"FUNC_GPIOHS0", "FUNC_GPIOHS31", "FUNC_GPIO0", "FUNC_GPIO7", "I2C_DEVICE_MAX"},
    "Maix.freq": {"FREQ_CPU_MAX", "FREQ_CPU_MIN", "FREQ_KPU_MAX", "FREQ_KPU_MIN", "ScriptReset"},
}


# ------------------------------------------------------------------------------ which stub is which
def _stub_name_for(target: str) -> str:
    """The MaixPy name whose stub holds ``target``'s API: the one not shadowing CPython (utime, uos)."""
    names = sorted(n for n, t in MAIXPY_MODULES.items() if t == target)
    own = [n for n in names if n not in SHADOWS_STDLIB]
    return (own or names)[0]


def _stub_path(name: str) -> Path | None:
    parts = name.split(".")
    for candidate in (TYPINGS.joinpath(*parts).with_suffix(".pyi"), TYPINGS.joinpath(*parts, "__init__.pyi")):
        if candidate.is_file():
            return candidate
    return None


def _short(target: str) -> str:
    return target[len(FIRMWARE) + 1:]


# ------------------------------------------------------------------------------ reading a stub
class _Stub:
    """Top-level names of a .pyi, its classes' members, and the parameter names of its functions."""

    def __init__(self, name: str):
        path = _stub_path(name)
        assert path is not None, f"no stub for {name!r} in {TYPINGS}"
        self.name, self.path = name, path
        self.tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        self.names: dict[str, ast.AST] = {}
        self.functions: dict[str, list[ast.FunctionDef]] = {}
        for node in self.tree.body:
            self._add(node)

    def _add(self, node: ast.AST) -> None:
        if isinstance(node, ast.FunctionDef):
            self.names.setdefault(node.name, node)
            self.functions.setdefault(node.name, []).append(node)
        elif isinstance(node, ast.ClassDef):
            self.names[node.name] = node
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            self.names[node.target.id] = node
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    self.names[target.id] = node
        elif isinstance(node, ast.ImportFrom):
            for alias in node.names:
                if alias.name == "*":  # ``from utime import *`` re-exports that stub's names
                    module = ("." * node.level) + (node.module or "")
                    star = _Stub(module.lstrip("."))
                    for key, value in star.names.items():
                        self.names.setdefault(key, value)
                    for key, defs in star.functions.items():
                        self.functions.setdefault(key, defs)
                elif alias.asname == alias.name:  # explicit re-export (PEP 484 stub rule)
                    self.names[alias.name] = node

    def public(self) -> set[str]:
        return {n for n in self.names if not n.startswith("_")}


def _class_members(cls_node: ast.ClassDef) -> tuple[set[str], dict[str, list[ast.FunctionDef]]]:
    names: set[str] = set()
    functions: dict[str, list[ast.FunctionDef]] = {}
    for node in cls_node.body:
        if isinstance(node, ast.FunctionDef):
            names.add(node.name)
            functions.setdefault(node.name, []).append(node)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return names, functions


def _stub_params(fn: ast.FunctionDef, method: bool) -> list[str]:
    args = [a.arg for a in (*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs)]
    static = any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in fn.decorator_list)
    if method and not static and args:
        args = args[1:]
    return args


def _impl_params(obj) -> list[str] | None:
    """Parameter names, or None where they cannot be compared: ``*args`` parsing, builtins, and
    CPython functions served as they are (``ujson.dumps`` is ``json.dumps``; the stub documents
    MicroPython's narrower signature)."""
    if not (getattr(obj, "__module__", None) or "").startswith(FIRMWARE):
        return None
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return None
    params = list(sig.parameters.values())
    if any(p.kind is p.VAR_POSITIONAL for p in params):
        return None
    return [p.name for p in params if p.kind is not p.VAR_KEYWORD]


def _params_match(got: list[str], expected: list[str], overloaded: bool) -> bool:
    """Same names in order; an ``@overload`` variant may stop early (``value()`` / ``value(v)``)."""
    return got == expected[:len(got)] if overloaded else got == expected


# ------------------------------------------------------------------------------ the implementation
def _impl_public(module: types.ModuleType) -> dict[str, object]:
    """Public API names of a firmware module (``__all__``, else what it defines or takes from siblings)."""
    declared = getattr(module, "__all__", None)
    names = list(declared) if declared is not None else [n for n in vars(module) if not n.startswith("_")]
    result: dict[str, object] = {}
    for name in names:
        value = getattr(module, name)
        if isinstance(value, types.ModuleType):
            if value.__name__.startswith(module.__name__ + "."):
                result[name] = value  # a submodule that is API: Maix.utils, Maix.freq, Maix.config
            continue
        if isinstance(value, __future__._Feature):
            continue
        if declared is None and (inspect.isclass(value) or callable(value)):
            if not (getattr(value, "__module__", None) or "").startswith(FIRMWARE):
                continue  # typing.Any, contextlib.contextmanager, ... imported for the implementation
        result[name] = value
    return result


def _impl_class_members(cls: type) -> set[str]:
    names: set[str] = set()
    for klass in cls.__mro__:
        if (klass.__module__ or "").startswith(FIRMWARE):
            names.update(n for n in vars(klass) if not n.startswith("_") and not keyword.iskeyword(n))
    return names


def _instance_attribute(cls: type, name: str) -> bool:
    for klass in cls.__mro__:
        init = vars(klass).get("__init__")
        if init is not None and (klass.__module__ or "").startswith(FIRMWARE):
            try:
                if re.search(rf"\bself\.{re.escape(name)}\s*[:=]", inspect.getsource(init)):
                    return True
            except (OSError, TypeError):
                pass
    return False


def _cases() -> list[tuple[str, str]]:
    """(stub name, implementation module) for every served module and its API submodules."""
    cases = []
    for target in sorted(set(MAIXPY_MODULES.values())):
        stub = _stub_name_for(target)
        cases.append((stub, target))
        module = importlib.import_module(target)
        for name, value in _impl_public(module).items():
            if isinstance(value, types.ModuleType):
                cases.append((f"{stub}.{name}", value.__name__))
    return cases


CASES = _cases()


@pytest.mark.parametrize(("stub_name", "target"), CASES, ids=[c[0] for c in CASES])
def test_stub_names_match_implementation(stub_name: str, target: str) -> None:
    module = importlib.import_module(target)
    stub = _Stub(stub_name)
    impl = _impl_public(module)
    hooks = EMULATOR_ONLY.get(_short(target), set())
    assert not hooks & stub.public(), f"emulator-only hooks in {stub.path.name}: {sorted(hooks & stub.public())}"

    missing = sorted(set(impl) - hooks - stub.public())
    assert not missing, f"{stub.path.name} lacks {target} names: {missing}"
    unknown = sorted(n for n in stub.public() if not hasattr(module, n))
    assert not unknown, f"{stub.path.name} declares names {target} does not have: {unknown}"

    problems: list[str] = []
    for name in sorted(stub.public() & set(impl)):
        value, node = impl[name], stub.names[name]
        if isinstance(node, ast.ClassDef) and inspect.isclass(value):
            members, functions = _class_members(node)
            public_members = {m for m in members if not m.startswith("_")}
            lacking = sorted(_impl_class_members(value) - public_members)
            if lacking:
                problems.append(f"{name} lacks members {lacking}")
            extra = sorted(m for m in public_members
                           if not hasattr(value, m) and not _instance_attribute(value, m))
            if extra:
                problems.append(f"{name} declares members the implementation lacks: {extra}")
            for member, defs in functions.items():
                if member.startswith("_") and member != "__init__":
                    continue
                impl_obj = vars(value).get(member) if member == "__init__" else getattr(value, member, None)
                if member == "__init__" and impl_obj is None:
                    continue
                if isinstance(impl_obj, (staticmethod, classmethod)):
                    impl_obj = impl_obj.__func__
                expected = _impl_params(impl_obj) if impl_obj is not None else None
                if expected is not None and member != "__init__" and not isinstance(
                        inspect.getattr_static(value, member), staticmethod):
                    expected = expected[1:]  # self
                elif expected is not None and member == "__init__":
                    expected = expected[1:]
                for fn in defs:
                    got = _stub_params(fn, method=True)
                    if expected is not None and not _params_match(got, expected, overloaded=len(defs) > 1):
                        problems.append(f"{name}.{member}{tuple(got)} != implementation {tuple(expected)}")
        elif name in stub.functions and callable(value) and not inspect.isclass(value):
            expected = _impl_params(value)
            defs = stub.functions[name]
            for fn in defs:
                got = _stub_params(fn, method=False)
                if expected is not None and not _params_match(got, expected, overloaded=len(defs) > 1):
                    problems.append(f"{name}{tuple(got)} != implementation {tuple(expected)}")
    assert not problems, f"{stub.path.name}:\n  " + "\n  ".join(problems)


def test_standard_library_names_reexport_the_micropython_modules() -> None:
    """``time``/``os`` stubs are the u-modules; ``gc`` has its own; ``sys``, ``io`` and ``struct`` have
    none (mypy forbids a user ``sys`` stub, typeshed's ``open`` needs CPython's ``io``, and a user
    ``struct``/``socket`` would shadow the library modules the same way; ``ustruct``/``usocket`` have
    the stubs)."""
    for name in sorted(SHADOWS_STDLIB):
        canonical = _stub_name_for(MAIXPY_MODULES[name])
        if name == canonical:
            assert _stub_path(name) is not None
        elif name in ("sys", "io", "struct", "socket"):
            assert _stub_path(name) is None, f"a user stub named {name} breaks mypy (shadows a library module)"
        else:
            text = _stub_path(name).read_text(encoding="utf-8")
            assert f"from {canonical} import *" in text, f"{name}.pyi must re-export {canonical}"


@pytest.mark.parametrize("alias", sorted(MICROPYTHON_ALIASES))
def test_micropython_aliases_reexport_their_cpython_module(alias: str) -> None:
    """``uio``, ``ure``, ... are served as CPython's ``io``, ``re``, ...: their stubs say just that."""
    path = _stub_path(alias)
    assert path is not None, f"no stub for {alias}"
    assert f"from {MICROPYTHON_ALIASES[alias]} import *" in path.read_text(encoding="utf-8")


def test_boot_globals_template_declares_the_boot_globals() -> None:
    """``stubs/extras/__builtins__.pyi`` (for pyright) names exactly what ``_boot.py`` leaves in globals."""
    from maixemu.firmware.registry import BOOT_GLOBALS

    tree = ast.parse((ROOT / "stubs" / "extras" / "__builtins__.pyi").read_text(encoding="utf-8"))
    declared: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.Import):
            declared.update({a.asname: a.name for a in node.names if a.asname})
        elif isinstance(node, ast.ImportFrom):
            declared.update({a.asname: f"{node.module}:{a.name}" for a in node.names if a.asname})
    assert set(declared) == set(BOOT_GLOBALS)
    for name, spec in BOOT_GLOBALS.items():
        module, _, attribute = spec.partition(":")
        got_module, _, got_attribute = declared[name].partition(":")
        assert got_attribute == attribute, name
        if module in MAIXPY_MODULES:
            assert MAIXPY_MODULES.get(got_module) == MAIXPY_MODULES[module], f"{name}: {declared[name]} is not {spec}"
        else:  # a module the script's import takes from Python's library (json)
            assert got_module == module, f"{name}: {declared[name]} is not {spec}"


def test_every_stub_file_belongs_to_a_served_module() -> None:
    served = set(MAIXPY_MODULES) | set(MICROPYTHON_ALIASES) | {c[0] for c in CASES}
    for path in TYPINGS.rglob("*.pyi"):
        parts = path.relative_to(TYPINGS).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        assert name in served, f"{path} is not a module the runner serves"


# ------------------------------------------------------------------------------ 2. mypy
@pytest.fixture(scope="module")
def run_mypy(tmp_path_factory, request):
    api = pytest.importorskip("mypy.api", reason="mypy is not installed (pip install -e .[dev])")
    work = tmp_path_factory.mktemp("mypy")
    config = work / "mypy.ini"
    config.write_text(f"[mypy]\nmypy_path = {TYPINGS}\ncache_dir = {work / 'cache'}\n", encoding="utf-8")

    def run(*args: str) -> tuple[int, str]:
        stdout, stderr, status = api.run(["--config-file", str(config), "--no-error-summary",
                                          "--show-error-codes", *args])
        return status, stdout + stderr

    return run


def test_samples_type_check_with_the_stubs(run_mypy) -> None:
    samples = sorted(str(p) for p in SAMPLES.glob("*.py"))
    assert samples
    status, out = run_mypy(*samples)
    assert status == 0, out


def test_stubs_pass_mypy_strict(run_mypy) -> None:
    status, out = run_mypy("--strict", str(TYPINGS))
    assert status == 0, out


def test_stubs_make_mypy_report_device_pitfalls(run_mypy, tmp_path) -> None:
    script = tmp_path / "pitfalls.py"
    script.write_text(
        "import sensor, image, lcd, time, gc\n"
        "import KPU as kpu\n"
        "from maix import KPU\n"
        "task = kpu.load(0x300000)\n"
        "img = sensor.snapshot()\n"
        "for obj in kpu.run_yolo2(task, img):\n"          # line 6: None when nothing is found
        "    img.draw_rectangle(obj.rect())\n"
        "lcd.draw_string(0, 0, 'x', (255, 0, 0))\n"       # line 8: lcd.draw_string takes raw ints only
        "boxes = KPU().regionlayer_yolo2()\n"
        "for box in boxes:\n"                             # the class API returns a list: fine
        "    print(box[0], time.clock().fps(), gc.mem_free())\n",
        encoding="utf-8")
    status, out = run_mypy(str(script))
    assert status == 1, out
    errors = [line for line in out.splitlines() if ": error:" in line]
    assert any(":6:" in e and "None" in e for e in errors), out
    assert any(":8:" in e and "draw_string" in e for e in errors), out
    assert len(errors) == 2, out
