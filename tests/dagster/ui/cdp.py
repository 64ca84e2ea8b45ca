"""A small headless-Chromium driver over the Chrome DevTools Protocol (CDP), for the UI test.

Chromium comes from Debian's packages and the protocol client is ``websockets`` (installed with
dagster-webserver through uvicorn[standard]), so the test needs no browser download and no extra dependency.
Clicks are real mouse events at the element's centre, as a person's would be, not ``element.click()`` in JS.
"""

from __future__ import annotations

import base64
import itertools
import json
import os
import shutil
import signal
import subprocess
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import pytest
from websockets.sync.client import connect

CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome")
WINDOW = (1600, 1000)


def find_chromium() -> str | None:
    return next((path for path in map(shutil.which, CHROMIUM_NAMES) if path), None)


def chromium_or_skip() -> str:
    """Chromium from Debian's packages; installed here when missing and we may (CI runs as root)."""
    found = find_chromium()
    if found or shutil.which("apt-get") is None or os.geteuid() != 0:
        return found or pytest.skip("chromium is not installed and cannot be installed here (no apt-get or not root)")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for command in (["apt-get", "update", "-qq"], ["apt-get", "install", "-y", "-qq", "chromium"]):
        done = subprocess.run(command, check=False, env=env, capture_output=True, text=True, timeout=600)
        if done.returncode != 0:
            pytest.skip(f"chromium is not installed and `{' '.join(command)}` failed: {done.stderr.strip()[-300:]}")
    return find_chromium() or pytest.skip("apt-get installed chromium but no chromium binary is on PATH")


class BrowserError(AssertionError):
    """What the page showed instead of what the test waited for (the screenshot path is in the message)."""


class Browser:
    """One headless Chromium process and one page, driven through CDP; ``close()`` ends the process by pid."""

    def __init__(self, executable: str, profile_dir: Path, screenshots: Path) -> None:
        self.screenshots = screenshots
        profile_dir.mkdir(parents=True, exist_ok=True)
        (profile_dir / "DevToolsActivePort").unlink(missing_ok=True)  # a previous browser's port
        self.process = subprocess.Popen(
            [
                executable, "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--no-first-run", "--no-default-browser-check", "--disable-extensions",
                "--remote-debugging-address=127.0.0.1", "--remote-debugging-port=0",
                f"--user-data-dir={profile_dir}", f"--window-size={WINDOW[0]},{WINDOW[1]}", "about:blank",
            ],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, start_new_session=True,
        )
        self._ids = itertools.count(1)
        self._stack = ExitStack()
        try:
            port = self._devtools_port(profile_dir)
            # As a context manager: the one form every websockets version since 13 accepts without a warning.
            # No keepalive pings: CDP needs none, and a ping thread outliving the browser only logs noise.
            self._socket = self._stack.enter_context(
                connect(self._page_socket_url(port), max_size=64 * 2**20, open_timeout=20, ping_interval=None)
            )
        except BaseException:
            stop_process_group(self.process)
            raise
        self.send("Page.enable")
        self.send("Runtime.enable")
        self.send("Emulation.setDeviceMetricsOverride", width=WINDOW[0], height=WINDOW[1], deviceScaleFactor=1, mobile=False)

    def _devtools_port(self, profile_dir: Path, timeout: float = 30.0) -> int:
        """Chromium writes the port it chose (``--remote-debugging-port=0``) into the profile folder."""
        marker = profile_dir / "DevToolsActivePort"
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise BrowserError(f"chromium exited at start with code {self.process.returncode}")
            lines = marker.read_text().split() if marker.exists() else []
            if len(lines) == 2:  # port, then the browser's socket path: written once the port listens
                return int(lines[0])
            time.sleep(0.1)
        raise BrowserError("chromium did not open its DevTools port in time")

    @staticmethod
    def _page_socket_url(port: int) -> str:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10) as response:
            targets = json.load(response)
        return next(t["webSocketDebuggerUrl"] for t in targets if t["type"] == "page")

    def send(self, method: str, **params) -> dict:
        """One CDP command; events that arrive meanwhile are not needed by the test and are dropped."""
        message_id = next(self._ids)
        self._socket.send(json.dumps({"id": message_id, "method": method, "params": params}))
        while True:
            message = json.loads(self._socket.recv(timeout=60))
            if message.get("id") != message_id:
                continue
            if "error" in message:
                raise BrowserError(f"{method}: {message['error']}")
            return message.get("result", {})

    # -- page -------------------------------------------------------------------------------------------------

    def open(self, url: str) -> None:
        self.send("Page.navigate", url=url)
        self.wait_for("document.readyState === 'complete'", f"page {url} to load")

    def evaluate(self, expression: str):
        result = self.send("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in result:
            raise BrowserError(f"JS error in {expression!r}: {result['exceptionDetails'].get('text')}")
        return result["result"].get("value")

    def wait_for(self, expression: str, what: str, timeout: float = 60.0, poll: float = 0.5):
        """Poll a JS expression until it is truthy; on time-out, fail with a screenshot of the page."""
        return self.wait_until(lambda: self.evaluate(expression), what, timeout, poll)

    def wait_until(self, probe: Callable[[], object], what: str, timeout: float = 60.0, poll: float = 0.5):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            value = probe()
            if value:
                return value
            time.sleep(poll)
        shot = self.screenshot(f"timeout-{_slug(what)}")
        raise BrowserError(f"waited {timeout:.0f} s for {what}; the page is in {shot}")

    def text(self) -> str:
        return self.evaluate("document.body ? document.body.innerText : ''") or ""

    def screenshot(self, name: str) -> Path:
        self.screenshots.mkdir(parents=True, exist_ok=True)
        path = self.screenshots / f"{name}.png"
        path.write_bytes(base64.b64decode(self.send("Page.captureScreenshot", format="png")["data"]))
        return path

    # -- input ------------------------------------------------------------------------------------------------

    def click(self, selector_js: str, what: str, timeout: float = 30.0) -> None:
        """Click the centre of the element ``selector_js`` evaluates to (once it is visible) with the mouse."""
        probe = f"""(() => {{
            const el = ({selector_js});
            if (!el) return null;
            el.scrollIntoView({{block: 'center', inline: 'center'}});
            const r = el.getBoundingClientRect();
            return (r.width > 0 && r.height > 0) ? [r.left + r.width / 2, r.top + r.height / 2] : null;
        }})()"""
        x, y = self.wait_for(probe, what, timeout)
        for kind in ("mouseMoved", "mousePressed", "mouseReleased"):
            self.send("Input.dispatchMouseEvent", type=kind, x=x, y=y, button="left", clickCount=1)

    def click_button(self, label: str, timeout: float = 30.0, prefix: bool = False) -> None:
        """The enabled button whose visible text is ``label`` (the last one: dialogs render after the page).

        ``prefix``: the text only starts with ``label`` (Dagster adds counts: "Materialize all (3)").
        """
        self.click(by_text("button", label, enabled_only=True, prefix=prefix), f"button '{label}'", timeout)

    def type_text(self, text: str) -> None:
        self.send("Input.insertText", text=text)

    def press_enter(self) -> None:
        for kind in ("keyDown", "keyUp"):
            self.send("Input.dispatchKeyEvent", type=kind, key="Enter", code="Enter", windowsVirtualKeyCode=13)

    def close(self) -> None:
        try:
            self._stack.close()
        finally:
            stop_process_group(self.process)


def by_text(tag: str, text: str, enabled_only: bool = False, prefix: bool = False) -> str:
    """A JS expression for the last ``tag`` element whose trimmed innerText equals (or starts with) ``text``."""
    condition = f"e.innerText.trim().startsWith({json.dumps(text)})" if prefix else f"e.innerText.trim() === {json.dumps(text)}"
    if enabled_only:
        condition += " && !e.disabled"
    return f"[...document.querySelectorAll({json.dumps(tag)})].filter(e => {condition}).pop()"


def stop_process_group(process: subprocess.Popen, timeout: float = 20.0) -> None:
    """SIGTERM the process group we started (``start_new_session``), then SIGKILL what is left."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        if process.poll() is not None:
            break
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            break
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            continue


def _slug(text: str) -> str:
    return "".join(c if c.isalnum() else "-" for c in text.lower())[:60]


@contextmanager
def headless_browser(folder: Path) -> Iterator[Browser]:
    """A browser with its profile in ``folder`` and its screenshots in ``$SPARKMESH_UI_SHOTS`` (else ``folder``)."""
    shots = Path(os.environ.get("SPARKMESH_UI_SHOTS") or folder / "shots")
    browser = Browser(chromium_or_skip(), folder / "chromium-profile", shots)
    try:
        yield browser
    finally:
        browser.close()
