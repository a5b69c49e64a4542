"""Model loading under mutation (issue 6): a bounded fuzz run plus one regression test per bug
the fuzzer found.

The bounded run drives ``maixemu.tools.fuzz`` in-process over the shared models (about a minute
on a 2-core machine) and requires zero findings: every mutated file loads and runs, or raises a
KmodelError that names its field/offset, within 256 MB of traced allocations. It asserts no time
(``fuzz.SUITE_LIMITS``): the suite must pass on a loaded machine; the 2 s CPU limit per case and
the hang guard apply to the long campaign.
The counts by outcome are printed and also put in the assertion message, so they show with or
without ``-s``. The 10 000-case campaign is ``test_long_campaign`` (skipped unless
``MAIXEMU_FUZZ_LONG=1``) or ``python -m maixemu.tools.fuzz --cases 10000 --jobs 2``.
"""

from __future__ import annotations

import io
import os
import struct
import tracemalloc
import zipfile

import numpy as np
import pytest

from _shared import shared_path
from maixemu.kmodel import KmodelFormatError, KmodelRuntimeError, load_kmodel
from maixemu.tools import fuzz
from maixemu.tools.fuzz_layout import layout_of
from maixemu.tools.fuzz_mutate import load_corpus, make_case

BOUNDED_CASES = 240
BOUNDED_SEED = 6


def _report(results) -> str:
    return fuzz.format_counts(fuzz.counts(results)) + "\n" + "".join(
        fuzz.describe(r, BOUNDED_SEED) for r in results if r.finding)


def test_bounded_fuzz_run_has_no_findings(record_property):
    models = shared_path("models")
    results = fuzz.campaign(models, BOUNDED_CASES, BOUNDED_SEED, limits=fuzz.SUITE_LIMITS)
    report = _report(results)
    print(f"\nbounded fuzz run, {len(results)} cases, seed {BOUNDED_SEED}:\n{report}")
    for outcome, n in fuzz.counts(results).items():  # also in junit XML (--junitxml)
        record_property(f"fuzz {outcome}", n)
    assert len(results) == BOUNDED_CASES
    assert not [r for r in results if r.finding], report
    # the run must exercise every kind of outcome, or the mutations have gone blind
    c = fuzz.counts(results)
    assert c[fuzz.OK] and c["KmodelFormatError"] and c["KmodelUnsupportedError"] and c["KmodelVersionError"], report


@pytest.mark.skipif(os.environ.get("MAIXEMU_FUZZ_LONG") != "1", reason="long campaign: set MAIXEMU_FUZZ_LONG=1")
def test_long_campaign():
    results = fuzz.campaign(shared_path("models"), 10_000, 0, jobs=2)
    report = _report(results)
    print(report)
    assert not [r for r in results if r.finding], report


def test_cases_are_reproducible():
    corpus = load_corpus(shared_path("models"))
    a, b = make_case(corpus, 3, 17), make_case(corpus, 3, 17)
    assert a.data == b.data and a.mutation == b.mutation and a.model == b.model


def test_layout_finds_the_tables():
    data = shared_path("models", "v4", "iris.kmodel").read_bytes()
    lay = layout_of(data)
    names = {f.name for f in lay.fields}
    assert {"constants", "nodes", "inputs[0].size", "input_shapes[0][1]", "nodes[0].opcode", "nodes[0].body_size"} <= names
    assert (40, "end of header") in lay.boundaries
    v3 = layout_of(shared_path("models", "v3", "mnist.kmodel").read_bytes())
    assert any(f.kind == "register" for f in v3.fields) and any(f.name == "layers[0].act_offset" for f in v3.fields)


# ----------------------------------------------------------------------------------------------
# non-kmodel files: each is rejected with a message saying what it looks like
# ----------------------------------------------------------------------------------------------


def test_non_kmodel_files_say_what_they_are():
    results = {r.model: r for r in fuzz.check_non_kmodels(shared_path("models"), **fuzz.SUITE_LIMITS)}
    expect = {
        "empty file": "empty",
        "JPEG image": "JPEG image",
        "BMP image": "BMP image",
        "PNG image": "PNG image",
        "TFLite model": "TensorFlow Lite",
        "random bytes (4 KiB)": "random-looking",
        "encrypted-looking": "encrypted model",
        "zip with two kmodels": "exactly one .kmodel",
        "HTML page": "web page",
        "Git LFS pointer": "Git LFS",
        "gzip": "gzip",
    }
    for prefix, words in expect.items():
        (r,) = [r for label, r in results.items() if label.startswith(prefix)]
        assert r.outcome == "KmodelFormatError" and words in r.message, (prefix, r.outcome, r.message)
    (kfpkg,) = [r for label, r in results.items() if label.startswith("kfpkg passed as a model")]
    assert kfpkg.outcome == fuzz.OK and ".kfpkg member" in kfpkg.message
    assert not [r for r in results.values() if r.finding]


# ----------------------------------------------------------------------------------------------
# regressions, one per finding
# ----------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def kfpkg_bytes() -> bytes:
    return shared_path("models", "v3", "face_model_at_0x300000.kfpkg").read_bytes()


def _zip_error(data: bytes) -> KmodelFormatError:
    with pytest.raises(KmodelFormatError) as info:
        load_kmodel(data)
    return info.value


def test_kfpkg_with_bad_crc_is_a_format_error(kfpkg_bytes):
    """Finding: zipfile.BadZipFile('Bad CRC-32') escaped from a .kfpkg with one flipped byte."""
    z = zipfile.ZipFile(io.BytesIO(kfpkg_bytes))
    info = next(i for i in z.infolist() if i.filename.endswith(".kmodel"))
    data = bytearray(kfpkg_bytes)
    data[info.header_offset + 30 + len(info.filename) + 1000] ^= 0x10  # inside the compressed stream
    err = _zip_error(bytes(data))
    assert err.field == "zip member data" and err.offset == info.header_offset and "corrupt" in str(err)


def test_kfpkg_with_wrong_central_directory_offset_is_a_format_error(kfpkg_bytes):
    """Finding: zipfile.BadZipFile('Truncated file header') when a member's header offset is off."""
    data = bytearray(kfpkg_bytes)
    cd = data.find(b"PK\x01\x02")
    struct.pack_into("<I", data, cd + 42, 7)  # the kmodel member's local header offset
    err = _zip_error(bytes(data))
    assert err.field in ("zip member data", "zip") and "field" in str(err)


def _patch_zip_headers(data: bytes, local_at: int, central_at: int, value: int, *, set_bits: bool) -> bytes:
    buf = bytearray(data)
    for sig, at in ((b"PK\x03\x04", local_at), (b"PK\x01\x02", central_at)):
        pos = buf.find(sig)
        while pos >= 0:
            old = struct.unpack_from("<H", buf, pos + at)[0]
            struct.pack_into("<H", buf, pos + at, old | value if set_bits else value)
            pos = buf.find(sig, pos + 4)
    return bytes(buf)


def test_encrypted_kfpkg_member_is_a_format_error(kfpkg_bytes):
    """An encrypted zip member made zipfile raise RuntimeError (password required)."""
    err = _zip_error(_patch_zip_headers(kfpkg_bytes, 6, 8, 1, set_bits=True))
    assert err.field == "zip member flags" and "encrypted" in str(err)


def test_unknown_zip_compression_method_is_a_format_error(kfpkg_bytes):
    """An unsupported compression method made zipfile raise NotImplementedError."""
    err = _zip_error(_patch_zip_headers(kfpkg_bytes, 8, 10, 77, set_bits=False))
    assert err.field is not None and err.field.startswith("zip member") and "offset" in str(err)


def test_activation_table_below_every_segment_names_the_table():
    """Finding: a corrupt V3 activation table raised KmodelRuntimeError naming no field at run time."""
    data = bytearray(shared_path("models", "v3", "mnist.kmodel").read_bytes())
    lay = layout_of(bytes(data))
    (act_field,) = [f for f in lay.fields if f.name == "layers[0].act_offset"]
    act_off = struct.unpack_from("<I", data, act_field.offset)[0]
    for seg in range(16):  # every segment starts at the largest x_start: nothing lies above it
        word = struct.unpack_from("<Q", data, act_off + 8 * seg)[0]
        word = (word & ((1 << 24) - 1)) | (((1 << 35) - 1) << 24)
        struct.pack_into("<Q", data, act_off + 8 * seg, word)
    model = load_kmodel(bytes(data))
    with pytest.raises(KmodelRuntimeError) as info:
        model.run(np.full(model.inputs[0].shape, 77, dtype=np.uint8))
    assert info.value.offset == act_off and "act_offset" in info.value.field and "0x" in str(info.value)


def test_first_layer_that_takes_no_input_names_the_layer_type():
    """Finding: a V3 file whose first layer is SOFTMAX loaded with no inputs, and run() raised
    'takes exactly one input, got 0' naming no field."""
    data = bytearray(shared_path("models", "v3", "iris.kmodel").read_bytes())
    n_out = struct.unpack_from("<I", data, 24)[0]
    table = 28 + 8 * n_out
    struct.pack_into("<I", data, table, 15)  # layers[0].type = SOFTMAX
    model = load_kmodel(bytes(data))
    assert model.inputs == []
    with pytest.raises(KmodelRuntimeError) as info:
        model.run()
    assert info.value.field == "layers[0].type" and info.value.offset == table
    assert "ERR_GET_CONV_LAYER" in str(info.value)


def test_v4_activation_tables_are_built_in_bounded_memory():
    """Finding: loading a V4 model with a cold table cache peaked at ~750 MB (int64 temporaries of
    16M-entry activation tables); it must stay under the fuzz limit of 256 MB."""
    from maixemu.kmodel.kpu import activation

    data = shared_path("models", "v4", "ulffd_landmark.kmodel").read_bytes()
    activation._LUT_CACHE.clear()
    activation._LUT_CACHE_BYTES = 0
    tracemalloc.start()
    try:
        load_kmodel(data)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < fuzz.MEM_LIMIT_BYTES, f"peak {peak >> 20} MB"


def test_activation_lut_cache_is_bounded_in_bytes():
    from maixemu.kmodel.kpu import activation

    for name in ("ulffd_landmark", "slim_320_face", "yolo_20class"):
        load_kmodel(shared_path("models", "v4", f"{name}.kmodel").read_bytes())
    assert sum(v.nbytes for v in activation._LUT_CACHE.values()) <= activation._LUT_CACHE_MAX_BYTES


def test_add_padding_channel_count_is_checked_before_allocating():
    """Finding: K210_ADD_PADDING allocated ``arange(channels)`` (24 GB for 0xC095C25A channels)
    before checking that the channels fit the KPU RAM."""
    data = bytearray(shared_path("models", "v3", "mnist.kmodel").read_bytes())
    lay = layout_of(bytes(data))
    types = {f.name: f for f in lay.fields if f.name.endswith(".type")}
    index = next(int(n[7:n.index("]")]) for n, f in types.items()
                 if struct.unpack_from("<I", data, f.offset)[0] == 10241)  # K210_ADD_PADDING
    (channels,) = [f for f in lay.fields if f.name == f"layers[{index}].channels"]
    struct.pack_into("<I", data, channels.offset, 0xC095C25A)
    tracemalloc.start()
    try:
        with pytest.raises(KmodelFormatError) as info:
            load_kmodel(bytes(data))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert info.value.field == f"layers[{index}] K210_ADD_PADDING.kpu_mem_out_address" and info.value.offset is not None
    assert peak < 64 << 20


# ----------------------------------------------------------------------------------------------
# V4 work bounds (found while reading the kernels behind the fuzz findings)
# ----------------------------------------------------------------------------------------------


def test_v4_conv2d_group_loop_is_bounded():
    """vf.conv2d loops over groups x taps in Python; the limit counted only the taps of one
    group, so 100 000 groups of a 1x1 conv passed and ran 100 000 Python iterations."""
    from test_v4_ops import DF, MAIN, V4Writer, mr, shp

    from maixemu.kmodel import KmodelUnsupportedError

    g = 100_000
    n = 4 * g
    body = (mr(MAIN, DF, 0, n) + mr(MAIN, DF, n, n) + shp(1, g, 1, 1) + struct.pack("<2i", g, g)
            + struct.pack("<4i", 0, 0, 0, 0) + struct.pack("<6i", 1, 1, 1, 1, 1, 1) + struct.pack("<2f", -1e30, 1e30)
            + bytes(4 * g) + bytes(4 * g))
    w = V4Writer(2 * n).input(mr(MAIN, DF, 0, n), (1, g, 1, 1)).output(mr(MAIN, DF, n, n)).node(0x02, body)
    with pytest.raises(KmodelUnsupportedError, match="beyond what a K210 model needs") as info:
        load_kmodel(w.build())
    assert info.value.field == "node[0].filter" and info.value.offset is not None


def test_v4_model_work_is_bounded_across_nodes():
    """Each node was bounded, the model was not: many heavy nodes made one run take minutes."""
    from test_v4_ops import DF, MAIN, V4Writer, mr

    from maixemu.kmodel import KmodelUnsupportedError
    from maixemu.kmodel.v4.nodes import MAX_MODEL_WORK, MAX_NODE_WORK

    rows, cols, bcols = 512, 1024, 1024  # 2**29 multiply-adds per node, inside main memory
    a, b = 4 * rows * cols, 4 * cols * bcols
    body = (mr(MAIN, DF, 0, a) + mr(MAIN, DF, a, b) + mr(MAIN, DF, 0, a) + struct.pack("<3i", rows, cols, bcols)
            + struct.pack("<2f", -1e30, 1e30) + bytes(4 * bcols))
    assert rows * cols * bcols <= MAX_NODE_WORK
    n_nodes = MAX_MODEL_WORK // (rows * cols * bcols) + 1
    w = V4Writer(a + b).input(mr(MAIN, DF, 0, a), (1, 1, rows, cols)).output(mr(MAIN, DF, 0, a))
    for _ in range(n_nodes):
        w.node(0x04, body)
    with pytest.raises(KmodelUnsupportedError, match="model's CPU work") as info:
        load_kmodel(w.build())
    assert info.value.field == f"node[{n_nodes - 1}].filter"


def test_v4_quantized_conv_patch_matrix_is_bounded():
    """quantized_conv2d builds an int64 patch matrix of at least one output row
    (n*gic*ow*kh*kw elements, several copies alive); the work limit ignored gic, so a wide input
    made that one row hundreds of MB."""
    from test_v4_ops import DU, MAIN, V4Writer, mr, shp

    from maixemu.kmodel import KmodelUnsupportedError

    c, wd = 4096, 128
    n_in = c * wd
    geo = struct.pack("<4i", 1, 1, 1, 1) + struct.pack("<6i", 3, 3, 1, 1, 1, 1)
    body = (mr(MAIN, DU, 0, n_in) + mr(MAIN, DU, n_in, wd) + shp(1, c, 1, wd) + struct.pack("<2i", 1, 1) + geo
            + struct.pack("<5i", 0, 0, 1, 0, 0) + struct.pack("<i", 0) + bytes(c * 9))
    w = V4Writer(n_in + wd).input(mr(MAIN, DU, 0, n_in), (1, c, 1, wd)).output(mr(MAIN, DU, n_in, wd)).node(0x0F, body)
    with pytest.raises(KmodelUnsupportedError, match="patch matrix") as info:
        load_kmodel(w.build())
    assert info.value.field == "node[0].in_shape"


@pytest.mark.parametrize("version,name,module,attr", [
    (3, "face_detect_320x240", "maixemu.kmodel.v3.layers", "LUT_TOTAL_ENTRIES"),
    (4, "ulffd_landmark", "maixemu.kmodel.v4.kpu", "V4_LUT_TOTAL_ENTRIES"),
])
def test_activation_tables_of_a_model_share_one_budget(monkeypatch, version, name, module, attr):
    """Each K210 conv's table was bounded (4M/16M entries), the model's total was not: thousands
    of wide-range conv layers could make the loader hold gigabytes. Past the budget, layers
    evaluate the activation segments directly or small step tables (never the int64 path), same bytes."""
    import importlib

    from maixemu.kmodel import kpu

    data = shared_path("models", f"v{version}", f"{name}.kmodel").read_bytes()
    x = None
    want = None
    made: list = []
    real_prepare = kpu.KpuConv.prepare.__func__

    def recording(cls, *args, **kw):
        conv = real_prepare(cls, *args, **kw)
        made.append(conv)
        return conv

    m = load_kmodel(data)
    rng = np.random.default_rng(5)
    x = rng.integers(0, 256, size=m.inputs[0].shape, dtype=np.uint8)
    want = m.run(x)
    budget = 3_000_000
    monkeypatch.setattr(importlib.import_module(module), attr, budget)
    monkeypatch.setattr(kpu.KpuConv, "prepare", classmethod(recording))
    small = load_kmodel(data)
    tables = sum(c.table_entries for c in made)
    assert tables <= budget and all(c.fast for c in made)
    assert not any("int64" in c.path for c in made)
    for a, b in zip(small.run(x), want):
        assert np.array_equal(a, b)


def test_files_larger_than_the_flash_are_refused_before_parsing():
    """Buffers were not size-checked (only paths were, at 64 MiB): the K210 has 16 MiB of flash."""
    err = _zip_error(b"PK\x03\x04" + bytes(16 * 1024 * 1024))
    assert err.field == "file size" and "16 MiB" in str(err)


def test_zip_with_thousands_of_members_is_refused_before_zipfile_parses_it():
    """zipfile builds one object per central-directory entry; a .kfpkg has a handful."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for i in range(300):
            z.writestr(f"f{i}.txt", b"")
    err = _zip_error(buf.getvalue())
    assert err.field == "zip entry count" and "300 members" in str(err)
