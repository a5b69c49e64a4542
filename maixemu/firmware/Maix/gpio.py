"""``Maix.GPIO`` with board pins the PC can drive: keys read through the FPIOA mapping, LEDs observable.

Device semantics (firmware ``Maix_gpio.c``, K210 SDK enums): ids ``GPIOHS0..31`` are 0..31 and
``GPIO0..7`` are 32..39; modes ``IN``/``PULL_DOWN``/``PULL_UP``/``OUT`` are 0..3 and ``PULL_NONE``
is -1 (a pull passed with an input mode *becomes* the mode); edges ``IRQ_NONE/FALLING/RISING/BOTH``
are 0..3; only GPIOHS pins take interrupts. Without a mode argument the constructor configures
nothing (not even ``value=``), as on the device.

How a read works on the PC: the GPIO's FPIOA function (``GPIOHS0`` = function 24, ...) is looked up
in the FPIOA mux to find the physical pin (``fm.register(16, fm.fpioa.GPIOHS0)``), then that pin's
level in the board's ``pins.input_levels``. A pin nobody drives reads its pull: 0 with ``PULL_DOWN``, else 1 —
so the active-low keys of Maix boards read "released". Output pins read back what was written.

The levels live in the board's pins (``current().pins``). Hooks for the session / window (not part
of the device API):

* ``pins.input_levels`` — ``{physical pin: 0/1}``; set it directly, or call :func:`set_input`
  (which also runs IRQ handlers, synchronously, in the caller's thread), :func:`press`,
  :func:`release` (active low; accept a pin number or a ``board_info`` name such as ``"BOOT_KEY"``).
* ``pins.output_levels`` — ``{physical pin: 0/1}`` last written by the script (LED indicators); the
  board's ``gpio_output`` event gets ``(pin, level)`` on every write to a mapped pin.
"""

from __future__ import annotations

from typing import Any, Callable

from .. import state as _state
from ..chip.soft_irq import SoftIrq
from . import fpioa as _fpioa

IN, PULL_DOWN, PULL_UP, OUT = 0, 1, 2, 3
PULL_NONE = -1
IRQ_NONE, IRQ_FALLING, IRQ_RISING, IRQ_BOTH = 0, 1, 2, 3
NUM_GPIOHS = 32
NUM_GPIO = 8
_FUNC_GPIOHS0 = _fpioa.FUNCTIONS["GPIOHS0"]
_FUNC_GPIO0 = _fpioa.FUNCTIONS["GPIO0"]

def _pins():
    return _state.current().pins


def _function_of(gpio_id: int) -> int:
    if gpio_id < NUM_GPIOHS:
        return _FUNC_GPIOHS0 + gpio_id
    return _FUNC_GPIO0 + (gpio_id - NUM_GPIOHS)


def _physical_pin(gpio_id: int) -> int | None:
    return _fpioa.pin_of_function(_function_of(gpio_id))


def _level_of_pin(pin: int | None, pull: int | None) -> int:
    input_levels = _pins().input_levels
    if pin is not None and pin in input_levels:
        return 1 if input_levels[pin] else 0
    return 0 if pull == PULL_DOWN else 1


def _resolve_pin(pin_or_name: int | str) -> int:
    if isinstance(pin_or_name, str):
        from .. import board

        return int(getattr(board.board_info, pin_or_name))
    return int(pin_or_name)


def set_input(pin_or_name: int | str, level: int, *, deliver: bool | None = None) -> None:
    """Drive a physical pin (or ``board_info`` name) to ``level`` and fire matching GPIOHS IRQs.

    The ISR schedules ``handler(pin)`` (``mp_sched_schedule``): on a script thread (a scripted press
    inside ``snapshot()``) it runs at once, at the end of that firmware call's soft-IRQ point;
    from another thread (the LCD window, the IDE page) at the script's next soft-IRQ point.
    ``deliver=True`` runs them now whatever the thread (the IDE page's stand-in for a busy loop's
    pending check), ``False`` leaves them queued.
    """
    pin = _resolve_pin(pin_or_name)
    new = 1 if level else 0
    board = _state.current()
    pins = board.pins
    before = {gid: GPIO(gid).value() for gid in list(pins.gpio_irq)}
    pins.input_levels[pin] = new
    for gid, (handler, trigger) in list(pins.gpio_irq.items()):
        if _physical_pin(gid) != pin:
            continue
        old = before[gid]
        now = GPIO(gid).value()
        rising, falling = old == 0 and now == 1, old == 1 and now == 0
        if (trigger == IRQ_RISING and rising) or (trigger == IRQ_FALLING and falling) or (
            trigger == IRQ_BOTH and (rising or falling)
        ):
            board.part(SoftIrq).schedule(handler, GPIO(gid))  # one argument: the firmware schedules handler(pin)
    if (board.run.in_script() if deliver is None else deliver) and "irq" in board.__dict__:
        board.part(SoftIrq).run_pending()


def press(pin_or_name: int | str) -> None:
    """An active-low key goes down (level 0)."""
    set_input(pin_or_name, 0)


def release(pin_or_name: int | str) -> None:
    """An active-low key comes up (level 1)."""
    set_input(pin_or_name, 1)


def gpio_id(obj: Any) -> int:
    """The id of a GPIO object passed where the firmware expects a pin."""
    if not isinstance(obj, GPIO):
        raise ValueError("expecting a pin")
    return obj._id


class _GpioIrq:
    """What ``GPIO.irq()`` returns: call it to run the handler, ``trigger(t)`` to change the edge."""

    def __init__(self, gpio: GPIO):
        self._gpio = gpio

    def __call__(self) -> None:
        entry = _pins().gpio_irq.get(self._gpio._id)
        if entry is not None:
            entry[0](self._gpio)

    def trigger(self, value: int | None = None) -> None:
        if value is None:
            raise ValueError("Reading this property is not supported")
        irq = _pins().gpio_irq
        entry = irq.get(self._gpio._id)
        if entry is not None:
            irq[self._gpio._id] = (entry[0], int(value))


class GPIO:
    """``GPIO(id, mode=None, pull=None, *, value=None)`` — a K210 GPIO or GPIOHS."""

    IN = IN
    OUT = OUT
    PULL_NONE = PULL_NONE
    PULL_UP = PULL_UP
    PULL_DOWN = PULL_DOWN
    IRQ_NONE = IRQ_NONE
    IRQ_RISING = IRQ_RISING
    IRQ_FALLING = IRQ_FALLING
    IRQ_BOTH = IRQ_BOTH
    WAKEUP_NOT_SUPPORT = 0

    def __init__(self, id: int, mode: int | None = None, pull: int | None = None, *, value: Any = None):
        number = int(id)
        if not 0 <= number < NUM_GPIOHS + NUM_GPIO:
            raise ValueError("invalid pin")
        self._id = number
        if mode is not None or pull is not None or value is not None:
            self.init(mode, pull, value=value)

    def init(self, mode: int | None = None, pull: int | None = None, *, value: Any = None) -> None:
        """Configure mode/pull (and the initial output level); nothing happens without a mode."""
        if mode is None:
            return
        io_mode = int(mode)
        pull_value = None if pull is None else int(pull)
        if io_mode == OUT and pull_value not in (None, PULL_NONE):
            raise ValueError("When this pin is in output mode, it is not allowed to pull up and down.")
        if pull_value not in (None, PULL_NONE):
            if pull_value not in (PULL_UP, PULL_DOWN):
                raise ValueError("this mode not support.")
            io_mode = pull_value
        _pins().gpio_mode[self._id] = io_mode
        if value is not None:
            self._write(1 if value else 0)

    def mode(self, mode: int | None = None) -> int | None:
        """Get or set the drive mode."""
        if mode is None:
            return _pins().gpio_mode.get(self._id, IN)
        self.init(mode)
        return None

    def _write(self, level: int) -> None:
        board = _state.current()
        board.pins.gpio_out[self._id] = level
        pin = _physical_pin(self._id)
        if pin is not None:
            board.pins.output_levels[pin] = level
            if board.events.gpio_output:
                board.events.fire(board.events.gpio_output, pin, level)

    def value(self, *args: Any) -> int | None:
        """``value()`` reads 0/1; ``value(v)`` writes."""
        if len(args) > 1:
            raise TypeError("function takes at most 1 positional argument")
        if args:
            self._write(1 if args[0] else 0)
            return None
        pins = _pins()
        mode = pins.gpio_mode.get(self._id, IN)
        if mode == OUT:
            return pins.gpio_out.get(self._id, 0)
        return _level_of_pin(_physical_pin(self._id), mode)

    __call__ = value

    def irq(self, handler: Callable[..., Any] | None = None, trigger: int = IRQ_BOTH, wake: Any = None,
            priority: int = 7) -> _GpioIrq | None:
        """Register ``handler(pin)`` for edges on a GPIOHS pin (ignored for GPIO0..7).

        The firmware calls the handler with the one ``GPIO`` object (``Maix_gpio_isr_handler``:
        ``mp_sched_schedule(handler, self)``), so ``def on_key(pin):`` is the device's signature.
        """
        if self._id >= NUM_GPIOHS:
            return None
        if wake is not None and not (isinstance(wake, int) and wake == 0):
            raise ValueError("This platform does not support interrupt wakeup")
        edge = int(trigger)
        if edge in (IRQ_NONE, IRQ_RISING, IRQ_FALLING, IRQ_BOTH):
            irq = _pins().gpio_irq
            if handler is None or edge == IRQ_NONE:
                irq.pop(self._id, None)
            else:
                irq[self._id] = (handler, edge)
        return _GpioIrq(self)

    def disirq(self) -> None:
        _pins().gpio_irq.pop(self._id, None)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, GPIO) and other._id == self._id

    def __hash__(self) -> int:
        return hash(("GPIO", self._id))

    def __repr__(self) -> str:
        return f"Pin({self._id})"


for _n in range(NUM_GPIOHS):
    setattr(GPIO, f"GPIOHS{_n}", _n)
for _n in range(NUM_GPIO):
    setattr(GPIO, f"GPIO{_n}", NUM_GPIOHS + _n)
del _n
