"""Synthetic V4 kmodels whose KPU layers have batch-norm ranges far wider than any table.

Why: issue 14's two public V4 detectors (1082 M MAC, not in ../shared) sent a layer to the slow
int64 path because its activation table "would need 266 M entries". These models recreate that
class: chains of ``kpu_conv2d`` nodes whose batch-norm values spread over about ±2**31 and whose
activations change over a range of ~10**9 batch-norm values, so no table can be built and each
layer must take the step buckets (a monotone activation) or the 16 segments (a non-monotone one).

``wide_range_model(...)`` returns the file bytes; ``python tests/kmodel/wide_range_v4.py OUT``
writes the ~1.1 G MAC benchmark model (320x240 input) for ``maixemu bench OUT --layers``.
"""

from __future__ import annotations

import struct
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from maixemu.kmodel.build import Activation, ConvSpec, encode_batchnorm  # noqa: E402
from maixemu.kmodel.kpu import kpu_bytes  # noqa: E402
from test_v4_ops import DU, KPU, MAIN, V4Writer, mr  # noqa: E402

#: batch-norm values over which the activations below are not constant: ~1.07e9 (4x the
#: issue's 266 M entries)
WIDE_SPAN = (1 << 28) + (1 << 28) + 63 * (1 << 23)


def wide_activation(monotone: bool = True) -> Activation:
    """Three sloped segments over ``[-2**28, 2**28 + 63·2**23]`` (0 → 128 → 192 → 255); the
    monotone form stays at 255 beyond, the other drops back to 7 past ``2**31`` (so the map
    bn → out is not monotone and no step buckets apply)."""
    lowest = -(1 << 35)
    top = (1 << 35) - 16
    xs = [lowest, -(1 << 28), 0, 1 << 28]
    ym = [0, 1, 1, 1]
    sh = [0, 21, 22, 23]
    bias = [0, 0, 128, 192]
    if monotone:
        xs += [top + i for i in range(12)]
        ym += [0] * 12
        sh += [0] * 12
        bias += [255] * 12
    else:
        xs += [1 << 31] + [top + i for i in range(11)]
        ym += [0] * 12
        sh += [0] * 12
        bias += [7] + [255] * 11
    return Activation(xs, ym, sh, bias)


def wide_conv(rng: np.random.Generator, in_shape, oc: int, *, pool: int = 0, src: int = 0, dst: int = 0,
              monotone: bool = True) -> ConvSpec:
    """A 3x3 layer whose batch-norm values spread over about ±1.5e9 for random inputs."""
    ic = in_shape[0]
    taps = ic * 9
    w = rng.integers(0, 256, (oc, ic, 3, 3)).astype(np.uint8)
    spread = 74.0 * 74.0 * taps**0.5  # std of Σ(x-128)(w-117) for uniform bytes
    mul = max(1, min((1 << 23) - 1, round(1.5e9 / spread)))
    return ConvSpec(in_shape=in_shape, out_channels=oc, weights=w, kernel=3, pool_type=pool, pad_value=117,
                    arg_x=-128, arg_w=-117, arg_add=128 * 117 * 9, bn_mul=[mul] * oc,
                    bn_add=[int(v) for v in rng.integers(-(1 << 28), 1 << 28, oc)], bn_shift=[0] * oc,
                    activation=wide_activation(monotone), src_row=src // 64, dst_row=dst // 64)


def conv_body(spec: ConvSpec, main_out: bytes | None = None) -> bytes:
    """A V4 ``kpu_conv2d`` body (batches 1, tables right behind each other)."""
    out = main_out if main_out is not None else mr(0, 0, 0, 0)
    body = out + struct.pack("<ii", 1, 0) + struct.pack("<12Q", *spec.registers())
    body += encode_batchnorm(spec.bn_mul, spec.bn_add, spec.bn_shift) + spec.activation.encode()
    return body + spec.weights.astype(np.uint8).tobytes()


def wide_range_model(in_shape=(3, 24, 20), channels=(8, 12, 8), *, pool_first: int = 1, seed: int = 14,
                     monotone=(True, False, True)) -> tuple[bytes, list[ConvSpec]]:
    """A chain of ``kpu_conv2d`` layers (input in KPU RAM, last layer copied to main memory).

    Maps ping-pong between two KPU RAM regions; ``monotone[i]`` picks layer i's activation.
    Returns the file bytes and the layers' specs (for the int64 reference)."""
    rng = np.random.default_rng(seed)
    specs: list[ConvSpec] = []
    shape = tuple(in_shape)
    # region A holds the odd layers' inputs, region B the even ones' (the first input included)
    sizes = [kpu_bytes(*shape)]
    for i, oc in enumerate(channels):
        stride = 2 if i == 0 and pool_first else 1
        sizes.append(kpu_bytes(oc, shape[1] // stride, shape[2] // stride) if i == 0 else kpu_bytes(oc, *shape[1:]))
        if i == 0:
            shape = (oc, shape[1] // stride, shape[2] // stride)
        else:
            shape = (oc, *shape[1:])
    a_bytes = max(sizes[1::2])
    region = [(a_bytes + 63) // 64 * 64, 0]  # even-indexed maps (input, layer 1 out, ...) in B
    shape = tuple(in_shape)
    for i, oc in enumerate(channels):
        src, dst = region[i % 2], region[(i + 1) % 2]
        pool = pool_first if i == 0 else 0
        spec = wide_conv(rng, shape, oc, pool=pool, src=src, dst=dst,
                         monotone=monotone[i % len(monotone)])
        specs.append(spec)
        shape = spec.out_shape
    n_out = int(np.prod(shape))
    w = V4Writer(n_out).input(mr(KPU, DU, region[0], kpu_bytes(*in_shape)), (1, *in_shape))
    for i, spec in enumerate(specs):
        last = i == len(specs) - 1
        w.node(0x2002, conv_body(spec, mr(MAIN, DU, 0, n_out) if last else None))
    w.output(mr(MAIN, DU, 0, n_out))
    return w.build(), specs


def big_wide_model() -> tuple[bytes, list[ConvSpec]]:
    """The ~1.1 G MAC benchmark: 3x320x240 → 32 (max pool 2) → 48 → 32 → 48 → 32 at 160x120
    (two 160-wide maps of 32 and 48 channels fill 1.84 of the KPU's 2 MiB)."""
    return wide_range_model((3, 240, 320), (32, 48, 32, 48, 32), monotone=(True, False))


if __name__ == "__main__":
    data, layers = big_wide_model()
    Path(sys.argv[1]).write_bytes(data)
    print(f"{sys.argv[1]}: {len(layers)} kpu_conv2d layers, {len(data)} bytes")
