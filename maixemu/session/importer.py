"""The ``__import__`` a MaixPy script sees: the device's module search, kept to ``/sd`` and ``/flash``.

Order, as on the board: MaixPy firmware modules (``sensor``, ``image``, ``os`` = ``uos``, ``io`` =
``uio`` ...), then the script's own modules and packages found along the board's ``sys.path``
(``''`` and ``'.'`` = the device working directory, ``/sd``, ``/flash`` as ``_boot.py`` sets them,
and whatever the script appends), then Python's own library for what MicroPython also has
(``math``, ``json``, ...). The script's modules are kept in the board's ``sys.modules``: deleting
one there makes the next import load it again, as on the device.

Why a device importer and not CPython's: a script's modules must see the device's ``open`` and
``os`` (their writes land where the run keeps them), be read through the board's storage (a module a
script wrote into ``/flash`` is importable, a link that leads out of a mount is refused like
``open()`` refuses it), and leave nothing behind (no ``__pycache__`` in the user's folders). So:

* a module name is a dotted sequence of identifiers, never a path (``__import__('/abs/mod')`` is
  ``ImportError: no module named '/abs/mod'``, MicroPython's wording);
* packages (``mypkg/__init__.py``), their submodules and relative imports inside them are served
  here, with the run's builtins;
* Python's library is reached only where it lives: a name the host would import from anywhere
  else (the PC's working directory under ``python -m``, ``PYTHONPATH``) is not a module;
* ``import maixemu`` (the top-level package only, after the script's own modules) is maixemu's own
  channel, wherever maixemu is installed: ``maixemu.advice(e)`` reads the advice kept beside a
  device exception (no board has the module, so a script uses it only under maixemu).
"""

from __future__ import annotations

import ast
import builtins
import importlib
import importlib.util
import os
import site
import sys
import sysconfig
import types
import warnings
from functools import lru_cache
from pathlib import Path
from typing import Any, Sequence

from ..firmware import device_modules
from ..firmware.state import BoardState
from ..host.storage import Mount
from ..micropython_source import expand_indent_tabs, fix_bytes_literals, fold_consts, route_format_method

#: MicroPython "u" modules that are plain CPython modules under another name.
MICROPYTHON_ALIASES = {
    "ubinascii": "binascii",
    "ucollections": "collections",
    "uerrno": "errno",
    "uhashlib": "hashlib",
    "uheapq": "heapq",
    "ure": "re",
    "urandom": "random",
    "uselect": "select",
    "uzlib": "zlib",
    "uarray": "array",
    "umath": "math",
    "ucryptolib": "hashlib",
}

#: Library modules MicroPython has built in (C modules: fixed globals), under either name: a script
#: gets them read-only, as on the board. Other library modules get a view of their own per board.
MICROPYTHON_BUILT_IN = frozenset(MICROPYTHON_ALIASES) | frozenset(MICROPYTHON_ALIASES.values()) | {
    "math", "cmath", "json", "array", "builtins"}


def read_source(data: bytes) -> str:
    """Script text as MicroPython reads it: UTF-8 (a leading byte-order mark is skipped)."""
    return fix_bytes_literals(data.decode("utf-8-sig", errors="replace"))


def compile_source(text: str, filename: str):
    """The code object of a script or of a module it imports, compiled as MicroPython's compiler
    reads it: ``NAME = const(value)`` folds without an import, ``b'{}'.format(x)`` works (bytes have
    ``format``), and indentation mixing tabs and spaces counts a tab to the next multiple of 8 (tried only when CPython rejects the file, and
    CPython's own error stands when the expanded text fails too)."""
    with warnings.catch_warnings():  # MicroPython accepts escapes CPython warns about
        warnings.simplefilter("ignore", SyntaxWarning)
        warnings.simplefilter("ignore", DeprecationWarning)
        try:
            tree = ast.parse(text, filename, "exec")
        except IndentationError as first:  # TabError is one
            try:
                tree = ast.parse(expand_indent_tabs(text), filename, "exec")
            except SyntaxError:
                raise first from None
        return compile(route_format_method(fold_consts(tree, filename)), filename, "exec")


@lru_cache(maxsize=1)
def _library_roots() -> tuple[str, ...]:
    """Folders Python's own library and installed packages live in."""
    roots: set[str] = set()
    paths = sysconfig.get_paths()
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        if paths.get(key):
            roots.add(os.path.realpath(paths[key]))
    try:
        roots.update(os.path.realpath(p) for p in site.getsitepackages())
    except AttributeError:  # some virtualenvs' site module lacks it
        pass
    user = getattr(site, "getusersitepackages", lambda: None)()
    if user:
        roots.add(os.path.realpath(user))
    return tuple(r.rstrip(os.sep) + os.sep for r in roots)


def _from_library(top: str) -> bool:
    """True when the host would import ``top`` from Python's library (or it is built in)."""
    if top in sys.builtin_module_names:
        return True
    module = sys.modules.get(top)
    if module is not None:
        origin = getattr(module, "__file__", None)
    else:
        try:
            spec = importlib.util.find_spec(top)
        except (ImportError, ValueError):
            return False
        if spec is None:
            return False
        origin = spec.origin if spec.has_location else None
        if origin is None and spec.submodule_search_locations:
            locations = list(spec.submodule_search_locations)
            origin = locations[0] if locations else None
    if origin is None:
        return True  # built in or frozen
    real = os.path.realpath(origin)
    return any(real.startswith(root) for root in _library_roots())


def device_module(name: str) -> types.ModuleType:
    """The firmware module a script's ``import name`` gets (``"sensor"``, ``"time"``, ``"Maix"``...);
    KeyError for a name the firmware does not have."""
    from ..firmware import registry

    target = registry.MAIXPY_MODULES.get(name)
    if target is None:
        raise KeyError(f"{name!r} is not a MaixPy module maixemu provides")
    return device_modules.view(name, importlib.import_module(target))


def device_module_names(*, stdlib_names: bool = True) -> list[str]:
    """The MaixPy module names the firmware serves; ``stdlib_names=False`` leaves out those that are
    also CPython modules (``time``, ``os``, ``sys``, ``gc``, ``io``, ``_thread``)."""
    from ..firmware import registry

    return [n for n in registry.MAIXPY_MODULES if stdlib_names or n not in registry.SHADOWS_STDLIB]


class DeviceImportError(ModuleNotFoundError):
    """MicroPython's ``ImportError`` for a missing module (it has no ModuleNotFoundError): shown and
    named ``ImportError``, still a ``ModuleNotFoundError`` for host code that checks for one."""


DeviceImportError.__name__ = DeviceImportError.__qualname__ = "ImportError"
DeviceImportError.__module__ = "builtins"


def no_module(name: str) -> ModuleNotFoundError:
    """The ImportError of a name with no module, worded as MicroPython words it
    (``ImportError: no module named 'cpufreq'``); a MaixPy firmware module maixemu does not emulate
    yet says so, in the same one line. Never a maixemu path."""
    from .outcome import NOT_EMULATED_REASONS

    top = name.partition(".")[0]
    if top in NOT_EMULATED_REASONS:
        return DeviceImportError(f"no module named '{name}' ('{top}' {NOT_EMULATED_REASONS[top]})", name=name)
    return DeviceImportError(f"no module named '{name}'", name=name)


class ScriptImporter:
    """The ``__import__`` of one run (see the module docstring).

    ``extra_folders`` are searched after the device path, read-only: the script's own folder when
    it is not mounted (``--sd`` elsewhere), so ``import helper`` next to ``main.py`` still works.
    """

    def __init__(self, run_builtins: dict[str, Any], board: BoardState, extra_folders: Sequence[Path] = ()):
        from ..firmware import registry

        self.mapping = dict(registry.MAIXPY_MODULES)
        self.builtins = run_builtins
        self.storage = board.storage
        self.system = board.system
        self.extra = [Mount("script", folder) for folder in extra_folders]
        #: the script's own modules by dotted name: the board's ``sys.modules``
        self.local_modules: dict[str, types.ModuleType] = board.system.sys_modules
        #: the host files the script's modules were read from (for its tracebacks)
        self.host_files: set[str] = set()
        self._places: dict[str, list[tuple[Mount, tuple[str, ...]]]] = {}
        self._real_import = builtins.__import__
        self._builtins_module: types.ModuleType | None = None

    # -- where modules are looked for -----------------------------------------------------------
    def _search_places(self) -> list[tuple[Mount, tuple[str, ...]]]:
        places: list[tuple[Mount, tuple[str, ...]]] = []
        entries: list[object] = list(self.system.sys_path)  # (a script may put anything there)
        for entry in entries:
            if not isinstance(entry, str):
                continue
            device = self.storage.cwd if entry in ("", ".") else entry
            try:
                mount, parts, _ = self.storage.locate(device + "/")
            except OSError:
                continue
            place = (mount, tuple(parts))
            if place not in places:
                places.append(place)
        places.extend((mount, ()) for mount in self.extra)
        return places

    def _find(self, name: str, places) -> tuple[Mount, tuple[str, ...], bool] | None:
        """(mount, path of the source file, is a package) of ``name`` in the first place that has it."""
        for mount, folder in places:
            for parts, package in (((*folder, name, "__init__.py"), True), ((*folder, f"{name}.py"), False)):
                try:
                    entry = mount.lookup(parts)
                except OSError:
                    continue
                if entry.exists and not entry.is_dir:
                    return mount, tuple(parts), package
        return None

    # -- loading --------------------------------------------------------------------------------
    def _load(self, fullname: str, found: tuple[Mount, tuple[str, ...], bool]) -> types.ModuleType:
        mount, parts, package = found
        with mount.open(parts, "rb") as handle:
            data = handle.read()
        host = mount.read_path(parts)
        device_file = (f"/{mount.name}/" + "/".join(parts)) if mount.name in ("sd", "flash") else str(host)
        module = types.ModuleType(fullname)
        module.__file__ = device_file
        module.__dict__["__builtins__"] = self.builtins
        if package:
            module.__path__ = [device_file.rsplit("/", 1)[0]]
            module.__package__ = fullname
            self._places[fullname] = [(mount, parts[:-1])]
        else:
            module.__package__ = fullname.rpartition(".")[0]
        self.host_files.add(str(host))
        # Registered before it runs and kept when it fails, as MicroPython's import does
        # (mp_obj_new_module, then do_load with no clean-up): a second import of a module whose
        # first import raised (even a SyntaxError) gets the half-made module, no error.
        self.local_modules[fullname] = module
        parent, _, child = fullname.rpartition(".")
        if parent in self.local_modules:
            setattr(self.local_modules[parent], child, module)
        exec(compile_source(read_source(data), str(host)), module.__dict__)
        return module

    def _import_local(self, fullname: str) -> types.ModuleType | None:
        """The script's module or package ``fullname`` (its parents first), or None if it has none."""
        if fullname in self.local_modules:
            return self.local_modules[fullname]
        parent, _, name = fullname.rpartition(".")
        if parent:
            if self._import_local(parent) is None:
                return None
            places = self._places.get(parent)
            if places is None:  # a plain module has no submodules
                return None
        else:
            places = self._search_places()
        found = self._find(name, places)
        return None if found is None else self._load(fullname, found)

    def _builtins(self) -> types.ModuleType:
        """``import builtins`` gives the run's builtins (the device's ``open`` and ``__import__``)."""
        if self._builtins_module is None:
            module = types.ModuleType("builtins")
            module.__dict__.update(self.builtins)
            self._builtins_module = module
        return self._builtins_module

    # -- the hook --------------------------------------------------------------------------------
    def _absolute(self, name: str, globals_: dict | None, level: int) -> str | None:
        """The absolute name of a relative import inside the script's own packages, else None."""
        package = (globals_ or {}).get("__package__")
        if package is None and globals_ is not None:
            package = globals_.get("__name__", "") if "__path__" in globals_ else globals_.get("__name__", "").rpartition(".")[0]
        if not package or package.partition(".")[0] not in self.local_modules:
            return None
        base = package.split(".")
        if level - 1 >= len(base):
            raise ImportError("attempted relative import beyond top-level package")
        base = base[: len(base) - (level - 1)]
        return ".".join(base + ([name] if name else []))

    def _with_fromlist(self, top: types.ModuleType, fullname: str, fromlist) -> types.ModuleType:
        target = self.local_modules[fullname] if fromlist else top
        if fromlist and fullname in self._places:  # a package: ``from pkg import submodule``
            names = list(fromlist)
            if "*" in names:
                names = list(getattr(target, "__all__", []))
            for item in names:
                if isinstance(item, str) and item.isidentifier() and not hasattr(target, item):
                    self._import_local(f"{fullname}.{item}")
        return target

    def __call__(self, name: str, globals=None, locals=None, fromlist=(), level: int = 0):
        if level > 0:
            absolute = self._absolute(name, globals, level)
            if absolute is None:
                return self._real_import(name, globals, locals, fromlist, level)
            module = self._import_local(absolute)
            if module is None:
                raise no_module(absolute)
            return self._with_fromlist(self.local_modules[absolute.partition(".")[0]], absolute,
                                       fromlist or ("__name__",))
        if not isinstance(name, str) or not name or not all(p.isidentifier() for p in name.split(".")):
            raise no_module(str(name))  # a module name is a name, never a host path
        top, _, rest = name.partition(".")
        target = self.mapping.get(top)
        if target is not None:  # firmware modules win over the script's files and folders (/sd/audio/)
            module = device_modules.view(top, importlib.import_module(target))
            if rest:
                try:
                    submodule = importlib.import_module(f"{target}.{rest}")
                except ModuleNotFoundError:
                    raise no_module(name) from None  # the device's name, never maixemu's module path
                return module if not fromlist else device_modules.view(name, submodule)
            return module
        if top in ("builtins", "ubuiltins") and not rest:
            return self._builtins()
        if top in MICROPYTHON_ALIASES and not rest:
            return device_modules.host_view(importlib.import_module(MICROPYTHON_ALIASES[top]), writable=False,
                                            name=top)
        if top not in sys.builtin_module_names:
            local = self._import_local(top)
            if local is not None:
                if rest and self._import_local(name) is None:
                    raise no_module(name)
                return self._with_fromlist(local, name, fromlist)
        if name == "maixemu":  # maixemu's own channel (``maixemu.advice(e)``), wherever it is installed
            return importlib.import_module("maixemu")
        if not _from_library(top):
            raise no_module(name)
        # This board's view of the library module, never the process's object (pytest's own ``re``).
        return device_modules.host_view(self._real_import(name, globals, locals, fromlist, level),
                                        writable=top not in MICROPYTHON_BUILT_IN)
