"""The MaixPy ``lcd`` module: an emulated SPI panel whose framebuffer is pushed to a PC display sink.

Model (maixpy-api.md §4, firmware ``py_lcd.c`` + ``drivers/lcd``):

* The panel memory is kept as RGB888 ``(H, W, 3)`` in the panel's **physical** orientation (as seen
  at rotation 0). Every value in it is one the panel can show: colours arrive as byte-swapped RGB565
  and are expanded with the firmware's 5/6→8 tables, so ``lcd.RED == 0x00F8`` is pure (255, 0, 0).
* ``rotation``/``mirror``/``direction`` set the panel's scan-direction register (MADCTL bits MY 0x80,
  MX 0x40, MV 0x20, BGR 0x08). Drawing goes through a numpy *view* of the panel memory built from
  that register, so — like on the board — changing the rotation does not move what is already on the
  screen, and later drawing lands rotated (rotation 1 = 90° clockwise, 2 = 180°, 3 = 270°).
* ``display`` follows the firmware: no ``oft`` → the region is centre-cropped or centred with black
  bands (never scaled); ``oft=(x, y)`` → drawn at (x, y), nothing else touched, clipped at the edge.
  Grayscale images go through the driver's ``gray2rgb565[g >> 2]`` table (R5 = B5 = g >> 3,
  G6 = g >> 2), i.e. truncation, not the rounding tables.
* ``draw_string`` is the firmware's opaque 8×12 monospace box (``imlib_draw_ascii_string`` with
  ``mono_space``) with its quirks: truncation to ``(panel_width - x) // 8`` characters and the
  "nothing if ``y > panel_width - 16``" test both use the un-rotated panel *width*.

After every change (``init``, ``clear``, ``display``, ``draw_string``, ``fill_rectangle``) the panel
is shown on the board's display (``current().display``, a ``maixemu.host.display.BoardDisplay``:
what a recorded frame is, it decides) and the board's ``lcd_push`` listeners run (the frame
budget). This module knows nothing of the sink behind the display.

Board state: :class:`PanelState` (``current().panel``). Helper for the session (not MaixPy API):
:func:`screen`.
"""

from __future__ import annotations

import builtins
import errno
from collections.abc import Callable
from typing import Any

import numpy as np

from . import notices
from . import state as _state
from .mp_args import fixed_items as _fixed_items
from .mp_args import int_arg as _int
from . import pixformat as _pf

# ------------------------------------------------------------------------------------ constants
# Colours: byte-swapped RGB565 as in drivers/lcd/include/lcd.h.
BLACK = 0x0000
NAVY = 0x0F00
DARKGREEN = 0xE003
DARKCYAN = 0xEF03
MAROON = 0x0078
PURPLE = 0x0F78
OLIVE = 0xE07B
LIGHTGREY = 0x18C6
DARKGREY = 0xEF7B
BLUE = 0x1F00
GREEN = 0xE007
CYAN = 0xFF07
RED = 0x00F8
MAGENTA = 0x1FF8
YELLOW = 0xE0FF
WHITE = 0xFFFF
ORANGE = 0x20FD
GREENYELLOW = 0xE5AF
PINK = 0x1FF8

# Scan directions (lcd_dir_t).
XY_RLUD = 0x00
YX_RLUD = 0x20
XY_LRUD = 0x40
YX_LRUD = 0x60
XY_RLDU = 0x80
YX_RLDU = 0xA0
XY_LRDU = 0xC0
YX_LRDU = 0xE0

_MV, _MX, _MY, _BGR = 0x20, 0x40, 0x80, 0x08

#: rotation -> direction register, normal and mirrored (py_lcd.c get_dir_by_rotation / mirror helper).
_DIR_BY_ROTATION = (YX_RLDU, XY_RLUD, YX_LRUD, XY_LRDU)
_DIR_MIRRORED = (YX_RLUD, XY_LRUD, YX_LRDU, XY_RLDU)

# Panel types (py_lcd.c DEV_*).
DEV_NONE, DEV_SHIELD, DEV_CUBE_IPS_240x240, DEV_M5STICK, DEV_TWATCH, DEV_CONVERTER = range(6)

#: Size of each panel type when ``lcd.init`` is given no width/height (w, h at rotation 0).
DEFAULT_SIZES = {
    DEV_SHIELD: (320, 240),
    DEV_CUBE_IPS_240x240: (240, 240),  # forced: the firmware ignores width/height for the Cube
    DEV_M5STICK: (240, 135),
    DEV_TWATCH: (240, 240),
    DEV_CONVERTER: (800, 480),
}

DEFAULT_FREQ = 15000000
FONT_W, FONT_H = 8, 12

_KEEP: Any = object()


# ------------------------------------------------------------------------------------ colours
def _tables():
    from .image import _color

    return _color


def _raw_to_rgb(raw: int) -> np.ndarray:
    """A raw (byte-swapped RGB565) int as the RGB the panel shows."""
    return _tables().rgb565_to_888(np.array(int(raw) & 0xFFFF, dtype=np.uint16))


def _color_arg(color, *, clamp: bool = True) -> int:
    """A colour argument as the raw 16-bit value: int → itself, (r, g, b) → via the 8→5/6 tables."""
    if isinstance(color, bool):
        color = int(color)
    if isinstance(color, (int, np.integer)):
        return int(color) & 0xFFFF
    if isinstance(color, (tuple, list)):
        if len(color) != 3:
            raise ValueError(f"requested length 3 but object has length {len(color)}")
        vals = [_int(c) for c in color]
        vals = [max(0, min(255, v)) for v in vals] if clamp else [v & 0xFF for v in vals]
        return int(_tables().rgb888_to_565(np.array(vals, dtype=np.uint8)))
    # (builtins.type: this module's own type() is MaixPy's lcd.type())
    raise TypeError(f"object '{builtins.type(color).__name__}' isn't a tuple or list")


_GRAY_LUT: np.ndarray | None = None


def _gray_lut() -> np.ndarray:
    """gray (0..255) -> RGB the panel shows, through the driver's gray2rgb565[g >> 2] table."""
    global _GRAY_LUT
    if _GRAY_LUT is None:
        c = _tables()
        g = np.arange(256)
        _GRAY_LUT = np.stack([c.T5TO8[g >> 3], c.T6TO8[g >> 2], c.T5TO8[g >> 3]], axis=-1).astype(np.uint8)
    return _GRAY_LUT


# ------------------------------------------------------------------------------------ state
class PanelState:
    """The firmware's globals (lcd_para, width_curr/height_curr, rotation, mirror, direction)."""

    def __init__(self) -> None:
        self.reset()

    def reset(self, freq: int = DEFAULT_FREQ) -> None:
        """Back to "not initialised" (``lcd.init``/``deinit``), keeping the SPI clock given."""
        self.type = DEV_NONE
        self.para_w = 0  # lcd_para.width / height: the panel at rotation 0
        self.para_h = 0
        self.width = 0  # width_curr / height_curr: after rotation
        self.height = 0
        self.rotation = 0
        self.mirror = False
        self.direction = YX_RLDU
        self.bgr = False
        self.freq = freq
        self.fb: np.ndarray | None = None  # physical (para_h, para_w, 3) uint8

    def view(self) -> np.ndarray:
        """The panel memory as the current scan direction addresses it: ``view[y, x]`` = logical pixel."""
        # Native panel memory is (column, row) with NC = para_h columns, NR = para_w rows, and the
        # rotation-0 picture is V[Y, X] = native[col=Y, row=NR-1-X].
        fb = self.fb
        assert fb is not None  # (the panel's memory exists once lcd.init() ran: _active())
        native = fb[:, ::-1]
        d = self.direction
        if d & _MX:
            native = native[::-1, :]
        if d & _MY:
            native = native[:, ::-1]
        return native if d & _MV else native.transpose(1, 0, 2)


def _panel() -> PanelState:
    return _state.current().panel


def screen() -> np.ndarray | None:
    """A copy of what the panel shows, ``(H, W, 3)`` RGB, as the user sees it (turned as the board's
    panel is mounted); None before init."""
    p = _panel()
    if p.fb is None:
        return None
    return _as_mounted(np.ascontiguousarray(p.fb[..., ::-1] if _bgr_active(p) else p.fb), _board_facts().panel_mount)


def _bgr_active(p: PanelState) -> bool:
    return bool(p.bgr) != bool(p.direction & _BGR)


def _as_mounted(rgb: np.ndarray, quarter_turns: int) -> np.ndarray:
    """The panel's picture as the user sees it on a panel mounted turned by ``quarter_turns``
    clockwise (the board profile's ``panel_mount``): what leaves the board for the window,
    recordings and listeners."""
    turns = quarter_turns % 4
    return rgb if not turns else np.ascontiguousarray(np.rot90(rgb, k=-turns))


def _push(*, full_refresh: bool = False) -> None:
    """Show the panel on the board's display (a whole new picture when ``full_refresh``), then tell
    the ``lcd_push`` listeners (the frame budget). What a recorded frame is, the display decides."""
    board = _state.current()
    board.checkpoint()
    p = board.panel
    rgb = p.fb
    if rgb is None:  # a panel of type 0, or released: nothing is shown
        return
    if _bgr_active(p):
        rgb = np.ascontiguousarray(rgb[..., ::-1])
    board.display.show(_as_mounted(rgb, _board_facts().panel_mount), new_picture=full_refresh)
    if board.events.lcd_push:
        board.events.fire(board.events.lcd_push)


def _active() -> bool:
    """True when a real panel is initialised (type 1..5); type 0 and "never init" draw nothing."""
    p = _panel()
    return p.type != DEV_NONE and p.fb is not None


# ------------------------------------------------------------------------------------ MaixPy API
def init(type: int = DEV_SHIELD, freq: int = DEFAULT_FREQ, color=BLACK, width: int | None = None,
         height: int | None = None, invert: int = 0, offset_w0: int = 0, offset_h0: int = 0,
         offset_w1: int = 0, offset_h1: int = 0, rst: int = 37, dcx: int = 38, ss: int = 36,
         clk: int = 39, *, lcd_type: int = 0) -> None:
    """Initialise the panel: type 0 (none), 1 shield 320×240, 2 Cube 240×240, 3 M5StickV 240×135,
    4 T-Watch 240×240, 5 RGB converter 800×480 (``width``/``height`` override, except for the Cube).

    The screen is filled with ``color`` (raw int or (r, g, b)); rotation 0, mirror off.
    Other types: ``ValueError("type error")``. Pins, offsets and ``invert`` only matter to real panels.
    """
    kind = _int(type)
    raw = BLACK if color is None else _color_arg(color)
    freq = _int(freq)
    p = _panel()
    p.reset(freq)
    if kind == DEV_NONE:
        return None
    if kind not in DEFAULT_SIZES:
        raise ValueError("type error")
    w, h = DEFAULT_SIZES[kind]
    facts = _board_facts()
    if kind == DEV_SHIELD and facts.lcd is not None:
        w, h = facts.lcd  # the build's default size (CONFIG_LCD_DEFAULT_WIDTH/HEIGHT) or config.json's
    if kind != DEV_CUBE_IPS_240x240 and not (kind == DEV_SHIELD and facts.lcd_from_config):
        if width is not None:
            w = _int(width)
        if height is not None:
            h = _int(height)
    if not (0 < w <= 4096 and 0 < h <= 4096):
        raise OSError(errno.EINVAL, f"lcd.init: panel size {w}x{h} is not possible (1..4096 pixels per side)")
    _route_panel_pins(kind, _int(rst), _int(dcx), _int(ss), _int(clk))
    p.type = kind
    p.para_w, p.para_h = w, h
    p.width, p.height = w, h
    p.fb = np.empty((h, w, 3), dtype=np.uint8)
    p.fb[...] = _raw_to_rgb(raw)
    _push(full_refresh=True)
    return None


#: The pins ``py_lcd.c`` muxes for the M5StickV panel (type 3), whatever the arguments say.
_M5STICK_PANEL_PINS = {"rst": 21, "dcx": 20, "ss": 22, "clk": 19, "mosi": 18}


def _route_panel_pins(kind: int, rst: int, dcx: int, ss: int, clk: int) -> None:
    """The FPIOA functions ``lcd.init`` puts on the panel's pins (``py_lcd.c``): reset on GPIOHS30,
    D/C on GPIOHS31, chip select SPI0_SS3 and the SPI clock, so a script that registers GPIOHS30
    or GPIOHS31 elsewhere afterwards meets the panel there (``fm.register`` warns, as on the board)."""
    from .Maix import fpioa

    if kind == DEV_M5STICK:
        rst, dcx, ss, clk = (_M5STICK_PANEL_PINS[k] for k in ("rst", "dcx", "ss", "clk"))
        fpioa.set_pin_function(_M5STICK_PANEL_PINS["mosi"], fpioa.FUNCTIONS["SPI0_D0"])
    for pin, function in ((rst, "GPIOHS30"), (dcx, "GPIOHS31"), (ss, "SPI0_SS3"), (clk, "SPI0_SCLK")):
        if 0 <= pin < fpioa.NUM_IO:
            fpioa.set_pin_function(pin, fpioa.FUNCTIONS[function])


def _board_facts():
    from . import board

    return board.profile()


def boot() -> None:
    """What the board's stock ``_boot.py`` leaves for a script started from the IDE:
    ``lcd.init(color=lcd.PINK)`` and the boot's rotation (nothing on a board without a panel).
    Shown on the glass only when the script draws (no frame is pushed here)."""
    facts = _board_facts()
    if facts.lcd is None:
        return
    p = _panel()
    p.reset(p.freq)
    w, h = facts.lcd
    p.type = DEV_SHIELD
    p.para_w, p.para_h = w, h
    p.width, p.height = w, h
    p.fb = np.empty((h, w, 3), dtype=np.uint8)
    p.fb[...] = _raw_to_rgb(PINK)
    if facts.lcd_rotation:
        rotation(facts.lcd_rotation)


def deinit() -> None:
    """Release the panel: ``width()``/``height()`` return None, ``draw_string`` says "not init"."""
    p = _panel()
    p.reset(p.freq)


def width():
    """Screen width after rotation, or None when no panel is initialised."""
    return _panel().width if _panel().type != DEV_NONE else None


def height():
    """Screen height after rotation, or None when no panel is initialised."""
    return _panel().height if _panel().type != DEV_NONE else None


def type():  # noqa: A001 - the MaixPy name
    """The panel type given to ``init`` (1..5), or None when no panel is initialised."""
    return _panel().type if _panel().type != DEV_NONE else None


def freq(*args):
    """Current SPI clock in Hz; ``freq(hz)`` sets it and returns the new value (no visible effect)."""
    if len(args) > 1:
        raise TypeError(f"function expected at most 1 arguments, got {len(args)}")
    if args:
        _panel().freq = _int(args[0])
    return _panel().freq


def set_backlight(state) -> None:
    """No-op on the board too (returns None)."""
    return None


def get_backlight() -> None:
    return None


def register(addr, data) -> None:
    """Raw panel register write: not emulated (the emulated panel has no registers to tune)."""
    notices.not_emulated("lcd.register", "raw panel register writes are ignored on the PC")
    return None


def direction(dir) -> None:  # noqa: A002 - the MaixPy name
    """Set the raw scan direction (``lcd.YX_RLDU`` ...); width()/height() are not changed (as on the board)."""
    _panel().direction = _int(dir) & 0xFF
    return None


def rotation(*args):
    """``rotation()`` → current; ``rotation(r)`` with r in 0..3 (else ``ValueError("value:[0,3]")``).

    1 and 3 swap width and height. Already drawn pixels stay where they are on the glass.
    """
    p = _panel()
    if len(args) > 1:
        raise TypeError(f"function expected at most 1 arguments, got {len(args)}")
    if args:
        r = _int(args[0])
        if not 0 <= r <= 3:
            raise ValueError("value:[0,3]")
        p.rotation = r
        if r in (0, 2):
            p.width, p.height = p.para_w, p.para_h
        else:
            p.width, p.height = p.para_h, p.para_w
        p.direction = (_DIR_MIRRORED if p.mirror else _DIR_BY_ROTATION)[r]
    return p.rotation


def mirror(*args):
    """``mirror()`` → 1/0; ``mirror(True)`` mirrors the scan left-right (for the current rotation).

    As in the firmware, ``mirror(False)`` only takes effect at the next ``rotation()`` call.
    """
    p = _panel()
    if len(args) > 1:
        raise TypeError(f"function expected at most 1 arguments, got {len(args)}")
    if args:
        p.mirror = bool(args[0])
        if p.mirror:
            p.direction = _DIR_MIRRORED[p.rotation]
    return 1 if p.mirror else 0


def bgr_to_rgb(*args) -> None:
    """Swap red and blue on the panel (for BGR panels); the argument is required."""
    if not args:
        raise ValueError("True or False")
    _panel().bgr = bool(args[0])
    return None


def clear(*args, **kwargs) -> None:
    """Fill the whole screen with ``color`` (default black; raw int or (r, g, b))."""
    if kwargs:
        raise TypeError("function doesn't take keyword arguments")
    raw = _color_arg(args[0]) if args else BLACK
    if not _active():
        return None
    fb = _panel().fb
    assert fb is not None  # (_active(): the panel is initialised)
    fb[...] = _raw_to_rgb(raw)
    _push(full_refresh=True)
    return None


def display(img, roi=None, oft=None) -> None:
    """Show an RGB565 or grayscale image (its pixel buffer, never the AI buffer).

    Without ``oft`` the region is centre-cropped/centred on the screen with black bands, never
    scaled; with ``oft=(x, y)`` it is drawn there and the rest of the screen is kept.
    """
    fmt = _image_format(img)
    if fmt not in (_pf.RGB565, _pf.GRAYSCALE):
        raise notices.advised(OSError("Image format is not supported."),
                              "the LCD shows RGB565 or grayscale images: img.to_rgb565() first")
    iw, ih = img.width(), img.height()
    rx, ry, rw, rh = _roi(roi, iw, ih)
    ox, oy = (-1, -1) if oft is None else (_int(v) for v in _array(oft, 2))
    if not _active():
        notices.notice_once("lcd:display-before-init",
                            "lcd.display() before lcd.init(): nothing is shown (as on the board); call lcd.init() first")
        return None
    p = _panel()
    screen_view = p.view()
    sh, sw = screen_view.shape[:2]
    if ox < 0 or oy < 0:
        l_pad = t_pad = 0
        if rw > p.width:
            rx += (rw - p.width) // 2
            rw = p.width
        elif rw < p.width:
            l_pad = (p.width - rw) // 2
        if rh > p.height:
            ry += (rh - p.height) // 2
            rh = p.height
        elif rh < p.height:
            t_pad = (p.height - rh) // 2
        if rw < p.width or rh < p.height:  # black bands (the image then covers the middle)
            screen_view[: min(p.height, sh), : min(p.width, sw)] = 0
    else:
        l_pad, t_pad = ox, oy
    # clip the destination to the addressable panel
    w = max(0, min(rw, sw - l_pad))
    h = max(0, min(rh, sh - t_pad))
    if w and h:
        if fmt == _pf.GRAYSCALE:
            gray = _pixels_gray(img)[ry : ry + h, rx : rx + w]
            screen_view[t_pad : t_pad + h, l_pad : l_pad + w] = _gray_lut()[gray]
        else:
            screen_view[t_pad : t_pad + h, l_pad : l_pad + w] = img._rgb888()[ry : ry + h, rx : rx + w]
    _push(full_refresh=oft is None)
    return None


def draw_string(*args, **kwargs) -> None:
    """``draw_string(x, y, text, color=lcd.RED, bg_color=lcd.BLACK)``: an opaque 8×12 monospace box.

    Colours are raw 16-bit ints only; positional arguments only (as on the board).
    """
    if kwargs:
        raise TypeError("function doesn't take keyword arguments")
    if not 3 <= len(args) <= 5:
        raise TypeError(f"function expected 3 to 5 arguments, got {len(args)}")
    p = _panel()
    if p.para_w == 0 or p.para_h == 0:
        raise notices.advised(ValueError("not init"), "call lcd.init() first")
    x0 = _int(args[0]) & 0xFFFF
    y0 = _int(args[1]) & 0xFFFF
    text = args[2]
    if not isinstance(text, str):
        raise TypeError(f"can't convert '{_typename(text)}' object to str implicitly")
    fg = _int(args[3]) & 0xFFFF if len(args) >= 4 else RED
    bg = _int(args[4]) & 0xFFFF if len(args) >= 5 else BLACK
    if x0 >= p.para_w or y0 > p.para_w - 16:  # sic: the firmware tests y against the width
        return None
    data = text.encode("utf-8")  # the firmware counts bytes (strlen), not characters
    n = min(len(data), (p.para_w - x0) // FONT_W)
    if n <= 0 or not _active():
        return None
    tile = _text_tile(data[:n], fg, bg)
    view = p.view()
    sh, sw = view.shape[:2]
    w = max(0, min(tile.shape[1], sw - x0))
    h = max(0, min(tile.shape[0], sh - y0))
    if w and h:
        view[y0 : y0 + h, x0 : x0 + w] = tile[:h, :w]
    _push()
    return None


def fill_rectangle(*args) -> None:
    """``fill_rectangle(x, y, w, h, color)`` on the screen; any edge at/after the panel → ``ValueError("arg error")``."""
    if len(args) != 5:
        raise TypeError(f"function expected 5 arguments (x, y, w, h, color), got {len(args)}")
    p = _panel()
    if p.para_w == 0 or p.para_h == 0:
        raise notices.advised(ValueError("not init"), "call lcd.init() first")
    x0 = _int(args[0]) & 0xFFFF
    y0 = _int(args[1]) & 0xFFFF
    x1 = (_int(args[2]) + x0) & 0xFFFF
    y1 = (_int(args[3]) + y0) & 0xFFFF
    raw = _color_arg(args[4], clamp=False)
    if x0 >= p.para_w or y0 >= p.para_h or x1 >= p.para_w or y1 >= p.para_h:
        raise ValueError("arg error")
    if not _active():
        return None
    if x1 > x0 and y1 > y0:
        p.view()[y0:y1, x0:x1] = _raw_to_rgb(raw)
    _push()
    return None


# ------------------------------------------------------------------------------------ helpers
def _text_tile(text: bytes, fg: int, bg: int) -> np.ndarray:
    """RGB of the firmware's string box: bg-filled 8·len × 12, glyphs drawn monospace in fg."""
    from .image import Image

    tile = np.empty((FONT_H, FONT_W * len(text), 3), dtype=np.uint8)
    tile[...] = _raw_to_rgb(bg)
    img = Image._from_rgb888(tile)
    img.draw_string(0, 0, text, color=fg, scale=1, x_spacing=0, y_spacing=0, mono_space=True)
    return img._rgb888()


def _image_format(img) -> int:
    fmt = getattr(img, "format", None)
    if fmt is None or not hasattr(img, "_rgb888"):
        raise TypeError(f"expected an image.Image, got '{_typename(img)}'")
    return fmt()


def _pixels_gray(img) -> np.ndarray:
    """The gray pixel values of a grayscale image (the image module's RGB view replicates them)."""
    pix = getattr(img, "_pix", None)
    if isinstance(pix, np.ndarray) and pix.ndim == 2 and pix.dtype == np.uint8:
        return pix
    return img._rgb888()[..., 0]


def _roi(roi, iw: int, ih: int) -> tuple[int, int, int, int]:
    """py_helper_keyword_rectangle_roi: default whole image; w,h ≥ 1; must overlap; intersected."""
    if roi is None:
        return 0, 0, iw, ih
    x, y, w, h = (_int(v) for v in _array(roi, 4))
    if w < 1 or h < 1:
        raise OSError("Invalid ROI dimensions!")
    if x >= iw or y >= ih or x + w <= 0 or y + h <= 0:
        raise OSError("ROI does not overlap on the image!")
    x0, y0 = max(0, x), max(0, y)
    x1, y1 = min(iw, x + w), min(ih, y + h)
    return x0, y0, x1 - x0, y1 - y0


def _array(v, n: int) -> list:
    return _fixed_items(v, n)


def _typename(v) -> str:
    return v.__class__.__name__
