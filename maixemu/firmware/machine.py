"""MaixPy ``machine``: ``reset`` ends the run; Timer/WDT run on the board clock; UART/I2C/SPI/PWM drive no hardware.

Scripts construct these peripherals at start-up (a UART to a host, an I2C write to the AXP173 power
chip, a PWM on an LED) and must keep running on a PC. (The power chips themselves answer on I2C:
:mod:`~maixemu.firmware.axp`.) So every object accepts the firmware's
arguments and keeps its constants, writes are counted and dropped, reads return "nothing arrived"
(``None`` from UART reads, zero bytes from I2C/SPI reads), and each kind of peripheral says once,
through :mod:`~maixemu.firmware.notices`, that it is not emulated. ``Timer`` channels and the
``WDT`` count on the board clock and deliver their callbacks at the script's soft-IRQ points
(:mod:`~maixemu.firmware.soft_irq`); a watchdog nobody feeds resets the board. ``reset()`` raises :class:`~maixemu.firmware.registry.ScriptReset`, which the runner treats as
a clean end (the board would reboot there).
"""

from __future__ import annotations

from typing import Any, Callable

from . import notices
from .registry import ScriptReset
from .mp_args import stream_write_span as _stream_write_span

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


def _to_console(data: bytes) -> None:
    """Bytes written to the REPL's UART: the serial terminal shows them, as print's would be."""
    from .state import current

    stream = current().console.stdout
    stream.write(data.decode("utf-8", "replace"))
    stream.flush()


def _bytes_of(buf: Any) -> bytes:
    if isinstance(buf, int):
        return bytes([buf & 0xFF])
    if isinstance(buf, str):
        return buf.encode("utf-8")
    return bytes(buf)


class UART:
    """``UART(uart, baudrate=115200, bits=8, parity=None, stop=1, *, timeout=1000, timeout_char=10,
    read_buf_len=2048)`` — a K210 UART (firmware ``machine_uart.c``) on the board's lines
    (:mod:`~maixemu.firmware.uart_bus`).

    Writes are recorded (``current().uart.sent``, the run result) and reach whatever the PC wired to the TX line
    (``--uart-loop TX:RX``, a scripted peer); reads take what arrived, waiting ``timeout_char`` ms on
    the board clock when nothing is there and then returning None (``read``/``readline``) as the
    firmware's ``MP_EAGAIN`` does. With nothing wired, a notice says once that writes go nowhere.
    """

    #: UART_DEVICE_1..3 of the K210 SDK, and MICROPY_UARTHS_DEVICE (mpconfigboard.h): 3 is UART_DEVICE_MAX
    UART1, UART2, UART3, UARTHS = 0, 1, 2, 4
    PARITY_ODD, PARITY_EVEN = 1, 2

    def __init__(self, uart: int, *args: Any, **kwargs: Any):
        from .mp_args import int_arg

        self.id = int_arg(uart)
        if self.id < 0 or self.id == 3 or self.id > self.UARTHS:
            # machine_uart_make_new formats the number with %b, which MicroPython prints as a bool
            raise ValueError("[MAIXPY]UARTtrue:does not exist")
        self._active = False
        self.init(*args, **kwargs)

    def init(self, baudrate: int = 115200, bits: int = 8, parity: Any = None, stop: Any = None, *,
             timeout: int = 1000, timeout_char: int = 10, read_buf_len: int = 2048, ide: bool = False,
             from_ide: bool = True) -> None:
        from .mp_args import float_arg, int_arg

        baudrate, bits = int_arg(baudrate), int_arg(bits)
        if not 0 <= baudrate <= 0x500000:
            raise ValueError("[MAIXPY]UART:invalid baudrate")
        if not 5 <= bits <= 8:
            raise ValueError("[MAIXPY]UART:invalid data bits")
        parity_value = 0 if parity is None else int_arg(parity)
        if not 0 <= parity_value <= self.PARITY_EVEN:
            raise ValueError("[MAIXPY]UART:invalid parity")
        stop_bits = 1.0 if stop is None else (float_arg(stop) or 1.0)
        if stop_bits not in (1.0, 1.5, 2.0):
            raise ValueError("[MAIXPY]UART:invalid stop bits")
        if self.id == self.UARTHS and (bits != 8 or parity_value != 0):
            raise ValueError("[MAIXPY]UART:invalid param")
        self.baudrate, self.bits, self.parity, self.stop = baudrate, bits, parity, stop_bits
        if int_arg(timeout) >= 0:
            self.timeout = int_arg(timeout)
        if int_arg(timeout_char) >= 0:
            self.timeout_char = int_arg(timeout_char)
        self.read_buf_len = int_arg(read_buf_len)
        self._active = True
        self._bus().open(self.id, self.read_buf_len)

    @staticmethod
    def _bus():
        from .state import current

        return current().uart

    def write(self, buf: Any, *span: Any) -> int:
        """``write(buf[, max_len])`` or ``write(buf, off, max_len)``: MicroPython's stream write."""
        data = _stream_write_span(_bytes_of(buf), span)
        if not self._active:
            return 0
        bus = self._bus()
        if bus.repl is self:
            _to_console(data)
            bus.write(self.id, data)
            return len(data)
        if not bus.connected(self.id):
            notices.notice_once(f"machine.UART{self.id}.write", f"machine.UART({self.id}) is not connected to "
                                f"anything; writes are dropped (first write: {data[:40]!r}; wire it with "
                                "--uart-loop TX:RX or the plugin's uart=)")
        bus.write(self.id, data)
        return len(data)

    def _wait_for_data(self) -> bool:
        """``uart_rx_wait(timeout_char)``: something arrived, or the wait (a soft-IRQ point) ran out."""
        bus = self._bus()
        if bus.available(self.id) or not self._active:
            return bus.available(self.id) > 0
        from . import utime

        utime.sleep_ms(self.timeout_char) if self.timeout_char > 0 else utime.sleep_us(1)
        return bus.available(self.id) > 0

    def read(self, nbytes: int | None = None) -> bytes | None:
        if not self._active:
            return b""
        if nbytes is not None and int(nbytes) <= 0:
            return b""
        if not self._wait_for_data():
            return None
        return self._bus().take(self.id, None if nbytes is None else int(nbytes))

    def readline(self) -> bytes | None:
        if not self._active or not self._wait_for_data():
            return None
        return self._bus().take(self.id, until=b"\n")

    def readinto(self, buf: Any, nbytes: int | None = None) -> int | None:
        limit = len(buf) if nbytes is None else min(int(nbytes), len(buf))
        data = self.read(limit) if limit > 0 else b""
        if data is None:
            return None
        buf[:len(data)] = data
        return len(data)

    def readchar(self) -> int:
        if not self._active or not self._bus().available(self.id):
            return -1
        return self._bus().take(self.id, 1)[0]

    def any(self) -> int:
        return self._bus().available(self.id) if self._active else 0

    def deinit(self) -> None:
        self._active = False

    @staticmethod
    def repl_uart() -> "UART":
        """The UART the REPL talks on: at boot, UARTHS at 115200 8N1 (maixpy_main.c); its writes are
        what the serial terminal (here: the console) shows."""
        bus = UART._bus()
        if bus.repl is None:
            bus.repl = UART(UART.UARTHS, 115200, 8, None, 1)
        return bus.repl

    @staticmethod
    def set_repl_uart(uart: Any) -> None:
        """``machine_set_uart_repl_uart``: deinit the REPL's UART, attach ``uart``; returns None.
        The console stays the PC's terminal: output does not move to the new UART's line."""
        if not isinstance(uart, UART):
            raise TypeError(f"UART.set_repl_uart({type(uart).__name__}): the firmware casts its argument to a "
                            "UART without checking and faults on anything else; pass a machine.UART")
        bus = UART._bus()
        if bus.repl is not None and bus.repl is not uart:
            bus.repl.deinit()
        bus.repl = uart
        notices.notice_once("machine.UART.set_repl_uart", f"UART.set_repl_uart({uart!r}): on the board the "
                            "REPL (print, input) now uses that UART's pins; here the console stays the terminal")
        return None

    def __repr__(self) -> str:
        parity = ("None", "odd", "even")[0 if self.parity is None else int(self.parity)]
        stop = {1.0: "1", 1.5: "1.5", 2.0: "2"}[self.stop]
        return f"[MAIXPY]UART{self.id + 1}:( baudrate={self.baudrate}, bits={self.bits}, parity={parity}, stop={stop})"


class I2C:
    """``I2C(id, mode=MODE_MASTER, scl=None, sda=None, freq=400000, ...)``.

    The board's own chips answer on the pins its board wires them to: the power chip (AXP192/AXP173,
    :mod:`~maixemu.firmware.axp`) at 0x34 and the motion sensor (the M5StickV's MPU6886 at 0x68;
    on the default board an MPU6050 on any other pins, as one plugged in: :mod:`~maixemu.firmware.imu`).
    ``scan()`` finds them; writes to other addresses are dropped, reads from them return zero bytes
    (one notice).
    """

    # machine_i2c.c: hardware buses 0-2, software buses 3-5 and I2C_SOFT (soft_i2c_device_number_t)
    I2C0, I2C1, I2C2, I2C3, I2C4, I2C5, I2C_SOFT = 0, 1, 2, 3, 4, 5, 6
    # machine_i2c_mode_t; a software bus is always MODE_MASTER_SOFT
    MODE_MASTER, MODE_SLAVE, MODE_MASTER_SOFT = 0, 1, 2
    # slave-mode events of the SDK's i2c_event_t, passed to on_event=
    I2C_EV_START, I2C_EV_RESTART, I2C_EV_STOP = 0, 1, 2

    def __init__(self, id: int = 0, mode: int = 0, scl: int | None = None, sda: int | None = None,
                 freq: int = 400000, timeout: int = 1000, addr: int = 0, addr_size: int = 7, **kwargs: Any):
        self.id, self.mode, self.freq = int(id), mode, freq
        self.scl = None if scl is None else int(scl)
        self.sda = None if sda is None else int(sda)

    def _device(self, addr: int) -> Any:
        from . import axp, imu

        chip = axp.chips().at(self.scl, self.sda, addr) or imu.imus().at(self.scl, self.sda, addr)
        if chip is None:
            notices.not_emulated("machine.I2C", "no device is attached; writes are dropped and reads give zeros")
        return chip

    def init(self, *args: Any, **kwargs: Any) -> None:
        return None

    def deinit(self) -> None:
        return None

    def scan(self) -> list[int]:
        from . import axp, imu

        found = [axp.ADDRESS] if axp.chips().at(self.scl, self.sda, axp.ADDRESS) is not None else []
        sensor = imu.imus().on(self.scl, self.sda)
        if sensor is not None:
            found.append(sensor.address)
        return sorted(found)

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

    # machine_spi.c: SPI_SOFT is SPI_DEVICE_MAX (4; SPI3 drives the flash and is not offered)
    SPI0, SPI1, SPI2, SPI_SOFT = 0, 1, 2, 4
    MODE_MASTER, MODE_MASTER_2, MODE_MASTER_4, MODE_MASTER_8, MODE_SLAVE = 0, 1, 2, 3, 4
    MSB, LSB = 0, 1
    # chip selects (machine_spi_cs_t), for cs0=... and write(..., cs=SPI.CS0)
    CS0, CS1, CS2, CS3 = 0, 1, 2, 3

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


_TIMER_DEVICES, _TIMER_CHANNELS = 3, 4
_TIMER_ARGS = ("mode", "period", "unit", "callback", "arg", "start", "priority", "div")


class Timer:
    """``Timer(id, channel, *, mode=MODE_ONE_SHOT, period=1000, unit=UNIT_MS, callback, arg=None,
    start=True, priority=1, div=0)`` — a K210 hardware timer channel (firmware ``machine_timer.c``).

    The channel counts on the board clock; when it expires its ISR schedules ``callback(timer)``
    (one argument: the firmware's ``mp_sched_schedule(callback, self)``), which runs at the script's
    next soft-IRQ point (:mod:`~maixemu.firmware.soft_irq`). One-shot timers fire once; periodic ones
    every ``period`` (each expiry is scheduled; a full queue drops it, as on the device).
    ``MODE_PWM`` only reserves the channel for :class:`PWM`. Units count from ``UNIT_NS`` = 0
    (``period * 1000**unit`` nanoseconds).
    """

    TIMER0, TIMER1, TIMER2 = 0, 1, 2
    CHANNEL0, CHANNEL1, CHANNEL2, CHANNEL3 = 0, 1, 2, 3
    MODE_ONE_SHOT, MODE_PERIODIC, MODE_PWM = 0, 1, 2
    UNIT_NS, UNIT_US, UNIT_MS, UNIT_S = 0, 1, 2, 3

    def __init__(self, id: int, channel: int, *args: Any, **kwargs: Any):
        from .mp_args import int_arg

        self.timer, self.channel = int_arg(id), int_arg(channel)
        if not (0 <= self.timer < _TIMER_DEVICES and 0 <= self.channel < _TIMER_CHANNELS):
            raise ValueError("[MAIXPY]Timer:Invalid timer")
        self.deadline_ns: int | None = None
        self._active = False
        self.init(*args, **kwargs)

    # -- configuration (machine_timer_init_helper) -------------------------------------------
    def init(self, *args: Any, mode: int = 0, period: int = 1000, unit: int = 2, callback: Any = None,
             arg: Any = None, start: bool = True, priority: int = 1, div: int = 0, **unknown: Any) -> None:
        from .mp_args import int_arg

        if args:
            raise TypeError("extra positional arguments given")
        if unknown:
            raise TypeError(f"unexpected keyword argument '{next(iter(unknown))}'")
        mode, period, unit = int_arg(mode), int_arg(period), int_arg(unit)
        priority, div = int_arg(priority), int_arg(div)
        if not 0 <= mode <= self.MODE_PWM:
            raise ValueError("[MAIXPY]Timer:Invalid mode")
        if mode != self.MODE_PWM:
            if not callable(callback):
                raise ValueError("[MAIXPY]Timer:Invalid callback")
            if not 1 <= priority <= 7:
                raise ValueError("[MAIXPY]Timer:Invalid priority")
        if not _period_fits(period, unit, div):
            raise ValueError("[MAIXPY]Timer:Invalid period or div")
        self.mode, self._period, self.unit, self._callback, self.arg = mode, period, unit, callback, arg
        self.priority, self.div = priority, div
        self._disarm()
        if mode != self.MODE_PWM and start:
            self._arm()

    @staticmethod
    def _board():
        from .state import current

        return current()

    def _interval_ns(self) -> int:
        return max(1, int(self._period * 1000 ** self.unit))

    def _arm(self) -> None:
        board = self._board()
        self.deadline_ns = board.clock.now_ns() + self._interval_ns()
        self._active = True
        board.irq.add_alarm(self)

    def _disarm(self) -> None:
        self.deadline_ns = None
        self._active = False
        board = self._board()
        if "irq" in board.__dict__:
            board.irq.remove_alarm(self)

    def _expire(self, now_ns: int) -> None:
        """The channel's interrupt: schedule the callback, reload (periodic) or stop (one-shot)."""
        board = self._board()
        if self.mode == self.MODE_PERIODIC and self.deadline_ns is not None:
            self.deadline_ns += self._interval_ns()
            if self.deadline_ns <= now_ns - 64 * self._interval_ns():  # far behind (a long busy loop)
                self.deadline_ns = now_ns + self._interval_ns()
        else:
            self._disarm()
        if callable(self._callback):
            board.irq.schedule(self._callback, self)

    # -- methods -----------------------------------------------------------------------------
    def callback(self, fn: Any) -> None:
        """``callback(fn)``: the function the next expiries schedule."""
        self._callback = fn

    def callback_arg(self) -> Any:
        """The ``arg=`` given at ``init`` (the callback itself gets the timer)."""
        return self.arg

    def period(self, *args: Any) -> int:
        """``period()`` reads; ``period(value[, unit])`` sets the interval (the count restarts)."""
        from .mp_args import int_arg

        if len(args) > 2:
            raise TypeError(f"function expected at most 3 arguments, got {len(args) + 1}")
        if not args:
            return self._period
        if len(args) == 2:
            unit = int_arg(args[1])
            if not 0 <= unit <= self.UNIT_S:
                raise ValueError("[MAIXPY]Timer:unit error")
            self.unit = unit
        self._period = int_arg(args[0])
        if self._active:
            self._arm()
        return self._period

    def start(self) -> None:
        if not self._active and self.mode != self.MODE_PWM:
            self._arm()

    def stop(self) -> None:
        self._disarm()

    def restart(self) -> None:
        """Count the whole period again from now and run."""
        if self.mode != self.MODE_PWM:
            self._arm()

    def deinit(self) -> None:
        self._disarm()


    def __repr__(self) -> str:
        unit = {0: "ns", 1: "us", 2: "ms", 3: "s"}.get(self.unit, "ns")
        return (f"[MAIXPY]Timer:({id(self):#x}) timer={self.timer}, channel={self.channel}, mode={self.mode}, "
                f"period={self._period}{unit}, priority={self.priority}, div={self.div}, "
                f"callback={self._callback!r}, arg={self.arg!r}")


def _period_fits(period: int, unit: int, div: int) -> bool:
    """``check_period_setting``: the period in counts of ``PLL0 / 2**(div+1)`` must be 1 .. 2**32-1."""
    if period >= 0xFFFFFFFF or period < 0 or not 0 <= div <= 255 or not 0 <= unit <= Timer.UNIT_S:
        return False
    counts = _TIMER_INPUT_HZ / 2 ** (div + 1) * (period * 1000 ** unit / 1e9)
    return 1 <= counts <= 0xFFFFFFFF


#: PLL0 of MaixPy's default clock set-up (the timers' input, 800 MHz)
_TIMER_INPUT_HZ = 800_000_000


class PWM:
    """``PWM(timer, freq, duty, pin, enable=True)``: remembers frequency and duty, drives nothing."""

    def __init__(self, tim: Timer, freq: float = 1000, duty: float = 50, pin: int | None = None,
                 enable: bool = True, **kwargs: Any):
        notices.not_emulated("machine.PWM", "the pin is not driven")
        self.timer, self._freq, self._duty, self.pin, self._enabled = tim, freq, duty, pin, bool(enable)

    def init(self, freq: float | None = None, duty: float | None = None, pin: int | None = None,
             enable: bool | None = None, **kwargs: Any) -> None:
        """Set up again (k210_pwm_init): the keywords given replace the current settings."""
        if freq is not None:
            self._freq = freq
        if duty is not None:
            self._duty = duty
        if pin is not None:
            self.pin = pin
        if enable is not None:
            self._enabled = bool(enable)

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
    """``WDT(id=0, timeout=5000, callback=None, context=None)`` — the K210 watchdog (``machine_wdt.c``).

    Counts ``timeout`` ms on the board clock from construction or the last :meth:`feed`. Without a
    callback the board resets when it expires; with one, the first expiry schedules
    ``callback(wdt)`` (run at the next soft-IRQ point; it usually feeds) and the board resets if it
    expires again before a feed. The reset ends the run as ``machine.reset()`` does (exit 0, one
    notice naming the watchdog). :meth:`stop` disables it.
    """

    WDT_DEVICE_0, WDT_DEVICE_1 = 0, 1

    def __init__(self, id: int = 0, timeout: int = 5000, callback: Any = None, context: Any = None):
        from .mp_args import int_arg

        number, timeout = int_arg(id), int_arg(timeout)
        if not 0 <= number <= 1:
            raise ValueError(f"WDT({number}) does not exist")
        if timeout <= 0:
            raise ValueError("WDT timeout too short")
        self.id, self.timeout, self.callback, self._context = number, timeout, callback, context
        self._interrupted = False
        self.deadline_ns: int | None = None
        board = self._board()
        for other in list(board.irq.alarms):  # a new WDT(id) re-initialises that watchdog
            if isinstance(other, WDT) and other.id == number:
                other.stop()
        self.feed()
        board.irq.add_alarm(self)

    @staticmethod
    def _board():
        from .state import current

        return current()

    def feed(self) -> None:
        """Restart the count (and clear a pending first expiry)."""
        self.deadline_ns = self._board().clock.now_ns() + self.timeout * 1_000_000
        self._interrupted = False

    def context(self) -> Any:
        return self._context

    def stop(self) -> None:
        self.deadline_ns = None
        board = self._board()
        if "irq" in board.__dict__:
            board.irq.remove_alarm(self)

    def _expire(self, now_ns: int) -> None:
        """The watchdog ran out: the callback's interrupt first, the reset when that went unanswered."""
        if self.callback is not None and not self._interrupted:
            self._interrupted = True
            self.deadline_ns = now_ns + self.timeout * 1_000_000
            self._board().irq.schedule(self.callback, self)
            return
        self.stop()
        notices.notice_once("machine.reset", f"the watchdog WDT({self.id}) was not fed for {self.timeout} ms: "
                            "the board resets; ending the run")
        raise ScriptReset(f"watchdog WDT({self.id}) reset")

    def __repr__(self) -> str:
        return (f"[MAIXPY]WDT:({id(self):#x}; id={self.id}, timeout={self.timeout}, callback={self.callback!r}, "
                f"context={self._context!r})")


class SDCard:
    """``machine.SDCard`` (machine_sdcard.c): the card behind ``/sd``, a class the firmware never
    instantiates. ``remount()`` mounts it again (the board's ``/sd`` mapping is always there);
    ``ioctl`` answers MicroPython's block-device commands for the mapped card."""

    #: extmod's BP_IOCTL_* commands
    IOCTL_INIT, IOCTL_DEINIT, IOCTL_SYNC, IOCTL_SEC_COUNT, IOCTL_SEC_SIZE = 1, 2, 3, 4, 5
    BLOCK_SIZE = 512

    @staticmethod
    def remount() -> None:
        return None

    @staticmethod
    def ioctl(cmd: int, arg: Any = None) -> int:
        cmd = int(cmd)
        if cmd in (SDCard.IOCTL_INIT, SDCard.IOCTL_DEINIT, SDCard.IOCTL_SYNC):
            return 0
        if cmd == SDCard.IOCTL_SEC_SIZE:
            return SDCard.BLOCK_SIZE
        if cmd == SDCard.IOCTL_SEC_COUNT:
            from . import uos

            stats = uos.statvfs("/sd")
            return stats[0] * stats[2] // SDCard.BLOCK_SIZE
        return -1

