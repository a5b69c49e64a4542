"""Generate maixemu's bundled demo model ``maixemu/data/edge_filters.kmodel`` (deterministic).

The model is one real K210_CONV layer (kmodel V3) with fixed, hand-chosen 3×3 filters, so the
default sample can show the KPU module working on camera frames without any third-party model:

* input: a 320×240 RGB image, i.e. uint8 ``[3, 240, 320]`` planar (the ``pix_ai`` buffer of a
  QVGA ``sensor.snapshot()``), placed in KPU RAM by ``kpu.forward``;
* output: uint8 ``[4, 120, 160]`` feature maps (each filter response max-pooled 2×2, stride 2 —
  the KPU cannot write a 320×240 channel: ``channel_byte_num`` is 16 bits) written to main
  memory. ``kpu.forward`` returns a ``'B'`` fmap with ``w=160, h=120, ch=4``;
  ``kpu.fmap(fm, i)`` is channel ``i`` as a 160×120 grayscale image, so the four maps tile a
  320×240 LCD. All filters act on the luma ``R + 2G + B``:

  ====  ===========  ==========================================================================
  ch    name         value
  ====  ===========  ==========================================================================
  0     ``blur``     3×3 Gaussian of the luma, ``(Σ [1 2 1;2 4 2;1 2 1]·L) / 64`` (0..255)
  1     ``edges_x``  Sobel x, ``128 + Sobel_x(L) / 32``: 128 = flat, brighter = brighter to the right
  2     ``edges_y``  Sobel y, ``128 + Sobel_y(L) / 32``: 128 = flat, brighter = brighter below
  3     ``lines``    Laplacian ``ReLU((8·L − Σ neighbours) / 16)``: bright, thin features
  ====  ===========  ==========================================================================

  Values are rounded half to even by the KPU activation, then the 2×2 maximum is kept; the
  border pads with 0.

Run ``python -m maixemu.tools.make_sample_model`` to rewrite the file, ``--check`` to verify
that the committed file is what this script produces (a test does the same).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from ..kmodel.build import Activation, ConvSpec, V3Builder

OUTPUT = Path(__file__).resolve().parents[1] / "data" / "edge_filters.kmodel"
INPUT_SHAPE = (3, 240, 320)
CHANNEL_NAMES = ("blur", "edges_x", "edges_y", "lines")
COLOR = np.array([1, 2, 1])  # luma weights for R, G, B
ZERO_POINT = 128  # weights are stored as f + 128 and corrected by arg_x = -128 << 15

FILTERS = np.array(
    [
        [[1, 2, 1], [2, 4, 2], [1, 2, 1]],
        [[-1, 0, 1], [-2, 0, 2], [-1, 0, 1]],
        [[-1, -2, -1], [0, 0, 0], [1, 2, 1]],
        [[-1, -1, -1], [-1, 8, -1], [-1, -1, -1]],
    ]
)
#: bn = acc * mul + add, then the ReLU table divides by 1024 (round half to even)
BN_MUL = [1024 // 64, 1024 // 32, 1024 // 32, 1024 // 16]
BN_ADD = [0, 128 * 1024, 128 * 1024, 0]


def model_spec() -> ConvSpec:
    weights = FILTERS[:, None, :, :] * COLOR[None, :, None, None] + ZERO_POINT  # [4, 3, 3, 3]
    c, h, w = INPUT_SHAPE
    return ConvSpec(
        in_shape=INPUT_SHAPE,
        out_channels=len(CHANNEL_NAMES),
        weights=weights.astype(np.uint8),
        kernel=3,
        pad_value=0,
        pool_type=1,
        arg_x=-ZERO_POINT << 15,
        shr_x=15,
        bn_mul=BN_MUL,
        bn_add=BN_ADD,
        bn_shift=[0] * 4,
        activation=Activation.relu(),
        # input at the top of KPU RAM (as the compiler allocates), output right below it
        src_row=32768 - 3 * 240 * 5,
        dst_row=32768 - 3 * 240 * 5 - 4 * 120 * 3,
        main_out=0,
    )


def build() -> bytes:
    spec = model_spec()
    n_out = int(np.prod(spec.out_shape))
    builder = V3Builder(main_mem_usage=n_out)
    builder.add_conv(spec)
    builder.add_output(0, n_out)
    return builder.build()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUTPUT, help=f"where to write (default {OUTPUT})")
    parser.add_argument("--check", action="store_true", help="only compare with the existing file")
    args = parser.parse_args(argv)
    data = build()
    if args.check:
        same = args.out.exists() and args.out.read_bytes() == data
        print(f"{args.out}: {'up to date' if same else 'DIFFERS from the generator'}")
        return 0 if same else 1
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_bytes(data)
    print(f"wrote {args.out} ({len(data)} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
