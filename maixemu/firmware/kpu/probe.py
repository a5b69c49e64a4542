"""What CanMV's ``feat/kpu`` build reads from a kmodel before and after loading it (``kpu_helper.c``).

* :func:`model_size` — ``maix_kpu_helper_probe_model_size``: the byte count a model's headers
  declare (headers plus every layer's or node's ``body_size``). ``load()`` without ``size=`` reads
  that many bytes from flash (probing the first 64 KiB) and refuses a file whose length differs.
* :func:`input_chw` / :func:`output_chw` — ``maix_kpu_helper_get_input_shape`` / ``..._output_shape``:
  the shapes ``run()`` checks and ``Yolo2`` decodes with. The firmware knows an output shape only
  when the model ends in a KPU convolution followed by a dequantize (a YOLO head); otherwise the
  shape is "invalid" and prints as such.
"""

from __future__ import annotations

import struct

from ...kmodel import Model

#: ``load(offset)`` without ``size=`` probes this much flash (PROBE_MODEL_TEMP_BUFF_SIZE).
FLASH_PROBE_BYTES = 64 * 1024
_KMDL = 0x4B4D444C  # 'KMDL' as the little-endian word the header starts with
_V3_HEADER = struct.Struct("<7I")  # version flags arch layers_length max_start_address main_mem output_count
_V4_HEADER = struct.Struct("<10I")  # identifier version flags target constants main_mem nodes inputs outputs reserved
_PAIR = struct.Struct("<2I")


def model_size(data: bytes) -> int:
    """The size a kmodel's headers declare, or -1 when the firmware cannot tell (not V3/V4, truncated)."""
    if len(data) < 4:
        return -1
    first = struct.unpack_from("<I", data)[0]
    if first == 3 and len(data) >= _V3_HEADER.size:
        _version, _flags, arch, layers, _start, _main, outputs = _V3_HEADER.unpack_from(data)
        if arch != 0:
            return -1
        headers = _V3_HEADER.size + 8 * outputs
        return _sum_bodies(data, headers, layers, headers + 8 * layers)
    if first == _KMDL and len(data) >= _V4_HEADER.size:
        fields = _V4_HEADER.unpack_from(data)
        version, target, constants, nodes, inputs, outputs = fields[1], fields[3], fields[4], fields[6], fields[7], fields[8]
        if version != 4 or target not in (0, 1):
            return -1  # V5 would need the nncase v1 runtime, which released builds leave out
        node_headers = _V4_HEADER.size + 16 * inputs + 16 * inputs + 16 * outputs + constants
        return _sum_bodies(data, node_headers, nodes, node_headers + 8 * nodes)
    return -1


def _sum_bodies(data: bytes, first_header: int, count: int, headers_end: int) -> int:
    if headers_end > len(data):
        return -1
    total = headers_end
    for i in range(count):
        total += _PAIR.unpack_from(data, first_header + 8 * i)[1]
    return total & 0xFFFFFFFF


def _chw(shape) -> tuple[int, int, int]:
    c, h, w = ((1, 1, 1) + tuple(int(s) for s in shape))[-3:]
    return c, h, w


def input_chw(model: Model) -> tuple[int, int, int] | None:
    """(C, H, W) of the model input as the firmware reads it, or None ("invaild")."""
    if model.version == 3:
        first = model.layers[0] if model.layers else None
        if first is None or first.kind != "K210_CONV" or not first.input_shapes:
            return None
        return _chw(first.input_shapes[0])
    shape = tuple(model.inputs[0].shape) if model.inputs else ()
    if len(shape) != 4:
        return None
    return int(shape[1]), int(shape[2]), int(shape[3])


def output_chw(model: Model) -> tuple[int, int, int] | None:
    """(C, H, W) of a model ending in KPU conv + dequantize (the shape ``Yolo2`` needs), else None."""
    if len(model.layers) < 2:
        return None
    last, conv = model.layers[-1], model.layers[-2]
    conv_kind, dequantize = ("K210_CONV", "DEQUANTIZE") if model.version == 3 else ("kpu_conv2d", "dequantize")
    if last.kind != dequantize or conv.kind != conv_kind or not conv.output_shapes:
        return None
    shape = tuple(int(s) for s in conv.output_shapes[0])
    if model.version != 3:
        if len(shape) != 4 or shape[0] != 1:
            return None
        shape = shape[1:]
    return _chw(shape)


__all__ = ["FLASH_PROBE_BYTES", "model_size", "input_chw", "output_chw"]
