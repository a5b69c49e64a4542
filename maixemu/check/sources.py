"""Every rule ``maixemu check`` applies, with the source lines it was read from.

Paths are in nncase's repository (github.com/kendryte/nncase) at the tags of the last releases of
each series: ``v0.1.0-rc5`` (the C# compiler, kmodel V3) and ``v0.2.0-beta4`` (the C++ compiler,
kmodel V4); MaixPy's are in sipeed/MaixPy-v1. The check prints the rule ids in every table cell and
lists the rules it applied with these sources, so a verdict can always be traced to the code it
follows (``docs/check.md`` has the whole table).
"""

from __future__ import annotations

from dataclasses import dataclass

V01 = "nncase v0.1.0-rc5"
V02 = "nncase v0.2.0-beta4"


@dataclass(frozen=True)
class Rule:
    id: str
    text: str
    source: str


RULES: dict[str, Rule] = {r.id: r for r in (
    # --- nncase v0.1 (kmodel V3) -------------------------------------------------------------------
    Rule("v01-formats", "nncase v0.1 imports tflite, caffe and paddle models (no ONNX importer)",
         f"{V01} src/NnCase.Cli/Program.cs:91-119 (input format switch)"),
    Rule("v01-ops", "the TFLite importer converts 18 builtin ops; any other op is LayerNotSupportedException",
         f"{V01} src/NnCase.Converter/Converters/TfLiteToGraphConverter.cs:64-103"),
    Rule("v01-float", "every constant tensor must be FLOAT32 (a quantised .tflite is refused)",
         f"{V01} src/NnCase.Converter/Converters/TfLiteToGraphConverter.cs:418"),
    Rule("v01-act", "fused activations: NONE, RELU, RELU6 only",
         f"{V01} src/NnCase.Converter/Converters/TfLiteToGraphConverter.cs:473-484"),
    Rule("v01-pad", "PAD: only paddings [[0,0],[1,1],[1,1],[0,0]]",
         f"{V01} src/NnCase.Converter/Converters/TfLiteToGraphConverter.cs:127-128"),
    Rule("v01-dw-mult", "DEPTHWISE_CONV_2D: depth_multiplier must be 1 (unless the input has one channel)",
         f"{V01} src/NnCase.Converter/Converters/TfLiteToGraphConverter.cs:149-168"),
    Rule("v01-mul", "MUL: only by a scalar", f"{V01} src/NnCase.Converter/Converters/TfLiteToGraphConverter.cs:241-263"),
    Rule("v01-concat", "CONCATENATION: axis must be 3 (channels)",
         f"{V01} src/NnCase.Converter/Converters/TfLiteToGraphConverter.cs:335-336"),
    Rule("v01-mean", "MEAN: only over axes [1, 2] (a global average pool)",
         f"{V01} src/NnCase.Converter/Converters/TfLiteToGraphConverter.cs:383-401"),
    Rule("v01-same-conv", "KPU conv: 1x1 or 3x3 square kernel, stride 1, input and output at least 4x4, 3x3 with SAME padding",
         f"{V01} src/NnCase.Converter.K210/Transforms/K210SameConv2dTransform.cs:18-38"),
    Rule("v01-stride2-conv", "KPU conv: 3x3 stride 2 SAME (not depthwise) on an even-sized input, as a conv + left-top pool",
         f"{V01} src/NnCase.Converter.K210/Transforms/K210Stride2Conv2dTransform.cs:18-24"),
    Rule("v01-pad-conv", "KPU conv: PAD/SPACE_TO_BATCH_ND then a 3x3 VALID conv (depthwise: stride 1) folds the padding into the KPU",
         f"{V01} src/NnCase.Converter.K210/Transforms/K210SpaceToBatchNdAndValidConv2dTransform.cs:19-49"),
    Rule("v01-separable", "KPU: PAD, 3x3 stride-2 VALID depthwise, 1x1 conv: the depthwise runs at stride 1 and the 1x1 conv pools",
         f"{V01} src/NnCase.Converter.K210/Transforms/K210SeparableConv2dTransform.cs:18-56"),
    Rule("v01-no-cpu-conv", "a conv no K210 transform takes has no converter: LayerNotSupportedException (v0.1 has no CPU conv)",
         f"{V01} src/NnCase.Converter.K210/Converters/Stages/Convert/Converter.cs:36-48"),
    Rule("v01-fc-kpu", "FULLY_CONNECTED with at most 1024 inputs and outputs runs on the KPU (as a 1x1 conv)",
         f"{V01} src/NnCase.Converter.K210/Transforms/K210FullyConnectedTransform.cs:18"),
    Rule("v01-conv1x1-fc", "a 1x1 stride-1 conv on a 1x1 input becomes a FULLY_CONNECTED",
         f"{V01} src/NnCase.Converter/Transforms/Conv2d1x1ToFullyConnectedTransform.cs:16-19"),
    Rule("v01-pool-fuse", "a max/average pool after a KPU conv (not depthwise) is fused: 2x2 s2 (VALID or no remainder), 2x2 s1 SAME, 4x4 s4",
         f"{V01} src/NnCase.Converter.K210/Transforms/K210Conv2dWithMaxAvgPoolTransform.cs:18-48"),
    Rule("v01-leaky", "LEAKY_RELU (or MUL by a scalar + MAXIMUM) after a KPU conv without activation is fused into the KPU's activation",
         f"{V01} src/NnCase.Converter.K210/Transforms/K210Conv2dWithNonTrivialActTransform.cs:18-32; "
         "src/NnCase.Converter/Transforms/LeakyReluTransform.cs:16-32"),
    Rule("v01-cpu-layers", "CPU layers v0.1 can emit: add, average/max pool, concatenation, fully connected, global average pool, "
         "L2 normalisation, logistic, reshape, resize nearest neighbour, softmax (anything else has no converter)",
         f"{V01} src/NnCase.Converter.K210/Converters/Layers/*.cs (LayerConverter attributes); Converter.cs:36-48"),
    Rule("v01-kpu-ram", "the KPU allocator has 2 MiB (32768 rows of 64 bytes)",
         f"{V01} src/NnCase.Converter.K210/Converters/Stages/Inference/KPUMemoryAllocator.cs:12"),
    # --- nncase v0.2 (kmodel V4) -------------------------------------------------------------------
    Rule("v02-formats", "nncase v0.2 imports tflite, caffe and onnx models", f"{V02} src/cli/compile.cpp:126-133"),
    Rule("v02-tflite-ops", "the TFLite importer knows 40 ops (opcode.def); others: 'Not supported tflite opcode'",
         f"{V02} src/importer/tflite/opcode.def:1-40; src/importer/tflite/tflite_importer.cpp:136-144"),
    Rule("v02-onnx-ops", "the ONNX importer knows 36 ops (opcode.def); others: 'Not supported ONNX opcode'",
         f"{V02} src/importer/onnx/opcode.def:1-37; src/importer/onnx/onnx_importer.cpp:171"),
    Rule("v02-float", "model inputs and outputs must be FLOAT32; constants FLOAT32 (or INT8/UINT8 with a scale, dequantised)",
         f"{V02} src/importer/tflite/tflite_importer.h:114-138,187-195"),
    Rule("v02-act", "fused activations: NONE, RELU, RELU_N1_TO_1, RELU6", f"{V02} src/importer/tflite/tflite_importer.h:218-231"),
    Rule("v02-dw-mult", "DEPTHWISE_CONV_2D: depth_multiplier must be 1 (unless the input has one channel)",
         f"{V02} src/importer/tflite/ops/conv2d.cpp:80-88"),
    Rule("v02-kpu-conv", "KPU conv: groups 1 or depthwise, dilation 1, 1x1 or 3x3 square kernel",
         f"{V02} src/transforms/hlir/k210/fake_kpu_conv2d.cpp:56-58; src/transforms/include/hlir/transforms/k210/kpu_utils.h:37-40"),
    Rule("v02-kpu-shape", "KPU input: channels <= 1024, 4 <= height <= 256, 4 <= width <= 512 (also after the padding the KPU "
         "cannot do itself); output channels <= 1024",
         f"{V02} src/transforms/include/hlir/transforms/k210/kpu_utils.h:22-30; src/transforms/hlir/k210/fake_kpu_conv2d.cpp:59-68"),
    Rule("v02-weights", "weights whose range (max - min) exceeds --weights-quantize-threshold (64) stay float on the CPU",
         f"{V02} src/transforms/hlir/k210/fake_kpu_conv2d.cpp:49-54; src/cli/modes.h:40"),
    Rule("v02-stride", "a strided KPU conv runs at stride 1 and a strided slice keeps every s-th value; stride 2 on a "
         "non-depthwise conv becomes the KPU's left/right-top 2x2 pool",
         f"{V02} src/transforms/hlir/k210/fake_kpu_conv2d.cpp:107-109,130-157"),
    Rule("v02-matmul", "FULLY_CONNECTED/MatMul on the KPU: constant weights in range, at least 1024 of them "
         "(--output-quantize-threshold), both dimensions <= 1024",
         f"{V02} src/transforms/hlir/k210/matmul_to_fake_kpu_conv2d.cpp:35-60; src/cli/modes.h:41"),
    Rule("v02-pool-fuse", "a max/mean pool after a KPU conv (not depthwise) is fused: 2x2 s2, 4x4 s4 (no padding), 2x2 s1 (SAME)",
         f"{V02} src/transforms/hlir/k210/fuse_kpu_conv2d_pool.cpp:43-72; "
         "src/common/include/runtime/k210/k210_runtime_op_utility.h:83-104"),
    Rule("v02-pad-fold", "a PAD before a conv is folded into its padding (then the KPU's own padding, the rest a CPU pad)",
         f"{V02} src/transforms/include/hlir/transforms/neutral/fuse_pad.h:20-30; src/transforms/hlir/k210/fake_kpu_conv2d.cpp:34-41"),
    Rule("v02-clamp-fuse", "RELU6 (a clamp) right after a conv is fused into the conv's activation; RELU and ONNX Relu are "
         "a binary max on the CPU", f"{V02} src/importer/tflite/ops/activations.cpp:26-47; "
         "src/transforms/hlir/neutral/fuse_clamp.cpp:38-66; src/importer/onnx/ops/activations.cpp:35-51"),
    Rule("v02-cpu", "every other imported op runs on the CPU (float, or quantised where nncase quantises it)",
         f"{V02} src/cli/targets/k210/target.cpp:83-130"),
    Rule("v02-kpu-ram", "the KPU allocator has 2 MiB in 64-byte rows; maps take the KPU's row layout",
         f"{V02} src/scheduler/k210/kpu_memory_allocator.cpp:23-32"),
    # --- MaixPy ----------------------------------------------------------------------------------------
    Rule("maixpy-budget", "kpu.load keeps the whole file and the model's main memory in the heap the firmware leaves "
         "(full build about 2 MiB, minimum about 4 MiB)", "maixemu.kmodel.k210.MAIXPY_MODEL_BUDGETS (maixpy-api.md §1.1)"),
    Rule("maixpy-versions", "MaixPy's kpu.load runs kmodel V3 and V4; V5 (nncase v1.x) is refused",
         "sipeed/MaixPy-v1 components/micropython/port/src/Maix/Maix_kpu.c:193-195 (ERR_KMODEL_VERSION); maixemu.kmodel.container"),
)}


def cite(*ids: str) -> str:
    return ", ".join(f"[{i}]" for i in ids)
