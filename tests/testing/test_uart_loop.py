"""UART lines: ``--uart-loop TX:RX``, scripted peers (the plugin's ``uart=``) and the written bytes.

Firmware facts (MaixPy-v1 ``machine_uart.c``): ``UART.UART1`` is device 0; a read that finds nothing
within ``timeout_char`` returns None (MP_EAGAIN); ``read_buf_len`` bounds the receive ring buffer;
argument errors are ``[MAIXPY]UART:invalid ...``.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from maixemu.firmware.machine import UART

LOOP = """
from machine import UART
a = UART(UART.UART1, 115200, timeout=100, read_buf_len=64)
b = UART(UART.UART2, 115200, read_buf_len=64)
print("empty", b.read())
a.write(b"hello\\nworld")
print("any", b.any())
print("line", b.readline())
print("rest", b.read(3), b.read())
"""


def test_a_loop_from_uart1_to_uart2_carries_the_bytes(maixpy):
    result = maixpy.run(code=LOOP, uart_loop=["1:2"])
    assert result.ok, result.stderr
    assert result.lines == ["empty None", "any 11", "line b'hello\\n'", "rest b'wor' b'ld'"]
    assert result.uart_sent == {"UART1": b"hello\nworld"}


def test_scripted_input_bytes_and_a_callable_peer(maixpy):
    code = """
from machine import UART
u = UART(UART.UART1, 9600)
gps = UART(UART.UART2, 9600)
u.write("AT\\r\\n")
print(u.readline())
print(gps.readline())
"""
    result = maixpy.run(code=code, uart={1: lambda data: b"OK\r\n" if data == b"AT\r\n" else None,
                                         "UART2": b"$GPGGA,1\n"})
    assert result.ok, result.stderr
    assert result.lines == ["b'OK\\r\\n'", "b'$GPGGA,1\\n'"]
    assert result.uart_sent == {"UART1": b"AT\r\n"}


def test_the_receive_buffer_is_bounded_as_the_ring_buffer(board_state):
    rx = UART(UART.UART3, read_buf_len=4)
    board_state.uart.deliver(UART.UART3, b"abcdef")
    assert rx.read() == b"abcd" and board_state.uart.overflow == 2


def test_argument_errors_are_the_firmwares():
    with pytest.raises(ValueError, match=r"^\[MAIXPY\]UART:invalid data bits$"):
        UART(UART.UART1, 115200, 9)
    with pytest.raises(ValueError, match=r"^\[MAIXPY\]UART:invalid stop bits$"):
        UART(UART.UART1, 115200, 8, None, 3)
    with pytest.raises(ValueError, match=r"^\[MAIXPY\]UART:invalid param$"):
        UART(UART.UARTHS, 115200, 7)
    with pytest.raises(TypeError):
        UART(UART.UART1, 115200, 8, None, 1, 1000)  # timeout is keyword-only
    assert repr(UART(UART.UART2, 9600, 8, 1, 2)) == "[MAIXPY]UART2:( baudrate=9600, bits=8, parity=odd, stop=2)"


def test_cli_uart_loop(tmp_path):
    script = tmp_path / "main.py"
    script.write_text("from machine import UART\nu = UART(UART.UART1, 115200)\nu.write(b'ping')\n"
                      "print(u.read())\n")
    proc = subprocess.run([sys.executable, "-m", "maixemu", "run", str(script), "--lcd", "none", "-q",
                           "--uart-loop", "UART1:UART1"], capture_output=True, text=True, timeout=300,
                          stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "b'ping'\n"
    bad = subprocess.run([sys.executable, "-m", "maixemu", "run", str(script), "--lcd", "none", "-q",
                          "--uart-loop", "4:1"], capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
    assert bad.returncode == 2 and "unknown UART '4'" in bad.stderr


def test_write_takes_micropythons_stream_length_and_offset(maixpy):
    """py/stream.c stream_write_method (MicroPython ced340d): write(buf, max_len) and
    write(buf, off, max_len); an offset past the end sends nothing; a fifth argument is refused."""
    code = """
from machine import UART
u = UART(UART.UART1, 115200)
print(u.write(b"abcdef", 3), u.write(b"abcdef", 4, 10), u.write(b"xyz", 9, 1), u.write("hi", 100))
try:
    u.write(b"a", 0, 1, 2)
except TypeError as e:
    print(e)
"""
    result = maixpy.run(code=code, uart={1: b""})
    assert result.ok, result.stderr
    assert result.lines == ["3 2 0 2", "function expected at most 4 arguments, got 5"]
    assert result.uart_sent == {"UART1": b"abcefhi"}


def test_uart_numbers_and_the_repl_uart(maixpy):
    """machine_uart.c: UARTHS is MICROPY_UARTHS_DEVICE (4); 3 (UART_DEVICE_MAX) and beyond do not
    exist, in a message formatted with %b (printed as a bool). repl_uart() is the boot's UARTHS at
    115200 (maixpy_main.c), whose writes the serial terminal shows; set_repl_uart returns None."""
    code = """
from machine import UART
print(UART.UARTHS)
for n in (3, 5, -1):
    try:
        UART(n)
    except ValueError as e:
        print(e)
repl = UART.repl_uart()
print(repl)
print(repl is UART.repl_uart())
repl.write("through the repl\\n")
u = UART(UART.UART1, 9600)
print(UART.set_repl_uart(u), UART.repl_uart() is u)
"""
    result = maixpy.run(code=code)
    assert result.ok, result.stderr
    assert result.lines == ["4", "[MAIXPY]UARTtrue:does not exist", "[MAIXPY]UARTtrue:does not exist",
                            "[MAIXPY]UARTtrue:does not exist",
                            "[MAIXPY]UART5:( baudrate=115200, bits=8, parity=None, stop=1)", "True",
                            "through the repl", "None True"]
    assert result.uart_sent == {"UARTHS": b"through the repl\n"}
