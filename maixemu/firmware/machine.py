"""MaixPy ``machine``: ``reset`` ends the run; UART/I2C/SPI/PWM/Timer/WDT exist but drive no hardware.

Scripts construct these peripherals at start-up (a UART to a host, an I2C write to the AXP173 power
chip, a PWM on an LED) and must keep running on a PC. (The power chips themselves answer on I2C:
:mod:`~maixemu.firmware.axp`.) So every object accepts the firmware's
arguments and keeps its constants, writes are counted and dropped, reads return "nothing arrived"
(``None`` from UART reads, zero bytes from I2C/SPI reads), and each kind of peripheral says once,
through :mod:`~maixemu.firmware.notices`, that it is not emulated. ``Timer`` callbacks are never
run. ``reset()`` raises :class:`~maixemu.firmware.registry.ScriptReset`, which the runner treats as
a clean end (the board would reboot there).
"""

from __future__ import annotations

from typing import Any, Callable

from . import notices
from .registry import ScriptReset

PWRON_RESET = 0
HARD_RESET = 0
SOFT_RESET = 1
WDT_RESET = 2
WDT1_RESET = 3

_UNIQUE_ID = b"MAIXEMU".ljust(32, b"\x00")


def reset() -> None:
    """Reboot the board: the script ends here (cleanly, exit 0 under ``maixemu run``)."""
    notices.notice_once("machine.reset", "machine.reset() called: the board would reboot; ending the run")
    raise ScriptReset("machine.reset()")


soft_reset = reset


def reset_cause() -> int:
    return PWRON_RESET


def freq() -> int:
    """CPU clock in Hz."""
    from .Maix import freq as _freq

    return _freq.get_cpu() * 1_000_000


def unique_id() -> bytes:
    """A fixed 32-byte chip id (the same on every run)."""
    return _UNIQUE_ID


def _bytes_of(buf: Any) -> bytes:
    if isinstance(buf, int):
        return bytes([buf & 0xFF])
    if isinstance(buf, str):
        return buf.encode("utf-8")
    return bytes(buf)


class UART:
    """``UART(uart, baudrate=115200, bits=8, parity=None, stop=1, timeout=1000, read_buf_len=128)``.

    Nothing is connected: ``write`` returns the byte count (the bytes are kept in ``.sent`` for
    tests), ``read``/``readline`` return None and ``any()`` is 0, as on a board with an idle line.
    """

    UART1, UART2, UART3, UARTHS = 0, 1, 2, 3
    PARITY_ODD, PARITY_EVEN = 1, 2

    def __init__(self, uart: int, baudrate: int = 115200, bits: int = 8, parity: int | None = None,
                 stop: int = 1, timeout: int = 1000, timeout_char: int = 10, read_buf_len: int = 128, **kwargs: Any):
        self.id = int(uart)
        self.sent = bytearray()
        self._active = True
        self.init(baudrate, bits, parity, stop, timeout=timeout, timeout_char=timeout_char,
                  read_buf_len=read_buf_len)

    def init(self, baudrate: int = 115200, bits: int = 8, parity: int | None = None, stop: int = 1,
             timeout: int = 1000, timeout_char: int = 10, read_buf_len: int = 128, **kwargs: Any) -> None:
        self.baudrate, self.bits, self.parity, self.stop = int(baudrate), int(bits), parity, stop
        self.timeout, self.timeout_char, self.read_buf_len = timeout, timeout_char, read_buf_len
        self._active = True

    def write(self, buf: Any) -> int:
        data = _bytes_of(buf)
        if not self._active:
            return 0
        notices.notice_once(f"machine.UART{self.id}.write", f"machine.UART({self.id}) is not connected to "
                            f"anything; writes are dropped (first write: {data[:40]!r})")
        self.sent.extend(data)
        return len(data)

    def read(self, nbytes: int | None = None) -> bytes | None:
        return None

    def readline(self) -> bytes | None:
        return None

    def readinto(self, buf: Any, nbytes: int | None = None) -> int | None:
        return None

    def readchar(self) -> int:
        return -1

    def any(self) -> int:
        return 0

    def deinit(self) -> None:
        self._active = False

    @staticmethod
    def repl_uart() -> None:
        return None

    @staticmethod
    def set_repl_uart(uart: Any) -> None:
        return None

    def __repr__(self) -> str:
        return f"[UART]:uart={self.id}, baudrate={self.baudrate}, bits={self.bits}, stop={self.stop}"


class I2C:
    """``I2C(id, mode=MODE_MASTER, scl=None, sda=None, freq=400000, ...)``.

    The board's power chip (AXP192/AXP173, see :mod:`~maixemu.firmware.axp`) answers at 0x34 on the
    pins its board wires it to; nothing else is attached: ``scan()`` finds only the power chip,
    writes to other addresses are dropped, reads from them return zero bytes (one notice).
    """

    I2C0, I2C1, I2C2, I2C3, I2C4, I2C5 = 0, 1, 2, 3, 4, 5
    MODE_MASTER, MODE_SLAVE = 0, 1

    def __init__(self, id: int = 0, mode: int = 0, scl: int | None = None, sda: int | None = None,
                 freq: int = 400000, timeout: int = 1000, addr: int = 0, addr_size: int = 7, **kwargs: Any):
        self.id, self.mode, self.freq = int(id), mode, freq
        self.scl = None if scl is None else int(scl)
        self.sda = None if sda is None else int(sda)

    def _device(self, addr: int) -> Any:
        from . import axp

        chip = axp.chips().at(self.scl, self.sda, addr)
        if chip is None:
            notices.not_emulated("machine.I2C", "no device is attached; writes are dropped and reads give zeros")
        return chip

    def init(self, *args: Any, **kwargs: Any) -> None:
        return None

    def deinit(self) -> None:
        return None

    def scan(self) -> list[int]:
        from . import axp

        return [axp.ADDRESS] if axp.chips().at(self.scl, self.sda, axp.ADDRESS) is not None else []

    def writeto(self, addr: int, buf: Any, stop: bool = True) -> int:
        data = _bytes_of(buf)
        chip = self._device(addr)
        if chip is not None:
            chip.write(data)
        return len(data)

    def readfrom(self, addr: int, nbytes: int, stop: bool = True) -> bytes:
        chip = self._device(addr)
        return chip.read(int(nbytes)) if chip is not None else bytes(int(nbytes))

    def readfrom_into(self, addr: int, buf: Any, stop: bool = True) -> None:
        buf[:] = self.readfrom(addr, len(buf))

    def writeto_mem(self, addr: int, memaddr: int, buf: Any, *, mem_size: int = 8) -> None:
        data = _bytes_of(buf)
        chip = self._device(addr)
        if chip is not None:
            chip.write(bytes([int(memaddr) & 0xFF]) + data)
        return None

    def readfrom_mem(self, addr: int, memaddr: int, nbytes: int, *, mem_size: int = 8) -> bytes:
        chip = self._device(addr)
        if chip is None:
            return bytes(int(nbytes))
        chip.write(bytes([int(memaddr) & 0xFF]))
        return chip.read(int(nbytes))

    def readfrom_mem_into(self, addr: int, memaddr: int, buf: Any, *, mem_size: int = 8) -> None:
        buf[:] = self.readfrom_mem(addr, memaddr, len(buf), mem_size=mem_size)


class SPI:
    """``SPI(id, mode=MODE_MASTER, baudrate=..., ...)``: writes are dropped, reads return zeros."""

    SPI0, SPI1, SPI2, SPI_SOFT = 0, 1, 2, 3
    MODE_MASTER, MODE_MASTER_2, MODE_MASTER_4, MODE_MASTER_8, MODE_SLAVE = 0, 1, 2, 3, 4
    MSB, LSB = 0, 1

    def __init__(self, id: int = 0, mode: int = 0, baudrate: int = 500000, **kwargs: Any):
        notices.not_emulated("machine.SPI", "no device is attached; writes are dropped and reads give zeros")
        self.id, self.mode, self.baudrate = int(id), mode, baudrate

    def init(self, *args: Any, **kwargs: Any) -> None:
        return None

    def deinit(self) -> None:
        return None

    def write(self, buf: Any, **kwargs: Any) -> None:
        _bytes_of(buf)

    def read(self, nbytes: int, write: int = 0x00, **kwargs: Any) -> bytes:
        return bytes(int(nbytes))

    def readinto(self, buf: Any, write: int = 0x00, **kwargs: Any) -> None:
        buf[:] = bytes(len(buf))

    def write_readinto(self, write_buf: Any, read_buf: Any, **kwargs: Any) -> None:
        read_buf[:] = bytes(len(read_buf))


class Timer:
    """``Timer(id, channel, mode=MODE_ONE_SHOT, period=1000, unit=UNIT_MS, callback=None, ...)``.

    Callbacks are never run on the PC (a notice says so once); start/stop/period calls are accepted.
    """

    TIMER0, TIMER1, TIMER2 = 0, 1, 2
    CHANNEL0, CHANNEL1, CHANNEL2, CHANNEL3 = 0, 1, 2, 3
    MODE_ONE_SHOT, MODE_PERIODIC, MODE_PWM = 0, 1, 2
    UNIT_S, UNIT_MS, UNIT_US, UNIT_NS = 0, 1, 2, 3

    def __init__(self, id: int, channel: int = 0, mode: int = 0, period: int = 1000, unit: int = 1,
                 callback: Callable[..., Any] | None = None, arg: Any = None, start: bool = True,
                 priority: int = 1, div: int = 0, **kwargs: Any):
        self.id, self.channel, self._mode = int(id), int(channel), mode
        self._period, self.unit, self._callback, self.arg = period, unit, callback, arg
        self._running = bool(start)
        if callback is not None:
            notices.not_emulated("machine.Timer callbacks", "timer callbacks are never run on the PC")

    def init(self, *args: Any, **kwargs: Any) -> None:
        if kwargs.get("callback") is not None:
            notices.not_emulated("machine.Timer callbacks", "timer callbacks are never run on the PC")

    def callback(self, fn: Callable[..., Any] | None = None) -> Callable[..., Any] | None:
        if fn is None:
            return self._callback
        self._callback = fn
        notices.not_emulated("machine.Timer callbacks", "timer callbacks are never run on the PC")
        return None

    def period(self, value: int | None = None) -> int | None:
        if value is None:
            return self._period
        self._period = value
        return None

    def start(self) -> None:
        self._running = True

    def stop(self) -> None:
        self._running = False

    def restart(self) -> None:
        self._running = True

    def deinit(self) -> None:
        self._running = False


class PWM:
    """``PWM(timer, freq, duty, pin, enable=True)``: remembers frequency and duty, drives nothing."""

    def __init__(self, tim: Timer, freq: float = 1000, duty: float = 50, pin: int | None = None,
                 enable: bool = True, **kwargs: Any):
        notices.not_emulated("machine.PWM", "the pin is not driven")
        self.timer, self._freq, self._duty, self.pin, self._enabled = tim, freq, duty, pin, bool(enable)

    def freq(self, value: float | None = None) -> float | None:
        if value is None:
            return self._freq
        self._freq = value
        return None

    def duty(self, value: float | None = None) -> float | None:
        if value is None:
            return self._duty
        self._duty = value
        return None

    def enable(self) -> None:
        self._enabled = True

    def disable(self) -> None:
        self._enabled = False

    def deinit(self) -> None:
        self._enabled = False


class WDT:
    """``WDT(id=0, timeout=..., callback=None, context=None)``: never fires; ``feed``/``stop`` accepted."""

    def __init__(self, id: int = 0, timeout: int = 5000, callback: Callable[..., Any] | None = None,
                 context: Any = None, **kwargs: Any):
        notices.not_emulated("machine.WDT", "the watchdog never fires on the PC")
        self.id, self.timeout = id, timeout

    def feed(self) -> None:
        return None

    def stop(self) -> None:
        return None
