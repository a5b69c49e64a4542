"""Evaluating images: the function every executor (in-process, processes, Dask) calls.

``evaluate_batch(spec, samples)`` returns one JSON-ready record per sample (``--input device``
batches on a board of their own: ``maixemu.session.lifecycle.execute``). The loaded kmodel and
float model are cached per thread and per spec: a process or Dask worker loads them once, and
threads (a ``processes=False`` Dask cluster) never share one model's scratch memory.
"""

from __future__ import annotations

import threading

import numpy as np

from .compare import agreement, compare_output, prediction_pairs, rows
from .dataset import Sample
from .device_input import device_input
from .errors import EvalError, Undecodable
from .file_input import file_input
from .recipe import InputRecipe
from .spec import WorkSpec

_local = threading.local()


def model_chw(model) -> tuple[int, int, int]:
    """(C, H, W) of an image model's input, or an EvalError naming what the model takes instead."""
    if not model.inputs:
        raise EvalError("the model has no input")
    spec = model.inputs[0]
    shape = tuple(int(s) for s in spec.shape)
    if np.dtype(spec.dtype) != np.uint8 or len(shape) < 3 or shape[-3] not in (1, 3):
        raise EvalError(
            f"the model takes {np.dtype(spec.dtype).name} {list(shape)}, not an image: eval runs image models "
            "(use `maixemu forward --values` for vector models)"
        )
    return shape[-3], shape[-2], shape[-1]


def region_shape(model) -> tuple[int, int, int]:
    """(layer_w, layer_h, channels) of a YOLOv2 output, read from output 0's (…, C, H, W) shape."""
    shape = tuple(int(s) for s in model.outputs[0].shape)
    squeezed = shape[-3:] if len(shape) >= 3 else ()
    if len(squeezed) != 3 or squeezed[0] // 5 - 5 < 1:  # five anchors x (5 + classes), as the firmware counts
        raise EvalError(
            f"detection needs a YOLOv2 region output (channels, h, w); output 0 is {list(shape)}: "
            "use a model that kpu.run_yolo2 accepts, or evaluate it as classify/compare"
        )
    ch, h, w = squeezed
    return w, h, ch


class Evaluator:
    """One loaded kmodel (+ float model) evaluating samples under one :class:`WorkSpec`."""

    def __init__(self, spec: WorkSpec):
        from ..kmodel import load_kmodel

        self.spec = spec
        self.model = load_kmodel(spec.model)
        self.chw = model_chw(self.model)
        self.input_shape = tuple(int(s) for s in self.model.inputs[0].shape)
        self.output_shapes = [tuple(int(s) for s in o.shape) for o in self.model.outputs]
        self.reference = None
        self.mapping: list[int] = []
        if spec.reference:
            from .reference import match_outputs, open_reference

            self.reference = open_reference(spec.reference, spec.mean, spec.std, tensors=spec.per_layer)
            probe = self.reference.run(np.zeros(self.chw, np.uint8))
            self.mapping = match_outputs(self.output_shapes, probe)
        self.file_recipe = InputRecipe("file", spec.recipe.pixformat, spec.recipe.framesize, spec.recipe.steps)
        self.device_recipe = InputRecipe("device", spec.recipe.pixformat, spec.recipe.framesize, spec.recipe.steps)

    def _prepare(self, path: str, recipe: InputRecipe):
        return (device_input if recipe.mode == "device" else file_input)(path, recipe, self.chw)

    def evaluate(self, sample: Sample) -> dict:
        record: dict = {"index": sample.index, "rel": sample.rel, "key": sample.key}
        spec = self.spec
        try:
            prepared = self._prepare(sample.path, spec.recipe)
            reference_input = None
            if self.reference is not None:
                reference_input = prepared if spec.recipe.mode == "file" else self._prepare(sample.path, self.file_recipe)
        except Undecodable as exc:
            record.update(status="skipped", reason=str(exc))
            return record
        outputs = [np.asarray(o) for o in self.model.run(prepared.chw.reshape(self.input_shape))]
        record["status"] = "ok"
        record["size"] = list(prepared.source_size)
        if spec.task in ("classify", "compare"):
            scores = rows(outputs[spec.output])
            if scores.shape[0] == 1:
                values = scores[0].astype(np.float64)
                order = np.argsort(-values, kind="stable")[: spec.top]
                record["top"] = [int(i) for i in order]
                record["scores"] = [float(values[i]) for i in order]
        if spec.task == "classify":
            record["label"] = sample.label
        if spec.task == "detect":
            record["boxes"] = self._detect(outputs[0], prepared)
            width, height = prepared.source_size
            record["gt"] = [
                [round(b.x, 3), round(b.y, 3), round(b.w, 3), round(b.h, 3), b.label, int(b.difficult)]
                for b in (box.to_pixels(width, height) for box in sample.boxes or ())
            ]
        if self.reference is not None and reference_input is not None:
            keys = [m.tensor_key for m in spec.layer_matches] if spec.per_layer else []
            ref_outputs, tapped = self.reference.run_tensors(reference_input.chw, keys)
            aligned = self._aligned(ref_outputs)
            record["ref"] = self._compare(outputs, aligned)
            if spec.per_layer:
                record.update(self._per_layer(sample, prepared, reference_input, outputs, aligned, tapped))
        return record

    def _aligned(self, ref_outputs: list[np.ndarray]) -> list[np.ndarray]:
        from .reference import align

        return [align(ref_outputs[j], shape) for j, shape in zip(self.mapping, self.output_shapes)]

    def _run(self, prepared) -> list[np.ndarray]:
        return [np.asarray(o) for o in self.model.run(prepared.chw.reshape(self.input_shape))]

    def _per_layer(self, sample: Sample, prepared, file_prepared, outputs, aligned, tapped) -> dict:
        """``--layers``: every matched layer on the file's input, and the output error split in two.

        The layers run on the file's RGB888, the bytes the float model gets, so what they show is
        the quantisation alone; the device input path's share is the difference between the kmodel's
        outputs on the device input and on the file input.
        """
        from .layers import layer_sums
        from .sums import dot, square_sum

        matches = self.spec.layer_matches
        wanted = {m.index: i for i, m in enumerate(matches)}
        sums: list = [None] * len(matches)
        for step in self.model.trace(file_prepared.chw.reshape(self.input_shape)):
            position = wanted.get(step.index)
            if position is not None:
                sums[position] = layer_sums(matches[position], step.output, tapped[matches[position].tensor_key])
        on_file = outputs if self.spec.recipe.mode == "file" else self._run(file_prepared)
        try:
            on_device = outputs if self.spec.recipe.mode == "device" else self._run(self._prepare(sample.path, self.device_recipe))
        except (Undecodable, EvalError):
            on_device = None
        errors = []
        for i, f in enumerate(aligned):
            f = f.astype(np.float64).reshape(-1)
            kf = np.asarray(on_file[i], dtype=np.float64).reshape(-1)
            row = [square_sum(f), square_sum(kf), dot(kf, f), square_sum(kf - f)]
            if on_device is not None:
                kd = np.asarray(on_device[i], dtype=np.float64).reshape(-1)
                row += [square_sum(kd), dot(kd, kf), square_sum(kd - kf)]
            errors.append(row)
        return {"layers": sums, "errors": errors}

    def _detect(self, output: np.ndarray, prepared) -> list[list]:
        from ..firmware.kpu.region import region_layer

        lw, lh, ch = region_shape(self.model)
        spec = self.spec
        boxes = region_layer(
            np.asarray(output, dtype=np.float32), layer_w=lw, layer_h=lh, anchors=spec.anchors,
            threshold=spec.threshold, nms_value=spec.nms, classes=ch // 5 - 5,  # the legacy API's count
            net_w=self.chw[2], net_h=self.chw[1],
        )
        found = []
        for b in boxes:
            x, y, w, h = prepared.geometry.to_source(b.x, b.y, b.w, b.h)
            found.append([round(x, 3), round(y, 3), round(w, 3), round(h, 3), b.classid, float(b.value)])
        return found

    def _compare(self, outputs: list[np.ndarray], aligned: list[np.ndarray]) -> dict:
        per_output = [compare_output(k.astype(np.float32), r) for k, r in zip(outputs, aligned)]
        k_class, r_class = outputs[self.spec.output], aligned[self.spec.output]
        result = {
            "outputs": per_output,
            "cosine": float(np.mean([o["cosine"] for o in per_output])),
            "agreement": agreement(k_class, r_class),
            "pairs": prediction_pairs(r_class, k_class),
        }
        ref_rows = rows(r_class)
        if ref_rows.shape[0] == 1:
            result["top1"] = int(ref_rows[0].argmax())
        return result


def _evaluator(spec: WorkSpec) -> Evaluator:
    cache = getattr(_local, "evaluators", None)
    if cache is None:
        cache = _local.evaluators = {}
    evaluator = cache.get(spec)
    if evaluator is None:
        cache.clear()  # one spec at a time per thread: a worker never holds stale models
        evaluator = cache[spec] = Evaluator(spec)
    return evaluator


def evaluate_batch(spec: WorkSpec, samples: list[Sample]) -> list[dict]:
    """Records for ``samples`` (the unit of work sent to a process or a Dask worker). The device
    path runs on a board of its own, opened and closed by the run lifecycle like a script's."""
    evaluator = _evaluator(spec)

    def batch() -> list[dict]:
        return [evaluator.evaluate(sample) for sample in samples]

    if spec.recipe.mode != "device":
        return batch()
    from ..session import Plugs, RunSpec, execute  # the file path needs no board (nor its imports)

    # no window, no camera, no sound, no notices: the firmware's camera and image code only
    board = RunSpec(camera="synthetic", lcd="none", audio_out="none", audio_in="silence", quiet=True)
    return execute(board, batch, plugs=Plugs(demo_model=False)).value
