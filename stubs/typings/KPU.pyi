"""MaixPy legacy KPU API (``import KPU as kpu``; ``Maix_kpu.c``): load kmodel V3/V4, run it, decode YOLOv2.

The KPU reads only an image's **AI buffer**: ``sensor.snapshot()`` fills it; ``Image(path)``,
``resize``, ``cut``, ``copy`` and drawing do not — call ``img.pix_to_ai()`` first, else ``forward``
prints ``pix_ai is NULL!`` and raises ``ValueError("[MAIXPY]kpu: check img format err!\\r\\n")``.
The image must already be the model's input size (no automatic resize). V5 kmodels run on neither
this module nor CanMV's ``from maix import KPU`` (released builds carry only the V3/V4 runtimes).
"""

from typing import Any, Sequence, overload

from image import Image

class kpu_net:
    """A loaded model (``kpu.load``). Getter methods; ``print`` shows it JSON-like."""
    def model_addr(self) -> int | None:
        """Flash address the model was loaded from, or None."""
    def model_size(self) -> int:
        """Model size in bytes."""
    def model_path(self) -> str | None:
        """File path the model was loaded from, or None."""
    def net_arg(self) -> Any:
        """The YOLO arguments attached by ``init_yolo2``, or None."""

class kpu_fmap:
    """A model output (``forward``/``get_output``) that points into the model's output memory.

    The next run of the same model overwrites it: copy with ``fmap[:]`` (a tuple) first.
    ``'B'`` maps (conv layers) hold raw uint8 ints, ``'f'`` maps dequantised floats. A V3 float
    output reports ``w()`` = its size in **bytes** and ``h() == ch() == 1``.
    """
    def size(self) -> int:
        """Size in bytes."""
    def index(self) -> int:
        """Index of the last executed layer."""
    def w(self) -> int:
        """Width (V3 float outputs: the byte count)."""
    def h(self) -> int:
        """Height."""
    def ch(self) -> int:
        """Channels."""
    def typecode(self) -> str:
        """``'B'`` (raw uint8) or ``'f'`` (float32)."""
    @overload
    def __getitem__(self, index: int) -> float: ...
    @overload
    def __getitem__(self, index: slice) -> tuple[float, ...]: ...
    def __setitem__(self, index: int | slice, value: Any) -> None: ...

class kpu_yolo2_find:
    """One detection of ``run_yolo2``; all getters are methods. ``rect()`` feeds ``draw_rectangle``."""
    def rect(self) -> tuple[int, int, int, int]:
        """``(x, y, w, h)`` in model-input pixels (left/top clamped to 0, right/bottom not)."""
    def x(self) -> int: ...
    def y(self) -> int: ...
    def w(self) -> int: ...
    def h(self) -> int: ...
    def classid(self) -> int:
        """Class index."""
    def value(self) -> float:
        """Probability objectness * class probability (0..1)."""
    def index(self) -> int:
        """Position in the returned list."""
    def objnum(self) -> int:
        """Number of objects in the returned list."""

class kpu_netinfo_find:
    """One layer of ``netinfo``."""
    def index(self) -> int: ...
    def type(self) -> int: ...
    def wi(self) -> int: ...
    def hi(self) -> int: ...
    def wo(self) -> int: ...
    def ho(self) -> int: ...
    def chi(self) -> int: ...
    def cho(self) -> int: ...
    def dw(self) -> int: ...
    def kernel_type(self) -> int: ...
    def pool_type(self) -> int: ...
    def para_size(self) -> int: ...

class classifier:
    """Self-learning classifier on a feature-extractor model (uses the AI buffer: ``pix_to_ai()`` first)."""
    def __init__(self, model: kpu_net, class_num: int, sample_num: int, fea_len: int = 0) -> None: ...
    def add_class_img(self, img: Image, idx: int | None = None) -> int:
        """Add a labelled class image; returns its index."""
    def add_sample_img(self, img: Image) -> int:
        """Add an unlabelled sample; returns the sample count/index."""
    def rm_class_img(self) -> int:
        """Remove the last class image."""
    def rm_sample_img(self) -> int:
        """Remove the last sample."""
    def train(self) -> None:
        """Cluster the samples around the class images."""
    def predict(self, img: Image) -> tuple[int, float]:
        """``(class_index, min_distance)``: smaller distance = more confident."""
    def save(self, path: str) -> None:
        """Save the trained classifier."""
    @staticmethod
    def load(model: kpu_net, path: str, class_num: int | None = None, sample_num: int | None = None,
             fea_len: int = 0) -> tuple[classifier, int, int]:
        """``(classifier, class_num, sample_num)`` from a saved file."""

def load(model: int | str, /) -> kpu_net:
    """Load a kmodel V3/V4 from a flash address (> 0) or a ``.kmodel`` path.

    ``ValueError("[MAIXPY]kpu: load error:<code>, <text>")`` on failure (2002: not V3/V4 or nothing
    at that address, 2006: out of memory, 2009: more than 5 models).
    """
def load_flash(addr: int, is_dual_buf: int, batch_size: int, spi_speed: int, /) -> kpu_net:
    """Stream a big (byte-swapped) model from flash layer by layer."""
def deinit(net: kpu_net, /, *args: Any) -> bool:
    """Free the model (extra arguments are ignored)."""
def set_outputs(kpu_net: kpu_net, idx: int, w: int, h: int, ch: int, /) -> bool:
    """Declare output ``idx``'s shape (order **w, h, ch**); needed for V4 models.

    Returns False (with a print), not an exception, when the size does not match.
    """
def set_layers(net: kpu_net, n: int, /) -> bool:
    """Run only the first ``n`` layers (``n <= 0``: all); conv outputs are then raw uint8 ``'B'`` maps."""
def forward(kpu_net: kpu_net, img: Image | list[float], out_index: int = 0, dma: int = -1) -> kpu_fmap:
    """Run the model on the image's **AI buffer** (or a list of floats); returns output ``out_index``.

    No resize: the image must be the model's input size. The fmap is overwritten by the next run.
    """
def get_output(kpu_net: kpu_net, idx: int, /) -> kpu_fmap:
    """Output ``idx`` of the last run, without running again."""
def fmap(fm: kpu_fmap, ch: int, /) -> Image:
    """Channel ``ch`` of a uint8 (``'B'``) fmap as a grayscale image sharing its memory (float fmaps: ValueError)."""
def fmap_free(fm: kpu_fmap, /) -> None:
    """Does nothing on current firmware."""
def init_yolo2(kpu_net: kpu_net, threshold: float, nms_value: float, anchor_number: int,
               anchor: Sequence[float], dma: int = -1) -> bool:
    """Attach YOLOv2 decoding: thresholds in [0, 1], ``2*anchor_number`` anchors in grid-cell units.

    The region layer assumes 5 anchors (classes = channels // 5 - 5).
    """
def run_yolo2(kpu_net: kpu_net, img: Image) -> list[kpu_yolo2_find] | None:
    """Run the model and decode YOLOv2 boxes. Returns **None, not []**, when nothing is found.

    So ``for obj in kpu.run_yolo2(...)`` crashes on an empty frame: test ``if found:`` first.
    """
def netinfo(net: kpu_net, /) -> list[kpu_netinfo_find]:
    """One object per layer (prints the layer table)."""
def memtest() -> None:
    """Print free gc heap / sys heap memory in KB."""
def face_encode(feature: Sequence[float], /) -> bytearray:
    """Quantise a face feature vector (<= 512 values) to int8 bytes."""
def face_compare(a: bytes | bytearray, b: bytes | bytearray, /) -> float:
    """Cosine similarity of two encoded features mapped to 0..100 (> 85 is usually the same face)."""
