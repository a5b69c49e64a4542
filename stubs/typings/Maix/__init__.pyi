"""MaixPy ``Maix``: ``GPIO``, ``FPIOA``, ``utils``, ``freq``, ``config`` (``components/micropython/port/src/Maix``).

A pin is used by mapping it to a function first: ``fm.register(board_info.LED_R, fm.fpioa.GPIO0)``,
then ``GPIO(GPIO.GPIO0, GPIO.OUT)``. Only GPIOHS pins support interrupts.
"""

from typing import Any, Callable, overload

from . import config as config, freq as freq, utils as utils

class GPIO:
    """A general (GPIO0..7) or high-speed (GPIOHS0..31) GPIO: ``GPIO(GPIO.GPIOHS0, GPIO.IN, GPIO.PULL_UP)``."""
    IN: int
    OUT: int
    PULL_NONE: int
    PULL_UP: int
    PULL_DOWN: int
    IRQ_NONE: int
    IRQ_RISING: int
    IRQ_FALLING: int
    IRQ_BOTH: int
    WAKEUP_NOT_SUPPORT: int
    GPIO0: int
    GPIO1: int
    GPIO2: int
    GPIO3: int
    GPIO4: int
    GPIO5: int
    GPIO6: int
    GPIO7: int
    GPIOHS0: int
    GPIOHS1: int
    GPIOHS2: int
    GPIOHS3: int
    GPIOHS4: int
    GPIOHS5: int
    GPIOHS6: int
    GPIOHS7: int
    GPIOHS8: int
    GPIOHS9: int
    GPIOHS10: int
    GPIOHS11: int
    GPIOHS12: int
    GPIOHS13: int
    GPIOHS14: int
    GPIOHS15: int
    GPIOHS16: int
    GPIOHS17: int
    GPIOHS18: int
    GPIOHS19: int
    GPIOHS20: int
    GPIOHS21: int
    GPIOHS22: int
    GPIOHS23: int
    GPIOHS24: int
    GPIOHS25: int
    GPIOHS26: int
    GPIOHS27: int
    GPIOHS28: int
    GPIOHS29: int
    GPIOHS30: int
    GPIOHS31: int
    def __init__(self, id: int, mode: int | None = None, pull: int | None = None, *, value: int | None = None) -> None:
        """``mode`` defaults to ``GPIO.IN``, ``pull`` to ``GPIO.PULL_NONE``; output pins cannot pull (ValueError)."""
    def init(self, mode: int | None = None, pull: int | None = None, *, value: int | None = None) -> None:
        """Re-configure the pin."""
    @overload
    def value(self) -> int:
        """``value()`` reads 0/1 (the BOOT key reads 1 when released); ``value(v)`` writes and returns None."""
    @overload
    def value(self, value: int, /) -> None: ...
    def mode(self, mode: int | None = None) -> int | None:
        """Get or set the mode."""
    def irq(self, handler: Callable[[GPIO], Any] | None = None, trigger: int = 3, wake: int | None = None,
            priority: int = 7) -> Any:
        """Interrupt on ``GPIO.IRQ_RISING/FALLING/BOTH`` (GPIOHS only); ``handler(pin)``."""
    def disirq(self) -> None:
        """Disable the interrupt."""

class FPIOA:
    """The K210's pin multiplexer: ``FPIOA().set_function(pin, FPIOA.GPIOHS0)``; function constants below."""
    JTAG_TCLK: int
    JTAG_TDI: int
    JTAG_TMS: int
    JTAG_TDO: int
    SPI0_D0: int
    SPI0_D1: int
    SPI0_D2: int
    SPI0_D3: int
    SPI0_D4: int
    SPI0_D5: int
    SPI0_D6: int
    SPI0_D7: int
    SPI0_SS0: int
    SPI0_SS1: int
    SPI0_SS2: int
    SPI0_SS3: int
    SPI0_ARB: int
    SPI0_SCLK: int
    UARTHS_RX: int
    UARTHS_TX: int
    RESV6: int
    RESV7: int
    CLK_SPI1: int
    CLK_I2C1: int
    GPIOHS0: int
    GPIOHS1: int
    GPIOHS2: int
    GPIOHS3: int
    GPIOHS4: int
    GPIOHS5: int
    GPIOHS6: int
    GPIOHS7: int
    GPIOHS8: int
    GPIOHS9: int
    GPIOHS10: int
    GPIOHS11: int
    GPIOHS12: int
    GPIOHS13: int
    GPIOHS14: int
    GPIOHS15: int
    GPIOHS16: int
    GPIOHS17: int
    GPIOHS18: int
    GPIOHS19: int
    GPIOHS20: int
    GPIOHS21: int
    GPIOHS22: int
    GPIOHS23: int
    GPIOHS24: int
    GPIOHS25: int
    GPIOHS26: int
    GPIOHS27: int
    GPIOHS28: int
    GPIOHS29: int
    GPIOHS30: int
    GPIOHS31: int
    GPIO0: int
    GPIO1: int
    GPIO2: int
    GPIO3: int
    GPIO4: int
    GPIO5: int
    GPIO6: int
    GPIO7: int
    UART1_RX: int
    UART1_TX: int
    UART2_RX: int
    UART2_TX: int
    UART3_RX: int
    UART3_TX: int
    SPI1_D0: int
    SPI1_D1: int
    SPI1_D2: int
    SPI1_D3: int
    SPI1_D4: int
    SPI1_D5: int
    SPI1_D6: int
    SPI1_D7: int
    SPI1_SS0: int
    SPI1_SS1: int
    SPI1_SS2: int
    SPI1_SS3: int
    SPI1_ARB: int
    SPI1_SCLK: int
    SPI_SLAVE_D0: int
    SPI_SLAVE_SS: int
    SPI_SLAVE_SCLK: int
    I2S0_MCLK: int
    I2S0_SCLK: int
    I2S0_WS: int
    I2S0_IN_D0: int
    I2S0_IN_D1: int
    I2S0_IN_D2: int
    I2S0_IN_D3: int
    I2S0_OUT_D0: int
    I2S0_OUT_D1: int
    I2S0_OUT_D2: int
    I2S0_OUT_D3: int
    I2S1_MCLK: int
    I2S1_SCLK: int
    I2S1_WS: int
    I2S1_IN_D0: int
    I2S1_IN_D1: int
    I2S1_IN_D2: int
    I2S1_IN_D3: int
    I2S1_OUT_D0: int
    I2S1_OUT_D1: int
    I2S1_OUT_D2: int
    I2S1_OUT_D3: int
    I2S2_MCLK: int
    I2S2_SCLK: int
    I2S2_WS: int
    I2S2_IN_D0: int
    I2S2_IN_D1: int
    I2S2_IN_D2: int
    I2S2_IN_D3: int
    I2S2_OUT_D0: int
    I2S2_OUT_D1: int
    I2S2_OUT_D2: int
    I2S2_OUT_D3: int
    RESV0: int
    RESV1: int
    RESV2: int
    RESV3: int
    RESV4: int
    RESV5: int
    I2C0_SCLK: int
    I2C0_SDA: int
    I2C1_SCLK: int
    I2C1_SDA: int
    I2C2_SCLK: int
    I2C2_SDA: int
    CMOS_XCLK: int
    CMOS_RST: int
    CMOS_PWDN: int
    CMOS_VSYNC: int
    CMOS_HREF: int
    CMOS_PCLK: int
    CMOS_D0: int
    CMOS_D1: int
    CMOS_D2: int
    CMOS_D3: int
    CMOS_D4: int
    CMOS_D5: int
    CMOS_D6: int
    CMOS_D7: int
    SCCB_SCLK: int
    SCCB_SDA: int
    UART1_CTS: int
    UART1_DSR: int
    UART1_DCD: int
    UART1_RI: int
    UART1_SIR_IN: int
    UART1_DTR: int
    UART1_RTS: int
    UART1_OUT2: int
    UART1_OUT1: int
    UART1_SIR_OUT: int
    UART1_BAUD: int
    UART1_RE: int
    UART1_DE: int
    UART1_RS485_EN: int
    UART2_CTS: int
    UART2_DSR: int
    UART2_DCD: int
    UART2_RI: int
    UART2_SIR_IN: int
    UART2_DTR: int
    UART2_RTS: int
    UART2_OUT2: int
    UART2_OUT1: int
    UART2_SIR_OUT: int
    UART2_BAUD: int
    UART2_RE: int
    UART2_DE: int
    UART2_RS485_EN: int
    UART3_CTS: int
    UART3_DSR: int
    UART3_DCD: int
    UART3_RI: int
    UART3_SIR_IN: int
    UART3_DTR: int
    UART3_RTS: int
    UART3_OUT2: int
    UART3_OUT1: int
    UART3_SIR_OUT: int
    UART3_BAUD: int
    UART3_RE: int
    UART3_DE: int
    UART3_RS485_EN: int
    TIMER0_TOGGLE1: int
    TIMER0_TOGGLE2: int
    TIMER0_TOGGLE3: int
    TIMER0_TOGGLE4: int
    TIMER1_TOGGLE1: int
    TIMER1_TOGGLE2: int
    TIMER1_TOGGLE3: int
    TIMER1_TOGGLE4: int
    TIMER2_TOGGLE1: int
    TIMER2_TOGGLE2: int
    TIMER2_TOGGLE3: int
    TIMER2_TOGGLE4: int
    CLK_SPI2: int
    CLK_I2C2: int
    def __init__(self) -> None: ...
    def set_function(self, pin: int = 0, func: int = 0) -> bool:
        """Route function ``func`` (``FPIOA.GPIO0`` ...) to physical pin ``pin``."""
    def get_Pin_num(self, func: int = 0) -> int | None:
        """The pin a function is routed to, or None."""
    def help(self, func: int | None = None) -> bool | None:
        """Print the function table (or one function's description)."""

class _InertMeta(type):
    def __getattr__(cls, name: str) -> Any: ...

class I2S(metaclass=_InertMeta):
    """I2S audio interface (accepted, not emulated by maixemu)."""
    def __init__(self, *args: Any, **kwargs: Any) -> None: ...
    def __getattr__(self, name: str) -> Any: ...

class FFT(metaclass=_InertMeta):
    """Hardware FFT (accepted, not emulated by maixemu)."""
    def __init__(self, *args: Any, **kwargs: Any) -> None: ...
    def __getattr__(self, name: str) -> Any: ...

class Audio(metaclass=_InertMeta):
    """Audio buffer/file object (accepted, not emulated by maixemu)."""
    def __init__(self, *args: Any, **kwargs: Any) -> None: ...
    def __getattr__(self, name: str) -> Any: ...

class MIC_ARRAY(metaclass=_InertMeta):
    """Microphone array (accepted, not emulated by maixemu)."""
    def __init__(self, *args: Any, **kwargs: Any) -> None: ...
    def __getattr__(self, name: str) -> Any: ...
