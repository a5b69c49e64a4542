"""nncase v0.2 (kmodel V4): its importers' op tables and the K210 target's KPU rules.

Each decision names the rule (:mod:`.sources`) it follows. The KPU decision is the one of
``fake_kpu_conv2d_transform`` and ``matmul_to_fake_kpu_conv2d_transform`` (which convs and matrix
products go to the KPU) and ``fuse_kpu_conv2d_pool_transform`` (which pools the KPU does), with the
default thresholds of ``ncc compile``.
"""

from __future__ import annotations

from ..floatmodel import FloatGraph, FloatOp
from .ops import CONV_OPS, FC_OPS, PAD_OPS, POOL_OPS, Window, fc_weights, window
from .verdicts import CompilerVerdict, OpVerdict

#: src/importer/tflite/opcode.def at v0.2.0-beta4
TFLITE_OPS = frozenset("""ABS ADD AVERAGE_POOL_2D CEIL CONCATENATION CONV_2D COS DEPTHWISE_CONV_2D DIV EXP FLOOR
FULLY_CONNECTED L2_NORMALIZATION LEAKY_RELU LOG LOGISTIC MAX_POOL_2D MAXIMUM MEAN MINIMUM MUL NEG PAD REDUCE_MAX
REDUCE_MIN RELU RELU6 RESHAPE RESIZE_BILINEAR RESIZE_NEAREST_NEIGHBOR RSQRT SIN SLICE SOFTMAX SPACE_TO_BATCH_ND
STRIDED_SLICE SUB SUM TRANSPOSE TRANSPOSE_CONV""".split())
#: src/importer/onnx/opcode.def at v0.2.0-beta4 (SpaceToDepth is commented out there)
ONNX_OPS = frozenset("""Abs Add AveragePool Ceil Concat Constant Conv ConvTranspose Cos Div Exp Floor LpNormalization
LeakyRelu Log MatMul MaxPool Max Min Mul Neg Pad ReduceMax ReduceMean ReduceMin ReduceSum Relu Reshape Resize Sin Slice
Softmax Sqrt Squeeze Sub Transpose""".split())
ACTIVATIONS = frozenset({"none", "relu", "relu_n1_to_1", "relu6"})
WEIGHTS_QUANTIZE_THRESHOLD = 64.0  # src/cli/modes.h:40
OUTPUT_QUANTIZE_THRESHOLD = 1024  # src/cli/modes.h:41


def supported_in_shape(shape: tuple[int, int, int, int]) -> bool:
    """kpu_utils.h:22-25."""
    return shape[1] <= 1024 and 4 <= shape[2] <= 256 and 4 <= shape[3] <= 512


def _kpu_conv_refusal(win: Window) -> tuple[str, tuple[str, ...]] | None:
    """Why fake_kpu_conv2d_transform leaves this conv on the CPU, or None when it takes it."""
    if not (win.groups == 1 or win.depthwise):
        return f"grouped conv ({win.groups} groups)", ("v02-kpu-conv",)
    if win.dilation != (1, 1):
        return f"dilation {win.dilation[0]}x{win.dilation[1]}", ("v02-kpu-conv",)
    if not (win.kernel[0] == win.kernel[1] and win.kernel[0] in (1, 3)):
        return f"{win.kernel[0]}x{win.kernel[1]} kernel (the KPU has 1x1 and 3x3)", ("v02-kpu-conv",)
    if not supported_in_shape(win.in_shape):
        n, c, h, w = win.in_shape
        return f"input {c}x{h}x{w} outside the KPU's c<=1024, 4<=h<=256, 4<=w<=512", ("v02-kpu-shape",)
    if win.out_shape[1] > 1024:
        return f"{win.out_shape[1]} output channels (the KPU has 1024)", ("v02-kpu-shape",)
    kpu_pad = 1 if win.kernel[0] == 3 else 0
    pre_h = sum(max(0, p - kpu_pad) for p in win.pad_h)
    pre_w = sum(max(0, p - kpu_pad) for p in win.pad_w)
    padded = (win.in_shape[0], win.in_shape[1], win.in_shape[2] + pre_h, win.in_shape[3] + pre_w)
    if not supported_in_shape(padded):
        return f"padded input {padded[2]}x{padded[3]} outside the KPU's 4..256 x 4..512", ("v02-kpu-shape",)
    if win.weights_range is not None and win.weights_range > WEIGHTS_QUANTIZE_THRESHOLD:
        return (f"weights range {win.weights_range:.1f} > {WEIGHTS_QUANTIZE_THRESHOLD:g} (--weights-quantize-threshold): "
                "kept float"), ("v02-weights",)
    return None


def check(graph: FloatGraph) -> CompilerVerdict:
    verdict = CompilerVerdict("nncase v0.2 → kmodel V4", 4)
    known = TFLITE_OPS if graph.format == "tflite" else ONNX_OPS
    table_rule = "v02-tflite-ops" if graph.format == "tflite" else "v02-onnx-ops"
    for t in [*graph.inputs, *graph.outputs]:
        if t.dtype != "float32":
            verdict.refuse(f"model {'input' if t in graph.inputs else 'output'} {t.name!r} is {t.dtype.upper()}: "
                           "'Invalid tesnor type' (nncase v0.2 imports float models)", "v02-float")
    consumers = graph.consumers()
    producers = graph.producer()
    kpu_convs: dict[int, Window] = {}
    decided: dict[int, OpVerdict] = {}
    for op in graph.ops:
        if op.index in decided:
            continue
        if op.op not in known:
            v = OpVerdict(op.index, "refused", f"not supported {graph.format} opcode {op.op}", (table_rule,))
            verdict.refuse(f"op {op.index} {op.op}: 'Not supported {'tflite' if graph.format == 'tflite' else 'ONNX'} "
                           f"opcode: {op.op}'", table_rule)
        else:
            v = _decide(op, graph, verdict, consumers, producers, kpu_convs, decided)
        decided[op.index] = v
    verdict.ops = [decided[op.index] for op in graph.ops]
    return verdict


def _decide(op: FloatOp, graph: FloatGraph, verdict: CompilerVerdict, consumers, producers, kpu_convs, decided) -> OpVerdict:
    activation = op.attrs.get("activation")
    if activation is not None and activation not in ACTIVATIONS:
        verdict.refuse(f"op {op.index} {op.op}: 'Not supported activation: {activation.upper()}'", "v02-act")
        return OpVerdict(op.index, "refused", f"fused activation {activation.upper()}", ("v02-act",))
    if op.op == "DEPTHWISE_CONV_2D":
        multiplier = int(op.attrs.get("depth_multiplier", 1))
        win = window(op, graph)
        if multiplier != 1 and not (win is not None and win.in_shape[1] == 1):
            verdict.refuse(f"op {op.index}: 'DepthwiseConv2d with depth_multiplier {multiplier} is not supported'", "v02-dw-mult")
            return OpVerdict(op.index, "refused", f"depth_multiplier {multiplier}", ("v02-dw-mult",))
    for t in op.constants:
        if t.dtype not in ("float32", "int32", "int64", "int8", "uint8") and op.op in CONV_OPS | FC_OPS:
            verdict.refuse(f"op {op.index} {op.op}: 'Tensor ({t.name}) of type {t.dtype.upper()} is not supported'", "v02-float")
            return OpVerdict(op.index, "refused", f"{t.dtype} weights", ("v02-float",))
    if op.op in CONV_OPS:
        win = window(op, graph)
        if win is None:
            return OpVerdict(op.index, "CPU", "not a 2-D conv on a 4-D map", ("v02-cpu",))
        refusal = _kpu_conv_refusal(win)
        if refusal is not None:
            return OpVerdict(op.index, "CPU", refusal[0], refusal[1] + ("v02-cpu",))
        kpu_convs[op.index] = win
        why = f"{'depthwise ' if win.depthwise else ''}{win.kernel[0]}x{win.kernel[1]} conv"
        rules: tuple[str, ...] = ("v02-kpu-conv", "v02-kpu-shape")
        if win.stride != (1, 1):
            if win.stride == (2, 2) and not win.depthwise:
                why += ", stride 2 as the KPU's 2x2 left-top pool"
            else:
                why += f", run at stride 1, every {_nth(win.stride[0])} value kept by a CPU strided slice"
            rules += ("v02-stride",)
        return OpVerdict(op.index, "KPU", why, rules)
    if op.op in POOL_OPS:
        fused = _pool_fusion(op, graph, consumers, producers, kpu_convs)
        if fused is not None:
            return OpVerdict(op.index, "fused", f"into the KPU conv {fused} as its pool", ("v02-pool-fuse",), into=fused)
        return OpVerdict(op.index, "CPU", "reduce_window2d on the CPU", ("v02-cpu",))
    if op.op in FC_OPS:
        w = fc_weights(op)
        if w is None:
            return OpVerdict(op.index, "CPU", "matmul without constant weights", ("v02-cpu",))
        if w.dtype.kind == "f" and float(w.max() - w.min()) > WEIGHTS_QUANTIZE_THRESHOLD:
            return OpVerdict(op.index, "CPU", f"weights range {float(w.max() - w.min()):.1f} > 64: kept float", ("v02-weights",))
        if w.size < OUTPUT_QUANTIZE_THRESHOLD or max(w.shape) > 1024:
            why = (f"{w.size} weights < {OUTPUT_QUANTIZE_THRESHOLD}" if w.size < OUTPUT_QUANTIZE_THRESHOLD
                   else f"weights {w.shape[0]}x{w.shape[1]} beyond 1024")
            return OpVerdict(op.index, "CPU", f"matmul on the CPU ({why})", ("v02-matmul", "v02-cpu"))
        return OpVerdict(op.index, "KPU", f"{w.shape[0]}x{w.shape[1]} matmul as a 1x1 KPU conv", ("v02-matmul",))
    if op.op == "RELU6" and op.activations:
        source = producers.get(op.activations[0].name)
        if source is not None and source.op in CONV_OPS and len(consumers.get(source.outputs[0].name, [])) == 1:
            if source.index in kpu_convs:
                kpu_convs[op.index] = kpu_convs[source.index]  # a pool after it sees the conv
            return OpVerdict(op.index, "fused", f"into conv {source.index}'s activation", ("v02-clamp-fuse",), into=source.index)
    if op.op in PAD_OPS and op.op != "SPACE_TO_BATCH_ND" and len(consumers.get(op.outputs[0].name, [])) == 1:
        nxt = consumers[op.outputs[0].name][0]
        if nxt.op in CONV_OPS:
            return OpVerdict(op.index, "folded", f"into conv {nxt.index}'s padding", ("v02-pad-fold",), into=nxt.index)
    return OpVerdict(op.index, "CPU", "runs on the CPU", ("v02-cpu",))


def _pool_fusion(op: FloatOp, graph: FloatGraph, consumers, producers, kpu_convs) -> int | None:
    """The KPU conv this pool fuses into (fuse_kpu_conv2d_pool.cpp:43-72), or None."""
    if not op.activations:
        return None
    source = producers.get(op.activations[0].name)
    if source is None or source.index not in kpu_convs:
        return None
    conv = kpu_convs[source.index]
    if conv.depthwise or conv.stride != (1, 1) or len(consumers.get(source.outputs[0].name, [])) != 1:
        return None
    while source.op not in CONV_OPS:  # a clamp fused into the conv: the pool follows the conv itself
        source = producers[source.activations[0].name]
    win = window(op, graph)
    if win is None or win.kernel[0] != win.kernel[1] or win.stride[0] != win.stride[1] or win.dilation != (1, 1):
        return None
    if not supported_in_shape(win.in_shape) or win.out_shape[1] > 1024:
        return None
    k, s = win.kernel[0], win.stride[0]
    if (k, s) in ((2, 2), (4, 4)):
        expected = ((0, 0), (0, 0))
    elif (k, s) == (2, 1):
        expected = ((0, 1), (0, 1))
    else:
        return None
    return source.index if (win.pad_h, win.pad_w) == expected else None


def _nth(n: int) -> str:
    return {1: "", 2: "2nd", 3: "3rd"}.get(n, f"{n}th")
