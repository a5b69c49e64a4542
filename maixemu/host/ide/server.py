"""The IDE page's web server: aiohttp on its own thread and event loop, next to the run.

Why aiohttp: one well-kept library that is at once an HTTP server, a WebSocket server and a
streaming-response server (MJPEG), that runs embedded in a background thread through its
``AppRunner``/``TCPSite`` API without taking over signals or the main thread, and whose streaming
writes wait for the client (back-pressure), so a slow page gets fewer frames instead of a queue.

What it serves, and nothing else (no static folder, so no host file can be reached):

* ``/`` and the page's own ``ide.js``/``ide.css``, read from the package once at start-up;
* ``/stream/fb.mjpg``, ``/stream/lcd.mjpg``: ``multipart/x-mixed-replace`` JPEG streams, which an
  ``<img>`` shows natively; each connection sends the newest frame when it is free again and
  skips the ones in between (at most :data:`MAX_STREAM_FPS` per second);
* ``/frame/fb.png``, ``/frame/lcd.png``: the current picture, losslessly (Save as PNG);
* ``/api/...``: histogram and statistics, pixel readout, threshold preview and blobs, answered by the
  run side's analyser (maixemu's own ``image`` methods) on the newest frame-buffer copy, or with
  ``source=file`` on the picture file the page gave the threshold editor (``POST /api/picture``:
  at most :data:`MAX_PICTURE_BYTES`, decoded by the run side as the camera would deliver it,
  ``/frame/picture.png`` shows it as the thresholds see it);
* ``/ws``: one WebSocket per page for terminal output, status, numbers, LEDs (server → page) and
  typed input, Stop, Run, buttons, recording, the preview toggle (page → server). It is also how a
  page is known to be open: a ping every :data:`HEARTBEAT_S` seconds that gets no pong within half
  of that ends it, so a page whose browser was killed or froze is noticed as gone;
* ``/recording/N``: the N-th video this server recorded itself.

Safety: it binds to 127.0.0.1 unless told otherwise and then answers only requests whose ``Host``
is that loopback address (a DNS-rebinding guard); any other address needs a random token, given in
the printed URL, on every request; WebSockets must come from the page's own origin. Closing the
page never ends or blocks the run: the run only ever touches the :class:`IdeChannel`.
"""

from __future__ import annotations

import asyncio
import hmac
import ipaddress
import json
import secrets
import threading
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any

import cv2
import numpy as np
from aiohttp import WSMsgType, web

from .channel import STREAMS, IdeChannel
from .recorder import FrameRecorder

DEFAULT_PORT = 8210
#: Frames per second one stream connection sends at most (the page cannot show more usefully).
MAX_STREAM_FPS = 30
#: JPEG quality of the streams (the PNG endpoints are lossless).
JPEG_QUALITY = 90
#: Numbers (fps, KPU estimate) are pushed to a page at most this often per second.
STATS_PER_SECOND = 5
#: Rounds of updates (terminal text, new-frame notes, state) sent to one page per second at most.
MESSAGES_PER_SECOND = 20
#: Analysis requests computed at the same time at most (more wait; the page sends one at a time).
ANALYSIS_WORKERS = 2
#: Seconds between the WebSocket pings that tell an open page from a vanished one (a pong must come
#: within half of it). Short, because a session that waits for Run ends only once no page is open.
HEARTBEAT_S = 2.0
#: Seconds a closing server gives each page to receive what the run said last (then it closes anyway).
FINAL_NEWS_S = 1.0
#: Largest picture file the threshold editor takes (bytes of the file, before decoding).
MAX_PICTURE_BYTES = 32 * 1024 * 1024
TOKEN_COOKIE = "maixemu_ide_token"
PAGE_FILES = {"/": ("index.html", "text/html"), "/ide.js": ("ide.js", "text/javascript"),
              "/ide.css": ("ide.css", "text/css")}
_SECURITY_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cache-Control": "no-store",
}
#: The page may load and connect only to itself (it works offline: no CDN).
_CSP = ("default-src 'self'; img-src 'self' blob: data:; connect-src 'self'; style-src 'self'; "
        "script-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'")


class ServerError(RuntimeError):
    """The IDE server could not start (port taken, bad address); the text says what to do."""


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _page_text(name: str) -> bytes:
    # (one name per joinpath: Python 3.10's Traversable.joinpath takes one)
    return resources.files(__package__).joinpath("page").joinpath(name).read_bytes()


def encode_image(rgb: np.ndarray, kind: str) -> bytes:
    """(H, W, 3) RGB → JPEG or PNG bytes (OpenCV's encoders; they release the GIL)."""
    bgr = cv2.cvtColor(np.ascontiguousarray(rgb, dtype=np.uint8), cv2.COLOR_RGB2BGR)
    if kind == "jpeg":
        params = [cv2.IMWRITE_JPEG_QUALITY, JPEG_QUALITY]
        if hasattr(cv2, "IMWRITE_JPEG_SAMPLING_FACTOR"):  # full colour resolution: thin drawn lines keep their colour
            params += [cv2.IMWRITE_JPEG_SAMPLING_FACTOR, cv2.IMWRITE_JPEG_SAMPLING_FACTOR_444]
        ok, data = cv2.imencode(".jpg", bgr, params)
    else:
        ok, data = cv2.imencode(".png", bgr, [cv2.IMWRITE_PNG_COMPRESSION, 1])
    if not ok:
        raise ValueError(f"cannot encode a {rgb.shape} frame as {kind}")
    return data.tobytes()


class IdeServer:
    """The page's server for one ``maixemu run --ide`` session (see the module docstring)."""

    def __init__(self, channel: IdeChannel, *, host: str = "127.0.0.1", port: int = DEFAULT_PORT,
                 token: str | None = None, record_dir: Path | None = None,
                 on_notice: Callable[[str], None] | None = None):
        self.channel = channel
        self.host = host
        self.port = int(port)
        self.loopback = is_loopback(host)
        #: Required on every request when the server is reachable from other machines.
        self.token = token if token is not None else (None if self.loopback else secrets.token_urlsafe(18))
        self._notice = on_notice or (lambda message: None)
        self.recorder = FrameRecorder(channel, Path(record_dir or Path.cwd()), on_notice=self._notice)
        self._page = {path: (_page_text(name), ctype) for path, (name, ctype) in PAGE_FILES.items()}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._runner: web.AppRunner | None = None
        self._waiters: set[asyncio.Event] = set()
        self._notify_pending = False
        self._closing = False
        #: each open page's WebSocket and the task that sends it the run's news
        self._sockets: dict[web.WebSocketResponse, asyncio.Future[None]] = {}
        self._encoded: dict[tuple[str, str], tuple[int, bytes]] = {}
        self._encode_locks: dict[str, asyncio.Lock] = {}
        self._analysis: asyncio.Semaphore | None = None
        #: The threshold editor's picture file (``POST /api/picture``), decoded; None until one is given.
        self.picture: Any = None
        self._picture_seq = 0
        self.frames_sent = {name: 0 for name in STREAMS}
        self.frames_encoded = 0
        #: Picture streams being served now (each ends when its page is gone, even with no new picture).
        self.streams_open = 0

    # ------------------------------------------------------------------ life cycle
    @property
    def url(self) -> str:
        shown = f"[{self.host}]" if ":" in self.host else self.host
        base = f"http://{shown}:{self.port}/"
        return f"{base}?token={self.token}" if self.token else base

    def start(self, timeout: float = 15.0) -> str:
        """Bind and serve on a background thread; returns the page's URL. Raises :class:`ServerError`."""
        ready = threading.Event()
        failure: list[BaseException] = []

        def serve() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            asyncio.set_event_loop(loop)
            try:
                loop.run_until_complete(self._start_site())
            except BaseException as exc:  # report to start(), then leave
                failure.append(exc)
                ready.set()
                loop.close()
                return
            ready.set()
            try:
                loop.run_forever()
            finally:
                loop.close()

        self._thread = threading.Thread(target=serve, name="maixemu-ide-server", daemon=True)
        self._thread.start()
        if not ready.wait(timeout):
            raise ServerError("the IDE server did not start in time")
        if failure:
            exc = failure[0]
            if isinstance(exc, OSError):
                raise ServerError(f"cannot serve the IDE page on {self.host}:{self.port}: {exc.strerror or exc} "
                                  "(another maixemu --ide running?); use --ide PORT with a free port, or --ide 0 "
                                  "for any free port") from None
            raise ServerError(f"cannot start the IDE server: {exc}") from None
        self.channel.add_waker(self._wake_from_any_thread)
        return self.url

    async def _start_site(self) -> None:
        app = web.Application(middlewares=[self._guard], client_max_size=64 * 1024)
        app.router.add_get("/", self._page_file)
        app.router.add_get("/ide.js", self._page_file)
        app.router.add_get("/ide.css", self._page_file)
        app.router.add_get("/stream/{name}.mjpg", self._stream)
        app.router.add_get("/frame/binary.png", self._binary_png)  # before the {name} route it would match
        app.router.add_get("/frame/picture.png", self._picture_png)
        app.router.add_get("/frame/{name}.png", self._frame_png)
        app.router.add_post("/api/picture", self._picture_upload)
        app.router.add_get("/api/{kind}", self._api)
        app.router.add_get("/recording/{index}", self._recording)
        app.router.add_get("/ws", self._websocket)
        app.on_shutdown.append(self._on_shutdown)
        self._analysis = asyncio.Semaphore(ANALYSIS_WORKERS)
        self._encode_locks = {name: asyncio.Lock() for name in STREAMS}
        runner = web.AppRunner(app, access_log=None, shutdown_timeout=1.0)
        await runner.setup()
        site = web.TCPSite(runner, self.host, self.port)
        await site.start()
        self._runner = runner
        if self.port == 0:  # --ide 0: the OS chose a free port
            sockets = getattr(site._server, "sockets", None) or []
            if sockets:
                self.port = int(sockets[0].getsockname()[1])

    def close(self) -> None:
        """Stop serving: pages see the connection end; the recorder finishes its file. Safe to call twice."""
        self.channel.remove_waker(self._wake_from_any_thread)
        self.recorder.stop()
        loop, thread = self._loop, self._thread
        if loop is None or thread is None or not thread.is_alive():
            return
        self._closing = True

        async def shutdown() -> None:
            self._notify_all()
            if self._runner is not None:
                await self._runner.cleanup()

        try:
            asyncio.run_coroutine_threadsafe(shutdown(), loop).result(timeout=10)
        except Exception:
            pass
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=10)

    async def _on_shutdown(self, app: web.Application) -> None:
        self._closing = True
        self._notify_all()
        senders = list(self._sockets.values())
        if senders:  # each page gets the run's last news (its closing lines, the ended status) first
            await asyncio.wait(senders, timeout=FINAL_NEWS_S)
        for ws in list(self._sockets):
            await ws.close(code=1001, message=b"maixemu ended")

    # ------------------------------------------------------------------ wake-ups
    def _wake_from_any_thread(self) -> None:
        loop = self._loop
        if loop is None or self._notify_pending or loop.is_closed():
            return
        self._notify_pending = True
        try:
            loop.call_soon_threadsafe(self._notify_all)
        except RuntimeError:  # the loop closed meanwhile
            pass

    def _notify_all(self) -> None:
        self._notify_pending = False
        for event in self._waiters:
            event.set()

    async def _wait_change(self, timeout: float) -> None:
        event = asyncio.Event()
        self._waiters.add(event)
        try:
            await asyncio.wait_for(event.wait(), timeout)
        except asyncio.TimeoutError:
            pass
        finally:
            self._waiters.discard(event)

    # ------------------------------------------------------------------ guard
    def _allowed_host(self, host: str) -> bool:
        if not self.loopback:
            return True  # the token protects a server reachable from elsewhere
        bound = f"[{self.host}]" if ":" in self.host else self.host  # the printed URL's own host (127.0.0.2)
        return host in {f"127.0.0.1:{self.port}", f"localhost:{self.port}", f"[::1]:{self.port}", f"{bound}:{self.port}"}

    @web.middleware
    async def _guard(self, request: web.Request, handler):
        if not self._allowed_host(request.host):
            return web.Response(status=403, text=f"maixemu IDE: this page answers only {self.url}\n")
        if self.token is not None:
            given = request.query.get("token") or request.cookies.get(TOKEN_COOKIE) or ""
            if not hmac.compare_digest(given.encode(), self.token.encode()):
                return web.Response(status=403, text="maixemu IDE: this page needs its token; open the address "
                                                     "maixemu printed (http://HOST:PORT/?token=...)\n")
        if request.path == "/ws" or request.method != "GET":  # a page of another site may not drive this one
            origin = request.headers.get("Origin")
            if origin is not None and origin not in (f"http://{request.host}", f"https://{request.host}"):
                return web.Response(status=403, text="maixemu IDE: a request from another site refused\n")
        try:
            response = await handler(request)
        except web.HTTPException:
            raise
        except Exception as exc:  # a request maixemu did not foresee: one line on the page, no traceback
            self._notice(f"the IDE page's request {request.path} failed: {type(exc).__name__}: {exc}")
            response = web.json_response({"error": f"{type(exc).__name__}: {exc}"}, status=500)
        for key, value in _SECURITY_HEADERS.items():
            response.headers.setdefault(key, value)
        return response

    # ------------------------------------------------------------------ page
    async def _page_file(self, request: web.Request) -> web.Response:
        body, ctype = self._page[request.path]
        response = web.Response(body=body, content_type=ctype, charset="utf-8")
        if request.path == "/":
            response.headers["Content-Security-Policy"] = _CSP
            if self.token is not None:
                response.set_cookie(TOKEN_COOKIE, self.token, httponly=True, samesite="Strict")
        return response

    # ------------------------------------------------------------------ frames
    def _stream_name(self, request: web.Request) -> str:
        name = request.match_info["name"]
        if name not in STREAMS:
            raise web.HTTPNotFound(text="no such stream\n")
        return name

    async def _encoded_frame(self, name: str, kind: str) -> tuple[int, bytes | None]:
        """The newest frame of ``name`` encoded as ``kind`` (encoded once per frame, off the loop)."""
        seq, frame = self.channel.latest(name)
        if frame is None:
            return seq, None
        key = (name, kind)
        async with self._encode_locks[name]:
            cached = self._encoded.get(key)
            if cached is not None and cached[0] == seq:
                return cached
            data = await asyncio.get_running_loop().run_in_executor(None, lambda: encode_image(frame.rgb888(), kind))
            self.frames_encoded += 1
            self._encoded[key] = (seq, data)  # only the newest frame per stream and kind is kept
            return seq, data

    async def _stream(self, request: web.Request) -> web.StreamResponse:
        name = self._stream_name(request)
        response = web.StreamResponse(headers={"Content-Type": "multipart/x-mixed-replace; boundary=frame",
                                               **_SECURITY_HEADERS})
        await response.prepare(request)
        loop = asyncio.get_running_loop()
        sent = -1
        self.streams_open += 1
        try:
            await response.write(b"--frame\r\n")
            while not self._closing:
                transport = request.transport
                if transport is None or transport.is_closing():
                    break  # the page went away while no new picture came (the script ended)
                seq, _ = self.channel.latest(name)
                if seq == sent:
                    await self._wait_change(timeout=1.0)
                    continue
                started = loop.time()
                seq, data = await self._encoded_frame(name, "jpeg")
                sent = seq
                if data is None:
                    continue
                # The closing boundary goes right after each frame, so the browser shows it at once.
                await response.write(b"Content-Type: image/jpeg\r\nContent-Length: %d\r\n\r\n" % len(data)
                                     + data + b"\r\n--frame\r\n")
                self.frames_sent[name] += 1
                pause = 1.0 / MAX_STREAM_FPS - (loop.time() - started)
                if pause > 0:
                    await asyncio.sleep(pause)
        except (ConnectionError, asyncio.CancelledError):
            pass  # the page went away: the run does not care
        finally:
            self.streams_open -= 1
        return response

    async def _frame_png(self, request: web.Request) -> web.Response:
        name = self._stream_name(request)
        seq, data = await self._encoded_frame(name, "png")
        if data is None:
            return web.json_response({"error": f"no {name} frame yet"}, status=404)
        response = web.Response(body=data, content_type="image/png")
        if request.query.get("download"):
            response.headers["Content-Disposition"] = f'attachment; filename="maixemu-{name}-{seq}.png"'
        return response

    # ------------------------------------------------------------------ analysis
    async def _analyse(self, request: dict[str, Any]) -> tuple[int, Any]:
        analyze = self.channel.handlers.analyze
        if analyze is None:
            return 503, {"error": "no run is attached"}
        source = request.get("source") or "fb"
        if source == "file":
            seq, frame = self._picture_seq, self.picture
            if frame is None:
                return 404, {"error": "no picture file yet: choose one in the threshold editor"}
        elif source == "fb":
            seq, frame = self.channel.latest("fb")
            if frame is None:
                return 404, {"error": "no frame-buffer picture yet (the script has not taken a second snapshot, "
                                      "called sensor.flush() or used copy_to_fb)"}
        else:
            return 400, {"error": f"source is fb or file, not {source!r}"}
        assert self._analysis is not None
        async with self._analysis:
            try:
                result = await asyncio.get_running_loop().run_in_executor(None, analyze, frame, request)
            except (ValueError, TypeError, OSError, ArithmeticError, MemoryError) as exc:
                return 400, {"error": str(exc) or type(exc).__name__}
        if isinstance(result, dict):
            result.setdefault("seq", seq)
        return 200, result

    async def _api(self, request: web.Request) -> web.Response:
        query = {key: request.query.get(key) for key in request.query if key != "token"}
        query["kind"] = request.match_info["kind"]
        status, result = await self._analyse(query)
        if isinstance(result, np.ndarray):
            return web.json_response({"error": "this request gives an image; use /frame/binary.png"}, status=400)
        return web.json_response(result, status=status, dumps=_dumps)

    async def _binary_png(self, request: web.Request) -> web.Response:
        query = {key: request.query.get(key) for key in request.query if key != "token"}
        query["kind"] = "binary"
        status, result = await self._analyse(query)
        if status != 200:
            return web.json_response(result, status=status)
        data = await asyncio.get_running_loop().run_in_executor(None, encode_image, result, "png")
        return web.Response(body=data, content_type="image/png")

    # ------------------------------------------------------------------ the threshold editor's picture file
    async def _picture_upload(self, request: web.Request) -> web.Response:
        """The page's picture file for the threshold editor: read (bounded), decoded on the run side."""
        decode = self.channel.handlers.picture
        if decode is None:
            return web.json_response({"error": "no run is attached"}, status=503)
        chunks: list[bytes] = []
        size = 0
        async for chunk in request.content.iter_chunked(1 << 16):  # read as it comes, never past the bound
            size += len(chunk)
            if size > MAX_PICTURE_BYTES:
                return web.json_response({"error": f"the picture file is larger than {MAX_PICTURE_BYTES >> 20} "
                                                   "MiB; choose a smaller one"}, status=413)
            chunks.append(chunk)
        data = b"".join(chunks)
        name = str(request.query.get("name") or "picture")[:200]
        try:
            frame = await asyncio.get_running_loop().run_in_executor(None, decode, data, name)
        except (ValueError, OSError, MemoryError) as exc:
            return web.json_response({"error": str(exc) or type(exc).__name__}, status=400)
        self.picture = frame
        self._picture_seq += 1
        return web.json_response({**getattr(frame, "info", {}), "width": frame.width, "height": frame.height,
                                  "seq": self._picture_seq}, dumps=_dumps)

    async def _picture_png(self, request: web.Request) -> web.Response:
        frame = self.picture
        if frame is None:
            return web.json_response({"error": "no picture file yet"}, status=404)
        data = await asyncio.get_running_loop().run_in_executor(None, encode_image, frame.rgb888(), "png")
        return web.Response(body=data, content_type="image/png")

    # ------------------------------------------------------------------ recordings
    async def _recording(self, request: web.Request) -> web.StreamResponse:
        try:
            index = int(request.match_info["index"])
            if index < 0:
                raise IndexError(index)
            path = self.recorder.files[index]
        except (ValueError, IndexError):
            raise web.HTTPNotFound(text="no such recording\n") from None
        if self.recorder.active and index == len(self.recorder.files) - 1:
            return web.json_response({"error": "this recording is still running; stop it first"}, status=409)
        if not path.is_file():
            raise web.HTTPNotFound(text="the recording file is gone\n")
        return web.FileResponse(path, headers={"Content-Disposition": f'attachment; filename="{path.name}"'})

    # ------------------------------------------------------------------ websocket
    async def _websocket(self, request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse(heartbeat=HEARTBEAT_S, max_msg_size=64 * 1024)
        await ws.prepare(request)
        self.channel.viewer_joined()
        held: set[str] = set()
        sender = asyncio.ensure_future(self._ws_sender(ws))
        self._sockets[ws] = sender
        try:
            async for message in ws:
                if message.type != WSMsgType.TEXT:
                    continue
                try:
                    command = json.loads(message.data)
                    if not isinstance(command, dict):
                        raise ValueError(f"a command is a JSON object, not {type(command).__name__}")
                    self._ws_command(command, held)
                except (ValueError, TypeError, KeyError, RecursionError) as exc:
                    await ws.send_json({"type": "error", "text": f"bad request: {exc}"})
                except Exception as exc:  # never a dead socket for one message maixemu did not foresee
                    self._notice(f"an IDE page command failed: {type(exc).__name__}: {exc}")
                    await ws.send_json({"type": "error", "text": f"the command failed: {type(exc).__name__}: {exc}"})
        finally:
            sender.cancel()
            button = self.channel.handlers.button
            for name in held:  # a page that closes while a button is held lets it go
                if button is not None:
                    button(name, False)
            self._sockets.pop(ws, None)
            self.channel.viewer_left()
        return ws

    def _ws_command(self, command: dict[str, Any], held: set[str]) -> None:
        kind = command.get("type")
        handlers = self.channel.handlers
        if kind == "input":
            text = str(command.get("text", ""))[:4096]
            if not self.channel.send_input(text):
                self.channel.write("[maixemu] too many lines wait for the script's input(); this one was dropped\n",
                                   "notice")
        elif kind == "stop" and handlers.stop is not None:
            handlers.stop()
        elif kind == "run" and handlers.run is not None:
            handlers.run()
        elif kind == "button" and handlers.button is not None:
            name, pressed = str(command["name"]), bool(command.get("pressed"))
            (held.add if pressed else held.discard)(name)
            handlers.button(name, pressed)
        elif kind == "preview":
            self.channel.set_preview(bool(command.get("on")))
        elif kind == "record":
            if command.get("on"):
                try:
                    self.recorder.start()
                except OSError as exc:
                    self.channel.write(f"[maixemu] cannot record: {exc}\n", "notice")
            else:
                threading.Thread(target=self.recorder.stop, name="maixemu-ide-recorder-stop", daemon=True).start()
        elif kind not in ("stop", "run", "button"):
            raise ValueError(f"unknown command {kind!r}")

    async def _ws_sender(self, ws: web.WebSocketResponse) -> None:
        loop = asyncio.get_running_loop()
        offset = 0
        sent_versions: dict[str, int] = {}
        last_stats = 0.0
        try:
            await ws.send_json({"type": "hello", "token": bool(self.token), "streams": list(STREAMS)})
            while not ws.closed:
                closing = self._closing  # read first: what was published before it is sent below
                offset, chunks, lost = self.channel.read_terminal(offset)
                if lost:
                    await ws.send_json({"type": "term", "stream": "notice",
                                        "text": f"[... {lost} earlier characters dropped ...]\n"})
                for stream, text in chunks:
                    for start in range(0, len(text), 32768):
                        await ws.send_json({"type": "term", "stream": stream, "text": text[start:start + 32768]})
                versions = self.channel.versions()
                now = loop.time()
                for key, version in versions.items():
                    if sent_versions.get(key) == version:
                        continue
                    if key == "stats" and now - last_stats < 1.0 / STATS_PER_SECOND and not closing:
                        continue
                    if key == "stats":
                        last_stats = now
                    sent_versions[key] = version
                    await ws.send_json({"type": key, key: self.channel.state(key)}, dumps=_dumps)
                for name in STREAMS:  # a new picture: the page refreshes its numbers and its size
                    seq, frame = self.channel.latest(name)
                    if sent_versions.get(f"{name}_seq") != seq:
                        sent_versions[f"{name}_seq"] = seq
                        info = ({**getattr(frame, "info", {}), "width": frame.width, "height": frame.height}
                                if frame is not None else None)
                        await ws.send_json({"type": "frame", "stream": name, "seq": seq, "frame": info})
                if closing:
                    return  # the server closes: this page has everything the run said
                pending_stats = sent_versions.get("stats") != versions.get("stats")
                await self._wait_change(timeout=(1.0 / STATS_PER_SECOND) if pending_stats else 1.0)
                # Many frames per second: a page hears of them at most MESSAGES_PER_SECOND times.
                pause = 1.0 / MESSAGES_PER_SECOND - (loop.time() - now)
                if pause > 0:
                    await asyncio.sleep(pause)
        except (ConnectionError, asyncio.CancelledError, RuntimeError):
            pass


def _dumps(value: Any) -> str:
    """JSON the browser can parse: numpy scalars as numbers, inf/nan (a 0 ms frame's fps) as null."""
    return json.dumps(_finite(value), default=_json_default, allow_nan=False)


def _finite(value: Any) -> Any:
    if isinstance(value, float):
        return value if value == value and value not in (float("inf"), float("-inf")) else None
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(item) for item in value]
    return value


def _json_default(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    raise TypeError(f"{type(value).__name__} is not JSON")
