"""Open pages in headless Chromium and report what they loaded and how they lay out, over the DevTools protocol
on a pipe (no port).

`Browser(binary)` starts one Chromium for several pages (a start costs about a second); `browser.open(path)`
navigates a fresh tab, sized like a 1280x800 screen, to the file, waits for its load event, and returns every URL
the page requested (the Network domain's `requestWillBeSent`), each <img>'s decoded size, and what a reader sees
of it: the first screen's rectangles, the sideways scroll, the toggles, the links; with `screenshot=` it saves
that first screen as a PNG (`python -m tests.chromium PAGE PNG` from the shell: results/dyck/dashboard.png).
`inspect_page(path, binary)` does the same in a Chromium of its own.
Chromium talks on file descriptors 3 (commands in) and 4 (replies out), each message ending in a NUL byte.
"""

from __future__ import annotations

import base64
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
    "--metrics-recording-only", "--mute-audio", "--hide-scrollbars",
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
    images: list[dict]  # {alt, src, complete, width, height} per <img>: its decoded (natural) size
    figures: int
    viewport: dict  # {width, height} of the window
    scroll_width: int  # document.documentElement.scrollWidth: wider than client_width = a sideways scroll
    scroll_width_unfolded: int  # the same with every <details> open
    client_width: int
    rects: dict  # {selector: {top, bottom, left, right} or None}: where each asked-for element lies, in pixels
    details: list[dict]  # {summary, open} per <details>
    links: list[dict]  # {text, href (as written), url (resolved), nav (inside a <nav>)} per <a href>


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

    def wait_for(self, method: str, session: str, timeout: float = 30) -> dict:
        deadline = time.monotonic() + timeout
        seen = 0
        while True:
            for event in self.events[seen:]:
                if event.get("method") == method and event.get("sessionId") == session:
                    return event
            seen = len(self.events)
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


_PROBE = """(selectors => {
  const rect = s => { const e = document.querySelector(s); if (!e) return null;
                      const r = e.getBoundingClientRect();
                      return {top: r.top, bottom: r.bottom, left: r.left, right: r.right}; };
  const folded = Array.from(document.querySelectorAll('details')).filter(d => !d.open);
  const page = {
    title: document.title,
    figures: document.querySelectorAll('figure').length,
    images: Array.from(document.images).map(i => ({alt: i.alt, src: i.getAttribute('src'), complete: i.complete,
                                                    width: i.naturalWidth, height: i.naturalHeight})),
    viewport: {width: window.innerWidth, height: window.innerHeight},
    scroll_width: document.documentElement.scrollWidth,
    client_width: document.documentElement.clientWidth,
    rects: Object.fromEntries(selectors.map(s => [s, rect(s)])),
    details: Array.from(document.querySelectorAll('details')).map(d => ({
      summary: d.querySelector('summary') ? d.querySelector('summary').textContent : '', open: d.open})),
    links: Array.from(document.querySelectorAll('a[href]')).map(a => ({
      text: a.textContent, href: a.getAttribute('href'), url: a.href, nav: a.closest('nav') !== null})),
  };
  folded.forEach(d => { d.open = true; });  // every toggle opened, as a reader might
  page.scroll_width_unfolded = document.documentElement.scrollWidth;
  folded.forEach(d => { d.open = false; });
  return JSON.stringify(page);
})(%s)"""


class Browser:
    """One headless Chromium whose tabs each open one page at a screen's size (1280x800 unless told)."""

    def __init__(self, binary: str, width: int = 1280, height: int = 800) -> None:
        self._profile = tempfile.TemporaryDirectory()
        self._pipe = _Pipe(binary, self._profile.name)
        self.size = {"width": width, "height": height}

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *_) -> None:
        self.close()

    def close(self) -> None:
        self._pipe.close()
        self._profile.cleanup()

    def open(self, path: Path, rects: tuple[str, ...] = (), screenshot: Path | None = None,
             timeout: float = 60) -> PageReport:  # fmt: skip
        """Load `path` in a fresh tab; what it requested, how its images decoded, where each of the CSS
        selectors `rects` lies on the first screen; its first screen saved to `screenshot` if given."""
        pipe = self._pipe
        target = pipe.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        try:
            session = pipe.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
            for domain in ("Network", "Page", "Runtime"):
                pipe.call(f"{domain}.enable", session=session)
            pipe.call("Emulation.setDeviceMetricsOverride",
                      {**self.size, "deviceScaleFactor": 1, "mobile": False}, session=session)  # fmt: skip
            pipe.events.clear()
            pipe.call("Page.navigate", {"url": Path(path).resolve().as_uri()}, session=session)
            pipe.wait_for("Page.loadEventFired", session, timeout=timeout)
            expression = _PROBE % json.dumps(list(rects))
            value = pipe.call("Runtime.evaluate", {"expression": expression, "returnByValue": True}, session=session)
            probe = json.loads(value["result"]["value"])
            if screenshot is not None:
                shot = pipe.call("Page.captureScreenshot", {"format": "png"}, session=session)
                Path(screenshot).write_bytes(base64.b64decode(shot["data"]))
            sent = [e for e in pipe.events if e.get("method") == "Network.requestWillBeSent"]
            requests = [e["params"]["request"]["url"] for e in sent if e.get("sessionId") == session]
        finally:
            pipe.call("Target.closeTarget", {"targetId": target})
        return PageReport(requests=requests, **probe)


def inspect_page(path: Path, binary: str, timeout: float = 60) -> PageReport:
    """Load `path` in a headless Chromium of its own: what it requested and how its images decoded."""
    with Browser(binary) as browser:
        return browser.open(path, timeout=timeout)


if __name__ == "__main__":  # python -m tests.chromium PAGE PNG: the first screen (1280x800) as a reader sees it
    import sys

    with Browser(chromium_binary() or sys.exit("no chromium on PATH")) as browser:
        browser.open(Path(sys.argv[1]), screenshot=Path(sys.argv[2]))
