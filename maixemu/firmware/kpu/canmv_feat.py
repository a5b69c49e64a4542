"""The ``feat/kpu`` CanMV ``maix.KPU`` (branch ``feat/kpu``, ``maix_kpu.c``): ``load``/``run``/``get_outputs``.

There ``KPU`` is a function returning a new object whose model knows its own shapes:
``load(path | flash_offset, size=)`` probes the size from the kmodel's headers (and refuses a file
whose length differs: "Model in filesystem maybe damaged"), ``run(img)`` refuses an image whose
width x height differs from the model input, ``Yolo2()`` takes the image, net and layer sizes and
the class count from the model's shapes, and post-processing hangs off the object as ``Act``
(``sigmoid``/``softmax``), ``Feat`` (``calculate``/``compare``) and ``Lpr()`` (licence plates).
Firmware quirks kept: ``Act.sigmoid`` takes only floats, ``Act.softmax`` refuses every non-empty
list ("list minimum size is 2": the check is inverted in the source), and ``Feat.compare`` checks
lengths only when the first list is longer than 256.
"""

from __future__ import annotations

import errno
import sys
import numpy as np

from ..notices import notice_once
from .errors import advised
from .region import region_layer
from . import algorithm, probe
from . import canmv_model as slot
from ..mp_args import assert_type, float_arg, int_arg, items_of

#: ``load()`` refuses models of 5 MiB or more ("Model size error!").
MAX_MODEL_BYTES = 5 * 1024 * 1024
_AI_MISSING = "Image formart error, use pix_to_ai() method to convert for kpu"
_LOAD_RUN_FIRST = "Please load/run kmodel before"
_PATH_CHARS = 223  # char path[224], strncpy'd


def _address(obj: object) -> int:
    """A stable 32-bit stand-in for the C pointer the firmware prints."""
    return 0x80000000 | (id(obj) & 0x3FFFFFF8)


def _mp_float(value: float) -> str:
    text = format(float(np.float32(value)), ".7g")
    return text if any(c in text for c in ".en") else text + ".0"


class FeatApi:
    """Methods of the ``feat/kpu`` KPU object; state lives in :class:`~.canmv.KPU`."""

    _loaded: slot.LoadedModel | None
    _ran: bool
    _lpr: "license_plate_recognition | None"
    _yolo2: "yolo2 | None"
    _path: str

    def _commit(self, family: str, method: str) -> None:  # provided by KPU
        raise NotImplementedError

    # ---------------------------------------------------------------------------- model
    def load(self, path_or_offset, *, size=0) -> None:
        """``load("/sd/m.kmodel")`` or ``load(0x300000)``; ``size=`` overrides the probed size."""
        self._commit("feat", "load")
        size_arg = int_arg(size)
        unmapped = False
        if isinstance(path_or_offset, str):
            source: int | str = path_or_offset
            length = size_arg or slot.file_size(path_or_offset)
            name = path_or_offset[:_PATH_CHARS]
        elif isinstance(path_or_offset, int) and not isinstance(path_or_offset, bool):
            if path_or_offset <= 0:
                raise ValueError("Model offset error!")
            source = path_or_offset
            mapped = slot.mapped_flash(path_or_offset)
            unmapped = mapped is None
            length = size_arg or probe.model_size(slot.read_flash(path_or_offset, probe.FLASH_PROBE_BYTES))
            name = f"flash:0x{path_or_offset:08X}"
            if length <= 0 and unmapped:
                raise advised(ValueError("Model size error!"), slot.unmapped_advice(path_or_offset))
        else:
            raise ValueError("Load_kmodel need one parameter, path(string) or offset(int)")
        if length <= 0 or length >= MAX_MODEL_BYTES:
            raise advised(ValueError("Model size error!"), f"{name}: {length} bytes; the firmware loads "
                          f"models of 1 byte up to {MAX_MODEL_BYTES - 1}")
        self._drop_model()
        if isinstance(source, str):
            data = slot.read_file(source, length)
            if data is None:
                raise advised(OSError("Failed to read file from filesystem"),
                              f"{source} is shorter than the size={length} given")
            declared = probe.model_size(data)
            if declared == -1 and size_arg == 0:
                print("Probe model size failed, will skip size check.")
            elif declared != length:
                raise advised(OSError("Model in filesystem maybe damaged"),
                              f"{source} is {length} bytes but its headers declare {declared}: the firmware loads a file "
                              f"only if the two agree. Pass size={declared} to read just the model, or load it from flash "
                              "as the CanMV demos do for such files" if declared > 0 else
                              f"size={length} was given but the file is no V3/V4 kmodel whose size can be probed")
        else:
            data = slot.read_flash(source, length)
        try:
            self._loaded = slot.parse_and_reserve(data, str(source) if isinstance(source, str) else name, source)
        except slot.ModelParseError as exc:
            advice = slot.unmapped_advice(int(source)) if unmapped else exc.advice
            raise advised(OSError("Failed to load model"), advice) from None
        except slot.ModelMemoryError as exc:
            raise advised(MemoryError("Model buffer memory allocation failed"), exc.advice) from None
        self._path = name
        self._ran = False

    def _drop_model(self) -> None:
        if self._loaded is not None:
            self._loaded.release()
        self._loaded = None
        self._ran = False

    def run(self, input) -> None:  # noqa: A002 - the firmware's parameter
        """Run the model on an image's AI buffer; the image must be exactly the model's input size."""
        from .. import image as image_module

        self._commit("feat", "run")
        loaded = self._loaded
        if loaded is None:
            raise OSError("Please load kmodel before")
        assert_type(input, image_module.Image, "Image")
        ai = slot.ai_input(input, "KPU.run")
        if ai is None:
            raise ValueError(_AI_MISSING)
        chw = loaded.input_chw or (0, 0, 0)
        if (chw[2], chw[1]) != (input.width(), input.height()):
            print(f"model input {chw[1]}x{chw[2]} but image is {input.height()}x{input.width()}", end="")
            sys.stdout.flush()
            raise OSError(errno.ERANGE, "ERANGE")
        try:
            slot.run_model(loaded, ai.reshape(-1), "KPU.run")
        except Exception as exc:
            raise advised(OSError("Model Buffer maybe dirty!"), f"{type(exc).__name__}: {exc}") from exc
        self._ran = True

    def _require_run(self) -> slot.LoadedModel:
        if self._loaded is None or not self._ran:
            raise OSError(_LOAD_RUN_FIRST)
        return self._loaded

    def _output(self, index: int = 0) -> np.ndarray:
        values = self._require_run().output_floats(index)
        if values is None:
            raise OSError("Failed to get kpu outputs")
        return values

    def get_outputs(self, *args, **_ignored) -> list:
        """Output ``index`` (default 0; a non-int argument is ignored) of the last run, as floats."""
        self._commit("feat", "get_outputs")
        index = args[0] if len(args) == 1 and isinstance(args[0], int) and not isinstance(args[0], bool) else 0
        self._require_run()
        if index < 0:
            raise OSError("Failed to get kpu outputs")
        return [float(v) for v in self._output(index)]

    def attr(self) -> dict:
        """``{"model": {size, name, sha256}, "shape": {input, output}, "child": {Lpr, Yolo2}, "self", "parent"}``."""
        self._commit("feat", "attr")
        loaded = self._loaded
        chw_in = (loaded.input_chw if loaded else None) or (0, 0, 0)
        chw_out = (loaded.output_chw if loaded else None) or (0, 0, 0)
        return {
            "model": {"size": loaded.size if loaded else 0, "name": self._path if loaded else "",
                      "sha256": bytearray(loaded.sha256 if loaded else bytes(32))},
            "shape": {"input": list(chw_in), "output": list(chw_out)},
            "child": {"Lpr": _address(self._lpr) if self._lpr else 0,
                      "Yolo2": _address(self._yolo2) if self._yolo2 else 0},
            "self": _address(self),
            "parent": None,
        }

    def Yolo2(self) -> "yolo2":  # noqa: N802 - the firmware's name
        """A YOLOv2 decoder bound to this model (the object's newest one is its ``child.Yolo2``)."""
        self._commit("feat", "Yolo2")
        self._yolo2 = yolo2(self)
        return self._yolo2

    def Lpr(self) -> "license_plate_recognition":  # noqa: N802 - the firmware's name
        """A licence-plate recogniser bound to this model (``load(weights)`` then ``run()``)."""
        self._commit("feat", "Lpr")
        self._lpr = license_plate_recognition(self)
        return self._lpr

    def _feat_deinit(self) -> None:
        self._drop_model()
        self._path = ""
        if self._lpr is not None:
            self._lpr.deinit()
        if self._yolo2 is not None:
            self._yolo2.deinit()

    def _feat_repr(self) -> str:
        lines = ["KPU (K210)", f"self                  : 0x{_address(self):x}", "parent                : (null)",
                 f"child_Lpr             : 0x{_address(self._lpr) if self._lpr else 0:x}",
                 f"child_Yolo2           : 0x{_address(self._yolo2) if self._yolo2 else 0:x}"]
        loaded = self._loaded
        if loaded is None:
            lines.append("model_type            : (null)")
            return "\n".join(lines) + "\n"
        chw_in, chw_out = loaded.input_chw, loaded.output_chw
        lines += [
            f"model_type            : KMODELV{loaded.model.version}",
            f"model_path            : {self._path}",
            f"model_size            : {loaded.size}",
            f"model_buffer          : 0x{_address(loaded.data):08X}",
            f"model_sha256          : {loaded.sha256.hex().upper()}",
            "model_input(CHW)      : " + ("x".join(map(str, chw_in)) if chw_in else "invaild"),
            "model_output(CHW)     : " + ("x".join(map(str, chw_out)) if chw_out else "invaild"),
            f"model_output_count    : {len(loaded.model.outputs)}",
        ]
        return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------- child objects
class yolo2:  # noqa: N801 - the firmware's type name
    """``kpu.Yolo2()``: ``init(anchor, threshold=0.5, nms_value=0.3)``, then ``run()`` after ``kpu.run``."""

    def __init__(self, parent: FeatApi):
        self._parent = parent
        self._anchors: tuple[float, ...] | None = None
        self._threshold = 0.0
        self._nms = 0.0

    def init(self, anchor, threshold=None, nms_value=None) -> None:
        """Anchors as (w, h) pairs in layer cells; the rest comes from the model's shapes."""
        self._anchors = None
        thr = 0.5 if threshold is None else float_arg(threshold)
        nms = 0.3 if nms_value is None else float_arg(nms_value)
        self._threshold, self._nms = thr, nms
        if anchor is None:
            raise ValueError("need input anchor")
        values = items_of(anchor)
        if len(values) % 2:
            raise ValueError("The number of anchors should be a multiple of 2")
        self._anchors = tuple(float(np.float32(float_arg(v))) for v in values)

    def run(self) -> list:
        """``[[x, y, w, h, classid, prob], ...]`` in model-input pixels; ``[]`` when nothing is found."""
        if self._anchors is None:
            raise OSError("Please call init before run")
        parent = self._parent
        loaded = parent._loaded
        chw_in = loaded.input_chw if loaded else None
        chw_out = loaded.output_chw if loaded else None
        if chw_in is None or chw_out is None:
            advice = None
            if loaded is not None:
                advice = (f"{loaded.label} does not end in a KPU convolution + dequantize, so the firmware "
                          "knows no output shape to decode")
            raise advised(OSError("Parse model for yolo run failed"), advice)
        loaded = parent._require_run()
        output = parent._output(0)
        count = len(self._anchors) // 2
        classes = chw_out[0] // count - 5 if count else -1
        if classes < 0:
            raise advised(OSError("Yolo2 region layer init failed"),
                          f"{count} anchors do not fit the {chw_out[0]} output channels")
        boxes = region_layer(
            output, layer_w=chw_out[2], layer_h=chw_out[1], anchors=self._anchors, threshold=self._threshold,
            nms_value=self._nms, classes=classes, net_w=chw_in[2], net_h=chw_in[1],
        )
        result = [[b.x, b.y, b.w, b.h, b.classid, b.value] for b in boxes]
        slot.record_boxes("KPU.Yolo2.run", loaded, result)
        return result

    def deinit(self) -> None:
        self._anchors = None
        self._threshold = self._nms = 0.0

    def attr(self) -> dict:
        anchors = list(self._anchors or ())
        return {"args": {"threshold": self._threshold, "nms_value": self._nms,
                         "anchor_num": len(anchors) // 2, "anchor": anchors},
                "self": _address(self), "parent": _address(self._parent)}

    def __repr__(self) -> str:
        lines = ["Yolo2", f"self             : 0x{_address(self):x}", f"parent           : 0x{_address(self._parent):x}"]
        if self._anchors is not None:
            lines += [f"nms              : {self._nms:f}", f"threshold        : {self._threshold:f}",
                      f"anchor_number    : {len(self._anchors) // 2}",
                      "anchors          : [" + ", ".join(_mp_float(a) for a in self._anchors) + "]"]
        return "\n".join(lines) + "\n"


class license_plate_recognition:  # noqa: N801 - the firmware's type name
    """``kpu.Lpr()``: ``load("/sd/lp_weight.bin")`` (or ``load(offset, size)``), then ``run()``."""

    def __init__(self, parent: FeatApi):
        self._parent = parent
        self._weights: bytes | None = None
        self._name = ""

    def load(self, *args, **_ignored) -> None:
        """The 7 fully connected heads' weights from a file or from flash (offset and size)."""
        if not args:
            raise TypeError("function missing 1 required positional arguments")
        where = args[0]
        if isinstance(where, str):
            size = slot.file_size(where)
            name = where[:127]
        elif isinstance(where, int) and not isinstance(where, bool):
            if len(args) < 2:
                raise TypeError("[maixemu] Lpr().load(offset, size) needs the size")
            assert_type(args[1], int, "int")
            size = int(args[1])
            if where <= 0:
                raise ValueError("offset error!")
            name = f"flash:0x{where:08X}"
        else:
            raise ValueError('load("path" / offset, size)')
        if size <= 0:
            raise ValueError("weight file size error")
        slot.check_allocation(size, "LPR weight buffer memory allocation failed")
        self._weights = None
        if isinstance(where, str):
            data = slot.read_file(where, size)
            if data is None:
                raise OSError("Failed to read file from filesystem")
        else:
            data = slot.read_flash(where, size)
        self._weights, self._name = data, name

    def run(self) -> list:
        """Seven tuples of logits (31 provinces, 24 letters, 5 x 34) for the parent's last run."""
        if self._weights is None:
            raise OSError("Please call init before run")
        return algorithm.lp_recog(self._parent._output(0), self._weights)

    def deinit(self) -> None:
        self._weights, self._name = None, ""

    def _sha256(self) -> bytes:
        import hashlib

        return hashlib.sha256(self._weights).digest() if self._weights is not None else bytes(32)

    def attr(self) -> dict:
        return {"weight": {"size": len(self._weights or b""), "name": self._name, "sha256": bytearray(self._sha256())},
                "self": _address(self), "parent": _address(self._parent)}

    def __repr__(self) -> str:
        buffer = _address(self._weights) if self._weights is not None else 0
        return "\n".join([
            "LPR", f"self             : 0x{_address(self):x}", f"parent           : 0x{_address(self._parent):x}",
            f"weight_name      : {self._name}", f"weight_size      : {len(self._weights or b'')}",
            f"weight_buffer    : 0x{buffer:x}", f"weight_sha256    : {self._sha256().hex().upper()}",
        ]) + "\n"


class nn_activation:  # noqa: N801 - the firmware's type name
    """``kpu.Act``: activation functions."""

    @staticmethod
    def sigmoid(x) -> float:
        """``1 / (1 + exp(-x))`` of a float (an int is refused: ``Can't convert int to float``)."""
        assert_type(x, float, "float")
        return algorithm.sigmoid(x)

    @staticmethod
    def softmax(x) -> list:
        """As in the firmware: any non-empty list raises ``ValueError("list minimum size is 2")``."""
        values = items_of(x)
        if len(values) >= 1:
            raise advised(ValueError("list minimum size is 2"), "the feat/kpu firmware's size check is inverted, "
                          "so Act.softmax fails for every list on the device; compute it in Python")
        return []


class Feat:
    """``kpu.Feat``: face/feature vectors."""

    @staticmethod
    def calculate(kpu) -> list:
        """The L2-normalised output 0 of ``kpu``'s last run (at most 256 values)."""
        from .canmv import KPU

        assert_type(kpu, KPU, "KPU")
        output = kpu._output(0)
        if output.size > algorithm.MAX_FEATURE_LEN:
            raise ValueError("feature length bigger than 256")
        return [float(v) for v in algorithm.l2normalize(output)]

    @staticmethod
    def compare(feature0, feature1) -> float:
        """``(0.5 + 0.5 * dot) * 100`` over ``len(feature0)`` values (0..100 for unit vectors)."""
        f0, f1 = items_of(feature0), items_of(feature1)
        if len(f0) != len(f1) and len(f0) > algorithm.MAX_FEATURE_LEN:
            raise ValueError("feature len not equal")
        if len(f0) != len(f1):
            notice_once(f"feat-compare-len:{len(f0)}:{len(f1)}",
                        f"Feat.compare got features of {len(f0)} and {len(f1)} values; the firmware compares "
                        f"{len(f0)} and reads past the shorter one (zeros here)")
            f1 = (list(f1) + [0.0] * len(f0))[: len(f0)]
        score = algorithm.feature_score([float_arg(v) for v in f0], [float_arg(v) for v in f1])
        slot.record_score("KPU.Feat.compare", score, len(f0))
        return score


__all__ = ["FeatApi", "Feat", "MAX_MODEL_BYTES", "license_plate_recognition", "nn_activation", "yolo2"]
