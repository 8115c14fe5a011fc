"""Headless Chromium driven over the DevTools protocol on a pipe (--remote-debugging-pipe):
no driver binary and no Python package beyond the standard library. Commands go to the
browser's fd 3 and replies come from its fd 4, each a JSON message ended by a NUL byte."""

from __future__ import annotations

import base64
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any


class BrowserError(RuntimeError):
    pass


class Browser:
    """One headless Chromium with one page; `evaluate` runs JavaScript in it."""

    def __init__(self, executable: str, timeout_s: float = 60.0) -> None:
        self.timeout_s = timeout_s
        self._profile = tempfile.mkdtemp(prefix="dtfilm-chromium-")
        commands_read, self._commands = os.pipe()
        self._replies, replies_write = os.pipe()

        def wire() -> None:  # in the child: the pipe ends at the fds Chromium reads and writes
            os.dup2(commands_read, 3)
            os.dup2(replies_write, 4)

        self.process = subprocess.Popen(
            [
                executable,
                "--headless",
                "--remote-debugging-pipe",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-dev-shm-usage",
                "--hide-scrollbars",
                "--mute-audio",
                "--allow-file-access-from-files",
                f"--user-data-dir={self._profile}",
                "about:blank",
            ],
            pass_fds=(3, 4),
            preexec_fn=wire,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(commands_read)
        os.close(replies_write)
        self._buffer = b""
        self._next_id = 0
        self.events: list[dict[str, Any]] = []
        target = self._send("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = self._send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        self.send("Page.enable")
        self.send("Runtime.enable")

    def _read_message(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise BrowserError("Chromium did not answer in time")
            ready, _, _ = select.select([self._replies], [], [], left)
            if ready:
                chunk = os.read(self._replies, 1 << 20)
                if not chunk:
                    raise BrowserError("Chromium closed its pipe")
                self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(message)

    def _send(self, method: str, params: dict[str, Any] | None = None, session: str | None = None) -> dict[str, Any]:
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self._commands, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + self.timeout_s
        while True:
            reply = self._read_message(deadline)
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise BrowserError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)

    def send(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        return self._send(method, params, self.session)

    def wait_for_event(self, method: str) -> dict[str, Any]:
        deadline = time.monotonic() + self.timeout_s
        while True:
            for i, event in enumerate(self.events):
                if event.get("method") == method:
                    return self.events.pop(i)
            self.events.append(self._read_message(deadline))

    def open(self, url: str, width: int = 1440, height: int = 900) -> None:
        self.resize(width, height)
        self.events.clear()
        self.send("Page.navigate", {"url": url})
        self.wait_for_event("Page.loadEventFired")

    def resize(self, width: int, height: int) -> None:
        self.send(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600},
        )

    def color_scheme(self, scheme: str) -> None:
        self.send("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": scheme}]})

    def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression (a promise is awaited)."""
        result = self.send("Runtime.evaluate", {"expression": expression, "awaitPromise": True, "returnByValue": True})
        if "exceptionDetails" in result:
            raise BrowserError(f"{expression[:80]}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def screenshot(self, target: Path, full_page: bool = True) -> None:
        params: dict[str, Any] = {"format": "png", "captureBeyondViewport": full_page}
        if full_page:
            width, height = self.evaluate(
                "[document.documentElement.scrollWidth, document.documentElement.scrollHeight]"
            )
            params["clip"] = {"x": 0, "y": 0, "width": width, "height": height, "scale": 1}
        data = self.send("Page.captureScreenshot", params)["data"]
        target.write_bytes(base64.b64decode(data))

    def close(self) -> None:
        try:
            self._send("Browser.close")
        except (BrowserError, OSError):
            pass
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        for fd in (self._commands, self._replies):
            try:
                os.close(fd)
            except OSError:
                pass
        shutil.rmtree(self._profile, ignore_errors=True)

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


AXE_VERSION = "4.11.0"


def axe_source() -> str:
    """axe-core's script (from the npm registry once, then cached), to inject into a page."""
    from dtfilm.publish.npm import npm_package

    folder = npm_package("axe-core", AXE_VERSION, ("axe.min.js", "LICENSE"), "the page's check runs")
    return (folder / "axe.min.js").read_text(encoding="utf-8")


def axe_violations(browser: Browser) -> list[dict[str, Any]]:
    """axe-core's violations on the page open in `browser` (every rule axe runs by default)."""
    if not browser.evaluate("typeof window.axe !== 'undefined'"):
        browser.evaluate(axe_source())
    return browser.evaluate(
        "axe.run(document, {resultTypes: ['violations']}).then(r => r.violations.map(v =>"
        " ({id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map(n => n.target.join(' '))})))"
    )
