"""The HTML report in a real browser: CONFORM-REPORT-HTML-001,
CONFORM-REPORT-ESCAPE-001.

Headless Chromium renders a report of synthetic outcomes (3 defs × 6 rules holding
every verdict); the test checks the DOM, clicks a failing cell with a real mouse
event, checks that its evidence panel shows, and saves a screenshot under
``tmp_path`` (its path is printed and recorded as the ``screenshot`` property).

Chromium is driven over the DevTools protocol by the small websocket client below
(stdlib only, loopback only), so the test needs no new dependency. It skips when
no Chromium is installed (``apt-get install -y chromium``).
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from conformance.reports import html
from tests.conformance import HOSTILE, META, large_verdict, sample_verdict

CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
VIEWPORT = (1400, 1000)


def _chromium() -> str | None:
    override = os.environ.get("HARNESS_CHROMIUM")
    if override:
        return override
    for name in CHROMIUM_NAMES:
        found = shutil.which(name)
        if found:
            return found
    return None


class WebSocket:
    """A minimal RFC 6455 client: text frames out (masked), text frames in."""

    def __init__(self, url: str, timeout: float = 20.0) -> None:
        parts = urlsplit(url)
        assert parts.hostname in ("127.0.0.1", "localhost"), f"not loopback: {url}"
        self.sock = socket.create_connection((parts.hostname, parts.port or 80), timeout=timeout)
        key = base64.b64encode(os.urandom(16)).decode()
        request = (
            f"GET {parts.path} HTTP/1.1\r\nHost: {parts.hostname}:{parts.port}\r\n"
            "Upgrade: websocket\r\nConnection: Upgrade\r\n"
            f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
        )
        self.sock.sendall(request.encode())
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.sock.recv(4096)
            if not chunk:
                raise ConnectionError(f"websocket handshake closed: {head!r}")
            head += chunk
        status, _, rest = head.partition(b"\r\n\r\n")
        if b" 101 " not in status.split(b"\r\n", 1)[0]:
            raise ConnectionError(f"websocket handshake refused: {status!r}")
        self.buffer = rest

    def _read(self, n: int) -> bytes:
        while len(self.buffer) < n:
            chunk = self.sock.recv(max(65536, n - len(self.buffer)))
            if not chunk:
                raise ConnectionError("websocket closed")
            self.buffer += chunk
        data, self.buffer = self.buffer[:n], self.buffer[n:]
        return data

    def _send_frame(self, opcode: int, payload: bytes) -> None:
        header = bytes([0x80 | opcode])
        n = len(payload)
        if n < 126:
            header += bytes([0x80 | n])
        elif n < 1 << 16:
            header += bytes([0x80 | 126]) + struct.pack("!H", n)
        else:
            header += bytes([0x80 | 127]) + struct.pack("!Q", n)
        mask = os.urandom(4)
        masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
        self.sock.sendall(header + mask + masked)

    def send(self, text: str) -> None:
        self._send_frame(0x1, text.encode())

    def recv(self) -> str:
        message = b""
        while True:
            b0, b1 = self._read(2)
            opcode, n = b0 & 0x0F, b1 & 0x7F
            if n == 126:
                (n,) = struct.unpack("!H", self._read(2))
            elif n == 127:
                (n,) = struct.unpack("!Q", self._read(8))
            mask = self._read(4) if b1 & 0x80 else b""
            payload = self._read(n)
            if mask:
                payload = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
            if opcode == 0x8:
                raise ConnectionError("websocket closed by the browser")
            if opcode == 0x9:
                self._send_frame(0xA, payload)
                continue
            if opcode in (0x0, 0x1, 0x2):
                message += payload
                if b0 & 0x80:
                    return message.decode()

    def close(self) -> None:
        self.sock.close()


class Cdp:
    """Chrome DevTools protocol calls over one page's websocket."""

    def __init__(self, ws: WebSocket) -> None:
        self.ws = ws
        self.next_id = 0
        self.events: list[dict[str, Any]] = []

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        self.next_id += 1
        wanted = self.next_id
        self.ws.send(json.dumps({"id": wanted, "method": method, "params": params}))
        while True:
            message = json.loads(self.ws.recv())
            if message.get("id") == wanted:
                if "error" in message:
                    raise RuntimeError(f"{method} failed: {message['error']}")
                result: dict[str, Any] = message.get("result", {})
                return result
            if "method" in message:
                self.events.append(message)

    def eval(self, expression: str) -> Any:
        result = self.call(
            "Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True
        )
        if "exceptionDetails" in result:
            raise AssertionError(f"page script raised: {result['exceptionDetails']}")
        return result["result"].get("value")

    def wait_for(self, expression: str, timeout: float = 15.0) -> Any:
        """Poll ``expression`` until it is truthy; on timeout name it and its last value."""
        deadline = time.monotonic() + timeout
        while True:
            value = self.eval(expression)
            if value:
                return value
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {expression} (last: {value!r})")
            time.sleep(0.05)

    def click(self, selector: str) -> None:
        """A real mouse click (pressed + released) at the centre of ``selector``."""
        box = self.eval(
            f"(() => {{ const e = document.querySelector({json.dumps(selector)});"
            "e.scrollIntoView({block: 'center', inline: 'center'});"
            "const r = e.getBoundingClientRect();"
            "return {x: r.left + r.width / 2, y: r.top + r.height / 2}; })()"
        )
        for kind in ("mouseMoved", "mousePressed", "mouseReleased"):
            self.call(
                "Input.dispatchMouseEvent",
                type=kind,
                x=box["x"],
                y=box["y"],
                button="left" if kind != "mouseMoved" else "none",
                clickCount=1 if kind != "mouseMoved" else 0,
            )

    def screenshot(self, path: Path) -> Path:
        data = self.call("Page.captureScreenshot", format="png")["data"]
        path.write_bytes(base64.b64decode(data))
        return path


@pytest.fixture
def page(tmp_path: Path) -> Iterator[Cdp]:
    binary = _chromium()
    if binary is None:
        pytest.skip(
            "Chromium is not installed (apt-get install -y chromium chromium-driver); "
            "set HARNESS_CHROMIUM to use another binary"
        )
    if sys.platform == "win32":
        pytest.skip("the browser test drives Chromium on POSIX only")
    profile = tmp_path / "chromium-profile"
    profile.mkdir()
    argv = [
        binary,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-extensions",
        "--hide-scrollbars",
        "--remote-debugging-address=127.0.0.1",
        "--remote-debugging-port=0",
        f"--user-data-dir={profile}",
        f"--window-size={VIEWPORT[0]},{VIEWPORT[1]}",
        "about:blank",
    ]
    proc = subprocess.Popen(
        argv,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    ws: WebSocket | None = None
    try:
        port_file = profile / "DevToolsActivePort"
        deadline = time.monotonic() + 30
        while not (port_file.exists() and port_file.read_text().strip()):
            if proc.poll() is not None:
                pytest.fail(f"chromium exited with {proc.returncode} before DevTools came up")
            if time.monotonic() > deadline:
                pytest.fail("chromium did not open its DevTools port within 30 s")
            time.sleep(0.05)
        port = int(port_file.read_text().split()[0])
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10) as resp:
            targets = json.load(resp)
        target = next(t for t in targets if t.get("type") == "page")
        ws = WebSocket(target["webSocketDebuggerUrl"])
        cdp = Cdp(ws)
        cdp.call("Runtime.enable")
        cdp.call("Page.enable")
        cdp.call(
            "Emulation.setDeviceMetricsOverride",
            width=VIEWPORT[0],
            height=VIEWPORT[1],
            deviceScaleFactor=1,
            mobile=False,
        )
        yield cdp
    finally:
        if ws is not None:
            ws.close()
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=10)


def _open_report(page: Cdp, tmp_path: Path, verdict: Any = None) -> None:
    report = tmp_path / "report.html"
    report.write_text(html.render(verdict or sample_verdict(), META), encoding="utf-8")
    page.call("Page.navigate", url=report.as_uri())
    page.wait_for(
        "document.readyState === 'complete' && !!document.getElementById('matrix') "
        "&& document.getElementById('f-count').textContent.length > 0"
    )


def _visible(page: Cdp, selector: str) -> bool:
    return bool(
        page.eval(
            f"(() => {{ const e = document.querySelector({json.dumps(selector)});"
            "if (!e || e.hidden) return false; const s = getComputedStyle(e);"
            "return s.display !== 'none' && s.visibility !== 'hidden' && e.offsetWidth > 0; })()"
        )
    )


@pytest.mark.rule("CONFORM-REPORT-HTML-001", "CONFORM-REPORT-ESCAPE-001")
def test_report_renders_matrix_and_opens_evidence_on_click(
    page: Cdp, tmp_path: Path, record_property: Any
) -> None:
    _open_report(page, tmp_path)

    # The matrix: 3 defs × 6 rules, every cell labelled in text, not by colour alone.
    assert page.eval("document.querySelectorAll('#matrix thead th.def').length") == 3
    assert page.eval("document.querySelectorAll('#matrix tbody tr.r').length") == 6
    assert page.eval("document.querySelectorAll('#matrix td.c').length") == 18
    assert page.eval("document.querySelectorAll('#matrix td.c button.cell').length") == 18
    failing = '#matrix tr[data-rule="DEMO-STREAM-001"] td[data-def="alpha"]'
    assert page.eval(f"document.querySelector('{failing}').dataset.disp") == "fail"
    label = page.eval(f"document.querySelector('{failing} button').getAttribute('aria-label')")
    assert label.startswith("alpha × DEMO-STREAM-001: FAIL"), label
    stale = '#matrix tr[data-rule="DEMO-RESUME-001"] td[data-def="beta-cli"] button'
    assert "STALE BASELINE" in page.eval(f"document.querySelector('{stale}').ariaLabel")
    assert page.eval(f"document.querySelector('{stale}').textContent") == "⟳"
    assert (
        page.eval(
            'document.querySelector(\'#matrix tr[data-rule="DEMO-USAGE-001"] td[data-def="alpha"]'
            " button').getAttribute('aria-label')"
        )
        == "alpha × DEMO-USAGE-001: PASS"
    )
    assert page.eval("getComputedStyle(document.querySelector('#matrix thead th')).position") == (
        "sticky"
    )
    assert page.eval("document.getElementById('f-count').textContent") == "18 of 18 cells shown"

    # Nothing in the evidence ran as markup (CONFORM-REPORT-ESCAPE-001).
    assert page.eval("typeof window.__pwned") == "undefined"
    assert page.eval("document.images.length") == 0
    assert not _visible(page, "#panel")

    # Click the failing cell: its evidence panel shows, with the recorded text as text.
    page.click(failing + " button")
    page.wait_for("!document.getElementById('panel').hidden")
    assert _visible(page, "#panel")
    assert page.eval("document.getElementById('p-title').textContent") == (
        "alpha × DEMO-STREAM-001"
    )
    assert page.eval("document.getElementById('p-summary').textContent") == (
        "stream broke the turn order"
    )
    assert page.eval("document.getElementById('p-reason').textContent") == (
        "turn_end missing <after> tool_result"
    )
    assert page.eval("document.querySelector('#panel .exp pre').textContent") == (
        "one turn_end event"
    )
    assert page.eval("document.querySelector('#panel .act pre').textContent") == HOSTILE
    arrows = page.eval(
        "Array.from(document.querySelectorAll('#p-transcript .dir')).map(e => e.textContent)"
    )
    assert arrows == ["→ stdin", "← stdout", "⚠ stderr"]
    frames = page.eval(
        "Array.from(document.querySelectorAll('#p-transcript pre')).map(e => e.textContent)"
    )
    assert frames[1] == HOSTILE
    assert "harness conform --agent alpha" in page.eval(
        "document.querySelector('#panel .repro pre').textContent"
    )
    # Control characters in the stderr tail show as marked escapes, the rest as text.
    assert page.eval("document.querySelector('#panel pre.stderr').textContent") == (
        "panic: </pre><h1>boom</h1>\n\\x1b[31mred\\x1b[0m"
    )
    assert page.eval("document.querySelectorAll('#panel pre.stderr .ctl').length") == 2

    # The copy button puts the reproduce command on the clipboard.
    page.eval(
        "window.__copied = null; navigator.clipboard.writeText = "
        "t => { window.__copied = t; return Promise.resolve(); }"
    )
    page.click("#p-copy")
    page.wait_for("document.getElementById('p-copy').textContent === 'Copied ✓'")
    assert page.eval("window.__copied") == "harness conform --agent alpha --rule DEMO-STREAM-001"
    assert page.eval("typeof window.__pwned") == "undefined"
    assert (
        page.eval("document.querySelectorAll('#panel script, #panel img, #panel h1').length") == 0
    )

    shot = page.screenshot(tmp_path / "report.png")
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert shot.stat().st_size > 20_000, "the screenshot is suspiciously small (blank page?)"
    record_property("screenshot", str(shot))
    print(f"screenshot: {shot}")

    # Escape closes the panel.
    page.call("Input.dispatchKeyEvent", type="keyDown", key="Escape", code="Escape")
    page.call("Input.dispatchKeyEvent", type="keyUp", key="Escape", code="Escape")
    page.wait_for("document.getElementById('panel').hidden")

    errors = [e for e in page.events if e["method"] == "Runtime.exceptionThrown"]
    assert not errors, f"the page threw: {errors}"


@pytest.mark.rule("CONFORM-REPORT-HTML-001")
def test_filters_narrow_the_matrix(page: Cdp, tmp_path: Path) -> None:
    _open_report(page, tmp_path)
    visible_rows = (
        "Array.from(document.querySelectorAll('#matrix tbody tr.r'))"
        ".filter(r => getComputedStyle(r).display !== 'none').map(r => r.dataset.rule)"
    )

    def count_is(text: str) -> None:
        count = "document.getElementById('f-count').textContent"
        try:
            page.wait_for(f"{count} === {json.dumps(text)}", timeout=5)
        except AssertionError:
            raise AssertionError(f"the count reads {page.eval(count)!r}, not {text!r}") from None

    # "Problems only": rows with a fail, stale, not tested or flaky cell.
    page.click("#f-problems")
    count_is("6 of 18 cells shown")
    assert page.eval(visible_rows) == [
        "DEMO-MCP-001",
        "DEMO-RESUME-001",
        "DEMO-STREAM-001",
        "DEMO-STREAM-002",
        "DEMO-USAGE-001",
    ]
    # Cells of other verdicts in a shown row stay, dimmed.
    assert page.eval("document.querySelectorAll('#matrix tr:not(.hide) td.dim').length") == 9

    # Tier filter on top: only the capability rules stay.
    page.eval(
        "(() => { const s = document.getElementById('f-tier'); s.value = 'capability';"
        "s.dispatchEvent(new Event('change')); })()"
    )
    count_is("3 of 6 cells shown")
    assert page.eval(visible_rows) == ["DEMO-MCP-001", "DEMO-RESUME-001"]

    # Def filter: other defs' columns hide.
    page.click("#f-reset")
    count_is("18 of 18 cells shown")
    page.eval(
        "(() => { const s = document.getElementById('f-def'); s.value = 'beta-cli';"
        "s.dispatchEvent(new Event('change')); })()"
    )
    count_is("6 of 6 cells shown")
    shown_defs = page.eval(
        "Array.from(document.querySelectorAll('#matrix thead th.def'))"
        ".filter(e => getComputedStyle(e).display !== 'none').map(e => e.dataset.def)"
    )
    assert shown_defs == ["beta-cli"]

    # A summary chip shows one verdict only; rule text search narrows rows.
    page.click("#f-reset")
    page.click('.chip[data-only="stale"]')
    count_is("1 of 18 cells shown")
    assert page.eval(visible_rows) == ["DEMO-RESUME-001"]
    page.click("#f-reset")
    page.eval(
        "(() => { const s = document.getElementById('f-text'); s.value = 'no such rule';"
        "s.dispatchEvent(new Event('input')); })()"
    )
    count_is("0 of 0 cells shown")
    assert _visible(page, "#empty")
    page.eval(
        "(() => { const s = document.getElementById('f-text'); s.value = 'carries the cost';"
        "s.dispatchEvent(new Event('input')); })()"
    )
    count_is("3 of 3 cells shown")
    assert page.eval(visible_rows) == ["DEMO-USAGE-001"]
    errors = [e for e in page.events if e["method"] == "Runtime.exceptionThrown"]
    assert not errors, f"the page threw: {errors}"


@pytest.mark.rule("CONFORM-REPORT-SIZE-001", "CONFORM-REPORT-HTML-001")
def test_every_def_column_of_100_defs_is_in_view_at_1400_px(
    page: Cdp, tmp_path: Path, record_property: Any
) -> None:
    _open_report(page, tmp_path, large_verdict(100))
    assert page.eval("document.querySelectorAll('#matrix thead th.def').length") == 100
    assert page.eval("document.documentElement.scrollWidth") <= VIEWPORT[0]
    assert page.eval(
        "(() => { const w = document.getElementById('wrap');"
        "return w.scrollWidth <= w.clientWidth; })()"
    )
    cut = page.eval(
        "(() => { const w = document.getElementById('wrap'); const box = w.getBoundingClientRect();"
        "const right = box.left + w.clientLeft + w.clientWidth;"
        "return Array.from(document.querySelectorAll('#matrix thead th.def'))"
        ".filter(th => th.getBoundingClientRect().right > right + 0.5)"
        ".map(th => th.dataset.def); })()"
    )
    assert cut == []
    # Hovering a cell shows its verdict and reason (set from the page's data).
    page.eval(
        "document.querySelector('#matrix td.d-fail button')"
        ".dispatchEvent(new MouseEvent('mouseover', {bubbles: true}))"
    )
    title = page.eval("document.querySelector('#matrix td.d-fail button').title")
    assert title.startswith("FAIL: ") and " broken in agent-000" in title
    # The def filter hides the bands without that def.
    page.eval(
        "(() => { const s = document.getElementById('f-def'); s.value = 'agent-050';"
        "s.dispatchEvent(new Event('change')); })()"
    )
    shown = page.eval(
        "Array.from(document.querySelectorAll('#matrix table.matrix'))"
        ".filter(t => getComputedStyle(t).display !== 'none').length"
    )
    assert shown == 1
    shot = tmp_path / "report-100-defs.png"
    png = page.call("Page.captureScreenshot", format="png")["data"]
    shot.write_bytes(base64.b64decode(png))
    record_property("screenshot", str(shot))
    errors = [e for e in page.events if e["method"] == "Runtime.exceptionThrown"]
    assert not errors, f"the page threw: {errors}"
