"""``network`` and ``usocket`` as MaixPy's drivers shape them, over the PC's network (a local server
stands in for the internet: no test needs a connection out)."""

from __future__ import annotations

import socket as host_socket
import threading

import pytest

from maixemu.firmware import machine, network, usocket


@pytest.fixture
def echo_server():
    """A TCP server on 127.0.0.1 that sends a greeting line, then echoes what it gets once."""
    server = host_socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)

    def serve() -> None:
        conn, _ = server.accept()
        with conn:
            conn.sendall(b"hello\nrest")
            data = conn.recv(100)
            conn.sendall(data.upper())

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield server.getsockname()
    thread.join(timeout=5)
    server.close()


def test_a_socket_without_a_nic_is_the_firmwares_error():
    sock = usocket.socket()
    with pytest.raises(OSError, match="no available NIC"):
        sock.connect(("127.0.0.1", 80))


def test_esp32_spi_joins_and_reports_in_the_drivers_shapes():
    nic = network.ESP32_SPI(cs=10, rst=11, rdy=12, spi=1)
    assert nic.version() == "1.4.0"
    assert nic.isconnected() is False
    nic.connect("Sipeed_2.4G", "secret")
    assert nic.isconnected() is True
    ip, mask, gateway = nic.ifconfig()
    assert ip.count(".") == 3 and mask == "255.255.255.0"
    (ssid, encryption, rssi), = nic.scan()
    assert isinstance(ssid, str) and encryption == nic.WPA2_PSK and rssi < 0
    assert nic.adc() == (0,) * 6 and nic.adc((0, 2)) == (0, 0)
    with pytest.raises(OSError):
        nic.adc((6,))
    assert network.route() == [nic]
    nic.disconnect()
    assert nic.isconnected() is False


def test_esp32_spi_needs_its_pins():
    with pytest.raises(ValueError):
        network.ESP32_SPI(spi=1)


def test_esp8285_needs_a_uart_and_gives_the_at_shapes():
    with pytest.raises(ValueError, match="invalid uart stream"):
        network.ESP8285(object())
    nic = network.ESP8285(machine.UART(machine.UART.UART2, 115200))
    assert nic.ifconfig() is None
    nic.connect("ap", "key")
    config = nic.ifconfig()
    assert len(config) == 7 and config[3:5] == ("0", "0") and config[6] == "ap"
    assert nic.scan()[0].startswith('3,"')


def test_wiznet5k_is_wired_and_takes_a_static_address():
    nic = network.WIZNET5K(spi=None, cs=20)
    assert nic.isconnected() is True and nic.dhclient() is True
    nic.ifconfig(("192.168.0.50", "255.255.255.0", "192.168.0.1", "8.8.8.8"))
    assert nic.ifconfig() == ("192.168.0.50", "255.255.255.0", "192.168.0.1", "8.8.8.8")


def test_canmv_wlan_needs_active_to_scan():
    wlan = network.WLAN(network.STA_IF)
    assert network.ESP32C3 is network.WLAN
    with pytest.raises(OSError, match="STA must be active"):
        wlan.scan()
    wlan.active(True)
    assert wlan.scan()[0][3] < 0
    wlan.connect("ap", "key")
    assert wlan.isconnected() and len(wlan.ifconfig()) == 4
    with pytest.raises(ValueError, match="unknown config param"):
        wlan.config("nope")
    with pytest.raises(ValueError, match="txpower"):
        wlan.config(txpower=100)


def test_socket_sends_str_and_reads_as_the_esp32_driver(echo_server):
    network.ESP32_SPI(cs=10, rst=11, rdy=12, spi=1).connect("ap", "key")
    family, kind, proto, name, address = usocket.getaddrinfo("127.0.0.1", echo_server[1])[0]
    assert (family, kind, proto, name) == (usocket.AF_INET, usocket.SOCK_STREAM, 0, "")
    sock = usocket.socket()
    sock.settimeout(2)
    sock.connect(address)
    assert sock.readline() == b"hello\n"
    assert sock.send("ping") == 4  # a str is sent as its bytes
    # recv(n) collects until n bytes or the timeout: "rest" then "PING"
    assert sock.recv(8) == b"restPING"
    sock.settimeout(0.2)
    assert sock.recv(10) == b""  # nothing more: the timeout returns what arrived
    sock.close()


def test_socket_has_the_firmwares_names_only():
    assert not hasattr(usocket, "timeout") and not hasattr(usocket, "SOL_SOCKET")
    assert not hasattr(usocket.socket, "bind") and not hasattr(usocket.socket, "accept")
    with pytest.raises(ValueError, match="timeout parameter error"):
        usocket.socket().settimeout(-1)


def test_ping_of_an_unknown_host_is_the_drivers_error():
    nic = network.ESP32_SPI(cs=10, rst=11, rdy=12)
    with pytest.raises(OSError, match="get host name fail"):
        nic.ping("no-such-host.invalid")
