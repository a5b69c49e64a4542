"""MaixPy's ``usocket`` (= ``socket``): standard_lib/socket/modusocket.c over the PC's network.

On the board a socket goes through the network module's NIC (an ESP32 over SPI, an ESP8285 over
UART, a W5500 over SPI); here that NIC is the PC's own network, reached through CPython's socket.
The firmware's API is kept, not CPython's:

* the module has only ``socket``, ``getaddrinfo`` and the ``AF_*``/``SOCK_*`` numbers of
  modnetwork.h (no ``timeout``, ``error``, ``SOL_SOCKET``: a script naming them fails as on the device);
* a socket has MicroPython's methods (``send``/``sendto``/``write`` take a ``str`` too, ``read``,
  ``readline``, ``readinto``); ``bind``/``listen``/``accept``/``setsockopt`` are commented out of the
  firmware's table and are missing here too;
* ``connect`` with no NIC set up (no ``network.ESP32_SPI(...)`` first) is ``OSError: no available NIC``;
* the default timeout is 10 s; ``recv(n)`` collects up to ``n`` bytes until the timeout and returns
  what it has (possibly ``b''``), as the ESP32 driver does, instead of raising a timeout;
* ``getaddrinfo(host, port)`` returns one IPv4 stream entry: ``[(2, 1, 0, '', (ip, port))]``.
"""

from __future__ import annotations

import errno
import socket as _host
import time
from typing import Any

from .mp.mp_args import stream_write_span as _stream_write_span
from .mp.mp_builtins import buffer_bytes
from .network import NetworkState
from .state import current

#: modnetwork.h
AF_INET, AF_INET6 = 2, 10
SOCK_STREAM, SOCK_DGRAM, SOCK_RAW = 1, 2, 3
DEFAULT_TIMEOUT_S = 10.0

_HOST_TYPES = {SOCK_STREAM: _host.SOCK_STREAM, SOCK_DGRAM: _host.SOCK_DGRAM, SOCK_RAW: _host.SOCK_RAW}


def _require_nic() -> None:
    if not current().part(NetworkState).nics:
        raise OSError("no available NIC")


def _address(addr: Any) -> tuple[str, int]:
    try:
        host, port = addr
        return str(host), int(port)
    except (TypeError, ValueError):
        raise TypeError("address must be a (host, port) tuple") from None


def getaddrinfo(host: str, port: int, *_options: Any) -> list[tuple[int, int, int, str, tuple[str, int]]]:
    """``[(AF_INET, SOCK_STREAM, 0, '', (ip, port))]``; a name that does not resolve is the NIC's OSError."""
    _require_nic()
    try:
        ip = _host.gethostbyname(str(host))
    except OSError:
        raise OSError("get host name fail") from None
    return [(AF_INET, SOCK_STREAM, 0, "", (ip, int(port)))]


class socket:  # noqa: N801 - the firmware's name
    """``socket(af=AF_INET, type=SOCK_STREAM, proto=0)`` of the active NIC (see the module docstring)."""

    def __init__(self, af: int = AF_INET, type: int = SOCK_STREAM, proto: int = 0, fileno: int = 0) -> None:  # noqa: A002
        if int(type) not in _HOST_TYPES:
            raise OSError(errno.EINVAL, "invalid socket type")
        self._type = int(type)
        self._timeout: float = DEFAULT_TIMEOUT_S
        self._sock: _host.socket | None = None
        self._closed = False
        self._pending = b""
        current().part(NetworkState).sockets.append(self)

    # -- the host socket behind it ----------------------------------------------------------------
    def _host_socket(self) -> _host.socket:
        if self._closed:
            raise OSError(errno.EBADF, "socket closed")
        if self._sock is None:
            _require_nic()
            self._sock = _host.socket(_host.AF_INET, _HOST_TYPES[self._type])
        return self._sock

    def _connected(self) -> _host.socket:
        if self._sock is None or self._closed:
            raise OSError(errno.ENOTCONN, "ENOTCONN")
        return self._sock

    # -- the firmware's methods -------------------------------------------------------------------
    def settimeout(self, value: float | None) -> None:
        if value is not None and float(value) < 0:
            raise ValueError("[MaixPy] timeout parameter error")
        self._timeout = DEFAULT_TIMEOUT_S if value is None else float(value)

    def setblocking(self, flag: bool) -> None:
        self._timeout = DEFAULT_TIMEOUT_S if flag else 0.0

    def connect(self, address: Any) -> None:
        sock = self._host_socket()
        sock.settimeout(self._timeout or None)
        try:
            sock.connect(_address(address))
        except _host.timeout:
            raise OSError(errno.ETIMEDOUT, "ETIMEDOUT") from None

    def send(self, data: Any) -> int:
        sock = self._connected()
        payload = buffer_bytes(data)
        sock.settimeout(self._timeout or None)
        try:
            sock.sendall(payload)
        except _host.timeout:
            raise OSError(errno.ETIMEDOUT, "ETIMEDOUT") from None
        except (BrokenPipeError, ConnectionResetError):
            raise OSError(errno.EPIPE, "EPIPE") from None
        return len(payload)

    def write(self, data: Any, *span: Any) -> int:
        """``write(buf[, max_len])`` / ``write(buf, off, max_len)``: the stream write (``send`` has no length)."""
        return self.send(_stream_write_span(buffer_bytes(data), span))

    def sendto(self, data: Any, address: Any) -> int:
        sock = self._host_socket()
        return sock.sendto(buffer_bytes(data), _address(address))

    def _collect(self, size: int, *, until_newline: bool = False) -> bytes:
        """Up to ``size`` bytes, waiting until the timeout as the ESP32 driver does."""
        sock = self._connected()
        data, self._pending = self._pending, b""
        deadline = time.monotonic() + self._timeout
        while len(data) < size and not (until_newline and b"\n" in data):
            remaining = deadline - time.monotonic()
            if self._timeout and remaining <= 0:
                break
            sock.settimeout(max(remaining, 0.001) if self._timeout else 0.0)
            try:
                chunk = sock.recv(size - len(data))
            except (_host.timeout, BlockingIOError):
                break
            except ConnectionResetError:
                break
            if not chunk:
                break  # the peer closed: what arrived is the answer
            data += chunk
            if not self._timeout:
                break
        if until_newline and b"\n" in data:
            line, _, rest = data.partition(b"\n")
            data, self._pending = line + b"\n", rest + self._pending
        return data

    def recv(self, bufsize: int) -> bytes:
        return self._collect(int(bufsize))

    def read(self, size: int | None = None) -> bytes:
        return self._collect(1 << 20 if size is None else int(size))

    def readinto(self, buf: Any, nbytes: int | None = None) -> int:
        data = self._collect(len(buf) if nbytes is None else min(int(nbytes), len(buf)))
        buf[: len(data)] = data
        return len(data)

    def readline(self) -> bytes:
        return self._collect(1 << 16, until_newline=True)

    def recvfrom(self, bufsize: int) -> tuple[bytes, tuple[str, int]]:
        sock = self._host_socket()
        sock.settimeout(self._timeout or None)
        try:
            data, address = sock.recvfrom(int(bufsize))
        except _host.timeout:
            raise OSError(errno.ETIMEDOUT, "ETIMEDOUT") from None
        return data, (address[0], address[1])

    def close(self) -> None:
        self._closed = True
        if self._sock is not None:
            self._sock.close()
            self._sock = None

    def __enter__(self) -> socket:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<socket state={'closed' if self._closed else 'open'} timeout={self._timeout}>"


__all__ = ["AF_INET", "AF_INET6", "SOCK_DGRAM", "SOCK_RAW", "SOCK_STREAM", "getaddrinfo", "socket"]
