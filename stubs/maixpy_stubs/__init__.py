"""Type stubs for MaixPy (K210, MaixPy-v1 firmware) scripts, as run by maixemu.

Installing this distribution puts PEP 561 stub-only packages (``sensor-stubs``, ``image-stubs``,
``KPU-stubs``, ...) into site-packages; mypy and pyright pick them up by themselves. The names
that are also CPython standard modules (``time``, ``gc``, ``os``) cannot be overridden that way:
point ``MYPYPATH`` (mypy) or ``stubPath`` (pyright/Pylance) at :func:`typings_dir` for those
(``python -m maixpy_stubs`` prints it; ``--mypy-config`` prints a ``[mypy]`` section).

The tree is installed as data files under ``<prefix>/share/maixpy-stubs/typings``, not inside
site-packages: mypy refuses any MYPYPATH entry inside site-packages.
"""

from __future__ import annotations

from importlib import metadata
from pathlib import Path

DISTRIBUTION = "maixpy-v1-stubs"
_HERE = Path(__file__).resolve().parent
#: Template for pyright: copy to a project root as ``__builtins__.pyi`` to declare the boot globals
#: (``board_info``, ``fm``, ``GPIO``, ``time`` ...) that MaixPy scripts use without importing.
BUILTINS_TEMPLATE = _HERE / "__builtins__.pyi"
if not BUILTINS_TEMPLATE.exists():  # running from the source tree (editable install)
    BUILTINS_TEMPLATE = _HERE.parent / "extras" / "__builtins__.pyi"


def typings_dir() -> Path:
    """The plain stub tree (``sensor.pyi``, ``time.pyi``, ``Maix/__init__.pyi`` ...) for MYPYPATH / stubPath.

    The installed data files (``<prefix>/share/maixpy-stubs/typings``, found through the
    distribution's file list, so ``--user`` and ``--prefix`` installs work too), else the source
    tree next to this package (``stubs/typings`` in a checkout or an editable install).
    """
    source_tree = _HERE.parent / "typings"
    if (_HERE.parent / "setup.py").is_file() and source_tree.is_dir():
        return source_tree
    try:
        files = metadata.distribution(DISTRIBUTION).files or []
    except metadata.PackageNotFoundError:
        files = []
    for file in files:
        parts = file.parts
        if file.name == "sensor.pyi" and parts[-3:-1] == ("maixpy-stubs", "typings"):
            return Path(str(file.locate())).resolve().parent
    raise FileNotFoundError(f"the MaixPy stub tree of {DISTRIBUTION} is not installed (reinstall with "
                            "`pip install maixpy-v1-stubs` or `pip install ./stubs`, not with --target)")


def mypy_config() -> str:
    """A ``[mypy]`` section (mypy.ini, setup.cfg or .mypy.ini) that puts the tree on mypy's path."""
    return f"[mypy]\nmypy_path = {typings_dir()}\n"


def __getattr__(name: str):
    if name == "TYPINGS":  # the constant of earlier versions, now looked up when asked for
        return typings_dir()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["typings_dir", "mypy_config", "BUILTINS_TEMPLATE"]
