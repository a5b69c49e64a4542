"""The board is the only run state (issue 11, ``docs/DESIGN.md``): firmware, session and testing
modules keep nothing at module level that a run changes, and the old reset family is gone.

A module-level list a function appends to, a dict it fills, a ``global`` it rebinds: each would
be state that outlives a run and leaks into the next (the bugs issue 11 lists came from exactly
that). Run state goes into a part of ``firmware.state.BoardState`` instead. The few exceptions are
named below with the reason: the accessor itself and caches of constant tables.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "maixemu"
#: the layers whose modules must keep no run state (host adapters are objects the board owns)
CHECKED = ("firmware", "session", "testing")
MUTATORS = {"append", "add", "update", "clear", "pop", "extend", "remove", "discard", "setdefault",
            "insert", "popitem"}
#: (module, name) -> why it may change at module level
ALLOWED = {
    ("firmware/state.py", "_active"): "the accessor: the stack of active boards",
    ("firmware/state.py", "_bound"): "the accessor: the board bound to each thread",
    ("firmware/state.py", "_default"): "the accessor: the board of firmware used outside any run",
    ("session/interrupt.py", "_stubborn"): "a cache of exception classes (types, not run state)",
    ("firmware/state.py", "_PARTS"): "the part registry: the slots part modules declare at import (classes)",
    ("firmware/state.py", "_SLOTS"): "the part registry: each declared class's slot (classes, not run state)",
    ("firmware/image/_core.py", "_image_class"): "the package's full Image class, declared once at import (a type)",
    ("firmware/lcd.py", "_GRAY_LUT"): "a constant table built on first use",
    ("firmware/mp/device_modules.py", "_facts"): "the module behind each view (weak keys; the views are the board's)",
    ("firmware/image/_jit.py", "_WARMUP"): "the kpu.warmup module, imported once (a module, not run state)",
    ("firmware/image/_jit.py", "_INSTALLED"): "the numba_installed function, imported once (a function, not run state)",
    ("firmware/image/_jit.py", "_LAST_ASKED"): "each thread's CPU clock for starting the compiled engine (the process's, as kpu.warmup's; no board state)",
}
#: the reset family issue 11 deletes (a new BoardState is the power-on reset)
RESET_FAMILY = re.compile(r"def configure\(|_reset_state|fresh_board|def reset_state\(")


def module_state_writes(path: Path) -> set[str]:
    """Names of module-level objects that functions of ``path`` rebind (``global``) or mutate."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    containers = set()
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        value = getattr(node, "value", None)
        if isinstance(value, (ast.List, ast.Dict, ast.Set, ast.Call)):
            containers |= {t.id for t in targets if isinstance(t, ast.Name)}
    found = set()
    for func in ast.walk(tree):
        if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for node in ast.walk(func):
            if isinstance(node, ast.Global):
                found |= set(node.names)
            elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in MUTATORS
                  and isinstance(node.func.value, ast.Name) and node.func.value.id in containers):
                found.add(node.func.value.id)
            elif isinstance(node, (ast.Assign, ast.AugAssign, ast.Delete)):
                targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target]
                for target in targets:
                    if (isinstance(target, (ast.Subscript, ast.Attribute)) and isinstance(target.value, ast.Name)
                            and target.value.id in containers):
                        found.add(target.value.id)
    return found


FILES = sorted(p for layer in CHECKED for p in (PACKAGE / layer).rglob("*.py"))


@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(PACKAGE)) for p in FILES])
def test_no_module_level_run_state(path: Path):
    rel = path.relative_to(PACKAGE).as_posix()
    writes = {name for name in module_state_writes(path) if (rel, name) not in ALLOWED}
    assert not writes, (f"{rel} changes module-level state {sorted(writes)}: put it in a part of the board "
                        "(firmware.state.BoardState) so a new board starts from power-on")


def test_the_reset_family_is_gone():
    hits = [f"{p.relative_to(PACKAGE)}:{n}: {line.strip()}" for p in sorted(PACKAGE.rglob("*.py"))
            for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if RESET_FAMILY.search(line)]
    assert not hits, "a new BoardState is the power-on reset; these still reset by hand:\n" + "\n".join(hits)


def test_the_allowed_exceptions_still_exist():
    """An allowance for a name no longer written is stale: drop it so it cannot hide a new one."""
    stale = [key for key in ALLOWED if key[1] not in module_state_writes(PACKAGE / key[0])]
    assert not stale, stale


def test_the_checker_finds_module_state(tmp_path):
    """The checker on a made-up module: a test that could never fail would prove nothing."""
    probe = tmp_path / "probe.py"
    probe.write_text("_hooks = []\n_cache = {}\n_n = 0\nLIMIT = 5\n"
                     "def add(f):\n    _hooks.append(f)\n"
                     "def put(k, v):\n    _cache[k] = v\n"
                     "def bump():\n    global _n\n    _n += 1\n"
                     "def read():\n    local = []\n    local.append(LIMIT)\n    return _cache.get(1)\n")
    assert module_state_writes(probe) == {"_hooks", "_cache", "_n"}
