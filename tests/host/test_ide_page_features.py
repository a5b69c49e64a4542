"""Issue 28: the IDE page's server side of the preview toggle, the threshold editor's picture file, and
knowing when a page is gone (its WebSocket's heartbeat; a picture stream is never a page of its own)."""

from __future__ import annotations

import asyncio
import http.client
import json
import threading
import time

import cv2
import numpy as np
import pytest

pytest.importorskip("aiohttp", reason="the IDE server needs the 'ide' extra (aiohttp)")

from aiohttp import ClientSession, WSMsgType  # noqa: E402

from maixemu.host.ide import server as server_mod  # noqa: E402
from maixemu.host.ide.channel import ArrayFrame, IdeChannel  # noqa: E402
from maixemu.host.ide.server import IdeServer  # noqa: E402

#: A hang guard for what the tests wait for (never a time the tests assert).
WAIT_S = 60.0


def wait_until(condition, what: str):
    deadline = time.monotonic() + WAIT_S
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


class DecodedPicture(ArrayFrame):
    def __init__(self, rgb: np.ndarray, name: str):
        super().__init__(rgb, {"format": "RGB565", "name": name})


@pytest.fixture()
def served(tmp_path):
    channel = IdeChannel()
    seen: list[tuple] = []

    def analyze(frame, request):
        seen.append((frame, request))
        return {"kind": request["kind"], "mean": float(frame.rgb888().mean())}

    def picture(data: bytes, name: str):
        rgb = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
        if rgb is None:
            raise ValueError(f"{name} is not a picture")
        return DecodedPicture(rgb[..., ::-1].copy(), name)

    channel.set_handlers(analyze=analyze, picture=picture)
    server = IdeServer(channel, port=0, record_dir=tmp_path)
    server.start()
    yield server, channel, seen
    server.close()


def request(server: IdeServer, method: str, path: str, body: bytes | None = None,
            headers: dict | None = None) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=WAIT_S)
    conn.request(method, path, body=body, headers=headers or {})
    response = conn.getresponse()
    data = response.read()
    conn.close()
    return response.status, data


def png(rgb) -> bytes:
    frame = np.zeros((30, 40, 3), np.uint8)
    frame[:] = rgb
    return cv2.imencode(".png", frame[..., ::-1])[1].tobytes()


# ------------------------------------------------------------------------------------ preview toggle
async def _page(server: IdeServer, commands: list[dict], until, *, autoping: bool = True, linger: bool = False):
    """One page's WebSocket: send ``commands``, read until ``until(messages)``; ``linger``: then
    neither read nor answer pings any more (a frozen browser) until the server drops it."""
    seen: list[dict] = []
    async with ClientSession() as session:
        async with session.ws_connect(f"http://127.0.0.1:{server.port}/ws", autoping=autoping,
                                      headers={"Origin": f"http://127.0.0.1:{server.port}"}) as ws:
            for command in commands:
                await ws.send_json(command)
            async with asyncio.timeout(WAIT_S):
                async for message in ws:
                    if message.type != WSMsgType.TEXT:
                        break
                    seen.append(json.loads(message.data))
                    if until(seen):
                        break
                if linger:
                    while not ws.closed and server.channel.viewers:
                        await asyncio.sleep(0.05)
    return seen


def test_the_preview_toggle_reaches_every_page_and_the_channel(served):
    server, channel, _ = served
    assert channel.preview and channel.frames_wanted()
    seen = asyncio.run(_page(server, [{"type": "preview", "on": False}],
                             lambda s: any(m["type"] == "view" and m["view"] == {"preview": False} for m in s)))
    assert any(m["type"] == "view" for m in seen)
    assert not channel.preview and not channel.frames_wanted()
    channel.set_state("recording", {"active": True})  # a recording still gets its frames
    assert channel.frames_wanted()
    channel.set_state("recording", {"active": False})
    asyncio.run(_page(server, [{"type": "preview", "on": True}], lambda s: channel.preview))
    assert channel.frames_wanted()


# ------------------------------------------------------------------------------------ picture files
def test_the_threshold_editor_works_on_an_uploaded_picture_file(served):
    server, channel, seen = served
    status, body = request(server, "GET", "/api/blobs?source=file&space=gray&t=0,255")
    assert status == 404 and b"no picture file" in body
    channel.publish_framebuffer(ArrayFrame(np.zeros((20, 20, 3), np.uint8)))
    status, body = request(server, "POST", "/api/picture?name=red.png", png((200, 10, 10)),
                           {"Origin": f"http://127.0.0.1:{server.port}", "Content-Type": "image/png"})
    assert status == 200, body
    info = json.loads(body)
    assert (info["width"], info["height"], info["name"]) == (40, 30, "red.png")
    status, body = request(server, "GET", "/api/blobs?source=file&space=gray&t=0,255")
    assert status == 200
    frame, asked = seen[-1]
    assert frame is server.picture and asked["source"] == "file"  # the picture, not the frame buffer
    assert json.loads(body)["mean"] == pytest.approx((200 + 10 + 10) / 3)
    status, body = request(server, "GET", "/frame/picture.png")
    shown = cv2.imdecode(np.frombuffer(body, np.uint8), cv2.IMREAD_COLOR)[..., ::-1]
    assert status == 200 and (shown == (200, 10, 10)).all()
    request(server, "GET", "/api/histogram?space=lab")
    assert seen[-1][0] is not server.picture  # the histogram stays the frame buffer's
    assert request(server, "GET", "/api/blobs?source=disk")[0] == 400


def test_a_picture_upload_is_bounded_checked_and_only_from_the_page_itself(served, monkeypatch):
    server, _, _ = served
    status, body = request(server, "POST", "/api/picture?name=notes.txt", b"hello")
    assert status == 400 and b"notes.txt is not a picture" in body
    status, _ = request(server, "POST", "/api/picture", png((1, 2, 3)), {"Origin": "http://attacker.example"})
    assert status == 403 and server.picture is None  # another site's page may not post to this one
    monkeypatch.setattr(server_mod, "MAX_PICTURE_BYTES", 1000)
    status, body = request(server, "POST", "/api/picture", b"\x89PNG" + b"\0" * 5000)
    assert status == 413 and b"larger than" in body and server.picture is None


# ------------------------------------------------------------------------------------ pages that are gone
def test_a_picture_stream_is_no_page_and_ends_when_its_client_is_gone(served):
    server, channel, _ = served
    channel.publish_framebuffer(ArrayFrame(np.zeros((8, 8, 3), np.uint8)))
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=WAIT_S)
    conn.request("GET", "/stream/fb.mjpg")
    response = conn.getresponse()
    response.read(100)
    assert server.streams_open == 1 and channel.viewers == 0  # only a WebSocket is a page
    conn.close()  # the browser went away; no new picture will ever come (the script ended)
    wait_until(lambda: server.streams_open == 0, "the stream to notice its client is gone")


def test_a_page_that_stops_answering_pings_is_dropped(served, monkeypatch):
    """A frozen or vanished browser sends no close handshake: the heartbeat's missing pong ends it."""
    server, channel, _ = served
    monkeypatch.setattr(server_mod, "HEARTBEAT_S", 0.5)
    joined = threading.Event()

    def watch() -> None:
        wait_until(lambda: channel.viewers == 1, "the page to connect")
        joined.set()

    watcher = threading.Thread(target=watch)
    watcher.start()
    asyncio.run(_page(server, [], lambda s: True, autoping=False, linger=True))
    watcher.join()
    assert joined.is_set()
    wait_until(lambda: channel.viewers == 0, "the silent page to be dropped")


def test_a_page_that_answers_pings_stays(served):
    """At the real heartbeat (a pong within half of :data:`HEARTBEAT_S`), a page that answers stays one page."""
    server, channel, _ = served
    pings = {"n": 0}

    async def page() -> None:
        async with ClientSession() as session:
            async with session.ws_connect(f"http://127.0.0.1:{server.port}/ws", autoping=False,
                                          headers={"Origin": f"http://127.0.0.1:{server.port}"}) as ws:
                async with asyncio.timeout(WAIT_S):
                    while pings["n"] < 2:  # two heartbeats answered: still one page
                        message = await ws.receive()
                        if message.type == WSMsgType.PING:
                            await ws.pong(message.data)
                            pings["n"] += 1
                        elif message.type != WSMsgType.TEXT:
                            raise AssertionError(f"the page was dropped: {message.type}")
                    assert channel.viewers == 1

    asyncio.run(page())
