"""MaixPy's ``network``: the WiFi/Ethernet co-processors (standard_lib/network/), served by the PC.

On a board, ``network.ESP32_SPI(...)`` (Maixduino, an ESP32 running NINA firmware over SPI),
``network.ESP8285(uart)`` (Maix Bit/Go modules, AT commands over UART) and
``network.WIZNET5K(spi, cs)`` (a W5500 Ethernet chip) register a NIC that ``usocket`` sockets then
go through. Here the emulated module is attached and its network is the PC's: the constructor
succeeds, ``connect(ssid, key)`` joins (the PC is already online: any SSID and key are accepted,
with one notice), ``ifconfig()`` gives the PC's address in the firmware's tuple shape, ``scan()``
lists one access point standing for the PC's network, ``ping(host)`` times a TCP connection to
port 80 of the host. Results keep each driver's shape (mod_esp32.c, modesp8285.c, modnwwiznet5k.c).
Nothing else on the board is touched: the pins and the SPI/UART handed in are only checked.
"""

from __future__ import annotations

import socket as _host
import time
from dataclasses import dataclass, field
from typing import Any

from .mp import notices
from .state import board_part, current

#: the access point the emulated modules see: the PC's own network
EMULATED_SSID = "maixemu-host"
EMULATED_RSSI = -40
#: the NINA firmware version MaixPy's ESP32 demos print
ESP32_FIRMWARE_VERSION = "1.4.0"
ESP32_ADC_CHANNELS = 6


@board_part("network")
@dataclass
class NetworkState:
    """The NICs a script registered (the last one serves new sockets) and the sockets it opened
    (closed when the board powers off)."""

    nics: list[Any] = field(default_factory=list)
    sockets: list[Any] = field(default_factory=list)

    def close(self) -> None:
        for sock in self.sockets:
            try:
                sock.close()
            except OSError:
                pass
        self.sockets.clear()
        self.nics.clear()


def _host_ip() -> str:
    """The PC's address on its default route (no packet is sent); 127.0.0.1 when offline."""
    probe = _host.socket(_host.AF_INET, _host.SOCK_DGRAM)
    try:
        probe.connect(("10.255.255.255", 1))
        return probe.getsockname()[0]
    except OSError:
        return "127.0.0.1"
    finally:
        probe.close()


def _gateway(ip: str) -> str:
    return ".".join(ip.split(".")[:3] + ["1"]) if not ip.startswith("127.") else ip


def _ping_ms(host: Any) -> int:
    """Milliseconds to open a TCP connection to ``host``:80 (the NIC's ping, without raw sockets)."""
    try:
        ip = _host.gethostbyname(str(host))
    except OSError:
        raise OSError("get host name fail") from None
    started = time.monotonic()
    try:
        with _host.create_connection((ip, 80), timeout=1.0):
            pass
    except OSError:
        raise OSError("get response fail") from None
    return max(1, round((time.monotonic() - started) * 1000))


class _Nic:
    """A registered NIC: the one new sockets go through."""

    def __init__(self) -> None:
        current().part(NetworkState).nics.append(self)


class _WifiNic(_Nic):
    """Joining an access point (the ESP32's and the ESP8285's ``connect``/``disconnect``)."""

    OPEN, WPA_PSK, WPA2_PSK, WPA_WPA2_PSK = 0, 2, 3, 4

    def __init__(self) -> None:
        super().__init__()
        self._ssid: str | None = None

    def connect(self, ssid: Any, key: Any = None, *args: Any, **kwargs: Any) -> None:
        notices.notice_once("network.connect", f"network: joining {ssid!r} uses the PC's own network "
                            "(any SSID and key are accepted)")
        self._ssid = str(ssid)

    def disconnect(self) -> None:
        self._ssid = None

    def isconnected(self) -> bool:
        return self._ssid is not None


class ESP32_SPI(_WifiNic):  # noqa: N801 - the firmware's name
    """``ESP32_SPI(cs=, rst=, rdy=, spi=1)`` or with software SPI ``mosi=, miso=, sclk=`` (mod_esp32.c)."""

    def __init__(self, cs: int | None = None, rst: int | None = None, rdy: int | None = None,
                 mosi: int | None = None, miso: int | None = None, sclk: int | None = None,
                 spi: int | None = None, **kwargs: Any) -> None:
        if cs is None or rst is None or rdy is None:
            raise ValueError("cs, rst and rdy pins are required")  # MP_ARG_REQUIRED in the firmware
        super().__init__()

    def version(self) -> str:
        return ESP32_FIRMWARE_VERSION

    def adc(self, channels: Any = None) -> tuple[int, ...]:
        """The ESP32's ADC pins A0-A5: nothing is wired to them, every reading is 0."""
        wanted = range(ESP32_ADC_CHANNELS) if channels is None else list(channels)
        for channel in wanted:
            if not 0 <= int(channel) < ESP32_ADC_CHANNELS:
                raise OSError(22, "EINVAL")
        return tuple(0 for _ in wanted)

    def scan(self) -> list[tuple[str, int, int]]:
        """``[(ssid, encryption, rssi)]``."""
        return [(EMULATED_SSID, self.WPA2_PSK, EMULATED_RSSI)]

    def ifconfig(self) -> tuple[str, str, str] | None:
        """``(ip, netmask, gateway)`` once joined."""
        if not self.isconnected():
            return ("0.0.0.0", "0.0.0.0", "0.0.0.0")
        ip = _host_ip()
        return (ip, "255.255.255.0", _gateway(ip))

    def ping(self, host: Any, host_type: int = -1) -> int:
        return _ping_ms(host)


class ESP8285(_WifiNic):
    """``ESP8285(uart)``: AT firmware over a ``machine.UART`` (modesp8285.c)."""

    def __init__(self, uart: Any, *args: Any, **kwargs: Any) -> None:
        from .machine import UART

        if not isinstance(uart, UART):
            raise ValueError("invalid uart stream")
        super().__init__()
        self._ap: tuple[str, str] | None = None

    def scan(self) -> list[str]:
        """The AT+CWLAP lines' contents: ``'ecn,"ssid",rssi,"mac",channel'``."""
        return [f'{self.WPA2_PSK},"{EMULATED_SSID}",{EMULATED_RSSI},"02:00:00:00:00:01",1']

    def ifconfig(self) -> tuple[Any, ...] | None:
        """``(ip, netmask, gateway, '0', '0', mac, ssid)``."""
        if not self.isconnected():
            return None
        ip = _host_ip()
        return (ip, "255.255.255.0", _gateway(ip), "0", "0", "02:00:00:00:00:02", self._ssid)

    def enable_ap(self, ssid: Any, key: Any = "", chl: int = 5, ecn: int = 3, **kwargs: Any) -> None:
        notices.not_emulated("network.ESP8285.enable_ap", "no station can join the emulated access point")
        self._ap = (str(ssid), str(key))

    def disable_ap(self) -> None:
        self._ap = None


class WIZNET5K(_Nic):
    """``WIZNET5K(spi, cs)``: a W5500 on the PC's wired network (modnwwiznet5k.c)."""

    def __init__(self, spi: Any = None, cs: Any = None, *args: Any, **kwargs: Any) -> None:
        super().__init__()
        self._static: tuple[str, str, str, str] | None = None

    def isconnected(self) -> bool:
        """The cable is plugged in."""
        return True

    def dhclient(self) -> bool:
        """Ask DHCP for an address: the PC's."""
        self._static = None
        return True

    def ifconfig(self, config: Any = None) -> tuple[str, str, str, str] | None:
        """``(ip, netmask, gateway, dns)``; with a 4-tuple, a static address is set."""
        if config is not None:
            self._static = tuple(str(part) for part in config)  # type: ignore[assignment]
            return None
        if self._static is not None:
            return self._static
        ip = _host_ip()
        return (ip, "255.255.255.0", _gateway(ip), _gateway(ip))

    def regs(self) -> None:
        notices.not_emulated("network.WIZNET5K.regs", "there are no W5500 registers to dump")


class WLAN(_Nic):
    """CanMV's ``network.WLAN(STA_IF | AP_IF)`` (= ``ESP32C3``, network_esp32c3.c): MicroPython's
    WLAN API over an ESP32-C3. Station mode joins the PC's network; ``active()`` must be on to scan."""

    def __init__(self, interface: int = 0) -> None:
        super().__init__()
        self.interface = 0 if int(interface) == 0 else 1
        self._active = False
        self._ssid: str | None = None
        self._config: dict[str, Any] = {"ssid": EMULATED_SSID if self.interface else "", "mac": b"\x02\x00\x00\x00\x00\x03",
                                         "txpower": 72, "channel": 1, "password": ""}

    def active(self, flag: Any = None) -> bool | None:
        if flag is None:
            return self._active
        self._active = bool(flag)
        return None

    def scan(self, **kwargs: Any) -> list[tuple[bytes, bytes, int, int, int, int]]:
        """``[(ssid, bssid, channel, rssi, encryption, 1)]``, as bytes like the firmware."""
        if not self._active:
            raise OSError("STA must be active")
        return [(EMULATED_SSID.encode(), b"02:00:00:00:00:01", 1, EMULATED_RSSI, 3, 1)]

    def connect(self, ssid: Any = None, key: Any = None, *, auth: int = 0, bssid: Any = None,
                channel: int = -1) -> None:
        if ssid is None:
            raise TypeError("'ssid' argument required")
        notices.notice_once("network.connect", f"network: joining {ssid!r} uses the PC's own network "
                            "(any SSID and key are accepted)")
        self._active = True
        self._ssid = str(ssid)

    def disconnect(self) -> None:
        self._ssid = None

    def isconnected(self) -> bool:
        return self._ssid is not None

    def ifconfig(self, config: Any = None) -> tuple[str, str, str, str] | None:
        """``(ip, netmask, gateway, dns)`` (mod_network_nic_ifconfig); a 4-tuple sets them."""
        if config is not None:
            self._config["ifconfig"] = tuple(str(part) for part in config)
            return None
        if "ifconfig" in self._config:
            return self._config["ifconfig"]
        if not self.isconnected():
            return ("0.0.0.0", "0.0.0.0", "0.0.0.0", "0.0.0.0")
        ip = _host_ip()
        return (ip, "255.255.255.0", _gateway(ip), _gateway(ip))

    def config(self, *args: Any, **kwargs: Any) -> Any:
        """``config('ssid' | 'mac' | 'txpower')`` queries; ``config(ssid=, password=, channel=, txpower=)`` sets."""
        if args and kwargs:
            raise TypeError("can't specify pos and kw args")
        if args:
            if len(args) != 1:
                raise TypeError("must query one param")
            if args[0] not in ("ssid", "mac", "txpower"):
                raise ValueError("unknown config param")
            return self._config[args[0]]
        for name, value in kwargs.items():
            if name not in ("channel", "ssid", "password", "txpower"):
                raise ValueError("unknown config param")
            if name == "txpower" and not 8 <= int(value) <= 72:
                raise ValueError("txpower must between [8,72]")
            self._config[name] = value
        return None

    def deinit(self) -> None:
        self._active = False
        self._ssid = None

    def send_ethernet(self, buf: Any) -> None:
        raise NotImplementedError("network.WLAN.send_ethernet: raw Ethernet frames are not emulated")


#: CanMV: the ESP32-C3 class under both names, and its interfaces (esp32_if.h)
ESP32C3 = WLAN
STA_IF, AP_IF = 0, 1


def route() -> list[Any]:
    """The registered NICs, oldest first."""
    return list(current().part(NetworkState).nics)


__all__ = ["AP_IF", "ESP32C3", "ESP32_SPI", "ESP8285", "STA_IF", "WIZNET5K", "WLAN", "route"]
