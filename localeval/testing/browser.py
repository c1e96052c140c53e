"""Open a page in headless Chromium: the DOM after scripts ran, and what the console said.

For tests that check report.html and comparison.html as a person's browser
shows them (scripts run, Content-Security-Policy enforced), not as text.
Chromium is Debian's package (``apt-get install chromium``); .ci/run installs it.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

__all__ = ["chromium_path", "headless_dom"]


def chromium_path() -> str | None:
    """The Chromium executable, or None when it is not installed."""
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    return "/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None


def headless_dom(url: str, profile: Path, *, timeout: float = 90) -> tuple[str, list[str]]:
    """(DOM after scripts ran, console lines) for ``url``, with a throwaway ``profile`` folder.

    Chromium logs every console message as ":CONSOLE"; uncaught exceptions and
    CSP violations land in the same stream, so all of them are returned.
    """
    exe = chromium_path()
    if exe is None:
        raise FileNotFoundError("chromium is not installed (apt-get install chromium)")
    cmd = [exe, "--headless", "--no-sandbox", "--disable-gpu",
           "--disable-background-networking", "--disable-component-update", "--disable-sync",
           "--no-first-run", f"--user-data-dir={profile}", "--enable-logging=stderr", "--v=0",
           "--dump-dom", url]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if p.returncode != 0:
        raise RuntimeError(f"chromium exited {p.returncode}: {p.stderr[-2000:]}")
    console = [ln for ln in p.stderr.splitlines()
               if ":CONSOLE" in ln or "Uncaught" in ln or "console(error)" in ln
               or "Content Security Policy" in ln]
    return p.stdout, console
