"""Read the names a MaixPy/CanMV firmware build offers from its C sources (a developer tool).

Every MicroPython port module and class is a C table of ``{ MP_ROM_QSTR(MP_QSTR_name), value }``
entries: ``*_module_globals_table`` behind a ``mp_obj_module_t``'s ``.globals`` and
``*_locals_dict_table`` behind a ``mp_obj_type_t``'s ``.locals_dict``. Starting from the modules
``mpconfigport.h`` lists in ``MICROPY_PORT_BUILTIN_MODULES``, this walks those tables (into the
classes and sub-modules they hold) and returns ``{"machine": [...], "machine.I2C": [...], ...}``.
Preprocessor conditions are not evaluated: the result is the union of the build options, i.e.
what a full build has.

The test ``tests/firmware/test_firmware_names.py`` compares the result with maixemu's modules;
``python -m maixemu.tools.firmware_names`` rewrites the committed snapshot it also checks.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

#: firmware sources: (bare git dir below /work/.mirror, ref, folder of the port, mpconfigport.h)
SOURCES = {
    "maixpy": ("sipeed+MaixPy-v1/repo", "HEAD", "components/micropython/port/src",
               "components/micropython/port/include/mpconfigport.h"),
    "canmv": ("kendryte+canmv/repo", "main", "components/micropython/port/src",
              "components/micropython/port/include/mpconfigport.h"),
}
#: generated or third-party trees whose tables are no firmware module's (lvgl's bindings alone are
#: tens of thousands of names)
SKIPPED_FOLDERS = ("lvgl/lv_bindings", "/lib/", "mbedtls")

_COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
_TABLE = re.compile(r"const\s+mp_(?:rom_)?map_elem_t\s+(\w+)\s*\[\s*\]\s*=\s*\{(.*?)\n\s*\}\s*;", re.S)
_ENTRY = re.compile(r"MP_(?:ROM|OBJ_NEW)_QSTR\s*\(\s*MP_QSTR_(\w+)\s*\)\s*,\s*([^}]*)\}")
_DICT = re.compile(r"MP_DEFINE_CONST_DICT\s*\(\s*(\w+)\s*,\s*(\w+)\s*\)")
#: a class: an mp_obj_type_t, or a network driver's mod_network_nic_type_t wrapping one
_TYPE = re.compile(r"const\s+(?:mp_obj_type_t|mod_network_nic_type_t)\s+(\w+)\s*=\s*\{(.*?)\n\s*\}\s*;", re.S)
_MODULE = re.compile(r"const\s+mp_obj_module_t\s+(\w+)\s*=\s*\{(.*?)\}\s*;", re.S)
_CAST = r"(?:\(\s*[\w\s]+\**\s*\))?\s*&\s*(\w+)"  # "(mp_obj_dict_t*)&x", "(mp_obj_t) &x", "&x"
_GLOBALS = re.compile(r"\.globals\s*=\s*" + _CAST)
_LOCALS = re.compile(r"\.locals_dict\s*=\s*" + _CAST)
_TYPE_NAME = re.compile(r"\.name\s*=\s*MP_QSTR_(\w+)")
_BUILTIN = re.compile(r"MP_OBJ_NEW_QSTR\s*\(\s*MP_QSTR_(\w+)\s*\)\s*,\s*\(\s*mp_obj_t\s*\)\s*&\s*(\w+)")
_POINTER = re.compile(r"&\s*(\w+)")


@dataclass
class _Tables:
    """The tables, dicts, types and modules of the sources, per file: ``static`` symbols such as
    ``globals_dict`` repeat in many files, so a name is looked up in the referring file first."""

    #: kind ("table", "dict", "type", "module") -> symbol -> [(file, value)]
    symbols: dict[str, dict[str, list[tuple[str, object]]]] = field(
        default_factory=lambda: {"table": {}, "dict": {}, "type": {}, "module": {}, "type_name": {}})

    def _add(self, kind: str, name: str, path: str, value: object) -> None:
        self.symbols[kind].setdefault(name, []).append((path, value))

    def find(self, kind: str, name: str | None, path: str) -> tuple[str, object] | None:
        found = self.symbols[kind].get(name or "", [])
        for where, value in found:
            if where == path:
                return where, value
        return found[0] if found else None

    def read(self, path: str, text: str) -> None:
        text = _COMMENT.sub("", text)
        for name, body in _TABLE.findall(text):
            self._add("table", name, path, [(key, value.strip()) for key, value in _ENTRY.findall(body)])
        for name, table in _DICT.findall(text):
            self._add("dict", name, path, table)
        for name, body in _TYPE.findall(text):
            locals_dict = _LOCALS.search(body)
            self._add("type", name, path, locals_dict.group(1) if locals_dict else None)
            type_name = _TYPE_NAME.search(body)
            if type_name:
                self._add("type_name", type_name.group(1), path, name)
        for name, body in _MODULE.findall(text):
            globals_dict = _GLOBALS.search(body)
            self._add("module", name, path, globals_dict.group(1) if globals_dict else None)

    def entries(self, dict_symbol: str | None, path: str) -> tuple[str, list[tuple[str, str]]]:
        """(file, entries) of the table behind ``dict_symbol`` as seen from ``path``."""
        found = self.find("dict", dict_symbol, path)
        table_name, where = (found[1], found[0]) if found else (dict_symbol, path)
        table = self.find("table", table_name, where)  # type: ignore[arg-type]
        return (table[0], table[1]) if table else (path, [])  # type: ignore[return-value]


def _git(git_dir: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(git_dir), *args], check=True, capture_output=True,
                          text=True, errors="replace").stdout


def _walk(tables: _Tables, prefix: str, dict_symbol: str | None, path: str, out: dict[str, list[str]],
          seen: set[str], module: bool = True) -> None:
    names: list[str] = []
    where, entries = tables.entries(dict_symbol, path)
    for key, value in entries:
        if key.startswith("__") and key.endswith("__") and key not in ("__init__", "__call__"):
            continue  # __name__, __del__, __enter__ ...: protocol slots, not names scripts call
        names.append(key)
        pointer = _POINTER.search(value)
        target = pointer.group(1) if pointer else None
        if target is not None and target not in seen:
            as_type = tables.find("type", target, where)
            found = as_type or tables.find("module", target, where)
            if found is not None:
                _walk(tables, f"{prefix}.{key}", found[1], found[0], out, seen | {target},  # type: ignore[arg-type]
                      module=as_type is None)
                continue
        if not module:
            continue
        # a constructor function standing for a class of the same name in the same file
        # (``image.Image`` is ``py_image_load_image_obj``; its methods are ``py_image_type``'s)
        named = tables.find("type_name", key, where)
        if named is not None and named[0] == where and named[1] not in seen:
            found = tables.find("type", named[1], where)  # type: ignore[arg-type]
            if found is not None:
                _walk(tables, f"{prefix}.{key}", found[1], found[0], out, seen | {named[1]},  # type: ignore[arg-type]
                      module=False)
    if names:
        out[prefix] = sorted(set(names))


def firmware_names(git_dir: Path, ref: str, port_dir: str, config_header: str) -> dict[str, list[str]]:
    """``{"module[.Class]": sorted attribute names}`` of the firmware at ``ref`` of ``git_dir``."""
    tables = _Tables()
    paths = _git(git_dir, "ls-tree", "-r", "--name-only", ref, "--", port_dir).split()
    for path in paths:
        if path.endswith(".c") and not any(skip in path for skip in SKIPPED_FOLDERS):
            tables.read(path, _git(git_dir, "show", f"{ref}:{path}"))
    config = _COMMENT.sub("", _git(git_dir, "show", f"{ref}:{config_header}"))
    out: dict[str, list[str]] = {}
    for module_name, symbol in _BUILTIN.findall(config):
        found = tables.find("module", symbol, "")
        if found is not None:
            _walk(tables, module_name, found[1], found[0], out, {symbol})  # type: ignore[arg-type]
    return dict(sorted(out.items()))


def all_firmware_names(mirror_root: Path) -> dict[str, dict[str, list[str]]]:
    """The names of every firmware in :data:`SOURCES` whose mirror is present under ``mirror_root``."""
    found = {}
    for build, (repo, ref, port_dir, header) in SOURCES.items():
        git_dir = mirror_root / repo
        if git_dir.is_dir():
            found[build] = firmware_names(git_dir, ref, port_dir, header)
    return found


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mirror", default="/work/.mirror", type=Path)
    parser.add_argument("--out", type=Path, default=Path("tests/firmware/firmware_names.json"))
    args = parser.parse_args(argv)
    names = all_firmware_names(args.mirror)
    args.out.write_text(json.dumps(names, indent=1, sort_keys=True) + "\n")
    print(f"wrote {args.out}: " + ", ".join(f"{b} {len(n)} tables" for b, n in names.items()))


if __name__ == "__main__":
    main()
