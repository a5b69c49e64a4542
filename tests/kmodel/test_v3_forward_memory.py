"""A V3 forward holds only the conv outputs later layers still read (issue 10: a valid 1500-layer
model held 1.78 GB); ``trace`` keeps every layer's output. Memory is measured with tracemalloc
(numpy reports its buffers to it), never time."""

from __future__ import annotations

import tracemalloc

import numpy as np

from maixemu.kmodel import load_kmodel
from maixemu.kmodel.build import ConvSpec, V3Builder

CHANNELS, SIZE = 8, 64
LAYERS = 120
MAP_BYTES = CHANNELS * SIZE * SIZE  # one layer's output (int8 in the engine)


def _deep_model() -> bytes:
    """LAYERS 1x1 convs ping-ponging between two KPU RAM areas; the last one writes to main memory."""
    rng = np.random.default_rng(3)
    b = V3Builder(main_mem_usage=MAP_BYTES)
    for i in range(LAYERS):
        spec = ConvSpec(in_shape=(CHANNELS, SIZE, SIZE), out_channels=CHANNELS, kernel=1,
                        weights=rng.integers(0, 256, (CHANNELS, CHANNELS, 1, 1)).astype(np.uint8),
                        arg_x=-128 << 15, shr_x=15, bn_mul=[1] * CHANNELS, bn_add=[0] * CHANNELS, bn_shift=[8] * CHANNELS,
                        src_row=0 if i % 2 == 0 else 4096, dst_row=4096 if i % 2 == 0 else 0,
                        main_out=0 if i == LAYERS - 1 else None)
        b.add_conv(spec)
    b.add_output(0, MAP_BYTES)
    return b.build()


def _peak(fn) -> int:
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        fn()
        return tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()


def test_a_run_keeps_only_the_outputs_later_layers_read():
    model = load_kmodel(_deep_model())
    x = np.random.default_rng(4).integers(0, 256, (CHANNELS, SIZE, SIZE), dtype=np.uint8)
    first = model.run(x)[0]  # warms the per-thread scratch buffers
    peak = _peak(lambda: model.run(x))
    # all outputs held would be LAYERS * MAP_BYTES (= 3.8 MiB); a handful of maps is what a layer needs
    assert peak < 12 * MAP_BYTES, f"a run peaked at {peak} bytes for {MAP_BYTES}-byte maps"
    assert np.array_equal(model.run(x)[0], first)


def test_trace_keeps_every_layer_output():
    model = load_kmodel(_deep_model())
    x = np.random.default_rng(4).integers(0, 256, (CHANNELS, SIZE, SIZE), dtype=np.uint8)
    run_out = model.run(x)[0]
    steps: list = []
    peak = _peak(lambda: steps.extend(model.trace(x)))
    assert len(steps) == LAYERS and all(s.output.shape == (CHANNELS, SIZE, SIZE) for s in steps)
    assert peak >= LAYERS * MAP_BYTES  # every uint8 map is still there
    assert np.array_equal(steps[-1].output.reshape(-1), run_out.reshape(-1))
