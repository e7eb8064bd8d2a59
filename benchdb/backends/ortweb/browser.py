"""Headless Chromium driven by playwright (the system browser: no browser download).

``find()`` names the browser (``$BENCHDB_CHROMIUM``, else chromium / chromium-browser /
google-chrome on the PATH); ``launch()`` starts it with the flags that work on a headless Linux
box and a fresh profile (playwright's own temporary ``--user-data-dir``), plus per device:
WebGPU needs ``--enable-unsafe-webgpu`` (a software adapter, SwiftShader, where there is no
GPU) and WebNN its feature flag, so the browser can say itself why it has none.
"""

from __future__ import annotations

import os
import shutil
import threading
import uuid
from contextlib import contextmanager

FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)
DEVICE_FLAGS = {
    "wasm": (),
    "webgpu": ("--enable-unsafe-webgpu",),
    "webnn": ("--enable-features=WebMachineLearningNeuralNetwork",),
}
NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
INSTALL = "apt-get install -y chromium (or set BENCHDB_CHROMIUM to a Chromium/Chrome binary)"


def find() -> str | None:
    own = os.environ.get("BENCHDB_CHROMIUM")
    if own:
        return own if os.path.isfile(own) and os.access(own, os.X_OK) else None
    for name in NAMES:
        path = shutil.which(name)
        if path:
            return path
    return None


def flags(device: str) -> list[str]:
    return list(FLAGS) + list(DEVICE_FLAGS[device])


class Browser:
    """One headless browser (playwright + Chromium); ``close()`` ends both, ``kill()`` the browser alone
    (from a watchdog thread: :meth:`deadline`)."""

    def __init__(self, device: str):
        self.device = device
        self._launch()

    def _launch(self) -> None:
        from playwright.sync_api import sync_playwright

        # Chromium ignores a switch it does not know: this one names our processes for the watchdog.
        self.marker = f"--benchdb-browser={uuid.uuid4().hex}"
        self.killed = False
        self._pw = sync_playwright().start()
        try:
            self.browser = self._pw.chromium.launch(
                executable_path=find(), headless=True, args=flags(self.device) + [self.marker]
            )
        except Exception:
            self._pw.stop()
            raise
        self.version = self.browser.version

    def page(self, url: str, timeout_s: float):
        """A fresh page with benchdb's script loaded (every call waits at most ``timeout_s``)."""
        return self.load(self.blank_page(timeout_s), url)

    def blank_page(self, timeout_s: float):
        """A fresh empty page whose calls wait at most ``timeout_s``. Never under :meth:`deadline`: a
        browser killed while playwright is making a page leaves playwright waiting for that page
        forever (seen here: Target.createTarget sent, the browser killed 0.5 s later, no answer)."""
        page = self.browser.new_page()
        page.set_default_timeout(timeout_s * 1000)
        return page

    @staticmethod
    def load(page, url: str):
        """``page`` with benchdb's script loaded from ``url`` (within the page's timeout)."""
        page.goto(url + "/")
        page.wait_for_function("window.benchdb && window.benchdb.ready")
        return page

    def alive(self) -> bool:
        return not self.killed and self.browser.is_connected()

    def kill(self) -> None:
        """End this browser's processes (from any thread: playwright's own calls are not thread-safe)."""
        import psutil

        self.killed = True
        marker = self.marker  # this browser's, never the one a relaunch names while the loop runs
        for proc in psutil.process_iter(["cmdline"]):
            try:
                if marker in (proc.info["cmdline"] or ()):
                    proc.kill()
            except (psutil.NoSuchProcess, psutil.AccessDenied):
                pass

    @contextmanager
    def deadline(self, seconds: float):
        """Kill the browser if the block runs longer than ``seconds``: a page call that never returns
        (a hung promise, a WebAssembly loop) then fails at once. ``fired`` tells afterwards whether
        it did; playwright's evaluate() has no timeout of its own. Calls on an existing page only:
        see :meth:`blank_page`."""
        state = {"fired": False}

        def fire() -> None:
            state["fired"] = True
            self.kill()

        timer = threading.Timer(seconds, fire)
        timer.daemon = True
        timer.start()
        try:
            yield state
        finally:
            timer.cancel()
            # a kill already under way ends before the caller relaunches: one still walking the
            # process list once killed the next browser as it started, and playwright waited forever
            timer.join()

    def revive(self) -> None:
        """A new browser in place of one that died or was killed (the next scenario goes on)."""
        if not self.alive():
            self.close()
            self._launch()

    def close(self) -> None:
        try:
            self.browser.close()
        except Exception:
            if self.alive():  # a killed or crashed browser has nothing left to close
                raise
        finally:
            self._pw.stop()
