"""MaixPy ``machine``: reset and the UART/I2C/SPI/PWM/Timer/WDT peripherals (MicroPython-style)."""

from typing import Any, Callable

_Out = bytes | bytearray | memoryview | str | int  # MaixPy writes accept str and a single int byte too

PWRON_RESET: int
HARD_RESET: int
SOFT_RESET: int
WDT_RESET: int
WDT1_RESET: int

def reset() -> None:
    """Reboot the board (the script ends here)."""
def soft_reset() -> None:
    """Reboot the board."""
def reset_cause() -> int:
    """Why the board last reset (``machine.PWRON_RESET`` ...)."""
def freq() -> int:
    """CPU frequency in Hz."""
def unique_id() -> bytes:
    """The chip's unique id (32 bytes)."""

class UART:
    """Serial port: ``UART(UART.UART1, 115200, 8, None, 1, timeout=1000, read_buf_len=4096)`` (pins via ``fm.register``)."""
    UART1: int
    UART2: int
    UART3: int
    UARTHS: int
    PARITY_ODD: int
    PARITY_EVEN: int
    def __init__(self, uart: int, baudrate: int = 115200, bits: int = 8, parity: int | None = None,
                 stop: float | None = None, *, timeout: int = 1000, timeout_char: int = 10, read_buf_len: int = 2048,
                 ide: bool = False, from_ide: bool = True) -> None: ...
    def init(self, baudrate: int = 115200, bits: int = 8, parity: int | None = None, stop: float | None = None, *,
             timeout: int = 1000, timeout_char: int = 10, read_buf_len: int = 2048, ide: bool = False,
             from_ide: bool = True) -> None:
        """Re-configure the port."""
    def deinit(self) -> None: ...
    def any(self) -> int:
        """Bytes waiting."""
    def read(self, nbytes: int | None = None) -> bytes | None:
        """Up to ``nbytes`` (default all waiting); None on timeout."""
    def readline(self) -> bytes | None:
        """One line, or None on timeout."""
    def readinto(self, buf: bytearray | memoryview, nbytes: int | None = None) -> int | None:
        """Read into a buffer; the count or None."""
    def readchar(self) -> int:
        """One byte as int (-1 if none)."""
    def write(self, buf: _Out, *span: int) -> int:
        """Send bytes (``write(buf, max_len)``, ``write(buf, off, max_len)``); returns the count."""
    @staticmethod
    def repl_uart() -> UART | None:
        """The UART the REPL uses (UARTHS at boot)."""
    @staticmethod
    def set_repl_uart(uart: Any) -> None: ...

class I2C:
    """I2C bus: ``I2C(I2C.I2C0, freq=400000, scl=28, sda=29)``."""
    I2C0: int
    I2C1: int
    I2C2: int
    I2C3: int
    I2C4: int
    I2C5: int
    I2C_SOFT: int
    MODE_MASTER: int
    MODE_SLAVE: int
    MODE_MASTER_SOFT: int
    I2C_EV_START: int
    I2C_EV_RESTART: int
    I2C_EV_STOP: int
    def __init__(self, id: int = 0, mode: int = 0, scl: int | None = None, sda: int | None = None,
                 freq: int = 400000, timeout: int = 1000, addr: int = 0, addr_size: int = 7, **kwargs: Any) -> None: ...
    def init(self, *args: Any, **kwargs: Any) -> None: ...
    def deinit(self) -> None: ...
    def scan(self) -> list[int]:
        """Addresses that answer."""
    def readfrom(self, addr: int, nbytes: int, stop: bool = True) -> bytes: ...
    def readfrom_into(self, addr: int, buf: bytearray | memoryview, stop: bool = True) -> None: ...
    def writeto(self, addr: int, buf: _Out, stop: bool = True) -> int: ...
    def readfrom_mem(self, addr: int, memaddr: int, nbytes: int, *, mem_size: int = 8) -> bytes: ...
    def readfrom_mem_into(self, addr: int, memaddr: int, buf: bytearray | memoryview, *, mem_size: int = 8) -> None: ...
    def writeto_mem(self, addr: int, memaddr: int, buf: _Out, *, mem_size: int = 8) -> None: ...

class SPI:
    """SPI bus: ``SPI(SPI.SPI1, mode=SPI.MODE_MASTER, baudrate=10000000, polarity=0, phase=0, bits=8, ...)``."""
    SPI0: int
    SPI1: int
    SPI2: int
    SPI_SOFT: int
    MODE_MASTER: int
    MODE_MASTER_2: int
    MODE_MASTER_4: int
    MODE_MASTER_8: int
    MODE_SLAVE: int
    MSB: int
    LSB: int
    CS0: int
    CS1: int
    CS2: int
    CS3: int
    def __init__(self, id: int = 0, mode: int = 0, baudrate: int = 500000, **kwargs: Any) -> None: ...
    def init(self, *args: Any, **kwargs: Any) -> None: ...
    def deinit(self) -> None: ...
    def read(self, nbytes: int, write: int = 0, **kwargs: Any) -> bytes: ...
    def readinto(self, buf: bytearray | memoryview, write: int = 0, **kwargs: Any) -> None: ...
    def write(self, buf: _Out, **kwargs: Any) -> None: ...
    def write_readinto(self, write_buf: _Out, read_buf: bytearray | memoryview, **kwargs: Any) -> None: ...

class Timer:
    """Hardware timer channel: ``Timer(Timer.TIMER0, Timer.CHANNEL0, mode=Timer.MODE_PERIODIC, period=1000,
    unit=Timer.UNIT_MS, callback=f)``; ``f(timer)`` runs at the script's next soft-IRQ point."""
    TIMER0: int
    TIMER1: int
    TIMER2: int
    CHANNEL0: int
    CHANNEL1: int
    CHANNEL2: int
    CHANNEL3: int
    MODE_ONE_SHOT: int
    MODE_PERIODIC: int
    MODE_PWM: int
    UNIT_S: int
    UNIT_MS: int
    UNIT_US: int
    UNIT_NS: int
    def __init__(self, id: int, channel: int, *, mode: int = 0, period: int = 1000, unit: int = 2,
                 callback: Callable[[Timer], Any] | None = None, arg: Any = None, start: bool = True,
                 priority: int = 1, div: int = 0) -> None: ...
    def init(self, *, mode: int = 0, period: int = 1000, unit: int = 2, callback: Callable[[Timer], Any] | None = None,
             arg: Any = None, start: bool = True, priority: int = 1, div: int = 0) -> None: ...
    def deinit(self) -> None: ...
    def callback(self, fn: Callable[[Timer], Any]) -> None: ...
    def callback_arg(self) -> Any: ...
    def period(self, value: int = ..., unit: int = ...) -> int: ...
    def start(self) -> None: ...
    def stop(self) -> None: ...
    def restart(self) -> None: ...

class PWM:
    """PWM output on a timer channel: ``PWM(tim, freq=1000, duty=50, pin=board_info.LED_R)``."""
    def __init__(self, tim: Timer, freq: float = 1000, duty: float = 50, pin: int | None = None, enable: bool = True,
                 **kwargs: Any) -> None: ...
    def init(self, freq: float | None = None, duty: float | None = None, pin: int | None = None,
             enable: bool | None = None, **kwargs: Any) -> None: ...
    def freq(self, value: float | None = None) -> float | None: ...
    def duty(self, value: float | None = None) -> float | None: ...
    def enable(self) -> None: ...
    def disable(self) -> None: ...
    def deinit(self) -> None: ...

class WDT:
    """Watchdog: ``WDT(id=0, timeout=5000, callback=None, context=None)``; call ``feed()`` in time or the board resets."""
    WDT_DEVICE_0: int
    WDT_DEVICE_1: int
    def __init__(self, id: int = 0, timeout: int = 5000, callback: Callable[[WDT], Any] | None = None,
                 context: Any = None) -> None: ...
    def feed(self) -> None: ...
    def context(self) -> Any: ...
    def stop(self) -> None: ...

class SDCard:
    """The card behind ``/sd`` (never instantiated): ``SDCard.remount()``."""
    IOCTL_INIT: int
    IOCTL_DEINIT: int
    IOCTL_SYNC: int
    IOCTL_SEC_COUNT: int
    IOCTL_SEC_SIZE: int
    BLOCK_SIZE: int
    @staticmethod
    def remount() -> None: ...
    @staticmethod
    def ioctl(cmd: int, arg: Any = None) -> int: ...
