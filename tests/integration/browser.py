"""A real headless Chromium for the dashboard's browser tests (docs/testing.md).

    from browser import browser, artifacts_dir, console_errors

    def test_x(browser, server):            # the pytest fixture: one browser per test
        browser.get(server_url(server))
        ...
        assert console_errors(browser) == []

`open_browser()` is the same as a context manager. The driver is Selenium's (Debian
python3-selenium) on the system's chromium and chromium-driver, `--headless=new
--no-sandbox` (CI runs as root), 1280×900, with the browser console captured
(goog:loggingPrefs browser=ALL): `console_errors(driver)` reads it (which empties it) and
answers the SEVERE entries that are not expected. Screenshots go to `artifacts_dir()`:
$POSTHORN_ARTIFACTS_DIR/dashboard, or build/test-artifacts/dashboard of the source tree
(pg/ under it for a file's PostgreSQL run).
"""
import contextlib
import os
import pathlib
import shutil

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import WebDriverWait

ROOT = pathlib.Path(__file__).resolve().parents[2]
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"

__all__ = ["By", "EC", "artifacts_dir", "browser", "console_errors", "open_browser",
           "screenshot", "wait", "server_url"]


def server_url(server, path: str = "/") -> str:
    """The dashboard of a support.posthorn.Posthorn, as the browser reaches it."""
    return f"http://127.0.0.1:{server.http_port}{path}"


@contextlib.contextmanager
def open_browser(width: int = 1280, height: int = 900):
    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                "--no-first-run", "--disable-extensions", "--disable-background-networking",
                "--lang=en-US",
                f"--window-size={width},{height}"):
        opts.add_argument(arg)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=opts)
    driver.set_page_load_timeout(30)
    try:
        yield driver
    finally:
        driver.quit()


@pytest.fixture
def browser():
    """A headless Chromium (1280×900) with its console captured; quit at the end."""
    with open_browser() as driver:
        yield driver


def wait(driver, timeout: float = 15.0) -> WebDriverWait:
    return WebDriverWait(driver, timeout)


def console_errors(driver, allowed=()) -> list[dict]:
    """The SEVERE entries of the browser console since the last read (CSP violations, script
    errors, failed loads), less those whose message contains one of `allowed` (for example
    a 401 the test caused on purpose)."""
    return [e for e in driver.get_log("browser")
            if e.get("level") == "SEVERE" and not any(a in e.get("message", "") for a in allowed)]


def artifacts_dir() -> pathlib.Path:
    base = os.environ.get("POSTHORN_ARTIFACTS_DIR")
    d = pathlib.Path(base) / "dashboard" if base else ROOT / "build" / "test-artifacts" / "dashboard"
    # The PostgreSQL run of a file (ctest may run it at the same time) writes under pg/.
    if os.environ.get("POSTHORN_TEST_STORE") == "pg":
        d = d / "pg"
    d.mkdir(parents=True, exist_ok=True)
    return d


def screenshot(driver, name: str, width: int, height: int) -> pathlib.Path:
    """The page at width×height, written to artifacts_dir()/<name>-<width>.png; asserts it
    is a PNG that is not empty."""
    driver.set_window_size(width, height)
    path = artifacts_dir() / f"{name}-{width}.png"
    assert driver.save_screenshot(str(path)), path
    data = path.read_bytes()
    assert len(data) > 1000 and data.startswith(b"\x89PNG\r\n\x1a\n"), (path, len(data))
    return path
