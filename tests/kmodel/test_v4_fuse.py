"""V4 glue chains fused into byte lookups (``v4.fuse``): the same outputs as every node run one by
one, and no fusion where a skipped map could be observed."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from _shared import shared_path
from maixemu.kmodel import load_kmodel
from maixemu.kmodel.kpu import fast
from maixemu.kmodel.v4 import fuse
from maixemu.kmodel.v4.format import MemoryRange

ULFFD = ("models", "v4", "ulffd_landmark.kmodel")


@pytest.fixture
def compiled(monkeypatch):
    monkeypatch.setenv("MAIXEMU_KPU_ENGINE", "fast")
    try:
        fast.kernels()
    except fast.FastEngineUnavailable as exc:
        pytest.skip(str(exc))


def _unfused(model) -> None:
    model._fused = []
    model.__dict__.pop("_run_schedule", None)
    model._kpu.same_as = {}  # (every upload makes its own map)


@pytest.mark.golden
def test_ulffd_s_three_dequantize_concat_quantize_max_chains_are_fused(compiled):
    model = load_kmodel(shared_path(*ULFFD))
    chains = [(sorted(f.runs), f.skipped) for f in model._fused][:3]  # (then the heads: below)
    assert chains == [([16, 19, 22], (20, 21)), ([35, 38, 41], (39, 40)), ([54, 57, 60], (58, 59))]
    kinds = [model.nodes[i].kind for i in chains[0][0] + list(chains[0][1])]
    assert kinds == ["dequantize", "dequantize", "quantized_binary", "concat", "quantize"]


@pytest.mark.golden
def test_a_fused_run_gives_what_every_node_run_in_turn_gives(compiled):
    fused = load_kmodel(shared_path(*ULFFD))
    plain = load_kmodel(shared_path(*ULFFD))
    _unfused(plain)
    fast.wait_for_warm_up()
    rng = np.random.default_rng(5)
    for _ in range(3):
        x = [rng.integers(0, 256, s.shape).astype(s.dtype) for s in fused.inputs]
        for a, b in zip(fused.run(*x), plain.run(*x)):
            np.testing.assert_array_equal(a, b)
        # ... and the KPU RAM the runs left, which the fused chains feed
        np.testing.assert_array_equal(fused._kpu.ram, plain._kpu.ram)
    # the trace still runs (and shows) every node, with the same outputs
    steps, want = list(fused.trace(*x)), list(plain.trace(*x))
    assert [s.index for s in steps] == list(range(len(fused.nodes)))
    for a, b in zip(steps, want):
        np.testing.assert_array_equal(a.output, b.output)


@pytest.mark.golden
def test_no_chain_is_fused_where_a_skipped_map_is_read(compiled):
    model = load_kmodel(shared_path(*ULFFD))
    nodes, mem = model.nodes, model._mem
    outputs = list(model._out_ranges)
    assert len(fuse.byte_chains(nodes, mem, outputs, "host")) == 3
    # the upload after the first chain also reading a few of its concatenated floats: that chain
    # stays as it is (those bytes are the concat's, which a fused run does not write) ...
    concat = nodes[20].writes
    assert concat is not None
    # (past the bytes the chain's own output then overwrites: those a reader would see as they are)
    end = nodes[22].writes.start + nodes[22].writes.size  # type: ignore[union-attr]
    assert concat.start < end < concat.start + concat.size - 16
    seen = MemoryRange(concat.memory_type, concat.datatype, end, 16, concat.offset)
    reader = list(nodes)
    reader[23] = dataclasses.replace(nodes[23], reads=nodes[23].reads + (seen,))
    left = fuse.byte_chains(reader, mem, outputs, "host")
    assert [sorted(f.runs) for f in left] == [[35, 38, 41], [54, 57, 60]]
    # ... and so does it with those floats as a model output, unless a later node writes them
    later = [n.index for n in nodes[24:] if n.writes is not None and n.writes.memory_type == seen.memory_type
             and n.writes.start <= seen.start < n.writes.start + n.writes.size]
    cut = list(nodes[: later[0]]) if later else list(nodes)
    assert [sorted(f.runs) for f in fuse.byte_chains(cut, mem, outputs + [seen], "host")][:1] != [[16, 19, 22]]
    # the device's quantize rounds pairs of elements: not a function of one byte
    assert fuse.byte_chains(nodes, mem, outputs, "device") == []


def test_the_numpy_engine_runs_every_node(monkeypatch):
    monkeypatch.setenv("MAIXEMU_KPU_ENGINE", "numpy")
    if not shared_path(*ULFFD).exists():
        pytest.skip("no shared models")
    assert load_kmodel(shared_path(*ULFFD))._fused == []


# --- KPU heads (``fuse.head_chains``) --------------------------------------------------------

SLIM = ("models", "v4", "slim_320_face.kmodel")
YOLO = ("models", "v4", "yolo_20class.kmodel")


def _heads(model) -> list[tuple[list[int], tuple[int, ...]]]:
    return [(sorted(f.runs), f.skipped) for f in model._fused if any(model.nodes[i].kind == "kpu_conv2d" for i in f.runs)]


@pytest.mark.golden
def test_the_heads_of_ulffd_slim_and_yolo_are_fused(compiled):
    ulffd = _heads(load_kmodel(shared_path(*ULFFD)))
    # three concats of three heads each (the last one's slices wait in buffers: the uploads
    # between its layers read those bytes)
    assert [runs for runs, _ in ulffd] == [[24, 43, 62], [68, 73, 78], [84, 89, 94, 98]]
    model = load_kmodel(shared_path(*ULFFD))
    kinds = {model.nodes[i].kind for _, skipped in ulffd for i in skipped}
    assert kinds == {"transpose", "dequantize", "memory_copy", "concat"}
    assert [runs for runs, _ in _heads(load_kmodel(shared_path(*SLIM)))] == [[16, 26, 36, 42, 45], [58, 62, 66, 69]]
    # (yolo's heads are in CHW order: not fused, the layer's own transposing write is faster)
    assert _heads(load_kmodel(shared_path(*YOLO))) == []


@pytest.mark.golden
@pytest.mark.parametrize("parts", [ULFFD, SLIM, YOLO], ids=lambda p: p[-1].split(".")[0])
def test_fused_heads_give_what_every_node_run_in_turn_gives(compiled, parts):
    fused = load_kmodel(shared_path(*parts))
    plain = load_kmodel(shared_path(*parts))
    _unfused(plain)
    rng = np.random.default_rng(11)
    for i in range(4):
        if i == 2:  # (the first runs before the compiled paths: the heads' numpy form)
            fast.wait_for_warm_up()
        x = [rng.integers(0, 256, s.shape).astype(s.dtype) for s in fused.inputs]
        for a, b in zip(fused.run(*x), plain.run(*x)):
            assert a.tobytes() == b.tobytes()
        np.testing.assert_array_equal(fused._kpu.ram, plain._kpu.ram)


@pytest.mark.golden
def test_no_head_is_fused_where_a_skipped_map_is_read(compiled):
    model = load_kmodel(shared_path(*ULFFD))
    nodes, mem, outputs = model.nodes, model._mem, list(model._out_ranges)
    byte = fuse.byte_chains(nodes, mem, outputs, "host")
    assert len(fuse.head_chains(nodes, mem, outputs, byte)) == 3
    # a later node reading the NHWC bytes of the head at layer 68: its group stays as it is
    seen = nodes[69].writes
    assert seen is not None
    reader = list(nodes)
    reader[72] = dataclasses.replace(nodes[72], reads=nodes[72].reads + (seen,))
    assert [sorted(f.runs) for f in fuse.head_chains(reader, mem, outputs, byte)] == [[24, 43, 62], [84, 89, 94, 98]]
    # ... and the same with those bytes as a model output (the last group's transposes write some
    # of them last: it stays too)
    left = fuse.head_chains(nodes, mem, outputs + [seen], byte)
    assert [sorted(f.runs) for f in left] == [[24, 43, 62]]
    # a node writing the layer's map between the layer and its transpose: not the same chain
    writer = list(nodes)
    writer[69] = dataclasses.replace(nodes[69], writes=nodes[68].writes)  # (the transpose writes its own input)
    assert [sorted(f.runs) for f in fuse.head_chains(writer, mem, outputs, byte)][1:2] != [[68, 73, 78]]


def test_the_kernel_reads_the_map_in_the_output_s_order(compiled):
    kn = fast.kernels()
    table = np.random.default_rng(2).random(256).astype(np.float32)
    y = np.random.default_rng(3).integers(0, 256, (5, 6, 7)).astype(np.uint8)  # an HWC map
    for perm in [(0, 1, 2), (2, 0, 1)]:
        v = y.transpose(perm)
        strides = [s // y.itemsize for s in v.strides]
        out = np.empty(y.size, np.float32)
        kn.lookup_permuted(table, y.reshape(-1), *v.shape, *strides, out)
        np.testing.assert_array_equal(out, table[v].reshape(-1))
    c = np.ascontiguousarray(y.transpose(2, 0, 1))  # a CHW map in HWC order
    v = c.transpose(1, 2, 0)
    out = np.empty(c.size, np.float32)
    kn.lookup_permuted(table, c.reshape(-1), *v.shape, *[s // 1 for s in v.strides], out)
    np.testing.assert_array_equal(out, table[v].reshape(-1))


@pytest.mark.golden
def test_ulffd_s_uploads_of_one_map_share_it(compiled):
    model = load_kmodel(shared_path(*ULFFD))
    step = model._kpu.NODE_STEP0
    assert {u - step: e - step for u, e in model._kpu.same_as.items()} == {67: 23, 72: 42, 77: 61, 83: 23, 88: 42, 93: 61}
    # not where a node writes the bytes in between
    nodes = list(model.nodes)
    nodes[70] = dataclasses.replace(nodes[70], writes=nodes[67].reads[0])
    same = fuse.shared_uploads(nodes, model._fused)
    assert same[67] == 23 and 83 not in same and same[88] == 42
