"""Board parts register themselves (issue 25): ``firmware/state.py`` names no part; each part's own
module declares its slot (``@board_part("sensor") class SensorState``); a board makes a part at its
first use and closes every part it made that has ``close()``, the last made first."""

from __future__ import annotations

import ast
import importlib
import pkgutil
from pathlib import Path

import pytest

import maixemu.firmware
from maixemu.firmware import state
from maixemu.session.board import Board, BoardConfig
from maixemu.session.spec import RunSpec

STATE_PY = Path(state.__file__)


def _every_firmware_module() -> list[str]:
    """Import every firmware module, so every part is declared (parts are declared on import)."""
    names = [m.name for m in pkgutil.walk_packages(maixemu.firmware.__path__, "maixemu.firmware.")]
    for name in names:
        importlib.import_module(name)
    return names


def test_state_imports_no_firmware_module():
    """Not even inside a function or under TYPE_CHECKING: the board knows its parts only by registry."""
    tree = ast.parse(STATE_PY.read_text(encoding="utf-8"))
    wrong = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level == 1 or (node.level == 0 and (node.module or "").startswith("maixemu.firmware")):
                wrong.append(f"line {node.lineno}: from {'.' * node.level}{node.module or ''} import ...")
        elif isinstance(node, ast.Import):
            wrong += [f"line {node.lineno}: import {a.name}" for a in node.names if a.name.startswith("maixemu.firmware")]
    assert not wrong, "firmware/state.py imports firmware modules:\n" + "\n".join(wrong)


def test_every_part_is_declared_by_its_own_module():
    _every_firmware_module()
    declared = state.declared_parts()
    # the parts the firmware keeps state in (issue 11's list): all declared, none by state.py
    assert {"sensor", "camera", "panel", "clock", "kpu", "audio", "video", "network", "touch", "irq", "uart",
            "font", "jpeg_encoder", "threads"} <= set(declared)
    assert all(cls.__module__ != state.__name__ for cls in declared.values())


def test_every_part_is_made_at_first_use_once_and_typed():
    _every_firmware_module()
    board = state.BoardState()
    declared = state.declared_parts()
    assert not set(declared) & set(vars(board)), "a part was made before anything used it"
    for name, cls in declared.items():
        made = board.part(cls)
        assert isinstance(made, cls) and getattr(board, name) is made and board.part(cls) is made
        assert board.parts()[name] is made
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        board.nothing  # noqa: B018 - an unknown name stays an AttributeError
    with pytest.raises(TypeError, match="not a board part"):
        board.part(int)


def test_a_part_is_declared_once():
    class Other:
        pass

    with pytest.raises(TypeError, match="declared twice"):
        state.board_part("sensor")(Other)
    assert state.declared_parts()["sensor"].__name__ == "SensorState"


def test_board_close_closes_every_part_that_has_close_last_made_first(tmp_path, monkeypatch):
    _every_firmware_module()
    closed: list[str] = []
    closable = {name: cls for name, cls in state.declared_parts().items() if callable(getattr(cls, "close", None))}
    assert {"camera", "audio", "video", "kpu", "network", "font"} <= set(closable)
    for name, cls in closable.items():
        original = cls.close

        def close(self, _name=name, _original=original):
            closed.append(_name)
            _original(self)

        monkeypatch.setattr(cls, "close", close)
    board = Board(BoardConfig(RunSpec(camera="synthetic", lcd="none", quiet=True), project=tmp_path))
    with board:
        made = [name for name in vars(board.state) if name in state.declared_parts()]
        for name, cls in state.declared_parts().items():  # a script that uses every part
            board.state.part(cls)
        order = [name for name in vars(board.state) if name in closable]
        assert closed == []
    assert set(made) >= {"camera", "sensor", "kpu", "audio"}  # what the session plugs in at open
    assert closed == list(reversed(order))
    assert sorted(closed) == sorted(closable)


def test_one_failing_close_does_not_keep_the_others_open(monkeypatch):
    _every_firmware_module()
    from maixemu.firmware.chip.audio_device import AudioDevice
    from maixemu.firmware.video import VideoState

    board = state.BoardState()
    board.part(AudioDevice)
    video = board.part(VideoState)
    closed = []
    monkeypatch.setattr(VideoState, "close", lambda self: (_ for _ in ()).throw(OSError("disk gone")))
    monkeypatch.setattr(AudioDevice, "close", lambda self: closed.append("audio"))
    with pytest.raises(OSError, match="disk gone"):
        board.close_parts()
    assert closed == ["audio"] and board.video is video
