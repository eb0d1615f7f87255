"""Read a Snakemake HTML report as a reader sees it, in headless Chromium.

The report is a single-page application: its result lists exist only after a click on a
category, so the page is driven through the Chrome DevTools Protocol over
``--remote-debugging-pipe`` (messages are JSON, NUL-terminated, on file descriptors 3 and 4;
https://chromedevtools.github.io/devtools-protocol/). Standard library only.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
import time
from pathlib import Path

NAV_SKIP = {"General", "Workflow", "Statistics", "About", "Results", ""}


class Chromium:
    """A headless Chromium child process with one page attached (``--no-sandbox``: CI runs as root)."""

    def __init__(self, binary: str, profile: Path) -> None:
        to_child, self._w = os.pipe()
        self._r, from_child = os.pipe()

        def remap():
            os.dup2(to_child, 3)
            os.dup2(from_child, 4)

        env = {**os.environ, "HOME": str(profile), "XDG_CONFIG_HOME": str(profile), "XDG_CACHE_HOME": str(profile)}
        self.proc = subprocess.Popen(
            [binary, "--headless", "--no-sandbox", "--disable-gpu", "--remote-debugging-pipe",
             f"--user-data-dir={profile}", "--no-first-run", "about:blank"],
            preexec_fn=remap, pass_fds=(3, 4), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(to_child)
        os.close(from_child)
        self._buf, self._id = b"", 0
        target = self.send("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.send("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]

    def send(self, method: str, session: str | None = None, **params) -> dict:
        """Send one protocol command and return its result (events in between are skipped)."""
        self._id += 1
        msg = {"id": self._id, "method": method, "params": params} | ({"sessionId": session} if session else {})
        os.write(self._w, json.dumps(msg).encode() + b"\0")
        while True:
            while b"\0" not in self._buf:
                chunk = os.read(self._r, 1 << 20)
                if not chunk:
                    raise RuntimeError("chromium closed the pipe")
                self._buf += chunk
            raw, self._buf = self._buf.split(b"\0", 1)
            reply = json.loads(raw)
            if reply.get("id") == self._id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply["result"]

    def js(self, expression: str):
        """Evaluate ``expression`` in the page and return its value."""
        r = self.send("Runtime.evaluate", self.session, expression=expression, awaitPromise=True, returnByValue=True)
        return r["result"].get("value")

    def wait(self, expression: str, timeout: float = 30) -> None:
        t0 = time.monotonic()
        while not self.js(expression):
            if time.monotonic() - t0 > timeout:
                raise TimeoutError(expression)
            time.sleep(0.1)

    def close(self) -> None:
        try:
            self.send("Browser.close")
        except (RuntimeError, OSError):
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def _click(text: str) -> str:
    return ("(() => { const a = [...document.querySelectorAll('nav a')].find(a => a.textContent.trim() === "
            + json.dumps(text) + "); if (!a) return false; a.click(); return true; })()")


NAV_LINKS = "[...document.querySelectorAll('nav a')].map(a => a.textContent.trim())"
ROWS = "[...document.querySelectorAll('nav table tbody tr')].map(r => r.innerText.trim())"


def report_listing(html: Path, binary: str = "chromium") -> dict[str, list[str]]:
    """Open ``html`` and click through every result category (and subcategory) as a reader
    would; returns {"category / subcategory": [row text, ...]} of the result tables shown.

    Raises:
        TimeoutError: the page did not render a menu or a listing.
    """
    with tempfile.TemporaryDirectory(prefix="chromium-") as profile:
        b = Chromium(binary, Path(profile))
        try:
            b.send("Page.navigate", b.session, url=Path(html).resolve().as_uri())
            b.wait("document.querySelector('#app nav') !== null")
            categories = [c for c in b.js(NAV_LINKS) if c not in NAV_SKIP]
            out: dict[str, list[str]] = {}
            for cat in categories:
                assert b.js(_click(cat)), cat
                b.wait("document.querySelector('nav table') !== null || "
                       "[...document.querySelectorAll('nav a')].length > 0")
                time.sleep(0.3)
                if b.js("document.querySelector('nav table') !== null"):
                    out[cat] = b.js(ROWS)
                else:  # subcategories first
                    subs = [s for s in b.js(NAV_LINKS) if s not in NAV_SKIP and s != cat]
                    for sub in subs:
                        assert b.js(_click(sub)), sub
                        b.wait("document.querySelector('nav table') !== null")
                        out[f"{cat} / {sub}"] = b.js(ROWS)
                        b.js(_click(cat))
                        time.sleep(0.3)
                b.js(_click("Results"))
                time.sleep(0.3)
            return out
        finally:
            b.close()
