"""Corrupt and unsupported V4 files fail with a KmodelError that names the offset and field, never
with an IndexError, a numpy error or a runaway allocation."""

from __future__ import annotations

import struct

import numpy as np
import pytest

from _shared import shared_path
from maixemu.kmodel import KmodelError, KmodelFormatError, KmodelUnsupportedError, load_kmodel
from maixemu.kmodel.v4 import load_v4
from test_v4_ops import CONST, DF, DU, KPU, MAIN, V4Writer, mr, shp


def transpose_model(**kw) -> V4Writer:
    """A valid one-node model: 1x1x2x3 f32 -> transpose -> 1x1x3x2."""
    w = V4Writer(kw.get("main_mem", 48))
    w.input(kw.get("inp", mr(MAIN, DF, 0, 24)), kw.get("shape", (1, 1, 2, 3)))
    w.output(kw.get("out", mr(MAIN, DF, 24, 24)))
    w.node(kw.get("opcode", 0x0C), kw.get("body", mr(MAIN, DF, 0, 24) + mr(MAIN, DF, 24, 24) + shp(1, 1, 2, 3) + shp(0, 1, 3, 2)))
    return w


def test_the_valid_model_runs():
    m = load_kmodel(transpose_model().build())
    (y,) = m.run(np.arange(6, dtype=np.float32).reshape(1, 1, 2, 3))
    assert y.shape == (1, 1, 3, 2) and y[0, 0, :, 0].tolist() == [0.0, 1.0, 2.0]


def test_missing_padding_after_the_last_body_is_tolerated():
    # a unary body is 36 bytes: the writer pads it to 40 and declares 40, the file stops at 36
    body = mr(MAIN, DF, 0, 24) + mr(MAIN, DF, 24, 24) + struct.pack("<I", 6)
    data = transpose_model(body=body, opcode=0x0E).build(drop_last_padding=True)
    assert len(data) % 8 == 4
    (y,) = load_v4(data).run(np.arange(6, dtype=np.float32).reshape(1, 1, 2, 3))
    assert y.reshape(-1).tolist() == [-0.0, -1.0, -2.0, -3.0, -4.0, -5.0]


def test_unknown_opcode_names_number_and_node():
    with pytest.raises(KmodelUnsupportedError, match=r"node 0 has opcode 0x15") as err:
        load_v4(transpose_model(opcode=0x15).build())
    assert err.value.field == "nodes[0].opcode" and err.value.offset == 40 + 16 + 16 + 16


@pytest.mark.parametrize("offset,value,field", [(4, 5, "version"), (12, 2, "target"), (20, 7 << 20, "main_mem"),
                                                (16, 1 << 30, "constants"), (24, 100000, "nodes/inputs/outputs")])
def test_header_fields(offset, value, field):
    data = bytearray(transpose_model().build())
    struct.pack_into("<I", data, offset, value)
    with pytest.raises(KmodelFormatError) as err:
        load_v4(bytes(data))
    assert err.value.field == field


def test_range_outside_its_memory():
    with pytest.raises(KmodelFormatError, match="beyond the 48-byte main memory") as err:
        load_v4(transpose_model(out=mr(MAIN, DF, 40, 24)).build())
    assert err.value.field == "outputs[0]"
    body = mr(MAIN, DF, 0, 24) + mr(MAIN, DF, 32, 24) + shp(1, 1, 2, 3) + shp(0, 1, 3, 2)
    with pytest.raises(KmodelFormatError, match="node 0 \\(transpose\\): output") as err:
        load_v4(transpose_model(body=body).build())
    assert err.value.field == "node[0].output" and err.value.offset > 0


def test_write_into_constants_is_rejected():
    body = mr(MAIN, DF, 0, 24) + mr(CONST, DF, 0, 24) + shp(1, 1, 2, 3) + shp(0, 1, 3, 2)
    with pytest.raises(KmodelFormatError, match="read-only constants"):
        load_v4(transpose_model(body=body).build())


@pytest.mark.parametrize("body,match", [
    (mr(MAIN, 7, 0, 24) + mr(MAIN, DF, 24, 24) + shp(1, 1, 2, 3) + shp(0, 1, 3, 2), "datatype 7"),
    (mr(9, DF, 0, 24) + mr(MAIN, DF, 24, 24) + shp(1, 1, 2, 3) + shp(0, 1, 3, 2), "memory_type 9"),
    (mr(MAIN, DF, 0, 24) + mr(MAIN, DF, 24, 24) + shp(1, 1, 2, 3) + shp(0, 1, 1, 2), "permutation"),
    (mr(MAIN, DF, 0, 24) + mr(MAIN, DF, 24, 24) + shp(1, 1, 2, 4) + shp(0, 1, 3, 2), "reads 32"),
    (mr(MAIN, DF, 0, 24) + mr(MAIN, DF, 24, 24) + shp(1, -1, 2, 3) + shp(0, 1, 3, 2), "negative dimension"),
    (mr(MAIN, DF, 0, 24) + mr(MAIN, DF, 24, 24) + shp(1, 1, 2, 3), "field needs 16 bytes"),
])
def test_corrupt_bodies_name_the_field(body, match):
    with pytest.raises(KmodelFormatError, match=match) as err:
        load_v4(transpose_model(body=body).build())
    assert err.value.field.startswith("node[0].") and err.value.offset >= 96


def test_huge_shapes_are_refused_before_allocating():
    body = mr(MAIN, DF, 0, 24) + mr(MAIN, DF, 24, 24) + shp(1 << 12, 1 << 12, 1 << 12, 1) + shp(0, 1, 3, 2)
    with pytest.raises(KmodelFormatError, match="more than any K210 memory"):
        load_v4(transpose_model(body=body).build())
    # a quantized conv with a 1000x1000 filter over a 1000x1000 map: refused, not attempted
    geo = struct.pack("<4i", 500, 499, 500, 499) + struct.pack("<6i", 1000, 1000, 1, 1, 1, 1)
    body = (mr(MAIN, DU, 0, 1000 * 1000) + mr(MAIN, DU, 0, 1000 * 1000) + shp(1, 1, 1000, 1000) + struct.pack("<2i", 1, 1)
            + geo + struct.pack("<5i", 0, 0, 1, 0, 0) + struct.pack("<i", 0) + bytes(1000 * 1000))
    w = V4Writer(1000 * 1000).input(mr(MAIN, DU, 0, 1000 * 1000), (1, 1, 1000, 1000)).output(mr(MAIN, DU, 0, 16)).node(0x0F, body)
    with pytest.raises(KmodelUnsupportedError, match="beyond what a K210 model needs"):
        load_v4(w.build())


def test_kpu_input_range_too_small_for_its_row_layout():
    # 1x1x32x32 u8 needs 2048 bytes of KPU RAM in row layout (2 channels-slots per row), not 1024
    w = V4Writer(16).input(mr(KPU, DU, 0, 1024), (1, 1, 32, 32)).output(mr(MAIN, DF, 0, 16))
    w.node(0x09, mr(MAIN, DF, 0, 16) + mr(MAIN, DF, 0, 16))
    with pytest.raises(KmodelFormatError, match="needs 2048 bytes"):
        load_v4(w.build())


def test_wrong_input_shape_at_run_time():
    from maixemu.kmodel import KmodelRuntimeError

    m = load_v4(transpose_model().build())
    with pytest.raises(KmodelRuntimeError, match="expects"):
        m.run(np.zeros(7, np.float32))


def _fuzz(data: bytes, seed: int, trials: int) -> None:
    rng = np.random.default_rng(seed)
    for trial in range(trials):
        d = bytearray(data)
        if trial % 3 == 0:
            d = d[: int(rng.integers(0, len(d)))]
        else:
            limit = min(len(d), 4096) if trial % 3 == 1 else len(d)
            for _ in range(int(rng.integers(1, 4))):
                d[int(rng.integers(0, limit))] = int(rng.integers(0, 256))
        try:
            m = load_v4(bytes(d))
            x = rng.integers(0, 256, m.inputs[0].shape).astype(m.inputs[0].dtype)
            m.run(x)
        except KmodelError:
            pass  # anything else propagates and fails the test


@pytest.mark.parametrize("name", ["iris", "mask_detect"])
def test_truncated_and_corrupted_real_models_raise_kmodel_errors_only(name):
    data = shared_path("models", "v4", f"{name}.kmodel").read_bytes()
    _fuzz(data, seed=len(data), trials=150)


def test_corrupted_synthetic_models_raise_kmodel_errors_only():
    from test_v4_ops import f32b

    w = V4Writer(96, constants=f32b(np.ones(6)))
    w.input(mr(MAIN, DF, 0, 24), (1, 1, 2, 3)).output(mr(MAIN, DF, 48, 24))
    w.node(0x0C, mr(MAIN, DF, 0, 24) + mr(MAIN, DF, 24, 24) + shp(1, 1, 2, 3) + shp(0, 1, 3, 2))
    w.node(0x00, mr(MAIN, DF, 24, 24) + mr(CONST, DF, 0, 24) + mr(MAIN, DF, 48, 24) + struct.pack("<I", 3)
           + shp(1, 1, 3, 2) + shp(1, 1, 3, 2) + shp(1, 1, 3, 2) + struct.pack("<2f", -1e30, 1e30))
    w.node(0x14, mr(MAIN, DF, 48, 24) + mr(MAIN, DF, 48, 24) + bytes([0x03, 0x23, 0xA0]))
    _fuzz(w.build(), seed=3, trials=300)
