"""``kpu.get_output(task, i)`` reads the output buffers of the model's last run (``py_kpu_get_output``
in MaixPy's ``Maix_kpu.c``): every output a run wrote, not only the one ``forward`` returned, typed
as the firmware types them; ERR_PARAM (V3) / ``get_output err`` (V4) past the last output."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import shared_path
from maixemu.firmware import KPU as kpu
from maixemu.firmware import image
from maixemu.firmware.state import current
from maixemu.host import storage
from maixemu.kmodel import load_kmodel
from maixemu.kmodel.build import Activation, ConvSpec, V3Builder


@pytest.fixture
def board(tmp_path):
    store = storage.Storage(tmp_path, tmp_path)
    current().storage = store
    return store


def _two_output_v3(path):
    """A V3 model with two outputs: a KPU conv's bytes (output 0) and their dequantized floats (1)."""
    b = V3Builder(main_mem_usage=32 + 128)
    weights = np.ones((2, 1, 1, 1), np.uint8)
    conv = ConvSpec(in_shape=(1, 4, 4), out_channels=2, kernel=1, weights=weights, activation=Activation.identity(),
                    src_row=0, dst_row=64, main_out=0)
    b.add_conv(conv)
    b.add_dequantize(0, 32, 32, scale=0.5, bias=1.0)
    b.add_output(0, 32)
    b.add_output(32, 128)
    path.write_bytes(b.build())
    return path


def test_v4_every_output_of_the_last_forward(board):
    model_path = shared_path("models", "v4", "ulffd_landmark.kmodel")
    board.flash_map[0x300000] = model_path
    task = kpu.load(0x300000)
    for index, (w, h, ch) in enumerate([(4, 3160, 1), (10, 3160, 1), (2, 3160, 1)]):
        assert kpu.set_outputs(task, index, w, h, ch) is True
    img = image.Image(size=(320, 240))
    img.draw_circle(160, 120, 60, color=(200, 180, 150), fill=True)
    img.pix_to_ai()
    first = kpu.forward(task, img)
    expected = load_kmodel(model_path).run(img._ai_array().reshape(1, 3, 240, 320))
    for index in range(3):
        fm = kpu.get_output(task, index)
        assert (fm.typecode(), fm.w(), fm.h(), fm.ch()) == ("f", [4, 10, 2][index], 3160, 1)
        assert np.array_equal(np.array(fm[:], np.float32), np.asarray(expected[index], np.float32).reshape(-1))
    assert kpu.get_output(task, 0)[:] == first[:]  # the same output memory forward returned
    with pytest.raises(OSError) as err:
        kpu.get_output(task, 3)
    assert str(err.value).splitlines()[0] == "get_output err"
    kpu.deinit(task)


def test_v4_output_without_set_outputs_reads_as_zero_shape(board):
    board.flash_map[0x300000] = shared_path("models", "v4", "slim_320_face.kmodel")
    task = kpu.load(0x300000)
    kpu.set_outputs(task, 0, 2, 4420, 1)
    img = image.Image(size=(320, 240))
    img.pix_to_ai()
    kpu.forward(task, img)
    fm = kpu.get_output(task, 1)  # the library hands out the never-set (zeroed) shape entry
    assert (fm.typecode(), fm.w(), fm.h(), fm.ch(), fm.size()) == ("f", 0, 0, 0, 4420 * 4 * 4)
    assert len(fm[:]) == 4420 * 4
    kpu.deinit(task)


def test_v3_two_outputs_typed_by_the_last_layer(board, tmp_path):
    board.flash_map[0x300000] = _two_output_v3(tmp_path / "two.kmodel")
    task = kpu.load(0x300000)
    values = [float(v) for v in range(16)]
    fm1 = kpu.forward(task, values, 1)
    assert fm1.typecode() == "f" and fm1[:] == tuple(0.5 * v + 1.0 for v in values * 2)
    out0 = kpu.get_output(task, 0)
    # output 0 holds the conv's 32 bytes; the last layer is a float layer, so they read as 8 floats
    raw = np.array([int(v) for v in values * 2], np.uint8)
    assert out0.typecode() == "f" and out0.size() == 32 and out0.w() == 32
    assert np.array_equal(np.array(out0[:], np.float32), raw.view("<f4"))
    assert kpu.get_output(task, 1)[:] == fm1[:]
    with pytest.raises(OSError) as err:
        kpu.get_output(task, 2)
    assert str(err.value).splitlines()[0] == "2001"  # sipeed_kpu_get_output's range check: ERR_PARAM
    kpu.deinit(task)


def test_get_output_before_any_run_reads_the_allocated_buffers(board):
    board.flash_map[0x300000] = shared_path("models", "v3", "iris.kmodel")
    task = kpu.load(0x300000)
    fm = kpu.get_output(task, 0)
    assert fm.typecode() == "f" and fm[:] == (0.0, 0.0, 0.0)
    with pytest.raises(ValueError, match=r"get_output arg format error"):
        kpu.get_output(task, 0.0)
    with pytest.raises(ValueError, match=r"get_output arg format error"):
        kpu.get_output(task)
    kpu.deinit(task)
