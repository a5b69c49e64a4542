"""The import rules of ``docs/DESIGN.md``, checked on every import statement of the package (also the
ones inside functions): dependencies point ``commands/testing → session → firmware → kmodel`` and
``session/firmware → host``; ``evaluate`` runs its device path on a session board.

* ``kmodel`` imports nothing else of maixemu (a pure library: no images, cameras or MicroPython);
* ``host`` imports nothing of ``firmware``, ``session``, ``testing`` or the commands (only the
  chip's facts from ``kmodel``);
* ``firmware`` reads the board through ``firmware.state``, never the session that built it;
* ``testing`` (the pytest plugin) only composes ``session`` and ``host``;
* nothing imports ``maixemu.tools`` (developer tools), except the tools themselves.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "maixemu"

#: layer -> the layers it may import (itself always). Top-level modules are layers of their own.
ALLOWED: dict[str, set[str]] = {
    "kmodel": set(),
    "host": {"kmodel"},  # the chip's facts (kmodel.k210): the flash size
    "firmware": {"kmodel", "host"},
    "session": {"firmware", "kmodel", "host", "micropython_source"},
    "testing": {"session", "host"},
    "evaluate": {"session", "firmware", "kmodel", "host", "progress", "floatmodel"},  # its device path runs on a board
    "floatmodel": set(),  # TFLite/ONNX operator lists (maixemu check, eval --layers): a leaf like kmodel
    "check": {"floatmodel", "kmodel"},  # nncase's rules over a float model or a kmodel: no firmware, no session
    "commands": {"session", "firmware", "kmodel", "host", "evaluate", "progress", "check", "floatmodel"},
    "tools": {"session", "firmware", "kmodel", "host", "progress"},
    "progress": set(),  # the long commands' progress bars (tqdm): a leaf every command may use
    "micropython_source": set(),
    "runner": {"session", "firmware"},
    "script_importer": {"session"},
    "pytest_plugin": {"testing"},
    "cli": {"commands", "session", "__init__"},
    "__main__": {"cli"},
    "__init__": set(),
    "data": set(),  # MaixPy scripts bundled as data (the default sample)
    "samples": set(),  # the MaixPy samples shipped with the package (scripts, not library code)
}


def _module_name(path: Path, root: Path = PACKAGE) -> tuple[str, bool]:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    is_package = parts[-1] == "__init__"
    if is_package:
        parts = parts[:-1]
    return ".".join(parts), is_package


def _imports(path: Path, root: Path = PACKAGE) -> list[tuple[int, str]]:
    """(line, dotted maixemu module) of every import in ``path``, relative ones resolved."""
    module, is_package = _module_name(path, root)
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".") if is_package else module.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if node.module is None:  # ``from . import x``: x is a module, or a name of the package
                found += [(node.lineno, f"{target}.{alias.name}" if _is_module(f"{target}.{alias.name}", root)
                           else target) for alias in node.names]
            else:
                found.append((node.lineno, target))
    return [(line, name) for line, name in found if name == "maixemu" or name.startswith("maixemu.")]


def _is_module(dotted: str, root: Path) -> bool:
    path = root.parent.joinpath(*dotted.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def _layer(dotted: str) -> str:
    parts = dotted.split(".")
    if len(parts) == 1:
        return "__init__"
    return parts[1]


def violations(path: Path, root: Path = PACKAGE) -> list[str]:
    """The imports of ``path`` that break the layering, one line each."""
    own = _layer(_module_name(path, root)[0])
    allowed = ALLOWED.get(own, set())
    wrong = []
    for line, target in _imports(path, root):
        layer = _layer(target)
        if layer == own or layer in allowed:
            continue
        wrong.append(f"line {line}: {target} ({own} may import {sorted(allowed) or 'nothing'} besides itself)")
    return wrong


FILES = sorted(PACKAGE.rglob("*.py"))


def test_every_module_belongs_to_a_known_layer():
    unknown = sorted({_layer(_module_name(p)[0]) for p in FILES} - set(ALLOWED))
    assert not unknown, f"modules outside the layers of docs/DESIGN.md: {unknown}"


@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(PACKAGE)) for p in FILES])
def test_imports_follow_the_layers(path: Path):
    wrong = violations(path)
    assert not wrong, f"{path.relative_to(PACKAGE)} breaks the layering:\n" + "\n".join(wrong)


def test_the_checker_finds_upward_and_tools_imports(tmp_path):
    """The checker itself, on a fake package: a test that could never fail would prove nothing."""
    root = tmp_path / "maixemu"
    for layer, text in {"kmodel": "from ..firmware import sensor\n",
                        "host": "def f():\n    from maixemu.session import run\n",
                        "commands": "from ..tools import fuzz\n",
                        "testing": "from ..firmware.Maix import gpio\n",
                        "firmware": "from . import lcd\nfrom ..kmodel import load_kmodel\nfrom ..host import storage\n"}.items():
        (root / layer).mkdir(parents=True)
        (root / layer / "probe.py").write_text(text)
    assert violations(root / "kmodel" / "probe.py", root) and violations(root / "host" / "probe.py", root)
    assert violations(root / "commands" / "probe.py", root) and violations(root / "testing" / "probe.py", root)
    assert violations(root / "firmware" / "probe.py", root) == []
