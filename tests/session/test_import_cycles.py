"""The firmware's import graph has no cycle, counting every import statement (issue 25).

Every ``import``/``from ... import`` in ``maixemu/firmware`` that can run counts — at module level
or inside functions, relative or absolute — so no cycle can hide in a function-local import. Imports
under ``if TYPE_CHECKING:`` never run (mypy's view of a mixin's host class): they do not count. A module that needs something of a module that needs it back moves the
shared piece down into a leaf (``state``'s part registry, ``pixformat``'s constants, ...) instead.

An edge goes to the module an import names: ``from .x import y`` is an edge to ``x``, or to ``x.y``
when ``y`` is a submodule. The implicit import of a package's ``__init__`` before its submodules
is not an edge: a package that re-exports its submodules would otherwise form a cycle with each of
them that imports a sibling, though none of them can run before the other.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "maixemu"


def module_names(folder: Path, root: Path) -> dict[str, Path]:
    """Dotted name -> file of every module under ``folder`` (packages by their ``__init__``)."""
    names = {}
    for path in sorted(folder.rglob("*.py")):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        names[".".join(parts)] = path
    return names


def imported(path: Path, module: str, known: set[str]) -> set[str]:
    """The modules of ``known`` that ``path`` (module ``module``) imports anywhere in its text."""
    is_package = path.name == "__init__.py"
    found: set[str] = set()
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    typing_only = {id(inner) for node in ast.walk(tree) if isinstance(node, ast.If) and _is_type_checking(node.test)
                   for stmt in node.body for inner in ast.walk(stmt)}
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".") if is_package else module.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            for alias in node.names:
                found.add(f"{target}.{alias.name}" if f"{target}.{alias.name}" in known else target)
    edges = set()
    for name in found:
        parts = name.split(".")
        while parts and ".".join(parts) not in known:  # ``import a.b.c`` of a name inside a module
            parts.pop()
        if parts and ".".join(parts) != module:
            edges.add(".".join(parts))
    return edges


def _is_type_checking(test: ast.expr) -> bool:
    """``if TYPE_CHECKING:`` / ``if typing.TYPE_CHECKING:``."""
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def import_graph(folder: Path, root: Path = PACKAGE) -> dict[str, set[str]]:
    """Module -> the modules it imports, for every module under ``folder``."""
    names = module_names(folder, root)
    return {name: imported(path, name, set(names)) for name, path in names.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's, iterative), sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, targets = work[-1]
            for target in targets:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph.get(target, ())))))
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return sorted(found)


def _describe(component: list[str], graph: dict[str, set[str]]) -> str:
    inside = set(component)
    edges = [f"  {a} -> {b}" for a in component for b in sorted(graph[a] & inside)]
    return f"{len(component)} modules:\n" + "\n".join(edges)


def test_the_firmware_imports_form_no_cycle():
    graph = import_graph(PACKAGE / "firmware")
    assert len(graph) > 100  # the walk found the firmware (a wrong path would pass vacuously)
    found = cycles(graph)
    assert not found, "import cycles in maixemu/firmware:\n" + "\n".join(_describe(c, graph) for c in found)


def test_the_checker_finds_a_cycle_through_a_function_level_import(tmp_path):
    """The checker itself, on a fake package: a cycle closed inside a function, a relative and an
    absolute import and a ``from . import module`` count; a ``TYPE_CHECKING`` import does not."""
    root = tmp_path / "maixemu"
    firmware = root / "firmware"
    (firmware / "sub").mkdir(parents=True)
    for name, text in {"__init__.py": "", "a.py": "from . import b\n",
                       "b.py": "def f():\n    from maixemu.firmware.sub import c\n",
                       "sub/__init__.py": "from . import c\n",
                       "sub/c.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .. import top\n"
                                   "def g():\n    from ..a import x\n",
                       "leaf.py": "import os\n", "top.py": "from .sub.c import y\nfrom . import leaf\n"}.items():
        (firmware / name).write_text(text)
    graph = import_graph(firmware, root)
    assert graph["maixemu.firmware.b"] == {"maixemu.firmware.sub.c"}
    assert graph["maixemu.firmware.top"] == {"maixemu.firmware.sub.c", "maixemu.firmware.leaf"}
    assert cycles(graph) == [["maixemu.firmware.a", "maixemu.firmware.b", "maixemu.firmware.sub.c"]]
    (firmware / "sub" / "c.py").write_text("import os\n")
    assert cycles(import_graph(firmware, root)) == []
