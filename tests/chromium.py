"""Open a page in headless Chromium and report what it loaded, over the DevTools protocol on a pipe (no port).

`inspect_page(path)` navigates to the file, waits for its load event, and returns every URL the page
requested (the Network domain's `requestWillBeSent`) and, for each <img>, whether it decoded and its size.
Chromium talks on file descriptors 3 (commands in) and 4 (replies out), each message ending in a NUL byte.
"""

from __future__ import annotations

import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

FLAGS = [
    "--headless=new", "--no-sandbox", "--disable-gpu", "--remote-debugging-pipe", "--no-first-run",
    "--no-default-browser-check", "--disable-background-networking", "--disable-component-update",
    "--disable-sync", "--disable-default-apps", "--disable-extensions", "--disable-features=Translate",
    "--metrics-recording-only", "--mute-audio",
]  # fmt: skip


def chromium_binary() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome", "chrome"):
        if found := shutil.which(name):
            return found
    return None


@dataclass
class PageReport:
    title: str
    requests: list[str]  # every URL the page asked for, the page itself included
    images: list[dict]  # {alt, complete, width, height} per <img>
    figures: int


class _Pipe:
    def __init__(self, binary: str, profile: str) -> None:
        to_chrome_r, self._to_chrome = os.pipe()
        self._from_chrome, from_chrome_w = os.pipe()

        def wire() -> None:  # in the child: the pipe ends Chromium expects, at fds 3 and 4
            a, b = os.dup(to_chrome_r), os.dup(from_chrome_w)  # copies first, in case either is 3 or 4
            os.dup2(a, 3)  # dup2 makes them inheritable; every other fd Python opened is close-on-exec
            os.dup2(b, 4)

        self.proc = subprocess.Popen(
            [binary, *FLAGS, f"--user-data-dir={profile}", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            preexec_fn=wire, close_fds=False,
        )  # fmt: skip
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        self._buffer = b""
        self._id = 0
        self.events: list[dict] = []

    def _read(self, deadline: float) -> dict:
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._from_chrome], [], [], left)[0]:
                raise TimeoutError("Chromium did not answer in time")
            chunk = os.read(self._from_chrome, 1 << 16)
            if not chunk:
                raise RuntimeError("Chromium closed the DevTools pipe")
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(message)

    def call(self, method: str, params: dict | None = None, session: str | None = None, timeout: float = 30) -> dict:
        self._id += 1
        message = {"id": self._id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self._to_chrome, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            reply = self._read(deadline)
            if reply.get("id") == self._id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)

    def wait_for(self, method: str, timeout: float = 30) -> dict:
        deadline = time.monotonic() + timeout
        while True:
            for event in self.events:
                if event.get("method") == method:
                    return event
            self.events.append(self._read(deadline))

    def close(self) -> None:
        try:
            self.call("Browser.close", timeout=5)
        except (RuntimeError, TimeoutError, OSError):
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self._to_chrome)
        os.close(self._from_chrome)


_PROBE = """JSON.stringify({
  title: document.title,
  figures: document.querySelectorAll('figure').length,
  images: Array.from(document.images).map(i => ({alt: i.alt, complete: i.complete,
                                                  width: i.naturalWidth, height: i.naturalHeight}))
})"""


def inspect_page(path: Path, binary: str, timeout: float = 60) -> PageReport:
    """Load `path` in headless Chromium; what it requested and how its images decoded."""
    with tempfile.TemporaryDirectory() as profile:
        pipe = _Pipe(binary, profile)
        try:
            target = pipe.call("Target.createTarget", {"url": "about:blank"})["targetId"]
            session = pipe.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
            for domain in ("Network", "Page", "Runtime"):
                pipe.call(f"{domain}.enable", session=session)
            pipe.events.clear()
            pipe.call("Page.navigate", {"url": Path(path).resolve().as_uri()}, session=session)
            pipe.wait_for("Page.loadEventFired", timeout=timeout)
            value = pipe.call("Runtime.evaluate", {"expression": _PROBE, "returnByValue": True}, session=session)
            probe = json.loads(value["result"]["value"])
            requests = [
                e["params"]["request"]["url"] for e in pipe.events if e.get("method") == "Network.requestWillBeSent"
            ]
        finally:
            pipe.close()
    return PageReport(probe["title"], requests, probe["images"], probe["figures"])
