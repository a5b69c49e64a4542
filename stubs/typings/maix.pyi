"""The newer class API (``from maix import KPU``; Canaan CanMV K210 firmware, not MaixPy-v1 master).

Accepts kmodel V3, V4 and V5. The image still needs an AI buffer (``pix_to_ai()``), else
``OSError("Image formart error, use pix_to_ai() method to convert for kpu")``.
"""

from typing import Literal, Sequence, overload

from image import Image

class KPU:
    """A KPU model runner: ``kpu = KPU(); kpu.load_kmodel("/sd/m.kmodel")``."""
    def __init__(self) -> None: ...
    def load_kmodel(self, path_or_addr: str | int, size: int = 0) -> None:
        """Load from a path, or from a flash address (then ``size`` > 0 is required)."""
    @overload
    def run_with_output(self, img: Image | str, getlist: Literal[False] = False,
                        get_feature: Literal[False] = False) -> None:
        """Run the model; returns None unless ``getlist`` (all floats of output 0) or ``get_feature`` (L2-normalised)."""
    @overload
    def run_with_output(self, img: Image | str, getlist: Literal[True], get_feature: bool = False) -> list[float]: ...
    @overload
    def run_with_output(self, img: Image | str, getlist: bool = False, *,
                        get_feature: Literal[True]) -> list[float]: ...
    @overload
    def run_with_output(self, img: Image | str, getlist: bool = False,
                        get_feature: bool = False) -> list[float] | None: ...
    def init_yolo2(self, anchor: Sequence[float], anchor_num: int = 5, img_w: int = 320, img_h: int = 240,
                   net_w: int = 320, net_h: int = 240, layer_w: int = 10, layer_h: int = 8,
                   threshold: float = 0.7, nms_value: float = 0.4, classes: int = 1) -> None:
        """YOLOv2 decoding parameters for ``regionlayer_yolo2`` (``classes=0``: objectness only)."""
    def regionlayer_yolo2(self) -> list[list[float]]:
        """Boxes ``[x, y, w, h, classid, prob]`` scaled to img_w x img_h; an **empty list** when nothing is found."""
    def feature_compare(self, f0: Sequence[float], f1: Sequence[float]) -> float:
        """Cosine similarity of two feature lists."""
    def deinit(self) -> None:
        """Free the model."""

def feature_compare(f0: Sequence[float], f1: Sequence[float]) -> float:
    """Cosine similarity of two float lists (``ValueError("feature len error")`` on length mismatch)."""
