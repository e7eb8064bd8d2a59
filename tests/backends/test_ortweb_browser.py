"""benchdb.backends.ortweb.browser: headless Chromium for the ort-web backend; a crashed page and a
hung call become the scenario's status, a killed browser leaves nothing behind and the next one
starts afresh. Skipped where there is no Chromium or playwright, failed under CI=true."""

from __future__ import annotations

import pytest

from benchdb.backends.ortweb import browser
from benchdb.backends.ortweb.server import Server

needs_browser = pytest.mark.usefixtures("browser_needed")


@needs_browser
@pytest.mark.slow
def test_page_crash_and_hang_become_statuses(tmp_path):
    from benchdb.backends.ortweb.backend import _status_of

    (tmp_path / "ort.min.mjs").write_text("export {}")
    with Server(tmp_path) as srv:
        b = browser.Browser("wasm")
        try:
            page = b.page(srv.url, 10)
            with pytest.raises(Exception) as crashed:
                page.goto("chrome://crash")
                page.evaluate("() => 1")
            status, text = _status_of(crashed.value)
            assert status == "failed" and text.startswith("page crashed:")
            assert b.alive() and b.page(srv.url, 10).evaluate("() => window.benchdb.ready")  # the next goes on
            page = b.page(srv.url, 10)
            # evaluate() has no timeout of its own: the deadline ends the browser, the call fails at once
            with pytest.raises(Exception) as hung, b.deadline(1.5) as deadline:
                page.evaluate("() => new Promise(() => {})")
            assert deadline["fired"] and not b.alive()
            # the kill has ended with the block: nothing of that browser is left to find, and the next
            # browser, named afresh, starts and answers (a kill still walking once killed it as it started)
            import psutil

            killed = b.marker
            assert not [p for p in psutil.process_iter(["cmdline"]) if killed in (p.info["cmdline"] or ())]
            status, text = _status_of(hung.value, 1.5 if deadline["fired"] else None)
            assert status == "timeout" and "exceeded --timeout 1.5 s" in text
            b.revive()
            assert b.marker != killed and b.page(srv.url, 10).evaluate("() => window.benchdb.ready")
            with b.deadline(30) as quick:  # a deadline that is not reached does nothing
                pass
            assert not quick["fired"]
        finally:
            b.close()  # a killed browser closes quietly
    assert not [p for p in psutil.process_iter(["cmdline"]) if b.marker in (p.info["cmdline"] or ())]
