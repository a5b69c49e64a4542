"""CanMV's ``maix`` module (Canaan CanMV K210 firmware): MaixPy's ``Maix`` plus ``KPU``.

``KPU`` has two APIs, one per firmware build, and one object uses one of them:

* released firmware (``main``): ``load_kmodel``, ``run_with_output``, ``init_yolo2`` +
  ``regionlayer_yolo2``, ``feature_compare``, ``lp_recog_load_weight_data`` + ``lp_recog``,
  ``KPU.sigmoid``/``KPU.softmax``;
* ``feat/kpu`` build: ``load``, ``run`` (the image must match the model input size), ``get_outputs``,
  ``attr``, ``Yolo2()``, ``Lpr()``, ``Act.sigmoid``/``Act.softmax``, ``Feat.calculate``/``Feat.compare``.

Both read only the image's AI buffer (``pix_to_ai()``). Kmodel V3 and V4 only.
"""

from typing import Any, Literal, Sequence, overload

from Maix import FFT as FFT, FPIOA as FPIOA, GPIO as GPIO, I2S as I2S, config as config, freq as freq, utils as utils
from Maix import MIC_ARRAY as _MIC_ARRAY
from image import Image

mic_array = _MIC_ARRAY

class _Yolo2:
    """``kpu.Yolo2()`` (feat/kpu): sizes and class count come from the model's shapes."""
    def init(self, anchor: Sequence[float], threshold: float = 0.5, nms_value: float = 0.3) -> None:
        """Anchors as (w, h) pairs; an odd count raises ValueError."""
    def run(self) -> list[list[Any]]:
        """``[[x, y, w, h, classid, prob], ...]`` in model-input pixels for the parent's last ``run``."""
    def deinit(self) -> None: ...
    def attr(self) -> dict[str, Any]: ...

class _Lpr:
    """``kpu.Lpr()`` (feat/kpu): licence-plate heads over the parent's output."""
    @overload
    def load(self, path: str) -> None: ...
    @overload
    def load(self, offset: int, size: int) -> None: ...
    def run(self) -> list[tuple[float, ...]]:
        """Seven tuples of logits: 31 provinces, 24 letters, 5 x 34 letters/digits."""
    def deinit(self) -> None: ...
    def attr(self) -> dict[str, Any]: ...

class _Act:
    @staticmethod
    def sigmoid(x: float) -> float:
        """Only a float is accepted (``TypeError`` for an int)."""
    @staticmethod
    def softmax(x: Sequence[float]) -> list[float]:
        """Raises ``ValueError("list minimum size is 2")`` for every non-empty list (a firmware bug)."""

class _Feat:
    @staticmethod
    def calculate(kpu: KPU) -> list[float]:
        """The L2-normalised output of ``kpu``'s last run (<= 256 values)."""
    @staticmethod
    def compare(feature0: Sequence[float], feature1: Sequence[float]) -> float:
        """``(0.5 + 0.5 * dot) * 100``: 0..100 for unit vectors."""

class KPU:
    """A model slot: ``kpu = KPU(); kpu.load_kmodel(path)`` (released) or ``kpu.load(path)`` (feat/kpu)."""
    Act: type[_Act]
    Feat: type[_Feat]
    def __init__(self) -> None: ...
    # --- released firmware
    def load_kmodel(self, path: str | int | None = None, size: int = 0) -> None:
        """Load from a path, or from a flash address (then ``size`` > 0 is required)."""
    @overload
    def run_with_output(self, input: Image | str | None = None, getlist: Literal[False] = False,
                        get_feature: Literal[False] = False) -> None:
        """Run the model; returns None unless ``getlist`` (all floats of output 0) or ``get_feature`` (L2-normalised)."""
    @overload
    def run_with_output(self, input: Image | str | None, getlist: Literal[True], get_feature: bool = False) -> list[float]: ...
    @overload
    def run_with_output(self, input: Image | str | None = None, getlist: bool = False, *,
                        get_feature: Literal[True]) -> list[float]: ...
    @overload
    def run_with_output(self, input: Image | str | None = None, getlist: bool = False,
                        get_feature: bool = False) -> list[float] | None: ...
    def init_yolo2(self, anchor: Sequence[float] | None = None, anchor_num: int = 5, img_w: int = 320, img_h: int = 240,
                   net_w: int = 320, net_h: int = 240, layer_w: int = 10, layer_h: int = 8,
                   threshold: float | None = None, nms_value: float | None = None, classes: int = 1) -> None:
        """YOLOv2 decoding parameters for ``regionlayer_yolo2`` (threshold 0.7, nms 0.4; ``classes=0``: objectness only)."""
    def regionlayer_yolo2(self) -> list[list[Any]]:
        """Boxes ``[x, y, w, h, classid, prob]`` scaled to img_w x img_h; an **empty list** when nothing is found."""
    @overload
    def lp_recog_load_weight_data(self, path: str) -> None: ...
    @overload
    def lp_recog_load_weight_data(self, addr: int, size: int) -> None: ...
    def lp_recog(self) -> list[tuple[float, ...]]:
        """Seven tuples of logits (31 provinces, 24 letters, 5 x 34) for the last ``run_with_output``."""
    @staticmethod
    def sigmoid(x: float) -> float:
        """``KPU.sigmoid(x)`` or ``kpu.sigmoid(x)``."""
    @staticmethod
    def softmax(x: list[float]) -> list[float]:
        """``KPU.softmax(list)`` (a list, not a tuple)."""
    @staticmethod
    def feature_compare(f0: Sequence[float], f1: Sequence[float]) -> float:
        """``(0.5 + 0.5 * dot) * 100`` of two equally long feature lists: 0..100 for unit vectors."""
    # --- feat/kpu firmware
    def load(self, path_or_offset: str | int, *, size: int = 0) -> None:
        """From a path or a flash offset; the size is probed from the kmodel unless given (< 5 MiB)."""
    def run(self, input: Image) -> None:
        """The image must be the model's input size, else ``OSError(ERANGE)``."""
    def get_outputs(self, index: int = 0) -> list[float]: ...
    def attr(self) -> dict[str, Any]: ...
    def Yolo2(self) -> _Yolo2: ...
    def Lpr(self) -> _Lpr: ...
    # --- both
    def deinit(self) -> Any:
        """Free the model (released: True/False; feat/kpu: None)."""
