"""Former home of the device importer; it is :mod:`maixemu.session.importer` now (kept as a re-export)."""

from .session.importer import MICROPYTHON_ALIASES, ScriptImporter, compile_source, no_module, read_source

__all__ = ["MICROPYTHON_ALIASES", "ScriptImporter", "compile_source", "no_module", "read_source"]
