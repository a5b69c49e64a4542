"""MaixPy ``Maix``: ``GPIO``, ``FPIOA``, ``utils``, ``freq``, ``config``, ``I2S``, ``FFT``, ``Audio``, ``MIC_ARRAY``.

A pin is used by mapping it to a function first: ``fm.register(board_info.LED_R, fm.fpioa.GPIO0)``,
then ``GPIO(GPIO.GPIO0, GPIO.OUT)``. Only GPIOHS pins support interrupts.
"""

from typing import Any, Callable, Sequence, overload

from image import Image

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

class I2S:
    """One of the three I2S buses: ``I2S(I2S.DEVICE_0, sample_points=1024)``.

    Samples are 32-bit DMA words, one per channel sample, left/right alternating:
    ``record(1024)`` holds 512 stereo frames. The real sample rate is what the clock divider gives
    (``set_sample_rate(16000)`` runs at 16003 Hz; ``print(i2s)`` shows it).
    """
    DEVICE_0: int
    DEVICE_1: int
    DEVICE_2: int
    CHANNEL_0: int
    CHANNEL_1: int
    CHANNEL_2: int
    CHANNEL_3: int
    IGNORE_WORD_LENGTH: int
    RESOLUTION_12_BIT: int
    RESOLUTION_16_BIT: int
    RESOLUTION_20_BIT: int
    RESOLUTION_24_BIT: int
    RESOLUTION_32_BIT: int
    SCLK_CYCLES_16: int
    SCLK_CYCLES_24: int
    SCLK_CYCLES_32: int
    TRANSMITTER: int
    RECEIVER: int
    STANDARD_MODE: int
    RIGHT_JUSTIFYING_MODE: int
    LEFT_JUSTIFYING_MODE: int
    def __init__(self, i2s_num: int, *, sample_points: int = 1024, pll2: int = 0, mclk: int = 0) -> None: ...
    def init(self, *, sample_points: int = 1024, pll2: int = 0, mclk: int = 0) -> bool: ...
    def channel_config(self, channel: int = ..., mode: int = ..., *, resolution: int = ..., cycles: int = ...,
                       align_mode: int = ...) -> bool:
        """Configure a channel as ``I2S.RECEIVER`` or ``I2S.TRANSMITTER`` (resets the bus's clock divider)."""
    def set_sample_rate(self, sample_rate: int) -> bool: ...
    def record(self, points: int = 0, *, time: int = 0) -> Audio:
        """``points`` words (or ``time`` seconds at ``sample_rate``) from the microphone."""
    def wait_record(self) -> None:
        """Wait for the last ``record`` transfer to finish."""
    def play(self, audio: Audio) -> None:
        """Send an Audio's words out (waits for the previous transfer first)."""
    def __deinit__(self) -> None: ...

class FFT:
    """The hardware FFT (16-bit fixed point), used on the class: ``FFT.run(audio.to_bytes(), 512)``."""
    @staticmethod
    def run(byte: Any = None, points: int = 64, shift: int = 0, direction: int = 1) -> list[tuple[int, int]]:
        """``points`` (64/128/256/512) ``(real, imag)`` bins of the low 16 bits of the first ``points`` words;
        ``shift`` halves the sums of butterfly layer i when bit i is set (loud input overflows without)."""
    @staticmethod
    def freq(points: int = 64, sample_rate: int = 16000) -> list[int]:
        """The frequency of each bin: ``k * (sample_rate // points)``."""
    @staticmethod
    def amplitude(list_obj: list[tuple[int, int]]) -> list[int]:
        """``2 * isqrt(r*r + i*i) // len(list)`` per bin."""

class Audio:
    """An audio buffer (32-bit I2S words) or a WAV file on /sd or /flash (the ``audio`` module's class)."""
    def __init__(self, array: Any = None, path: str | None = None, *, points: int = 1024,
                 is_create: bool = False, samplerate: int = 44100) -> None: ...
    def init(self, array: Any = None, path: str | None = None, *, points: int = 1024,
             is_create: bool = False, samplerate: int = 44100) -> bool: ...
    def to_bytes(self) -> bytearray:
        """``points * 4`` bytes; AttributeError ``empty Audio`` when there is no buffer."""
    def volume(self, value: float | None = None) -> float:
        """Playback volume in percent (0..100, default 40)."""
    def play_process(self, i2s: I2S) -> list[int] | bool:
        """Read the WAV header: ``[channels, samplerate, byterate, blockalign, bitspersample, datasize]``
        (False for an empty file; ``OSError: wav init error`` for one the board cannot play)."""
    def play(self) -> int | None:
        """Play the next ``i2s.points`` frames: 1, or 0 at the end of the file."""
    def record_process(self, dev: I2S | None = None, channels: int = 1) -> bool | None: ...
    def record(self, record: Audio) -> None:
        """Append an ``I2S.record`` result (the low 16 bits of each word) to a recording."""
    def finish(self) -> None:
        """Close the file; a recording gets its 44-byte header (always 2 channels, 16 bits)."""
    def __deinit__(self) -> None: ...

class MIC_ARRAY:
    """The 6+1 microphone array board with its 12 LEDs (used on the class)."""
    @staticmethod
    def init(i2s_d0: int = 23, i2s_d1: int = 22, i2s_d2: int = 21, i2s_d3: int = 20, i2s_ws: int = 19,
             i2s_sclk: int = 18, sk9822_dat: int = 24, sk9822_clk: int = 25) -> bool: ...
    @staticmethod
    def deinit() -> bool: ...
    @staticmethod
    def get_map() -> Image:
        """The 16x16 grayscale sound map (on the PC: the source's loudness in every cell)."""
    @staticmethod
    def get_dir(img: Image) -> tuple[int, ...]:
        """12 LED strengths (0..15) from a map."""
    @staticmethod
    def set_led(dir: Sequence[int], color: Sequence[int]) -> bool: ...
