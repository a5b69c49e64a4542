"""A small digit classifier as a float ONNX model and as the kmodel V3 a K210 compiler would make of it.

No public classifier comes with both its float source and its kmodel, so the pair is made here:
two 3x3 conv + ReLU + 2x2 max-pool blocks with seeded random filters (random features), a fully
connected layer fitted by ridge regression on the drawn digits of :mod:`eval_data`, and softmax. The
kmodel is quantised as nncase v0.1 does it — per-layer uint8 weights with a zero point, activations
calibrated on images (``real = scale·q + bias``), the offsets in ``arg_x``/``arg_w``/``arg_add``, the
output scale in the batch norm and the ReLU table — and written with maixemu's V3 writer: two
K210_CONV layers (pools on the KPU), DEQUANTIZE, FULLY_CONNECTED and SOFTMAX on the CPU.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from eval_data import draw_digit
from maixemu.kmodel.build import Activation, ConvSpec, V3Builder
from maixemu.kmodel.kpu.ram import KPU_ROW_BYTES, kpu_bytes

SIZE = 32
CHANNELS = (3, 8, 16)


def _conv(x: np.ndarray, w: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(N, C, H, W) 3x3 'same' conv + bias, float64."""
    n, c, h, wd = x.shape
    p = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    cols = np.stack([p[:, :, dy:dy + h, dx:dx + wd] for dy in range(3) for dx in range(3)], axis=2)  # N,C,9,H,W
    return np.einsum("ncthw,oct->nohw", cols, w.reshape(w.shape[0], c, 9)) + b[None, :, None, None]


def _pool(x: np.ndarray) -> np.ndarray:
    n, c, h, w = x.shape
    return x.reshape(n, c, h // 2, 2, w // 2, 2).max(axis=(3, 5))


def features(x: np.ndarray, params) -> np.ndarray:
    (w1, b1), (w2, b2) = params
    a = _pool(np.maximum(_conv(x, w1, b1), 0))
    return _pool(np.maximum(_conv(a, w2, b2), 0))


def digit_images(count_per_class: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(N, 3, 32, 32) uint8 pictures of digits and their labels."""
    rng = np.random.default_rng(seed)
    pictures, labels = [], []
    for digit in range(10):
        for _ in range(count_per_class):
            img = draw_digit(digit, rng, SIZE).convert("RGB")
            pictures.append(np.asarray(img, dtype=np.uint8).transpose(2, 0, 1))
            labels.append(digit)
    return np.stack(pictures), np.asarray(labels)


def train(seed: int = 11):
    """The float network's parameters: random conv filters, a ridge-regression classifier on top."""
    rng = np.random.default_rng(seed)
    params = []
    for cin, cout in zip(CHANNELS[:-1], CHANNELS[1:]):
        w = rng.normal(0, 1.0 / np.sqrt(9 * cin), (cout, cin, 3, 3))
        params.append((w, rng.normal(0, 0.05, cout)))
    pictures, labels = digit_images(30, seed + 1)
    x = pictures.astype(np.float64) / 255.0
    f = features(x, params).reshape(len(x), -1)
    target = np.eye(10)[labels]
    fm = np.concatenate([f, np.ones((len(f), 1))], axis=1)
    solution = np.linalg.solve(fm.T @ fm + 1e-2 * np.eye(fm.shape[1]), fm.T @ target)
    return params, solution[:-1].T * 8.0, solution[-1] * 8.0, x  # (10, F) weights, (10,) bias; x8: softmax peaks


def write_onnx(path: Path, params, fc_w, fc_b) -> Path:
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    (w1, b1), (w2, b2) = params
    inits = [numpy_helper.from_array(np.asarray(a, np.float32), n) for a, n in
             ((w1, "w1"), (b1, "b1"), (w2, "w2"), (b2, "b2"), (fc_w, "fc_w"), (fc_b, "fc_b"))]
    nodes = [
        helper.make_node("Conv", ["input", "w1", "b1"], ["conv1"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["conv1"], ["relu1"]),
        helper.make_node("MaxPool", ["relu1"], ["pool1"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Conv", ["pool1", "w2", "b2"], ["conv2"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["conv2"], ["relu2"]),
        helper.make_node("MaxPool", ["relu2"], ["pool2"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Flatten", ["pool2"], ["flat"], axis=1),
        helper.make_node("Gemm", ["flat", "fc_w", "fc_b"], ["logits"], transB=1),
        helper.make_node("Softmax", ["logits"], ["scores"], axis=1),
    ]
    graph = helper.make_graph(nodes, "digits", [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 3, SIZE, SIZE])],
                              [helper.make_tensor_value_info("scores", TensorProto.FLOAT, [1, 10])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    onnx.save(model, str(path))
    return path


def _quantise_weights(w: np.ndarray) -> tuple[np.ndarray, float, int]:
    lo, hi = min(float(w.min()), 0.0), max(float(w.max()), 0.0)
    scale = (hi - lo) / 255.0
    zero = int(round(-lo / scale))
    return np.clip(np.round(w / scale) + zero, 0, 255).astype(np.uint8), scale, zero


def write_kmodel(path: Path, params, fc_w, fc_b, calibration: np.ndarray) -> Path:
    """The V3 kmodel: real = scale·q for every ReLU output (zero point 0), calibrated on max values."""
    (w1, b1), (w2, b2) = params
    a1 = np.maximum(_conv(calibration, w1, b1), 0)
    a2 = np.maximum(_conv(_pool(a1), w2, b2), 0)
    in_scale = 1.0 / 255.0  # the float model reads x / 255; zero point 0 (pad_value 0)
    out_scales = [float(a1.max()) / 255.0, float(a2.max()) / 255.0]
    shapes = [(3, SIZE, SIZE), (8, SIZE // 2, SIZE // 2)]
    rows = [kpu_bytes(*s) // KPU_ROW_BYTES for s in shapes]
    specs = []
    scales = [in_scale, out_scales[0]]
    for i, ((w, b), in_shape) in enumerate(zip(params, shapes)):
        q, sw, zw = _quantise_weights(w)
        real_per_acc = scales[i] * sw  # acc = Σ (x_q)(w_q - zw): x zero point 0
        ratio = 1024.0 * real_per_acc / out_scales[i]  # bn = q_out * 1024 for the ReLU table (out = bn >> 10)
        shift = 15
        while abs(ratio) * (1 << shift) >= (1 << 23) and shift > 0:
            shift -= 1
        mul = [int(round(ratio * (1 << shift)))] * w.shape[0]
        add = [int(round(1024.0 * bc / out_scales[i])) for bc in b]
        specs.append(ConvSpec(in_shape=in_shape, out_channels=w.shape[0], weights=q, kernel=3, pool_type=1, pad_value=0,
                              arg_x=-zw, arg_w=0, arg_add=0, bn_mul=mul, bn_add=add, bn_shift=[shift] * w.shape[0],
                              activation=Activation.relu(), src_row=0 if i == 0 else rows[0], dst_row=rows[0] if i == 0 else 0,
                              main_out=None if i == 0 else 0))
    features_out = 16 * (SIZE // 4) ** 2
    fc_at = 4 * features_out  # the uint8 codes at 0, the floats after them
    builder = V3Builder(main_mem_usage=fc_at + 4 * features_out + 4 * 20)
    for spec in specs:
        builder.add_conv(spec)
    builder.add_dequantize(0, fc_at, features_out, scale=out_scales[1], bias=0.0)
    builder.add_fully_connected(fc_at, fc_at + 4 * features_out, np.asarray(fc_w, np.float32), np.asarray(fc_b, np.float32))
    builder.add_softmax(fc_at + 4 * features_out, fc_at + 4 * features_out + 40, 10)
    builder.add_output(fc_at + 4 * features_out + 40, 40)
    path.write_bytes(builder.build())
    return path


def make_pair(folder: Path, seed: int = 11) -> tuple[Path, Path]:
    """``digits.kmodel`` and ``digits.onnx`` in ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    params, fc_w, fc_b, calibration = train(seed)
    onnx_path = write_onnx(folder / "digits.onnx", params, fc_w, fc_b)
    kmodel_path = write_kmodel(folder / "digits.kmodel", params, fc_w, fc_b, calibration[::3])
    return kmodel_path, onnx_path
