"""MaixPy ``image`` (OpenMV's image module + K210 additions), as in MaixPy v0.6.3 ``py_image.c``.

Every image has a pixel buffer (byte-swapped RGB565 or 8-bit gray) and, separately, the planar
RGB888 *AI buffer* that the KPU reads. Only ``sensor.snapshot()`` and ``pix_to_ai()`` fill the AI
buffer; drawing, ``resize``, ``copy``, ``cut`` and ``Image(path)`` do not (call ``pix_to_ai()``).
Integer colours are raw byte-swapped RGB565 (``lcd.RED == 0x00F8``, *not* 0xF800); ``(r, g, b)``
tuples are converted with the firmware's rounding tables. The default colour -1 is white.
OpenMV assertion failures raise ``OSError``, not ``ValueError``. Most methods change the image in
place and return it (so calls chain). Methods the emulator (maixemu) does not implement yet raise
``NotImplementedError``.
"""

from typing import Any, Callable, Sequence, overload

_Color = int | tuple[int, int, int]
_Rect = tuple[int, int, int, int] | list[int]
_Point = tuple[int, int] | list[int]
_Thresholds = Sequence[tuple[int, ...] | list[int]]
_Bool = bool | int  # MaixPy scripts pass 0/1 for flags (``to_grayscale(1)``)

# ---------------------------------------------------------------------------- constants
BINARY: int
GRAYSCALE: int
RGB565: int
JPEG: int
SEARCH_EX: int
SEARCH_DS: int
EDGE_CANNY: int
EDGE_SIMPLE: int
CORNER_FAST: int
CORNER_AGAST: int
TAG16H5: int
TAG25H7: int
TAG25H9: int
TAG36H10: int
TAG36H11: int
ARTOOLKIT: int
EAN2: int
EAN5: int
EAN8: int
UPCE: int
ISBN10: int
UPCA: int
EAN13: int
ISBN13: int
I25: int
DATABAR: int
DATABAR_EXP: int
CODABAR: int
CODE39: int
PDF417: int
CODE93: int
CODE128: int
QRCODE: int
ASCII: int
"""Font encoding for ``font_load``: the built-in 8x12 ASCII font (the default)."""
UTF8: int
"""Font index for ``font_load``: a Unicode-indexed bitmap font from flash or a ``.Dzk`` file (value 2)."""

# ---------------------------------------------------------------------------- result objects
class Blob:
    """A ``find_blobs`` result (MaixPy-v1 blob: these 13 methods only); ``blob[0:4]`` is the rect,
    ``blob[5]``/``blob[6]`` are cx/cy."""
    def rect(self) -> tuple[int, int, int, int]: ...
    def x(self) -> int: ...
    def y(self) -> int: ...
    def w(self) -> int: ...
    def h(self) -> int: ...
    def pixels(self) -> int: ...
    def cx(self) -> int: ...
    def cy(self) -> int: ...
    def rotation(self) -> float: ...
    def code(self) -> int: ...
    def count(self) -> int: ...
    def area(self) -> int: ...
    def density(self) -> float: ...
    def __getitem__(self, index: Any) -> Any: ...

class QRCode:
    """A ``find_qrcodes`` result; ``payload()`` is the decoded text."""
    def rect(self) -> tuple[int, int, int, int]: ...
    def corners(self) -> list[tuple[int, int]]: ...
    def x(self) -> int: ...
    def y(self) -> int: ...
    def w(self) -> int: ...
    def h(self) -> int: ...
    def payload(self) -> str: ...
    def version(self) -> int: ...
    def ecc_level(self) -> int: ...
    def mask(self) -> int: ...
    def data_type(self) -> int: ...
    def eci(self) -> int: ...
    def is_numeric(self) -> bool: ...
    def is_alphanumeric(self) -> bool: ...
    def is_binary(self) -> bool: ...
    def is_kanji(self) -> bool: ...
    def __getitem__(self, index: Any) -> Any: ...
    def __len__(self) -> int: ...

class Barcode:
    """A ``find_barcodes`` result; ``type()`` is one of the barcode constants (``image.EAN13`` ...)."""
    def rect(self) -> tuple[int, int, int, int]: ...
    def corners(self) -> list[tuple[int, int]]: ...
    def x(self) -> int: ...
    def y(self) -> int: ...
    def w(self) -> int: ...
    def h(self) -> int: ...
    def payload(self) -> str: ...
    def type(self) -> int: ...
    def rotation(self) -> float: ...
    def quality(self) -> int: ...
    def __getitem__(self, index: Any) -> Any: ...
    def __len__(self) -> int: ...

class DataMatrix:
    """A ``find_datamatrices`` result (``rotation()`` in radians)."""
    def rect(self) -> tuple[int, int, int, int]: ...
    def corners(self) -> tuple[tuple[int, int], ...]: ...
    def x(self) -> int: ...
    def y(self) -> int: ...
    def w(self) -> int: ...
    def h(self) -> int: ...
    def payload(self) -> str: ...
    def rotation(self) -> float: ...
    def rows(self) -> int: ...
    def columns(self) -> int: ...
    def capacity(self) -> int: ...
    def padding(self) -> int: ...
    def __getitem__(self, index: Any) -> Any: ...
    def __len__(self) -> int: ...

class Line:
    """A ``find_lines`` result; ``line()`` is ``(x1, y1, x2, y2)`` for ``draw_line``."""
    def line(self) -> tuple[int, int, int, int]: ...
    def x1(self) -> int: ...
    def y1(self) -> int: ...
    def x2(self) -> int: ...
    def y2(self) -> int: ...
    def length(self) -> int: ...
    def magnitude(self) -> int: ...
    def theta(self) -> int: ...
    def rho(self) -> int: ...
    def __getitem__(self, index: Any) -> Any: ...
    def __len__(self) -> int: ...

class Circle:
    """A ``find_circles`` result; ``circle()`` is ``(x, y, r)`` for ``draw_circle``."""
    def circle(self) -> tuple[int, int, int]: ...
    def x(self) -> int: ...
    def y(self) -> int: ...
    def r(self) -> int: ...
    def magnitude(self) -> int: ...
    def __getitem__(self, index: Any) -> Any: ...
    def __len__(self) -> int: ...

class Rect:
    """A ``find_rects`` result."""
    def rect(self) -> tuple[int, int, int, int]: ...
    def corners(self) -> list[tuple[int, int]]: ...
    def x(self) -> int: ...
    def y(self) -> int: ...
    def w(self) -> int: ...
    def h(self) -> int: ...
    def magnitude(self) -> int: ...
    def __getitem__(self, index: Any) -> Any: ...
    def __len__(self) -> int: ...

class Statistics:
    """``get_statistics()`` result: gray values, or L/A/B channels for RGB565 images."""
    def mean(self) -> int: ...
    def median(self) -> int: ...
    def mode(self) -> int: ...
    def stdev(self) -> int: ...
    def min(self) -> int: ...
    def max(self) -> int: ...
    def lq(self) -> int: ...
    def uq(self) -> int: ...
    def l_mean(self) -> int: ...
    def l_median(self) -> int: ...
    def l_mode(self) -> int: ...
    def l_stdev(self) -> int: ...
    def l_min(self) -> int: ...
    def l_max(self) -> int: ...
    def l_lq(self) -> int: ...
    def l_uq(self) -> int: ...
    def a_mean(self) -> int: ...
    def a_median(self) -> int: ...
    def a_mode(self) -> int: ...
    def a_stdev(self) -> int: ...
    def a_min(self) -> int: ...
    def a_max(self) -> int: ...
    def a_lq(self) -> int: ...
    def a_uq(self) -> int: ...
    def b_mean(self) -> int: ...
    def b_median(self) -> int: ...
    def b_mode(self) -> int: ...
    def b_stdev(self) -> int: ...
    def b_min(self) -> int: ...
    def b_max(self) -> int: ...
    def b_lq(self) -> int: ...
    def b_uq(self) -> int: ...
    def __getitem__(self, index: Any) -> Any: ...

class Percentile:
    """``histogram.get_percentile(p)`` result (``get_threshold()`` returns a ``Threshold`` alike)."""
    def value(self) -> int: ...
    def l_value(self) -> int: ...
    def a_value(self) -> int: ...
    def b_value(self) -> int: ...
    def __getitem__(self, index: Any) -> Any: ...

class Threshold:
    """``histogram.get_threshold()`` result (Otsu's threshold per channel)."""
    def value(self) -> int: ...
    def l_value(self) -> int: ...
    def a_value(self) -> int: ...
    def b_value(self) -> int: ...
    def __getitem__(self, index: Any) -> Any: ...

class Histogram:
    """``get_histogram()`` result: normalised bins (gray, or L/A/B for RGB565)."""
    def bins(self) -> list[float]: ...
    def l_bins(self) -> list[float]: ...
    def a_bins(self) -> list[float]: ...
    def b_bins(self) -> list[float]: ...
    def get_percentile(self, percentile: float, /) -> Percentile: ...
    def get_threshold(self) -> Threshold: ...
    def get_statistics(self) -> Statistics: ...
    def get_stats(self) -> Statistics: ...
    def statistics(self) -> Statistics: ...
    def __getitem__(self, index: Any) -> Any: ...

class HaarCascade:
    """A Haar cascade for ``find_features``: ``HaarCascade("frontalface", stages=25)`` or a file path."""
    def __init__(self, path: str, /, stages: int = ...) -> None: ...

# ---------------------------------------------------------------------------- Image
class Image:
    """A MaixPy image: pixels (byte-swapped RGB565 or gray) plus an optional AI buffer for the KPU.

    ``Image()`` is a black 320x240 RGB565 image, ``Image(size=(w, h))`` a w x h one,
    ``Image("/sd/x.jpg")`` loads BMP/JPEG/PPM/PGM (``OSError`` ENOENT if missing),
    ``Image(data, from_bytes=True)`` decodes bytes, ``Image(copy_to_fb=True)`` uses the frame buffer.
    None of them has an AI buffer: call ``pix_to_ai()`` before ``kpu.forward``.
    """
    def __init__(self, path: str | bytes | None = None, copy_to_fb: _Bool = False, *,
                 size: tuple[int, int] | None = None, from_bytes: _Bool = False) -> None: ...
    def __getitem__(self, index: int, /) -> Any:
        """``img[i]``: pixel ``i`` in row-major order, raw value (byte-swapped RGB565 int or gray)."""
    def __setitem__(self, index: int, value: int, /) -> None:
        """``img[i] = v``: set pixel ``i`` (raw value)."""
    def __len__(self) -> int:
        """Number of pixels (w*h)."""

    # --- basics
    def width(self) -> int:
        """Width in pixels."""
    def height(self) -> int:
        """Height in pixels."""
    def format(self) -> int:
        """``sensor.RGB565`` or ``sensor.GRAYSCALE`` (BINARY/JPEG for special images)."""
    def size(self) -> int:
        """Bytes of pixel data: w*h*2 for RGB565, w*h for grayscale."""
    def get_pixel(self, x: int | _Point, y: int = ..., /, rgbtuple: _Bool = ...) -> Any:
        """RGB565: ``(r, g, b)`` 8-bit tuple (raw byte-swapped int with ``rgbtuple=False``); gray: int; outside: None."""
    def set_pixel(self, x: int | _Point, y: int = ..., /, color: _Color = -1) -> Image:
        """Set one pixel (outside the image: silently ignored); int colours are raw byte-swapped RGB565."""
    def clear(self) -> Image:
        """Zero all pixels (black)."""
    def copy(self, roi: _Rect | None = None, x_scale: float = 1.0, y_scale: float = 1.0,
             copy_to_fb: _Bool = False) -> Image:
        """New image (nearest-neighbour scaling); it has no AI buffer."""
    def crop(self, roi: _Rect | None = None, x_scale: float = 1.0, y_scale: float = 1.0,
             copy: _Bool = False) -> Image:
        """Like ``copy`` but **in place** by default (the image itself becomes the crop); v0.6.3 only."""
    def cut(self, x: int, y: int, w: int, h: int, /) -> Image:
        """New w x h image copied from (x, y); no AI buffer (call ``pix_to_ai()`` before the KPU)."""
    def resize(self, w: int, h: int, /) -> Image:
        """New w x h image with the K210 algorithms; **no AI buffer** (call ``pix_to_ai()`` before the KPU).

        RGB565: nearest neighbour unless it widens without making it shorter (then bilinear);
        grayscale: bilinear unless it shrinks both ways (then a box average). The original is untouched. Two positional
        arguments only (keywords: ``TypeError``). Returns None (after a print) for other formats.
        """
    def to_grayscale(self, copy: _Bool = False) -> Image:
        """Convert to grayscale (in place unless ``copy``); the AI buffer is not updated."""
    def to_rgb565(self, copy: _Bool = False) -> Image:
        """Convert to RGB565 (in place unless ``copy``); the AI buffer is not updated."""
    def to_bitmap(self, copy: _Bool = False) -> Image:
        """Convert to a 1-bit BINARY image (gray > 127); in place unless ``copy``."""
    def to_rainbow(self, copy: _Bool = False) -> Image:
        """RGB565 false colours of the gray level (``copy=True`` needed for grayscale images)."""
    def to_bytes(self) -> bytearray:
        """The raw pixel buffer (RGB565 byte-swapped as in device memory)."""
    def save(self, path: str, /, roi: _Rect | None = None, quality: int = 50) -> Image:
        """Write by extension: .bmp (roi) or .jpg/.jpeg (quality 1-100, whole image); the firmware
        writes nothing for any other extension."""
    def compress(self, quality: int = 50) -> Image:
        """JPEG-compress in place."""
    def compressed(self, quality: int = 50) -> Image:
        """A JPEG-compressed copy."""
    def compress_for_ide(self, quality: int = 50) -> Image:
        """JPEG-compress in place, encoded for the IDE's frame buffer stream."""
    def compressed_for_ide(self, quality: int = 50) -> Image:
        """A JPEG-compressed copy encoded for the IDE."""
    def dump_roi(self, x: int | Sequence[int], y: int = ..., w: int = ..., h: int = ..., /) -> None:
        """K210 addition: print the region's memory, two bytes per pixel."""

    # --- K210: the AI buffer
    def pix_to_ai(self) -> None:
        """(Re)compute the AI buffer (planar RGB888 / gray) from the current pixels; returns None.

        Needed after ``Image(path)``, ``resize``, ``cut``, ``copy`` and after drawing, because the KPU
        reads only the AI buffer. Later drawing does not propagate: call it again.
        """
    def ai_to_pix(self) -> None:
        """Copy the AI buffer back into the pixels (8->5/6-bit tables); nothing without an AI buffer."""
    def conv3(self, kern: Sequence[float] = ...) -> Image:
        """3x3 convolution with 9 float weights (run on the KPU, uses the AI buffer)."""
    def strech_char(self, de_dark: int, /) -> Image:
        """Contrast stretch for character (MNIST) images (sic: "strech")."""
    def stretch(self, to_min: int, to_max: int, /) -> Image:
        """Linear contrast stretch of the pixel values to [to_min, to_max]."""

    # --- drawing (in place, return the image; coordinates as ints or one tuple)
    @overload
    def draw_line(self, x0: int, y0: int, x1: int, y1: int, /, color: _Color = -1, thickness: int = 1) -> Image:
        """Draw a line; thickness is centred on the line."""
    @overload
    def draw_line(self, line: Sequence[int], /, color: _Color = -1, thickness: int = 1) -> Image: ...
    @overload
    def draw_rectangle(self, x: int, y: int, w: int, h: int, /, color: _Color = -1, thickness: int = 1,
                       fill: _Bool = False) -> Image:
        """Draw a rectangle; ``draw_rectangle(obj.rect(), ...)`` works too."""
    @overload
    def draw_rectangle(self, rect: Sequence[int], /, color: _Color = -1, thickness: int = 1,
                       fill: _Bool = False) -> Image: ...
    @overload
    def draw_circle(self, x: int, y: int, radius: int, /, color: _Color = -1, thickness: int = 1,
                    fill: _Bool = False) -> Image:
        """Draw a circle centred at (x, y)."""
    @overload
    def draw_circle(self, circle: Sequence[int], /, color: _Color = -1, thickness: int = 1,
                    fill: _Bool = False) -> Image: ...
    def draw_ellipse(self, cx: int | Sequence[int], cy: int = ..., rx: int = ..., ry: int = ..., /,
                     rotation: int = 0, color: _Color = -1, thickness: int = 1, fill: _Bool = False) -> Image:
        """Draw an ellipse (radii rx, ry; rotation in degrees)."""
    @overload
    def draw_cross(self, x: int, y: int, /, color: _Color = -1, size: int = 5, thickness: int = 1) -> Image:
        """Draw a cross marker at (x, y)."""
    @overload
    def draw_cross(self, point: Sequence[int], /, color: _Color = -1, size: int = 5, thickness: int = 1) -> Image: ...
    @overload
    def draw_arrow(self, x0: int, y0: int, x1: int, y1: int, /, color: _Color = -1, size: int = 10,
                   thickness: int = 1) -> Image:
        """Draw an arrow from (x0, y0) to (x1, y1)."""
    @overload
    def draw_arrow(self, line: Sequence[int], /, color: _Color = -1, size: int = 10, thickness: int = 1) -> Image: ...
    def draw_string(self, x: int, y: int, text: str, /, color: _Color = -1, scale: float = 1.0, x_spacing: int = 0,
                    y_spacing: int = 2, mono_space: _Bool = False) -> Image:
        """Draw text with the built-in 8x12 font: proportional by default, transparent background, no wrap.

        Unlike ``lcd.draw_string`` (opaque, monospace, red on black by default).
        """
    def draw_font(self, x: int, y: int, width: int, height: int, font: bytes | bytearray | str, /,
                  color: _Color = -1, scale: float = 1.0) -> Image:
        """Draw one raw 1-bit glyph (rows of width/8 bytes; 16-wide glyphs store the left halves first)."""
    @overload
    def draw_image(self, image: Image, x: int, y: int, /, x_scale: float = 1.0, y_scale: float = 1.0,
                   alpha: int = 256, mask: Image | None = None) -> Image:
        """Blit another image at (x, y) with nearest scaling; alpha 0..256. The AI buffer is not updated."""
    @overload
    def draw_image(self, image: Image, point: Sequence[int], /, x_scale: float = 1.0, y_scale: float = 1.0,
                   alpha: int = 256, mask: Image | None = None) -> Image: ...
    def draw_keypoints(self, keypoints: Any, /, color: _Color = -1, size: int = 10, thickness: int = 1,
                       fill: _Bool = False) -> Image:
        """Draw the keypoints of ``find_keypoints``."""
    def flood_fill(self, x: int | Sequence[int], y: int = ..., /, seed_threshold: float = 0.05,
                   floating_threshold: float = 0.05, color: _Color = -1, invert: _Bool = False,
                   clear_background: _Bool = False, mask: Image | None = None) -> Image:
        """Fill the region connected to (x, y) whose pixels are within the thresholds."""

    # --- pixel operations and filters (in place)
    def invert(self) -> Image:
        """Invert every pixel (255 - v per channel)."""
    def negate(self) -> Image:
        """Same as ``invert``."""
    def binary(self, thresholds: _Thresholds, /, invert: _Bool = False, zero: _Bool = False,
               mask: Image | None = None, to_bitmap: _Bool = False, copy: _Bool = False) -> Image:
        """Pixels inside the thresholds (gray ``(lo, hi)`` or LAB 6-tuples) -> white, others black."""
    def mean(self, size: int, /, threshold: _Bool = False, offset: int = 0, invert: _Bool = False,
             mask: Image | None = None) -> Image:
        """Box filter over a (2*size+1)^2 window."""
    def blur(self, size: int, /, threshold: _Bool = False, offset: int = 0, invert: _Bool = False,
             mask: Image | None = None) -> Image:
        """Alias of ``mean``."""
    def median(self, size: int, /, percentile: float = 0.5, threshold: _Bool = False, offset: int = 0,
               invert: _Bool = False, mask: Image | None = None) -> Image:
        """Median (percentile) filter."""
    def mode(self, size: int, /, threshold: _Bool = False, offset: int = 0, invert: _Bool = False,
             mask: Image | None = None) -> Image:
        """Mode filter."""
    def midpoint(self, size: int, /, bias: float = 0.5, threshold: _Bool = False, offset: int = 0,
                 invert: _Bool = False, mask: Image | None = None) -> Image:
        """Midpoint filter (bias 0 = min, 1 = max)."""
    def gaussian(self, size: int, /, unsharp: _Bool = False, mul: float = ..., add: float = 0.0,
                 threshold: _Bool = False, offset: int = 0, invert: _Bool = False, mask: Image | None = None) -> Image:
        """Gaussian smoothing (``unsharp=True`` sharpens)."""
    def gaussian_blur(self, size: int, /, unsharp: _Bool = False, mul: float = ..., add: float = 0.0,
                      threshold: _Bool = False, offset: int = 0, invert: _Bool = False,
                      mask: Image | None = None) -> Image:
        """Alias of ``gaussian``."""
    def laplacian(self, size: int, /, sharpen: _Bool = False, mul: float = ..., add: float = 0.0,
                  threshold: _Bool = False, offset: int = 0, invert: _Bool = False, mask: Image | None = None) -> Image:
        """Laplacian edge filter (``sharpen=True`` sharpens)."""
    def bilateral(self, size: int, /, color_sigma: float = 0.1, space_sigma: float = 1.0, threshold: _Bool = False,
                  offset: int = 0, invert: _Bool = False, mask: Image | None = None) -> Image:
        """Edge-preserving bilateral filter."""
    def cartoon(self, seed_threshold: float = 0.05, floating_threshold: float = 0.05,
                mask: Image | None = None) -> Image:
        """Flood-fill regions of similar colour with their mean (cartoon look)."""
    def morph(self, size: int, kernel: Sequence[int], /, mul: float = ..., add: float = 0.0,
              threshold: _Bool = False, offset: int = 0, invert: _Bool = False, mask: Image | None = None) -> Image:
        """Convolve with a custom (2*size+1)^2 integer kernel."""
    def histeq(self, adaptive: _Bool = False, clip_limit: float = -1, mask: Image | None = None) -> Image:
        """Histogram equalisation (``adaptive=True``: CLAHE)."""
    def gamma_corr(self, gamma: float = 1.0, contrast: float = 1.0, brightness: float = 0.0) -> Image:
        """Gamma, contrast and brightness correction."""
    def lens_corr(self, strength: float = 1.8, zoom: float = 1.0) -> Image:
        """Remove fisheye (barrel) distortion."""
    def rotation_corr(self, x_rotation: float = 0.0, y_rotation: float = 0.0, z_rotation: float = 0.0,
                      x_translation: float = 0.0, y_translation: float = 0.0, zoom: float = 1.0,
                      fov: float = 60.0, corners: Sequence[Sequence[int]] | None = None) -> Image:
        """3D rotation/translation/zoom with perspective (angles in degrees)."""
    def linpolar(self, reverse: _Bool = False) -> Image:
        """Cartesian -> linear polar re-mapping."""
    def logpolar(self, reverse: _Bool = False) -> Image:
        """Cartesian -> log-polar re-mapping."""
    def chrominvar(self) -> Image:
        """Remove illumination, keep chromaticity (illumination-invariant colour)."""
    def illuminvar(self) -> Image:
        """Illumination-invariant grayscale-like image."""
    def remove_shadows(self, other: Image | str | _Color = ..., /) -> Image:
        """Replace shadowed pixels by the shadow-free reference (an image, BMP/PPM path or colour)."""

    # --- pooling
    def mean_pool(self, x_div: int, y_div: int, /) -> Image:
        """Shrink in place by averaging x_div x y_div blocks."""
    def mean_pooled(self, x_div: int, y_div: int, /) -> Image:
        """Like ``mean_pool`` but returns a new image."""
    def midpoint_pool(self, x_div: int, y_div: int, /, bias: float = 0.5) -> Image:
        """Shrink in place taking the midpoint of each block."""
    def midpoint_pooled(self, x_div: int, y_div: int, /, bias: float = 0.5) -> Image:
        """Like ``midpoint_pool`` but returns a new image."""

    # --- image arithmetic (other: an Image, a path, or a colour)
    def add(self, image: Image | str | _Color, /, mask: Image | None = None) -> Image:
        """Saturating per-pixel add."""
    def sub(self, image: Image | str | _Color, /, reverse: _Bool = False, mask: Image | None = None) -> Image:
        """Saturating per-pixel subtract (``reverse``: other - self)."""
    def mul(self, image: Image | str | _Color, /, invert: _Bool = False, mask: Image | None = None) -> Image:
        """Per-pixel multiply (normalised)."""
    def div(self, image: Image | str | _Color, /, invert: _Bool = False, mask: Image | None = None) -> Image:
        """Per-pixel divide (normalised)."""
    def min(self, image: Image | str | _Color, /, mask: Image | None = None) -> Image:
        """Per-pixel minimum."""
    def max(self, image: Image | str | _Color, /, mask: Image | None = None) -> Image:
        """Per-pixel maximum."""
    def difference(self, image: Image | str | _Color, /, mask: Image | None = None) -> Image:
        """Per-pixel absolute difference."""
    def blend(self, image: Image | str | _Color, /, alpha: int = 128, mask: Image | None = None) -> Image:
        """Alpha-blend another image (alpha 0..256)."""
    def replace(self, image: Image | str | _Color | None = None, /, hmirror: _Bool = False, vflip: _Bool = False,
                transpose: _Bool = False, mask: Image | None = None) -> Image:
        """Replace the pixels with another image's (optionally mirrored/flipped/transposed)."""
    def assign(self, image: Image | str | _Color | None = None, /, hmirror: _Bool = False, vflip: _Bool = False,
               transpose: _Bool = False, mask: Image | None = None) -> Image:
        """Alias of ``replace``."""
    def set(self, image: Image | str | _Color | None = None, /, hmirror: _Bool = False, vflip: _Bool = False,
            transpose: _Bool = False, mask: Image | None = None) -> Image:
        """Alias of ``replace``."""
    def b_and(self, image: Image | str | _Color, /, mask: Image | None = None) -> Image:
        """Bitwise AND (also ``img.and`` at run time, a keyword in Python source)."""
    def b_nand(self, image: Image | str | _Color, /, mask: Image | None = None) -> Image:
        """Bitwise NAND."""
    def b_or(self, image: Image | str | _Color, /, mask: Image | None = None) -> Image:
        """Bitwise OR (also ``img.or`` at run time)."""
    def b_nor(self, image: Image | str | _Color, /, mask: Image | None = None) -> Image:
        """Bitwise NOR."""
    def b_xor(self, image: Image | str | _Color, /, mask: Image | None = None) -> Image:
        """Bitwise XOR."""
    def b_xnor(self, image: Image | str | _Color, /, mask: Image | None = None) -> Image:
        """Bitwise XNOR."""
    def nand(self, image: Image | str | _Color, /, mask: Image | None = None) -> Image:
        """Alias of ``b_nand``."""
    def nor(self, image: Image | str | _Color, /, mask: Image | None = None) -> Image:
        """Alias of ``b_nor``."""
    def xor(self, image: Image | str | _Color, /, mask: Image | None = None) -> Image:
        """Alias of ``b_xor``."""
    def xnor(self, image: Image | str | _Color, /, mask: Image | None = None) -> Image:
        """Alias of ``b_xnor``."""
    def erode(self, size: int, /, threshold: int = ..., mask: Image | None = None) -> Image:
        """Morphological erosion (binary/threshold based)."""
    def dilate(self, size: int, /, threshold: int = 0, mask: Image | None = None) -> Image:
        """Morphological dilation."""
    def open(self, size: int, /, threshold: int = 0, mask: Image | None = None) -> Image:
        """Erode then dilate."""
    def close(self, size: int, /, threshold: int = 0, mask: Image | None = None) -> Image:
        """Dilate then erode."""
    def top_hat(self, size: int, /, threshold: int = 0, mask: Image | None = None) -> Image:
        """Image minus its opening."""
    def black_hat(self, size: int, /, threshold: int = 0, mask: Image | None = None) -> Image:
        """Closing minus the image."""

    # --- statistics
    def get_statistics(self, thresholds: _Thresholds | None = None, invert: _Bool = False, roi: _Rect | None = None,
                       bins: int = ..., l_bins: int = ..., a_bins: int = ..., b_bins: int = ...) -> Statistics:
        """Mean/median/mode/stdev/min/max/quartiles (per LAB channel for RGB565)."""
    def get_stats(self, thresholds: _Thresholds | None = None, invert: _Bool = False, roi: _Rect | None = None,
                  bins: int = ..., l_bins: int = ..., a_bins: int = ..., b_bins: int = ...) -> Statistics:
        """Alias of ``get_statistics``."""
    def statistics(self, thresholds: _Thresholds | None = None, invert: _Bool = False, roi: _Rect | None = None,
                   bins: int = ..., l_bins: int = ..., a_bins: int = ..., b_bins: int = ...) -> Statistics:
        """Alias of ``get_statistics``."""
    def get_histogram(self, thresholds: _Thresholds | None = None, invert: _Bool = False, roi: _Rect | None = None,
                      bins: int = ..., l_bins: int = ..., a_bins: int = ..., b_bins: int = ...) -> Histogram:
        """Normalised histogram (gray, or L/A/B for RGB565)."""
    def get_hist(self, thresholds: _Thresholds | None = None, invert: _Bool = False, roi: _Rect | None = None,
                 bins: int = ..., l_bins: int = ..., a_bins: int = ..., b_bins: int = ...) -> Histogram:
        """Alias of ``get_histogram``."""
    def histogram(self, thresholds: _Thresholds | None = None, invert: _Bool = False, roi: _Rect | None = None,
                  bins: int = ..., l_bins: int = ..., a_bins: int = ..., b_bins: int = ...) -> Histogram:
        """Alias of ``get_histogram``."""
    def get_regression(self, thresholds: _Thresholds, /, invert: _Bool = False, roi: _Rect | None = None,
                       x_stride: int = 2, y_stride: int = 1, area_threshold: int = 10, pixels_threshold: int = 10,
                       robust: _Bool = False) -> Line | None:
        """Linear regression over the thresholded pixels; None if none."""
    def get_similarity(self, image: Image, /) -> Any:
        """SSIM-style similarity to another image."""

    # --- finding things (OpenMV semantics; results are lists, possibly empty)
    def find_blobs(self, thresholds: _Thresholds, /, invert: _Bool = False, roi: _Rect | None = None,
                   x_stride: int = 2, y_stride: int = 1, area_threshold: int = 10, pixels_threshold: int = 10,
                   merge: _Bool = False, margin: int = 0, threshold_cb: Callable[[Blob], bool] | None = None,
                   merge_cb: Callable[[Blob, Blob], bool] | None = None) -> list[Blob]:
        """Colour blobs within the thresholds (gray ``(lo, hi)`` or LAB ``(Lmin, Lmax, Amin, Amax, Bmin, Bmax)``)."""
    def find_qrcodes(self, roi: _Rect | None = None) -> list[QRCode]:
        """Decode QR codes."""
    def find_barcodes(self, roi: _Rect | None = None) -> list[Barcode]:
        """Decode 1D barcodes."""
    def find_datamatrices(self, roi: _Rect | None = None, effort: int = 200) -> list[DataMatrix]:
        """Decode Data Matrix codes."""
    def find_apriltags(self, roi: _Rect | None = None, families: int = ..., fx: float = ..., fy: float = ...,
                       cx: float = ..., cy: float = ...) -> list[Any]:
        """Find AprilTags (``families`` a bit mask of ``image.TAG*``)."""
    def find_lines(self, roi: _Rect | None = None, x_stride: int = 2, y_stride: int = 1, threshold: int = 1000,
                   theta_margin: int = 25, rho_margin: int = 25) -> list[Line]:
        """Hough lines."""
    def find_line_segments(self, roi: _Rect | None = None, merge_distance: int = 0,
                           max_theta_difference: int = 15) -> list[Line]:
        """Line segments (LSD)."""
    def find_circles(self, roi: _Rect | None = None, x_stride: int = 2, y_stride: int = 1, threshold: int = 2000,
                     x_margin: int = 10, y_margin: int = 10, r_margin: int = 10, r_min: int = 2, r_max: int = ...,
                     r_step: int = 2) -> list[Circle]:
        """Hough circles."""
    def find_rects(self, roi: _Rect | None = None, threshold: int = 10000) -> list[Rect]:
        """Quadrilaterals (AprilTag quad detector)."""
    def find_edges(self, edge_type: int, /, roi: _Rect | None = None, threshold: tuple[int, int] = ...) -> Image:
        """Edge image (``image.EDGE_CANNY`` or ``EDGE_SIMPLE``); grayscale only."""
    def find_features(self, cascade: HaarCascade, /, threshold: float = 0.5, scale_factor: float = 1.5,
                      roi: _Rect | None = None) -> list[tuple[int, int, int, int]]:
        """Haar-cascade detection; returns rect tuples."""
    def find_eye(self, roi: _Rect, /) -> tuple[int, int]:
        """Pupil position inside an eye ROI."""
    def find_lbp(self, roi: _Rect, /) -> Any:
        """Local binary pattern descriptor of a ROI."""
    def find_keypoints(self, roi: _Rect | None = None, threshold: int = 20, normalized: _Bool = False,
                       scale_factor: float = 1.5, max_keypoints: int = 100, corner_detector: int = ...) -> Any:
        """ORB keypoints (a ``kp_desc`` for ``image.match_descriptor``), or None when there are none."""
    def find_hog(self, roi: _Rect | None = None, size: int = 8) -> Image:
        """Replace the ROI with its HOG visualisation."""
    def find_template(self, template: Image, threshold: float, /, roi: _Rect | None = None, step: int = 2,
                      search: int = ...) -> tuple[int, int, int, int] | None:
        """Normalised cross-correlation template match; None if below threshold."""
    def find_displacement(self, template: Image, /, roi: _Rect | None = None, template_roi: _Rect | None = None,
                          logpolar: _Bool = False, fix_rotation_scale: _Bool = False) -> Any:
        """Phase-correlation displacement against another image."""
    def find_domain(self, edge_gate: float, /) -> Image | None:
        """MaixPy addition: label bright regions (in place) and return the main one as a BINARY image."""
    def selective_search(self, threshold: int = 500, size: int = 20, a1: float = 1.0, a2: float = 1.0,
                         a3: float = 1.0) -> list[tuple[int, int, int, int]]:
        """MaixPy addition: region proposals (selective search); ``a2=``/``a3=`` keywords are not read."""

# ---------------------------------------------------------------------------- module functions
def rgb_to_lab(rgb_tuple: Sequence[int], /) -> tuple[int, int, int]:
    """(r, g, b) -> (L, A, B), through RGB565 as the firmware's LAB table does."""
def lab_to_rgb(lab_tuple: Sequence[int], /) -> tuple[int, int, int]:
    """(L, A, B) -> (r, g, b)."""
def rgb_to_grayscale(rgb_tuple: Sequence[int], /) -> int:
    """(r, g, b) -> gray, through RGB565."""
def grayscale_to_rgb(g: int, /) -> tuple[int, int, int]:
    """gray -> (r, g, b), through RGB565."""
def font_load(index: int, width: int, height: int, font: int | str, /) -> None:
    """``UTF8``: load a Unicode-indexed bitmap font from a flash address or a ``.Dzk`` file for
    ``draw_string``; any other index selects the built-in 8x12 ASCII font."""
def font_free() -> None:
    """Back to the built-in 8x12 ASCII font."""
def get_affine_transform(src_list: Sequence[Sequence[float]], dst_list: Sequence[Sequence[float]], /) -> list[float]:
    """3x3 similarity transform (least squares, flat list of 9 floats) mapping src to dst points."""
def warp_affine_ai(src_img: Image, dst_img: Image, matrix: Sequence[float], /) -> None:
    """Affine-warp src's **AI buffer** into dst's AI buffer; call ``dst.ai_to_pix()`` to see it."""
def load_descriptor(path: str, /) -> Any:
    """Load a keypoint/LBP descriptor file."""
def save_descriptor(descriptor: Any, path: str, /) -> None:
    """Save a keypoint/LBP descriptor."""
def match_descriptor(descriptor0: Any, descriptor1: Any, /, threshold: int = ..., filter_outliers: _Bool = ...) -> Any:
    """Match two descriptors (LBP distance or ORB keypoint matches)."""
def ImageWriter(path: str, /) -> Any:
    """Record images to an .bin stream file."""
def ImageReader(path: str, /) -> Any:
    """Read images back from an ImageWriter stream file."""
