"""MaixPy ``lcd``: the SPI panel (MaixPy v0.6.x ``py_lcd.c``).

Colours are raw **byte-swapped RGB565** ints (``lcd.RED == 0x00F8``; a "standard" 0xF800 shows
blue) or ``(r, g, b)`` tuples where noted. ``display`` never scales.
"""

from image import Image

BLACK: int
"""0x0000"""
NAVY: int
"""0x0F00"""
DARKGREEN: int
"""0xE003"""
DARKCYAN: int
"""0xEF03"""
MAROON: int
"""0x0078"""
PURPLE: int
"""0x0F78"""
OLIVE: int
"""0xE07B"""
LIGHTGREY: int
"""0x18C6"""
DARKGREY: int
"""0xEF7B"""
BLUE: int
"""0x1F00 (byte-swapped RGB565)"""
GREEN: int
"""0xE007 (byte-swapped RGB565)"""
CYAN: int
"""0xFF07"""
RED: int
"""0x00F8 (byte-swapped RGB565: *not* 0xF800)"""
MAGENTA: int
"""0x1FF8"""
YELLOW: int
"""0xE0FF"""
WHITE: int
"""0xFFFF"""
ORANGE: int
"""0x20FD"""
GREENYELLOW: int
"""0xE5AF"""
PINK: int
"""0x1FF8"""
# scan directions for lcd.direction()
XY_RLUD: int
YX_RLUD: int
XY_LRUD: int
YX_LRUD: int
XY_RLDU: int
YX_RLDU: int
XY_LRDU: int
YX_LRDU: int

def init(type: int = 1, freq: int = 15000000, color: int | tuple[int, int, int] = 0, width: int = 320,
         height: int = 240, invert: int = 0, offset_w0: int = 0, offset_h0: int = 0, offset_w1: int = 0,
         offset_h1: int = 0, rst: int = 37, dcx: int = 38, ss: int = 36, clk: int = 39, *,
         lcd_type: int = 0) -> None:
    """Initialise the panel (type 0 none, 1 SPI shield 320x240, 2 Maix Cube 240x240, 3 M5StickV, 4 T-Watch, 5 RGB).

    Fills the screen with ``color``; resets rotation and mirror.
    """
def deinit() -> None:
    """Switch the panel off."""
def width() -> int:
    """Width after rotation (320 for the usual panel at rotation 0; None when ``init(type=0)``)."""
def height() -> int:
    """Height after rotation (None when ``init(type=0)``)."""
def type() -> int:
    """The panel type given to ``init`` (None when type 0)."""
def freq(freq: int = ..., /) -> int:
    """Current SPI frequency (sets it if given)."""
def set_backlight(state: int, /) -> None:
    """No-op on most boards."""
def get_backlight() -> None:
    """No-op on most boards."""
def register(addr: int, data: int | bytes | list[int], /) -> None:
    """Write a raw panel register."""
def direction(dir: int, /) -> None:
    """Set a raw scan direction (``lcd.XY_RLUD`` ...)."""
def rotation(dir: int = ..., /) -> int:
    """Rotation 0..3 (1 and 3 swap width/height); returns the current rotation. Else ``ValueError("value:[0,3]")``."""
def mirror(invert: bool | int = ..., /) -> int:
    """Mirror the scan direction horizontally; returns 1/0."""
def bgr_to_rgb(enable: bool | int, /) -> None:
    """Swap R and B on panels that need it (argument required)."""
def clear(color: int | tuple[int, int, int] = 0, /) -> None:
    """Fill the whole screen (default black)."""
def display(img: Image, roi: tuple[int, int, int, int] | None = None, oft: tuple[int, int] | None = None) -> None:
    """Show an RGB565/gray image's **pixels** (never the AI buffer), without scaling.

    No ``oft``: centre-cropped if larger than the screen, centred with black bands if smaller.
    ``oft=(x, y)``: drawn at (x, y) and nothing else on the screen is touched.
    """
def draw_string(x: int, y: int, str: str, color: int = 0x00F8, bg_color: int = 0, /) -> None:
    """Text straight on the screen: opaque 8x12 monospace, **raw int colours only**, default red on black.

    Stays until overwritten (the next ``display`` without ``oft`` does), so call it after ``display``.
    """
def fill_rectangle(x: int, y: int, w: int, h: int, color: int | tuple[int, int, int], /) -> None:
    """Fill a screen rectangle; coordinates at/after the edge -> ``ValueError("arg error")``."""
