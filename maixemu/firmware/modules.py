"""MaixPy's ``modules``: the firmware's C drivers for add-on parts (port/src/modules/py_modules.c).

Each is built over the board's pins as on a board with nothing wired to them, which is what a PC
has: the drivers accept their arguments and check them as the firmware does, and the bus answers
as an empty line answers:

* ``ultrasonic(gpio)``: ``measure()`` waits its timeout for an echo that never comes and raises the
  firmware's ``OSError: time out``; a GPIO function no pin carries is ``gpio not register pin``;
* ``onewire(gpio)``: no device pulls the line low: ``reset()`` is False (no presence pulse), reads
  are 1 bits (0xFF bytes), ``search()`` finds no ROM; ``crc8`` is the Maxim CRC of the bytes;
* ``ws2812(led_pin, led_num, ...)``: the colours are kept (``set_led``) and ``display()`` sends them
  to no strip (one notice; :attr:`ws2812.colors` shows what was sent);
* ``htpa`` / ``amg88xx`` (I2C thermal cameras) and CanMV's ``ES8311`` (audio codec): the part does
  not answer on the bus, so the constructor fails as the firmware's does without the part.
"""

from __future__ import annotations

import errno
from typing import Any

from . import notices
from .Maix import fpioa as _fpioa
from .mp_builtins import buffer_bytes

#: FPIOA function numbers of the GPIO blocks (fpioa.h: GPIOHS0-31 are 24-55, GPIO0-7 are 56-63)
FUNC_GPIOHS0, FUNC_GPIOHS31, FUNC_GPIO0, FUNC_GPIO7 = 24, 55, 56, 63
I2C_DEVICE_MAX = 3


def _is_gpio_function(gpio: int) -> bool:
    return FUNC_GPIO0 <= gpio <= FUNC_GPIO7 or FUNC_GPIOHS0 <= gpio <= FUNC_GPIOHS31


class ultrasonic:  # noqa: N801 - the firmware's name
    """``ultrasonic(gpio)``: a Grove ultrasonic ranger on one GPIO function (fm.fpioa.GPIOHSn)."""

    UNIT_CM, UNIT_INCH = 0, 1
    DEFAULT_TIMEOUT_US = 1_000_000

    def __init__(self, gpio: int) -> None:
        if not _is_gpio_function(int(gpio)):
            raise ValueError("gpio error")
        self.gpio = int(gpio)

    def measure(self, unit: int = UNIT_CM, timeout: int = DEFAULT_TIMEOUT_US) -> int:
        """Distance in ``unit``; no ranger answers here, so this waits ``timeout`` µs and fails."""
        from . import utime

        if _fpioa.pin_of_function(self.gpio) is None:
            raise ValueError("gpio not register pin")
        utime.sleep_us(int(timeout))
        raise OSError("time out")

    def __repr__(self) -> str:
        return f"[MAIXPY]ultrasonic:(0x{id(self):x}) gpio={self.gpio}"


class onewire:  # noqa: N801
    """``onewire(gpio)``: a 1-Wire bus master on a GPIO function, with no device on the bus."""

    def __init__(self, gpio: int) -> None:
        if not _is_gpio_function(int(gpio)):
            raise ValueError("gpio error")
        self.gpio = int(gpio)
        self.written = bytearray()  # what the script sent, for tests

    def reset(self) -> bool:
        """True when a device answers the reset with a presence pulse: none does."""
        return False

    def readbit(self) -> int:
        return 1  # the pull-up: no device drives the line low

    def readbyte(self) -> int:
        return 0xFF

    def readbuffer(self, count: int) -> bytearray:
        return bytearray(b"\xff" * int(count))

    def writebit(self, value: int) -> None:
        return None

    def writebyte(self, value: int) -> None:
        self.written.append(int(value) & 0xFF)

    def writebuffer(self, data: Any) -> None:
        self.written.extend(buffer_bytes(data))

    def select(self, rom: Any) -> None:
        self.reset()
        self.written.append(0x55)  # MATCH ROM
        self.written.extend(buffer_bytes(rom))

    def skip(self) -> None:
        self.written.append(0xCC)  # SKIP ROM

    def search(self, diff: int) -> list[bytearray]:
        """The ROM codes on the bus (at most ``diff``): none."""
        return []

    def depower(self) -> None:
        return None

    @staticmethod
    def crc8(data: Any) -> int:
        """Maxim/Dallas CRC-8 (x^8 + x^5 + x^4 + 1, reflected), as py_onewire.c computes it."""
        crc = 0
        for byte in buffer_bytes(data):
            for _ in range(8):
                feedback = (crc ^ byte) & 0x01
                crc >>= 1
                if feedback:
                    crc ^= 0x8C
                byte >>= 1
        return crc


class ws2812:  # noqa: N801
    """``ws2812(led_pin, led_num, i2s_num=2, i2s_chn=3, i2s_dma_chn=2)``: an RGB LED strip driven by I2S."""

    def __init__(self, led_pin: int, led_num: int, i2s_num: int = 2, i2s_chn: int = 3,
                 i2s_dma_chn: int = 2) -> None:
        if not 0 <= int(led_pin) <= 47:
            raise ValueError("led pin error, should be 0 ~ 47")
        if int(led_num) <= 0:
            raise ValueError("len num error, should > 0")
        if int(i2s_num) > 2:
            raise ValueError("i2s num error, should <= 2")
        if int(i2s_chn) > 3:
            raise ValueError("i2s channel error, should <= 3")
        if int(i2s_dma_chn) > 5:
            raise ValueError("dma channel error, should <= 5")
        self.led_pin, self.i2s_num, self.i2s_chn, self.i2s_dma_chn = int(led_pin), i2s_num, i2s_chn, i2s_dma_chn
        self._pending: list[tuple[int, int, int]] = [(0, 0, 0)] * int(led_num)
        #: the colours last sent by display() (what the strip would show)
        self.colors: list[tuple[int, int, int]] = list(self._pending)

    def set_led(self, num: int, color: Any = None) -> bool:
        """Set LED ``num`` to ``(r, g, b)`` (None: off) for the next ``display()``; False past the end."""
        if color is None:
            rgb = (0, 0, 0)
        else:
            values = tuple(color)
            if len(values) != 3:
                raise ValueError("tuple size must be 3")
            red, green, blue = (int(v) & 0xFF for v in values)
            rgb = (red, green, blue)
        if not 0 <= int(num) < len(self._pending):
            return False
        self._pending[int(num)] = rgb
        return True

    def display(self) -> bool:
        """Send the colours to the strip (3 ms on the device)."""
        from . import utime

        notices.not_emulated("modules.ws2812", "no LED strip is attached; display() keeps the colours in .colors")
        self.colors = list(self._pending)
        utime._hardware_wait_ns(3_000_000)  # the strip's transfer: busy, not sleeping
        return True

    def ws_num(self) -> int:
        return len(self._pending)


def _absent_i2c_part(i2c: int, *, check_bus_first: bool) -> None:
    """The constructor's failure without the part: htpa checks the bus number before its init,
    amg88xx after (so its init error wins)."""
    if check_bus_first and int(i2c) >= I2C_DEVICE_MAX:
        raise ValueError("i2c device error")
    raise OSError(errno.EIO, "EIO")  # the part does not answer: its init fails


class htpa:  # noqa: N801
    """``htpa(i2c, scl_pin=7, sda_pin=6, i2c_freq=1000000)``: Heimann HTPA 32x32 thermopile array."""

    def __init__(self, i2c: int, scl_pin: int = 7, sda_pin: int = 6, i2c_freq: int = 1_000_000) -> None:
        _absent_i2c_part(i2c, check_bus_first=True)

    # the firmware's methods; an instance never exists without the part
    def temperature(self) -> Any:
        raise NotImplementedError("modules.htpa.temperature")

    def to_image(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("modules.htpa.to_image")

    def min_max(self) -> Any:
        raise NotImplementedError("modules.htpa.min_max")

    def width(self) -> int:
        return 32

    def height(self) -> int:
        return 32

    def __read_reg(self, *args: Any) -> Any:  # noqa: PLW0238 - named as in the firmware table
        raise NotImplementedError("modules.htpa.__read_reg")

    def __write_reg(self, *args: Any) -> Any:  # noqa: PLW0238
        raise NotImplementedError("modules.htpa.__write_reg")


class amg88xx:  # noqa: N801
    """``amg88xx(i2c, i2c_addr=0x68, i2c_freq=100000)``: Panasonic Grid-EYE 8x8 thermal sensor."""

    METHOD_NEAREST, METHOD_BILINEAR = 0, 1

    def __init__(self, i2c: int, i2c_addr: int = 0x68, i2c_freq: int = 100_000) -> None:
        _absent_i2c_part(i2c, check_bus_first=False)

    def temperature(self) -> Any:
        raise NotImplementedError("modules.amg88xx.temperature")

    def to_image(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("modules.amg88xx.to_image")

    def min_max(self) -> Any:
        raise NotImplementedError("modules.amg88xx.min_max")


# the firmware table's mangled-looking names, reachable as in MicroPython
setattr(htpa, "__read_reg", htpa._htpa__read_reg)  # type: ignore[attr-defined]
setattr(htpa, "__write_reg", htpa._htpa__write_reg)  # type: ignore[attr-defined]


class ES8311:
    """CanMV's ES8311 audio codec driver: not emulated (the codec is not on the PC); its constants
    and methods are listed as not emulated by the firmware-name audit."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise NotImplementedError("modules.ES8311: the ES8311 audio codec is not emulated")


__all__ = ["ES8311", "amg88xx", "htpa", "onewire", "ultrasonic", "ws2812"]
