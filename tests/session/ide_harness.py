"""Drive ``maixemu run --ide`` from tests: the process, its printed address, a WebSocket page stand-in."""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any, Callable

#: Generous bound for anything a test waits for (the CI machine is a busy 2-core box).
WAIT_S = 90.0


def wait_until(condition: Callable[[], Any], timeout: float = WAIT_S, what: str = "condition") -> Any:
    """Poll ``condition()`` until it returns something true; fail with ``what`` after ``timeout``."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


class IdeProcess:
    """``python -m maixemu run SCRIPT --ide 0 ...`` in the background, its output collected live."""

    def __init__(self, script: Path, *args: str, cwd: Path | None = None, env: dict | None = None,
                 terminal_open: bool = False):
        """``terminal_open``: maixemu's stdin stays open (as a user's terminal), so a script's
        ``input()`` waits for a page to connect instead of ending with ``EOFError``."""
        command = [sys.executable, "-m", "maixemu", "run", str(script), "--ide", "0", *args]
        stdin = subprocess.PIPE if terminal_open else subprocess.DEVNULL
        self.proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=stdin,
                                     text=True, cwd=cwd, env={**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})})
        self.stdout: list[str] = []
        self.stderr: list[str] = []
        self._readers = [threading.Thread(target=self._read, args=(stream, lines), daemon=True)
                         for stream, lines in ((self.proc.stdout, self.stdout), (self.proc.stderr, self.stderr))]
        for reader in self._readers:
            reader.start()

    @staticmethod
    def _read(stream, lines: list[str]) -> None:
        for line in stream:
            lines.append(line)

    @property
    def url(self) -> str:
        def found():
            for line in self.stderr:
                match = re.search(r"IDE page: (http://\S+)", line)
                if match:
                    return match.group(1)
            if self.proc.poll() is not None:
                raise AssertionError(f"maixemu ended before serving: {''.join(self.stderr)}")
            return None
        return wait_until(found, what="the printed IDE address")

    @property
    def port(self) -> int:
        return int(re.search(r":(\d+)/", self.url).group(1))

    def get(self, path: str) -> bytes:
        with urllib.request.urlopen(self.url.rstrip("/") + path, timeout=WAIT_S) as response:
            return response.read()

    def wait(self, timeout: float = WAIT_S) -> int:
        code = self.proc.wait(timeout=timeout)
        for reader in self._readers:
            reader.join(timeout=10)
        return code

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=30)
        if self.proc.stdin is not None:
            self.proc.stdin.close()

    def text(self) -> str:
        return "".join(self.stdout) + "".join(self.stderr)


class PageClient:
    """A stand-in for the page: one WebSocket, messages collected on a background event loop."""

    def __init__(self, ide: IdeProcess):
        self.messages: list[dict] = []
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._ws = None
        self._thread = threading.Thread(target=self._run, args=(ide.port,), daemon=True)
        self._thread.start()
        if not self._ready.wait(WAIT_S) or self._ws is None:
            raise AssertionError("the page could not connect its WebSocket")

    def _run(self, port: int) -> None:
        from aiohttp import ClientSession, WSMsgType

        async def main() -> None:
            async with ClientSession() as session:
                async with session.ws_connect(f"http://127.0.0.1:{port}/ws",
                                              headers={"Origin": f"http://127.0.0.1:{port}"}) as ws:
                    self._ws = ws
                    self._ready.set()
                    async for message in ws:
                        if message.type == WSMsgType.TEXT:
                            self.messages.append(json.loads(message.data))
                        else:
                            break
            self._ws = None

        try:
            self._loop.run_until_complete(main())
        finally:
            self._ready.set()

    def send(self, **command: Any) -> None:
        ws = self._ws
        assert ws is not None, "the page is disconnected"
        asyncio.run_coroutine_threadsafe(ws.send_json(command), self._loop).result(timeout=WAIT_S)

    def terminal(self) -> str:
        return "".join(m["text"] for m in list(self.messages) if m["type"] == "term")

    def latest(self, kind: str) -> dict | None:
        for message in reversed(list(self.messages)):
            if message["type"] == kind:
                return message[kind]
        return None

    def wait_terminal(self, text: str, timeout: float = WAIT_S) -> str:
        return wait_until(lambda: text in self.terminal() and self.terminal(), timeout, f"{text!r} in the terminal")

    def wait_state(self, kind: str, predicate: Callable[[dict], bool], timeout: float = WAIT_S) -> dict:
        return wait_until(lambda: (lambda s: s if s is not None and predicate(s) else None)(self.latest(kind)),
                          timeout, f"a {kind} message")

    def close(self) -> None:
        ws = self._ws
        if ws is not None:
            asyncio.run_coroutine_threadsafe(ws.close(), self._loop).result(timeout=WAIT_S)
        self._thread.join(timeout=WAIT_S)


class PageProcess:
    """A page in a process of its own, so a test can kill or freeze it as a browser dies or hangs:
    SIGKILL closes its socket without a WebSocket close handshake, SIGSTOP leaves the connection
    open but silent (only the server's heartbeat can tell it is gone). When the script prints
    ``waiting for the page`` it types one line, ``page here``, into its ``input()`` (a run drops
    lines typed before it started), so a script can wait for its page."""

    def __init__(self, ide: IdeProcess):
        self.proc = subprocess.Popen([sys.executable, __file__, "page", str(ide.port)], stdout=subprocess.PIPE,
                                     stdin=subprocess.DEVNULL, text=True)
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()  # the page prints one line once its WebSocket is open
        if line.strip() != "connected":
            self.close()
            raise AssertionError(f"the page process could not connect: {line!r}")

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()  # also ends a stopped process
        self.proc.wait(timeout=30)


def _page_main(port: int) -> None:
    """``python ide_harness.py page PORT``: connect a page, type one input line when asked, say so, then stay."""

    from types import SimpleNamespace

    page = PageClient(SimpleNamespace(port=port))  # type: ignore[arg-type]
    page.wait_terminal("waiting for the page")
    page.send(type="input", text="page here")
    print("connected", flush=True)
    while True:
        time.sleep(3600)


if __name__ == "__main__" and len(sys.argv) == 3 and sys.argv[1] == "page":
    _page_main(int(sys.argv[2]))
