"""The IDE page's server and channel on their own (no firmware): what is served, to whom, and in what memory.

Checks the safety promises of ``maixemu run --ide``: only its own page and live data (no host
file), loopback Host headers only, a token for any other address, WebSockets from the page's own
origin only; a page that cannot keep up gets fewer frames while the channel keeps one; the terminal
and input are bounded; closing the server with pages still connected returns.
"""

from __future__ import annotations

import asyncio
import http.client
import json
import threading
import urllib.error
import urllib.request

import cv2
import numpy as np
import pytest

pytest.importorskip("aiohttp", reason="the IDE server needs the 'ide' extra (aiohttp)")

from aiohttp import ClientSession, WSMsgType, WSServerHandshakeError  # noqa: E402

from maixemu.host.ide import channel as channel_mod  # noqa: E402
from maixemu.host.ide.channel import ArrayFrame, IdeChannel  # noqa: E402
from maixemu.host.ide.recorder import unique_path  # noqa: E402
from maixemu.host.ide.server import IdeServer, ServerError  # noqa: E402


def solid(rgb, w=64, h=48) -> np.ndarray:
    frame = np.zeros((h, w, 3), np.uint8)
    frame[:] = rgb
    return frame


@pytest.fixture()
def served(tmp_path):
    channel = IdeChannel()
    requests: list[dict] = []

    def analyze(frame, request):
        requests.append(request)
        if request["kind"] == "binary":
            return np.full((frame.height, frame.width, 3), 255, np.uint8)
        if request["kind"] == "fail":
            raise ValueError("the analyser says no")
        return {"kind": request["kind"], "mean": float(frame.rgb888().mean()), "fps": float("inf")}

    channel.set_handlers(analyze=analyze)
    server = IdeServer(channel, port=0, record_dir=tmp_path)
    server.start()
    yield server, channel, requests
    server.close()


def get(server: IdeServer, path: str, headers: dict | None = None) -> tuple[int, bytes, dict]:
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    conn.request("GET", path, headers=headers or {})
    response = conn.getresponse()
    body = response.read()
    conn.close()
    return response.status, body, dict(response.getheaders())


def test_serves_its_page_offline_and_nothing_else(served):
    server, _, _ = served
    status, body, headers = get(server, "/")
    assert status == 200 and b"<title>maixemu IDE</title>" in body
    assert "default-src 'self'" in headers["Content-Security-Policy"]
    for asset in (b"ide.js", b"ide.css"):
        assert asset in body
        assert get(server, "/" + asset.decode())[0] == 200
    page = body + get(server, "/ide.js")[1] + get(server, "/ide.css")[1]
    assert b"http://" not in page and b"https://" not in page and b"//cdn" not in page  # nothing from elsewhere
    for path in ("/etc/passwd", "/../setup.cfg", "/%2e%2e/setup.cfg", "/page/index.html", "/ide.js/../../README.md",
                 "/recording/0", "/recording/../../etc/passwd", "/stream/../../x.mjpg", "/frame/etc.png"):
        status, body, _ = get(server, path)
        assert status in (403, 404), path
        assert b"root:" not in body and b"[metadata]" not in body


def test_answers_only_its_loopback_host_name(served):
    server, _, _ = served
    status, body, _ = get(server, "/", headers={"Host": "attacker.example:80"})
    assert status == 403 and b"127.0.0.1" in body
    assert get(server, "/", headers={"Host": f"localhost:{server.port}"})[0] == 200


def test_other_addresses_need_the_token(tmp_path):
    channel = IdeChannel()
    server = IdeServer(channel, host="0.0.0.0", port=0, record_dir=tmp_path)
    url = server.start()
    try:
        assert server.token and f"?token={server.token}" in url
        assert get(server, "/")[0] == 403
        assert get(server, "/?token=wrong")[0] == 403
        status, _, headers = get(server, f"/?token={server.token}")
        assert status == 200
        cookie = headers["Set-Cookie"].split(";")[0]
        assert get(server, "/ide.js", headers={"Cookie": cookie})[0] == 200  # the page's own loads
        assert get(server, "/api/histogram")[0] == 403
    finally:
        server.close()


def test_a_taken_port_is_a_clear_error(served, tmp_path):
    server, _, _ = served
    other = IdeServer(IdeChannel(), port=server.port, record_dir=tmp_path)
    with pytest.raises(ServerError, match="--ide 0"):
        other.start()


def test_frames_png_and_mjpeg_stream(served):
    server, channel, _ = served
    assert get(server, "/frame/fb.png")[0] == 404
    channel.publish_framebuffer(ArrayFrame(solid((200, 40, 10))))
    status, body, headers = get(server, "/frame/fb.png?download=1")
    assert status == 200 and headers["Content-Type"] == "image/png"
    assert "attachment" in headers["Content-Disposition"]
    picture = cv2.imdecode(np.frombuffer(body, np.uint8), cv2.IMREAD_COLOR)[..., ::-1]
    assert (picture == (200, 40, 10)).all()  # lossless

    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    conn.request("GET", "/stream/fb.mjpg")
    response = conn.getresponse()
    assert response.getheader("Content-Type").startswith("multipart/x-mixed-replace")
    assert response.readline() == b"--frame\r\n"
    assert response.readline() == b"Content-Type: image/jpeg\r\n"
    length = int(response.readline().split(b":")[1])
    response.readline()
    jpeg = response.read(length)
    conn.close()
    picture = cv2.imdecode(np.frombuffer(jpeg, np.uint8), cv2.IMREAD_COLOR)[..., ::-1].astype(int)
    assert np.abs(picture - (200, 40, 10)).max() <= 8


def test_analysis_answers_on_the_newest_frame(served):
    server, channel, requests = served
    status, body, _ = get(server, "/api/histogram?space=lab&roi=1,2,3,4")
    assert status == 404 and b"snapshot" in body
    channel.publish_framebuffer(ArrayFrame(solid((10, 20, 30))))
    channel.publish_framebuffer(ArrayFrame(solid((100, 100, 100))))
    status, body, _ = get(server, "/api/histogram?space=lab&roi=1,2,3,4")
    answer = json.loads(body)
    assert status == 200 and answer["mean"] == 100.0 and answer["fps"] is None  # inf is sent as null
    assert requests[-1] == {"kind": "histogram", "space": "lab", "roi": "1,2,3,4"}
    status, body, _ = get(server, "/api/fail")
    assert status == 400 and json.loads(body)["error"] == "the analyser says no"
    status, body, headers = get(server, "/frame/binary.png?space=gray&t=0,10")
    assert status == 200 and headers["Content-Type"] == "image/png"


def test_a_slow_page_gets_fewer_frames_and_the_channel_keeps_one(served):
    """Thousands of frames while a client reads its stream slowly: nothing queues anywhere."""
    server, channel, _ = served
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    conn.request("GET", "/stream/fb.mjpg")
    response = conn.getresponse()
    published = 3000
    for n in range(published):
        channel.publish_framebuffer(ArrayFrame(solid((n % 256, 0, 0), 320, 240)))
        if n % 500 == 0:
            response.read(1000)  # the page reads a little now and then
    conn.close()
    assert channel.frames_published["fb"] == published
    assert channel.latest("fb")[0] == published  # only the newest is kept: (sequence, frame)
    assert server.frames_encoded < published / 3  # at most 30 per second are sent to a connection
    assert len(server._encoded) <= 2 * len(channel_mod.STREAMS)


def test_terminal_and_input_are_bounded():
    channel = IdeChannel()
    for n in range(3000):
        channel.write(f"line {n:06d} " + "x" * 100 + "\n")
    offset, chunks, lost = channel.read_terminal(0)
    kept = "".join(text for _, text in chunks)
    assert len(kept) <= channel_mod.TERMINAL_CHARS
    assert lost == offset - len(kept) > 0
    assert kept.endswith("line 002999 " + "x" * 100 + "\n")
    assert channel.read_terminal(offset)[1] == []
    for n in range(channel_mod.INPUT_LINES):
        assert channel.send_input(f"{n}")
    assert not channel.send_input("one too many")
    assert channel.read_input(timeout=0) == "0\n"


def test_unique_recording_names_never_overwrite(tmp_path):
    first = unique_path(tmp_path, "rec", ".mp4")
    (tmp_path / "rec-2.mp4").write_text("the user's own file")
    second = unique_path(tmp_path, "rec", ".mp4")
    assert first.name == "rec.mp4" and second.name == "rec-3.mp4"
    assert (tmp_path / "rec-2.mp4").read_text() == "the user's own file"


async def _ws_session(server: IdeServer, origin: str | None, commands: list[dict], until) -> list[dict]:
    headers = {"Origin": origin} if origin else {}
    seen: list[dict] = []
    async with ClientSession() as session:
        async with session.ws_connect(f"http://127.0.0.1:{server.port}/ws", headers=headers) as ws:
            for command in commands:
                await ws.send_json(command)
            async with asyncio.timeout(30):
                async for message in ws:
                    if message.type != WSMsgType.TEXT:
                        break
                    seen.append(json.loads(message.data))
                    if until(seen):
                        break
    return seen


def test_websocket_terminal_controls_and_origin(served):
    server, channel, _ = served
    pressed: list[tuple[str, bool]] = []
    stops = threading.Event()
    channel.set_handlers(button=lambda name, down: pressed.append((name, down)), stop=stops.set)
    channel.write("hello from the script\n")
    channel.set_state("leds", {"LED_R": 0})
    commands = [{"type": "input", "text": "typed"}, {"type": "button", "name": "BOOT_KEY", "pressed": True},
                {"type": "stop"}]
    seen = asyncio.run(_ws_session(server, f"http://127.0.0.1:{server.port}", commands,
                                   lambda s: any(m["type"] == "leds" for m in s)
                                   and any(m["type"] == "term" for m in s)))
    assert stops.wait(30)
    assert any(m["type"] == "term" and "hello from the script" in m["text"] for m in seen)
    assert any(m["type"] == "leds" and m["leds"] == {"LED_R": 0} for m in seen)
    assert channel.read_input(timeout=10) == "typed\n"
    # The page closed while BOOT was held: the button is released for it.
    for _ in range(100):
        if pressed[-1:] == [("BOOT_KEY", False)]:
            break
        threading.Event().wait(0.05)
    assert pressed == [("BOOT_KEY", True), ("BOOT_KEY", False)]
    with pytest.raises(WSServerHandshakeError) as refused:  # another site's page may not drive the board
        asyncio.run(_ws_session(server, "http://attacker.example", [], lambda s: True))
    assert refused.value.status == 403


def test_close_with_pages_connected_returns(tmp_path):
    channel = IdeChannel()
    server = IdeServer(channel, port=0, record_dir=tmp_path)
    server.start()
    channel.publish_framebuffer(ArrayFrame(solid((1, 2, 3))))
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    conn.request("GET", "/stream/fb.mjpg")
    conn.getresponse().read(10)
    server.close()
    server.close()
    with pytest.raises((urllib.error.URLError, ConnectionError, OSError)):
        urllib.request.urlopen(f"http://127.0.0.1:{server.port}/", timeout=5)
    conn.close()
