"""nncase v0.1 (kmodel V3): the TFLite importer's ops and options, and the K210 transforms.

v0.1 has no CPU convolution: every conv must be taken by one of the K210 transforms (same-padded
1x1/3x3, stride-2 3x3, PAD + VALID 3x3, or the separable PAD + stride-2 depthwise + 1x1 pattern),
else the converter finds no layer for it and stops (``v01-no-cpu-conv``). The other ops either have
a CPU layer (``v01-cpu-layers``), are fused (pools and leaky ReLU after a KPU conv) or stop the
conversion. The transforms are tried in ``ncc``'s order (Program.cs:201-230).
"""

from __future__ import annotations

import numpy as np

from ..floatmodel import FloatGraph, FloatOp
from .ops import CONV_OPS, PAD_OPS, POOL_OPS, Window, fc_weights, pad_amounts, window
from .verdicts import CompilerVerdict, OpVerdict

#: TfLiteToGraphConverter.cs:64-103 at v0.1.0-rc5
TFLITE_OPS = frozenset("""SPACE_TO_BATCH_ND CONV_2D DEPTHWISE_CONV_2D AVERAGE_POOL_2D L2_NORMALIZATION ADD MUL
FULLY_CONNECTED MAX_POOL_2D SOFTMAX CONCATENATION MAXIMUM RESIZE_NEAREST_NEIGHBOR LEAKY_RELU MEAN RESHAPE PAD
LOGISTIC""".split())
ACTIVATIONS = frozenset({"none", "relu", "relu6"})
#: ops with a K210 converter layer (Converters/Layers/*.cs): they run on the CPU when not on the KPU
CPU_LAYERS = frozenset({"ADD", "AVERAGE_POOL_2D", "MAX_POOL_2D", "CONCATENATION", "FULLY_CONNECTED", "SOFTMAX",
                        "LOGISTIC", "L2_NORMALIZATION", "RESHAPE", "RESIZE_NEAREST_NEIGHBOR", "MEAN"})


def check(graph: FloatGraph) -> CompilerVerdict:
    verdict = CompilerVerdict("nncase v0.1 → kmodel V3", 3)
    if graph.format != "tflite":
        verdict.refuse(f"nncase v0.1 has no {graph.format.upper()} importer (tflite, caffe, paddle only)", "v01-formats")
        verdict.ops = [OpVerdict(op.index, "refused", "no ONNX importer", ("v01-formats",)) for op in graph.ops]
        return verdict
    consumers = graph.consumers()
    producers = graph.producer()
    decided: dict[int, OpVerdict] = {}
    kpu_convs: dict[int, Window] = {}
    for op in graph.ops:
        if op.index in decided:
            continue
        refusal = _import_refusal(op, graph)
        if refusal is not None:
            verdict.refuse(f"op {op.index} {op.op}: {refusal[0]}", *refusal[1])
            decided[op.index] = OpVerdict(op.index, "refused", refusal[0], refusal[1])
            continue
        decided.update(_map(op, graph, consumers, producers, kpu_convs, decided, verdict))
    verdict.ops = [decided[op.index] for op in graph.ops]
    return verdict


def _import_refusal(op: FloatOp, graph: FloatGraph) -> tuple[str, tuple[str, ...]] | None:
    """What TfLiteToGraphConverter throws for this op, or None."""
    if op.op not in TFLITE_OPS:
        return f"LayerNotSupportedException: {op.op}", ("v01-ops",)
    for t in op.constants:
        if op.op in CONV_OPS | {"FULLY_CONNECTED"} and t.dtype != "float32":
            return f"expect FLOAT32 tensor but got {t.dtype.upper()}", ("v01-float",)
    activation = op.attrs.get("activation")
    if activation is not None and activation not in ACTIVATIONS:
        return f"NotSupportedException: activation {activation.upper()}", ("v01-act",)
    if op.op == "PAD":
        pads = pad_amounts(op, graph)
        if pads != [0, 0, 1, 1, 1, 1, 0, 0]:
            return f"Only paddings of [[0,0],[1,1],[1,1],[0,0]] is supported (got {pads})", ("v01-pad",)
    if op.op == "DEPTHWISE_CONV_2D":
        win = window(op, graph)
        if int(op.attrs.get("depth_multiplier", 1)) != 1 and not (win is not None and win.in_shape[1] == 1):
            return "depth_multiplier must be 1", ("v01-dw-mult",)
    if op.op == "MUL" and not any(t.constant and not t.shape for t in op.inputs):
        return "Only scalar multiply is supported", ("v01-mul",)
    if op.op == "CONCATENATION" and int(op.attrs.get("axis", 3)) != 3:
        return f"Axis of concatenation must be 3 (got {op.attrs.get('axis')})", ("v01-concat",)
    if op.op == "MEAN":
        axes = next((np.asarray(t.data).reshape(-1).tolist() for t in op.constants), None)
        if axes != [1, 2]:
            return f"Only [1,2] axis mean is supported (got {axes})", ("v01-mean",)
    return None


def _only_consumer(op: FloatOp, consumers) -> FloatOp | None:
    following = consumers.get(op.outputs[0].name, []) if op.outputs else []
    return following[0] if len(following) == 1 else None


def _map(op: FloatOp, graph: FloatGraph, consumers, producers, kpu_convs, decided, verdict) -> dict[int, OpVerdict]:
    """This op's (and any op it takes along) unit, following the K210 transforms in ncc's order."""
    if op.op in PAD_OPS:
        conv = _only_consumer(op, consumers)
        win = window(conv, graph) if conv is not None else None
        if conv is not None and win is not None:
            # K210SeparableConv2dTransform: PAD → 3x3 s2 VALID depthwise → 1x1 s1 conv
            if win.depthwise and win.kernel == (3, 3) and win.stride == (2, 2) and win.padding == "valid":
                pointwise = _only_consumer(conv, consumers)
                pw = window(pointwise, graph) if pointwise is not None else None
                if pointwise is not None and pw is not None and not pw.depthwise and pw.kernel == (1, 1) and pw.stride == (1, 1):
                    kpu_convs[pointwise.index] = pw
                    return {
                        op.index: OpVerdict(op.index, "folded", f"into the depthwise conv {conv.index}", ("v01-separable",), conv.index),
                        conv.index: OpVerdict(conv.index, "KPU", "3x3 depthwise run at stride 1", ("v01-separable",)),
                        pointwise.index: OpVerdict(pointwise.index, "KPU", "1x1 conv with the 2x2 left-top pool (the stride 2)",
                                                   ("v01-separable",)),
                    }
            # K210SpaceToBatchNdAndValidConv2dTransform: PAD → 3x3 VALID conv (depthwise: stride 1)
            if win.kernel == (3, 3) and win.padding == "valid" and (win.stride == (1, 1) or (win.stride == (2, 2) and not win.depthwise)):
                kpu_convs[conv.index] = win
                pool = ", stride 2 as the 2x2 left-top pool" if win.stride == (2, 2) else ""
                return {
                    op.index: OpVerdict(op.index, "folded", f"into conv {conv.index}", ("v01-pad-conv",), conv.index),
                    conv.index: OpVerdict(conv.index, "KPU", f"{'depthwise ' if win.depthwise else ''}3x3 conv with the PAD{pool}",
                                          ("v01-pad-conv",)),
                }
        verdict.refuse(f"op {op.index} {op.op}: no K210 transform takes it and no layer converts it: "
                       "LayerNotSupportedException", "v01-pad-conv", "v01-no-cpu-conv")
        return {op.index: OpVerdict(op.index, "refused", "a PAD not followed by a 3x3 VALID conv has no converter",
                                    ("v01-pad-conv", "v01-no-cpu-conv"))}
    if op.op in CONV_OPS:
        win = window(op, graph)
        if win is None:
            verdict.refuse(f"op {op.index} {op.op}: not a 2-D conv", "v01-no-cpu-conv")
            return {op.index: OpVerdict(op.index, "refused", "not a 2-D conv", ("v01-no-cpu-conv",))}
        square = win.kernel[0] == win.kernel[1]
        if (square and win.kernel[0] in (1, 3) and win.stride == (1, 1) and min(win.in_shape[2:]) >= 4
                and min(win.out_shape[2:]) >= 4 and (win.kernel[0] == 1 or win.padding == "same")):
            kpu_convs[op.index] = win
            return {op.index: OpVerdict(op.index, "KPU", f"{'depthwise ' if win.depthwise else ''}{win.kernel[0]}x{win.kernel[0]} conv",
                                        ("v01-same-conv",))}
        if (not win.depthwise and win.kernel == (3, 3) and win.stride == (2, 2) and win.padding == "same"
                and win.in_shape[2] % 2 == 0 and win.in_shape[3] % 2 == 0):
            return {op.index: OpVerdict(op.index, "KPU", "3x3 stride-2 conv as a conv + 2x2 left-top pool", ("v01-stride2-conv",))}
        if win.kernel == (1, 1) and win.stride == (1, 1) and win.in_shape[2:] == (1, 1):
            return _fc(op, win.in_shape[1], win.out_shape[1], "1x1 conv on a 1x1 input as FULLY_CONNECTED", ("v01-conv1x1-fc",))
        reason = (f"{'depthwise ' if win.depthwise else ''}{win.kernel[0]}x{win.kernel[1]} conv, stride {win.stride[0]}, "
                  f"{win.padding} padding, input {win.in_shape[2]}x{win.in_shape[3]}: no K210 transform takes it")
        verdict.refuse(f"op {op.index} {op.op}: {reason} (v0.1 has no CPU conv: LayerNotSupportedException)",
                       "v01-same-conv", "v01-stride2-conv", "v01-no-cpu-conv")
        return {op.index: OpVerdict(op.index, "refused", reason, ("v01-same-conv", "v01-stride2-conv", "v01-no-cpu-conv"))}
    if op.op in POOL_OPS:
        source = producers.get(op.activations[0].name) if op.activations else None
        win = window(op, graph)
        if source is not None and source.index in kpu_convs and win is not None:
            conv = kpu_convs[source.index]
            k, s = win.kernel[0], win.stride[0]
            even = win.in_shape[2] % k == 0 and win.in_shape[3] % k == 0
            ok = (win.kernel[0] == win.kernel[1] and win.stride[0] == win.stride[1] and win.activation == "none" and (
                (k == 2 and s == 2 and (win.padding == "valid" or even)) or (k == 2 and s == 1 and win.padding == "same")
                or (k == 4 and s == 4 and (win.padding == "valid" or even))))
            if ok and not conv.depthwise and _only_consumer(source, consumers) is op:
                return {op.index: OpVerdict(op.index, "fused", f"into the KPU conv {source.index} as its pool", ("v01-pool-fuse",),
                                            source.index)}
        return {op.index: OpVerdict(op.index, "CPU", "pool on the CPU", ("v01-cpu-layers",))}
    if op.op == "FULLY_CONNECTED":
        w = fc_weights(op)
        src = op.activations[0].size if op.activations else 0
        out = op.outputs[0].size if op.outputs else 0
        return _fc(op, src, out, "", ())
    if op.op == "LEAKY_RELU":
        source = producers.get(op.activations[0].name) if op.activations else None
        if source is not None and source.index in kpu_convs and kpu_convs[source.index].activation == "none":
            return {op.index: OpVerdict(op.index, "fused", f"into the KPU conv {source.index}'s activation", ("v01-leaky",), source.index)}
        verdict.refuse(f"op {op.index} LEAKY_RELU: only after a KPU conv without activation (no CPU layer)", "v01-leaky", "v01-cpu-layers")
        return {op.index: OpVerdict(op.index, "refused", "LEAKY_RELU not after a KPU conv has no converter", ("v01-leaky", "v01-cpu-layers"))}
    if op.op in ("MAXIMUM", "MUL"):
        verdict.refuse(f"op {op.index} {op.op}: only as the MUL + MAXIMUM leaky ReLU after a KPU conv (no CPU layer)",
                       "v01-leaky", "v01-cpu-layers")
        return {op.index: OpVerdict(op.index, "refused", f"{op.op} has no CPU layer", ("v01-leaky", "v01-cpu-layers"))}
    if op.op in CPU_LAYERS:
        return {op.index: OpVerdict(op.index, "CPU", "CPU layer", ("v01-cpu-layers",))}
    verdict.refuse(f"op {op.index} {op.op}: no K210 layer converts it", "v01-cpu-layers")
    return {op.index: OpVerdict(op.index, "refused", "no converter", ("v01-cpu-layers",))}


def _fc(op: FloatOp, inputs: int, outputs: int, what: str, rules: tuple[str, ...]) -> dict[int, OpVerdict]:
    if inputs <= 1024 and outputs <= 1024:
        return {op.index: OpVerdict(op.index, "KPU", (what + ": " if what else "") + f"{inputs}x{outputs} fully connected on the KPU",
                                    rules + ("v01-fc-kpu",))}
    return {op.index: OpVerdict(op.index, "CPU", (what + ": " if what else "") + f"{inputs}x{outputs} fully connected (float)",
                                rules + ("v01-fc-kpu", "v01-cpu-layers"))}
