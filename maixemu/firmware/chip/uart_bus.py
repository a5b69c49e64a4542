"""The board's UART lines: what each UART received, what it sent, and how the PC wires them.

On a board a UART's TX pin goes somewhere (another device, or — with a jumper — another UART's RX).
Here one :class:`UartBus` per board (``current().uart``) keeps, per UART device (``UART.UART1`` = 0,
``UART2`` = 1, ``UART3`` = 2, ``UARTHS`` = 4 (``MICROPY_UARTHS_DEVICE``; 3 is ``UART_DEVICE_MAX``), as the
firmware numbers them):

* ``rx``: bytes that arrived and were not read yet (bounded by the UART's ``read_buf_len``, as the
  firmware's ring buffer: what does not fit is lost);
* ``sent``: every byte the script wrote (for tests and the run result);
* ``loops``: ``--uart-loop TX:RX`` wires: bytes written on TX arrive on RX's receive buffer;
* ``peers``: scripted input (the plugin's ``uart={1: b"..." | callable}``): bytes given at power-on
  arrive at once; a callable is called with every write to its UART and may answer bytes (a device
  on the other end).

The UART's own rules (timeouts, ``None`` when nothing arrived) are in :class:`maixemu.firmware.machine.UART`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from ..state import board_part

#: Firmware names of the UART devices -> their numbers (``machine_uart.c`` / the K210 SDK).
UART_IDS = {"UART1": 0, "UART2": 1, "UART3": 2, "UARTHS": 4}
#: ``MAIX_UART_BUF``: the default receive buffer
DEFAULT_RX_BUFFER = 2048

Peer = Callable[[bytes], "bytes | None"]


def uart_id(spec: str | int) -> int:
    """A UART named as the user names it: ``UART1``/``1`` (= ``UART.UART1``, device 0), ``UARTHS``/``HS``."""
    text = str(spec).strip().upper()
    if text in UART_IDS:
        return UART_IDS[text]
    if text in ("HS", "0"):  # UART0 is how K210 pinouts call the high-speed UART
        return UART_IDS["UARTHS"]
    if text.isdigit() and 1 <= int(text) <= 3:
        return int(text) - 1
    raise ValueError(f"unknown UART {spec!r}: use UART1, UART2, UART3 or UARTHS (or 1, 2, 3, HS)")


def parse_loop(spec: str) -> tuple[int, int]:
    """``"TX:RX"`` (``"1:2"``, ``"UART1:UART1"``) -> (tx device, rx device)."""
    tx, sep, rx = str(spec).partition(":")
    if not sep:
        raise ValueError(f"--uart-loop {spec}: give TX:RX, e.g. 1:2 (UART1's TX to UART2's RX) or 1:1")
    return uart_id(tx), uart_id(rx)


@board_part("uart")
class UartBus:
    """The UART lines of one board (see the module docstring)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.rx: dict[int, bytearray] = {}
        self.rx_limit: dict[int, int] = {}
        self.sent: dict[int, bytearray] = {}
        self.loops: dict[int, list[int]] = {}
        self.peers: dict[int, Peer] = {}
        #: bytes lost because a receive buffer was full
        self.overflow = 0
        #: the UART object attached to the REPL (``g_repl_uart_obj``): the boot's UARTHS until
        #: ``UART.set_repl_uart``; made when first asked for (the firmware makes it at boot)
        self.repl: object | None = None

    def wire(self, tx: int, rx: int) -> None:
        self.loops.setdefault(tx, []).append(rx)

    def attach(self, device: int, peer: bytes | Peer) -> None:
        """Scripted input on ``device``: bytes waiting from power-on, or a callable answering writes."""
        if callable(peer):
            self.peers[device] = peer
        else:
            self.deliver(device, bytes(peer))

    def connected(self, device: int) -> bool:
        """Something is on the other end of ``device``'s lines (a loop or a scripted peer)."""
        return (device in self.loops or device in self.peers or any(device in rxs for rxs in self.loops.values())
                or bool(self.rx.get(device)))

    def open(self, device: int, buffer: int) -> None:
        """The UART was (re)initialised: its receive buffer holds ``buffer`` bytes. Bytes a scripted
        peer gave at power-on wait for it (a test's input is never lost to the order of set-up)."""
        with self._lock:
            self.rx_limit[device] = max(0, buffer)
            pending = self.rx.setdefault(device, bytearray())
            del pending[max(0, buffer):]

    def deliver(self, device: int, data: bytes) -> None:
        """Bytes arrive on ``device``'s RX (kept up to its buffer size)."""
        with self._lock:
            buf = self.rx.setdefault(device, bytearray())
            room = self.rx_limit.get(device, DEFAULT_RX_BUFFER) - len(buf)
            buf.extend(data[:max(0, room)])
            self.overflow += max(0, len(data) - max(0, room))

    def write(self, device: int, data: bytes) -> None:
        """``device``'s TX sends ``data``: recorded, looped to the wired RX lines, shown to its peer."""
        with self._lock:
            self.sent.setdefault(device, bytearray()).extend(data)
        for rx in self.loops.get(device, ()):
            self.deliver(rx, data)
        peer = self.peers.get(device)
        if peer is not None:
            answer = peer(bytes(data))
            if answer:
                self.deliver(device, bytes(answer))

    def available(self, device: int) -> int:
        return len(self.rx.get(device, b""))

    def take(self, device: int, size: int | None = None, *, until: bytes | None = None) -> bytes:
        """Read up to ``size`` bytes (all without a size), or up to and including ``until``."""
        with self._lock:
            buf = self.rx.setdefault(device, bytearray())
            end = len(buf) if size is None else min(size, len(buf))
            if until is not None:
                found = buf.find(until, 0, end)
                if found >= 0:
                    end = found + len(until)
            data = bytes(buf[:end])
            del buf[:end]
            return data


__all__ = ["DEFAULT_RX_BUFFER", "UART_IDS", "UartBus", "parse_loop", "uart_id"]
