"""``maixemu info`` tells V4 users the ``kpu.set_outputs`` call their script needs — and that call works."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from conftest import SHARED_DIR, shared_path
from maixemu.firmware import KPU as kpu
from maixemu.host import storage

V4_MODELS = sorted(p.name for p in (SHARED_DIR / "models" / "v4").glob("*.kmodel")) or ["(absent)"]
HINT = re.compile(r"kpu\.set_outputs\(task, (\d+), (\d+), (\d+), (\d+)\)")


@pytest.mark.parametrize("name", V4_MODELS)
def test_info_hint_is_accepted_by_set_outputs(name, tmp_path, capsys, board_state):
    model = shared_path("models", "v4", name)
    proc = subprocess.run([sys.executable, "-m", "maixemu", "info", str(model)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    hints = [tuple(int(v) for v in m.groups()) for m in HINT.finditer(proc.stdout)]
    assert hints, proc.stdout
    board_state.storage = storage.Storage(tmp_path, tmp_path, flash_map={0x300000: model})
    board_state.kpu.budget.firmware = "none"
    task = kpu.load(0x300000)
    assert [h[0] for h in hints] == list(range(len(hints)))
    for idx, w, h, ch in hints:
        assert kpu.set_outputs(task, idx, w, h, ch) is True
        assert kpu.set_outputs(task, idx, w + 1, h, ch) is False
    kpu.deinit(task)
