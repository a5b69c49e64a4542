"""``Maix.FPIOA``: the K210 pin multiplexer — which function (GPIOHS0, UART1_TX, ...) each pin has.

The table of function numbers is the chip's (0..203, Kendryte FPIOA). The mux state is the board's
(``current().pins.mux``), like the hardware's: :func:`pin_of_function` is what ``Maix.GPIO`` uses to find the physical pin
behind ``GPIO.GPIOHS0``, so a key the window presses on pin 16 reaches the script only if the
script mapped pin 16 to that GPIO (as on the board). Setting a function on a pin removes it from
any other pin, as the SDK's ``fpioa_set_function`` does.
"""

from __future__ import annotations

import errno
import sys

NUM_IO = 48  # physical pins 0..47


def _function_names() -> list[str]:
    """Function names in chip order; the index is the function number."""
    names = ["JTAG_TCLK", "JTAG_TDI", "JTAG_TMS", "JTAG_TDO"]
    names += [f"SPI0_D{i}" for i in range(8)] + [f"SPI0_SS{i}" for i in range(4)]
    names += ["SPI0_ARB", "SPI0_SCLK", "UARTHS_RX", "UARTHS_TX", "RESV6", "RESV7", "CLK_SPI1", "CLK_I2C1"]
    names += [f"GPIOHS{i}" for i in range(32)] + [f"GPIO{i}" for i in range(8)]
    names += ["UART1_RX", "UART1_TX", "UART2_RX", "UART2_TX", "UART3_RX", "UART3_TX"]
    names += [f"SPI1_D{i}" for i in range(8)] + [f"SPI1_SS{i}" for i in range(4)]
    names += ["SPI1_ARB", "SPI1_SCLK", "SPI_SLAVE_D0", "SPI_SLAVE_SS", "SPI_SLAVE_SCLK"]
    for n in range(3):
        names += [f"I2S{n}_MCLK", f"I2S{n}_SCLK", f"I2S{n}_WS"]
        names += [f"I2S{n}_IN_D{i}" for i in range(4)] + [f"I2S{n}_OUT_D{i}" for i in range(4)]
    names += [f"RESV{i}" for i in range(6)]
    for n in range(3):
        names += [f"I2C{n}_SCLK", f"I2C{n}_SDA"]
    names += ["CMOS_XCLK", "CMOS_RST", "CMOS_PWDN", "CMOS_VSYNC", "CMOS_HREF", "CMOS_PCLK"]
    names += [f"CMOS_D{i}" for i in range(8)] + ["SCCB_SCLK", "SCCB_SDA"]
    modem = ("CTS", "DSR", "DCD", "RI", "SIR_IN", "DTR", "RTS", "OUT2", "OUT1", "SIR_OUT", "BAUD", "RE", "DE", "RS485_EN")
    for n in (1, 2, 3):
        names += [f"UART{n}_{signal}" for signal in modem]
    for n in range(3):
        names += [f"TIMER{n}_TOGGLE{i}" for i in range(1, 5)]
    names += ["CLK_SPI2", "CLK_I2C2"]
    return names


FUNCTION_NAMES: list[str] = _function_names()
FUNCTIONS: dict[str, int] = {name: number for number, name in enumerate(FUNCTION_NAMES)}
USABLE_FUNC_NUM = len(FUNCTION_NAMES)  # 204
RESV0 = FUNCTIONS["RESV0"]  # 120: a pin with no function

def _mux() -> dict[int, int]:
    """The board's mux: physical pin -> function (``current().pins.mux``)."""
    from .. import state

    return state.current().pins.mux


def set_pin_function(pin: int, function: int) -> None:
    """Mux ``function`` onto ``pin`` and off every other pin, as the SDK's ``fpioa_set_function``
    does (one pin per function; ``RESV0``, "no function", may be on any number of pins: a pin the
    mux does not list has it)."""
    mux = _mux()
    if function == RESV0:
        mux.pop(pin, None)
        return
    for other in [p for p, f in mux.items() if f == function and p != pin]:
        del mux[other]
    mux[pin] = function


def pin_of_function(function: int) -> int | None:
    """The lowest physical pin that carries ``function`` (``fpioa_get_io_by_function``), None if none."""
    mux = _mux()
    if function == RESV0:
        return next((pin for pin in range(NUM_IO) if pin not in mux), None)
    for pin in sorted(mux):
        if mux[pin] == function:
            return pin
    return None


def function_of_pin(pin: int) -> int | None:
    return _mux().get(pin)


def _describe(name: str) -> str:
    """A one-line description for ``FPIOA.help`` (our wording; the firmware has its own table)."""
    prefixes = (
        ("GPIOHS", "GPIO High speed "),
        ("GPIO", "GPIO "),
        ("JTAG_", "JTAG "),
        ("SPI_SLAVE_", "SPI slave "),
        ("SPI", "SPI"),
        ("UARTHS_", "High speed UART "),
        ("UART", "UART"),
        ("I2S", "I2S"),
        ("I2C", "I2C"),
        ("CMOS_", "DVP camera "),
        ("SCCB_", "SCCB "),
        ("TIMER", "Timer"),
        ("CLK_", "Clock "),
        ("RESV", "Reserved "),
    )
    for prefix, text in prefixes:
        if name.startswith(prefix):
            return (text + name[len(prefix):].replace("_", " ")).strip()
    return name


def _help_line(number: int) -> str:
    name = FUNCTION_NAMES[number]
    desc = _describe(name)[:32]
    return f"|  {name:<17}|  {desc:<32}|"


class FPIOA:
    """``FPIOA()``: ``set_function(pin, func)``, ``get_Pin_num(func)``, ``help([func])`` and the constants."""

    def set_function(self, pin: int = 0, func: int = 0) -> bool:
        pin = int(pin)
        func = int(func)
        if pin > NUM_IO or pin < 0:  # the firmware's check is "> 48"; negative wraps to a huge uint16
            raise ValueError("Don't have this Pin")
        if func < 0 or func > USABLE_FUNC_NUM:
            raise ValueError("This function is invalid")
        if pin == NUM_IO:  # passes the firmware's check, refused by the SDK
            print("[Maix]:Opps!Can not set fpioa")
            raise OSError(errno.EIO, "EIO")
        set_pin_function(pin, func)
        return True

    def get_Pin_num(self, func: int = 0) -> int | None:
        func = int(func)
        if func < 0 or func > USABLE_FUNC_NUM:
            raise ValueError("This function is invalid")
        return pin_of_function(func)

    def help(self, func: int | None = None) -> bool | None:
        number = USABLE_FUNC_NUM if func is None else int(func)
        out = sys.stdout
        if number > USABLE_FUNC_NUM:
            print("No this funciton Description", file=out)
            return False
        rule = "+-------------------+----------------------------------+"
        print(rule, file=out)
        print("|     Function      |            Description           |", file=out)
        print(rule, file=out)
        numbers = range(USABLE_FUNC_NUM) if number == USABLE_FUNC_NUM else (number,)
        for n in numbers:
            print(_help_line(n), file=out)
            print(rule, file=out)
        return None

    def __repr__(self) -> str:
        return "<FPIOA>"


for _name, _number in FUNCTIONS.items():
    setattr(FPIOA, _name, _number)
del _name, _number
