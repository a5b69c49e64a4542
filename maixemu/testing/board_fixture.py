"""``maixpy_board``: the firmware modules of a freshly booted board, for calling device code directly.

``board.sensor``, ``board.image``, ``board.lcd``, ``board.KPU``, ``board.time``, ... are the modules a
MaixPy script would import (``board.module("Maix")`` for any other name). While the board is active
the names that do not shadow CPython modules are also importable (``import sensor``);
``time``/``os``/``sys``/``gc``/``_thread`` stay CPython's — use ``board.time``. The board is built
by :class:`maixemu.session.Board` like every other: its LCD keeps frames in memory, its camera is
the scripted one, ``/sd`` and ``/flash`` are folders of the test.
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
import types
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from ..session.board import Board as SessionBoard
from ..session.board import BoardConfig, BoardState, Plugs
from ..session.spec import RunSpec
from ..session.importer import device_module, device_module_names
from .run import CameraSpec, MemorySink, _source_factory


class Board:
    """The firmware modules of a freshly booted board (see the module docstring)."""

    def __init__(self, workdir: Path, *, camera: CameraSpec, flash: Mapping[int, str | os.PathLike],
                 ai_memory: str, firmware: str):
        self.workdir = workdir
        self.sd_dir = workdir / "sd"
        self.flash_dir = workdir / "flash"
        self.sink = MemorySink()
        spec = RunSpec(flash={int(a): Path(p) for a, p in flash.items()}, ai_memory=ai_memory, firmware=firmware,
                       quiet=True)
        self._session = SessionBoard(BoardConfig(spec, project=workdir, plugs=Plugs(
            sd_dir=self.sd_dir, flash_dir=self.flash_dir, camera=_source_factory(camera, print), display=self.sink,
            keep_kpu_calls=True)))
        self._installed: dict[str, types.ModuleType | None] = {}

    @property
    def state(self) -> BoardState:
        """The board's whole state (``maixemu.firmware.state.BoardState``)."""
        return self._session.state

    @property
    def lcd_frames(self) -> list[np.ndarray]:
        return self.sink.frames

    @property
    def kpu_calls(self) -> list[dict[str, Any]]:
        return self.state.kpu.log.calls

    def module(self, name: str) -> types.ModuleType:
        """The module a script's ``import name`` gets (``"sensor"``, ``"time"``, ``"Maix"``...)."""
        return device_module(name)

    def __getattr__(self, name: str) -> types.ModuleType:
        if name.startswith("_"):
            raise AttributeError(name)
        try:
            return self.module(name)
        except KeyError:
            raise AttributeError(name) from None

    def set_camera(self, camera: CameraSpec) -> None:
        """Change the scripted camera (the next frame comes from it)."""
        self.state.camera.plug(_source_factory(camera, print))

    def __enter__(self) -> Board:
        for folder in (self.sd_dir, self.flash_dir):
            folder.mkdir(parents=True, exist_ok=True)
        self._session.__enter__()
        for name in device_module_names(stdlib_names=False):
            self._installed[name] = sys.modules.get(name)
            sys.modules[name] = device_module(name)
        return self

    def __exit__(self, *exc: object) -> None:
        for name, previous in self._installed.items():
            if previous is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = previous
        self._installed.clear()
        self._session.close()


@contextlib.contextmanager
def board(workdir: str | os.PathLike | None = None, *, camera: CameraSpec = None,
          flash: Mapping[int, str | os.PathLike] | None = None, ai_memory: str = "device",
          firmware: str = "full") -> Iterator[Board]:
    """A freshly booted board for in-process tests (``with board(camera=[img]) as b: b.sensor...``)."""
    with contextlib.ExitStack() as stack:
        folder = Path(workdir) if workdir is not None else Path(stack.enter_context(tempfile.TemporaryDirectory()))
        yield stack.enter_context(Board(folder, camera=camera, flash=flash or {}, ai_memory=ai_memory,
                                        firmware=firmware))


__all__ = ["Board", "board"]
