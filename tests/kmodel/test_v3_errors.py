"""Malformed V3 files: every problem is a KmodelError naming the offset and field, never an
IndexError, a hang, or a huge allocation from a corrupt count or size."""

from __future__ import annotations

import struct

import numpy as np
import pytest

from _shared import shared_path
from maixemu.kmodel import (
    KmodelError,
    KmodelFormatError,
    KmodelUnsupportedError,
    KmodelVersionError,
    load_kmodel,
)
from maixemu.kmodel.build import ConvSpec, V3Builder


@pytest.fixture(scope="module")
def mnist_bytes() -> bytes:
    return shared_path("models", "v3", "mnist.kmodel").read_bytes()


@pytest.fixture(scope="module")
def iris_bytes() -> bytes:
    return shared_path("models", "v3", "iris.kmodel").read_bytes()


def _put(data: bytes, offset: int, fmt: str, *values) -> bytes:
    buf = bytearray(data)
    struct.pack_into("<" + fmt, buf, offset, *values)
    return bytes(buf)


def _format_error(data: bytes) -> KmodelFormatError:
    with pytest.raises(KmodelFormatError) as info:
        load_kmodel(data)
    return info.value


@pytest.mark.parametrize("name", ["mnist", "iris", "face_detect_320x240"])
def test_every_truncation_is_a_format_error(name):
    data = shared_path("models", "v3", f"{name}.kmodel").read_bytes()
    cuts = sorted(set(np.linspace(0, len(data) - 1, 150).astype(int).tolist()) | {1, 3, 4, 27, 28, 35, 36, len(data) - 1})
    for cut in cuts:
        with pytest.raises(KmodelFormatError):
            load_kmodel(data[:cut])


def test_truncation_names_offset_and_field(mnist_bytes):
    err = _format_error(mnist_bytes[:20])
    assert err.offset == 0 and "header" in err.field
    err = _format_error(mnist_bytes[:100])
    assert err.field is not None and err.offset is not None and "0x" in str(err)


def test_final_alignment_padding_may_be_missing(iris_bytes):
    # iris ends 4 bytes before its declared last body; that is how the compiler writes files
    assert load_kmodel(iris_bytes).run(np.zeros(4, np.float32))[0].shape == (3,)


@pytest.mark.parametrize("field_offset,value,field", [(12, 0xFFFFFFFF, "layers_length"), (24, 0xFFFFFFFF, "output descriptors"),
                                                      (20, 0xFFFFFFFF, "main_mem_usage"), (16, 40000, "max_start_address"),
                                                      (8, 1, "arch"), (4, 6, "flags"), (12, 0, "layers_length")])
def test_corrupt_header_fields(mnist_bytes, field_offset, value, field):
    err = _format_error(_put(mnist_bytes, field_offset, "I", value))
    assert field in err.field
    assert err.offset is not None


def _layer_table(data: bytes):
    n_layers, n_out = struct.unpack_from("<I", data, 12)[0], struct.unpack_from("<I", data, 24)[0]
    first = 28 + 8 * n_out
    headers = [struct.unpack_from("<2I", data, first + 8 * i) for i in range(n_layers)]
    starts, pos = [], first + 8 * n_layers
    for _, size in headers:
        starts.append(pos)
        pos += size
    return first, headers, starts


def test_corrupt_body_sizes(mnist_bytes):
    first, headers, starts = _layer_table(mnist_bytes)
    err = _format_error(_put(mnist_bytes, first + 4, "I", 0))
    assert "body_size" in err.field and err.offset == first + 4
    err = _format_error(_put(mnist_bytes, first + 4, "I", 0x7FFFFFFF))
    assert "body_size" in err.field or "layers" in err.field
    # a body too small for its struct
    idx = [t for t, _ in headers].index(11)  # QUANTIZE
    err = _format_error(_put(mnist_bytes, first + 8 * idx + 4, "I", 8))
    assert "body_size" in err.field


def test_corrupt_conv_offsets_and_registers(mnist_bytes):
    _, headers, starts = _layer_table(mnist_bytes)
    body = starts[0]
    for k, name in ((2, "layer_offset"), (3, "weights_offset"), (4, "bn_offset"), (5, "act_offset")):
        err = _format_error(_put(mnist_bytes, body + 4 * k, "I", 0xFFFFFF00))
        assert name in err.field and err.offset == body + 4 * k
    layer_off = struct.unpack_from("<I", mnist_bytes, body + 8)[0]
    # i_ch_num changed: the layout registers no longer match the sizes
    word2 = struct.unpack_from("<Q", mnist_bytes, layer_off + 16)[0]
    err = _format_error(_put(mnist_bytes, layer_off + 16, "Q", word2 + 5))
    assert err.offset is not None and err.field
    # image_src_addr beyond the KPU RAM
    word1 = struct.unpack_from("<Q", mnist_bytes, layer_off + 8)[0]
    with pytest.raises(KmodelFormatError):
        load_kmodel(_put(mnist_bytes, layer_off + 8, "Q", (word1 & ~0x7FFF) | 0x7FFF))


def test_corrupt_counts_in_cpu_layers(mnist_bytes, iris_bytes):
    _, headers, starts = _layer_table(mnist_bytes)
    fc = starts[[t for t, _ in headers].index(18)]
    err = _format_error(_put(mnist_bytes, fc + 12, "I", 0xFFFFFF))
    assert "in_channels" in err.field
    deq = starts[[t for t, _ in headers].index(12)]
    err = _format_error(_put(mnist_bytes, deq + 12, "I", 0x7FFFFFFF))
    assert "main_mem" in err.field and err.offset is not None
    # an output descriptor outside main memory
    err = _format_error(_put(iris_bytes, 28, "I", 1 << 20))
    assert err.field == "outputs[0].address"


def test_unsupported_and_unknown_layer_codes(mnist_bytes):
    first, headers, _ = _layer_table(mnist_bytes)
    for code in (3, 7, 19, 999):
        with pytest.raises(KmodelUnsupportedError) as info:
            load_kmodel(_put(mnist_bytes, first + 8 * 2, "I", code))
        assert "layer 2" in str(info.value)


@pytest.mark.parametrize("word0", [1, 2])
def test_old_versions_are_rejected_with_a_specific_message(mnist_bytes, word0):
    with pytest.raises(KmodelVersionError, match=f"version {word0}"):
        load_kmodel(_put(mnist_bytes, 0, "I", word0))


def test_v5_is_rejected_with_the_firmware_message():
    with pytest.raises(KmodelVersionError, match="ERR_KMODEL_VERSION"):
        load_kmodel(shared_path("models", "v5", "mnist.kmodel"))


def test_not_a_model():
    for data in (b"", b"\x03", b"GIF89a....", b"\x07\x00\x00\x00" + bytes(60)):
        with pytest.raises(KmodelError):
            load_kmodel(data)


def test_random_corruption_never_escapes_as_another_exception(mnist_bytes, iris_bytes):
    """Flip bytes in headers and bodies: load (and run, if it loads) only ever raises KmodelError."""
    rng = np.random.default_rng(1234)
    for source in (mnist_bytes, iris_bytes):
        for _ in range(250):
            buf = bytearray(source)
            for _ in range(int(rng.integers(1, 4))):
                # mostly the structured head of the file (headers, bodies' fixed fields)
                pos = int(rng.integers(0, min(len(buf), 600))) if rng.random() < 0.8 else int(rng.integers(0, len(buf)))
                buf[pos] = int(rng.integers(0, 256))
            try:
                model = load_kmodel(bytes(buf))
                if model.inputs:
                    spec = model.inputs[0]
                    model.run(np.zeros(spec.shape, dtype=spec.dtype))
            except KmodelError:
                pass


def test_builder_rejects_values_that_do_not_fit_registers():
    with pytest.raises(ValueError, match="channel_byte_num"):
        ConvSpec(in_shape=(1, 240, 320), out_channels=1, weights=np.zeros((1, 1, 3, 3), np.uint8)).registers()
    b = V3Builder(main_mem_usage=16)
    b.add_output(0, 16)
    b.add_conv(ConvSpec(in_shape=(1, 4, 4), out_channels=1, weights=np.zeros((1, 1, 3, 3), np.uint8), main_out=0, dst_row=10))
    assert load_kmodel(b.build()).run(np.zeros((1, 4, 4), np.uint8))[0].shape == (1, 4, 4)


def test_absurd_layer_count_is_refused_quickly(mnist_bytes):
    err = _format_error(_put(mnist_bytes, 12, "I", 50_000))
    assert err.field == "layers_length"


def test_kpu_plan_falls_back_when_the_work_is_absurd(monkeypatch):
    from maixemu.kmodel import kpu
    from maixemu.kmodel.kpu import ram

    monkeypatch.setattr(ram, "PLAN_WORK_LIMIT", 10)
    accesses = [kpu.KpuAccess("w", 0, (1, 4, 4), 1, conv=True), kpu.KpuAccess("r", 0, (1, 4, 4), 2, conv=True)]
    plan = kpu.plan_kpu_ram(accesses)
    assert plan.materialize == {1} and plan.reuse == {}


def test_layer_header_table_past_the_end(iris_bytes):
    err = _format_error(_put(iris_bytes, 12, "I", 100))
    assert "layer headers" in err.field and err.offset == 28 + 8
