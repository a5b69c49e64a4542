"""Type stubs for MaixPy (K210, MaixPy-v1 firmware) scripts, as run by maixemu.

Installing this distribution puts PEP 561 stub-only packages (``sensor-stubs``, ``image-stubs``,
``KPU-stubs``, ...) into site-packages; mypy and pyright pick them up by themselves. The names
that are also CPython standard modules (``time``, ``gc``, ``os``) cannot be overridden that way:
point ``MYPYPATH`` (mypy) or ``stubPath`` (pyright/Pylance) at :data:`TYPINGS` for those
(``python -m maixpy_stubs`` prints it).
"""

from pathlib import Path

#: A plain stub tree (``sensor.pyi``, ``time.pyi``, ``Maix/__init__.pyi`` ...) for MYPYPATH / stubPath.
TYPINGS = Path(__file__).resolve().parent / "typings"

#: Template for pyright: copy to a project root as ``__builtins__.pyi`` to declare the boot globals
#: (``board_info``, ``fm``, ``GPIO``, ``time`` ...) that MaixPy scripts use without importing.
BUILTINS_TEMPLATE = Path(__file__).resolve().parent / "__builtins__.pyi"

__all__ = ["TYPINGS", "BUILTINS_TEMPLATE"]
