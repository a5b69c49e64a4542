"""``maixemu.tools.emulated_cpu`` reports the products of the compiled path, whatever mode loaded the model.

Since layers load on the numpy plans and take their compiled path in the background
(``kpu.warmup``), a model the tool loads has no compiled path yet; the tool prepares each layer's
plan itself. Run here in-process (no qemu): the report is this CPU's, and is checked for its form.
"""

from __future__ import annotations

import pytest

from conftest import shared_path


def test_the_report_names_compiled_products_in_the_background_mode(monkeypatch):
    from maixemu.kmodel.kpu.fast import compiled_available
    from maixemu.tools import emulated_cpu

    if not compiled_available():
        pytest.skip("the compiled engine (numba) is not installed: every layer is on the numpy path")
    monkeypatch.setenv("MAIXEMU_KERNELS", "background")
    monkeypatch.delenv("MAIXEMU_KPU_ENGINE", raising=False)
    lines = emulated_cpu.report([shared_path("models", "v3", "face_detect_320x240.kmodel")])
    assert lines[0].startswith("probe: u8s8 ")
    model = lines[1]
    assert model.startswith("face_detect_320x240.kmodel: ") and "CHW" not in model, model
    counts = dict(part.rsplit(" x", 1) for part in model.split(": ", 1)[1].split(";")[0].split(", "))
    assert counts.get("dw") == "11", model  # the depthwise layers
    assert sum(int(n) for n in counts.values()) == 23, model
    assert model.endswith("int8 sums differing from the exact ones on random rows: 0"), model
