#!/usr/bin/python3
"""Loads dashboard pages in headless Chromium at 1400 px and at a 390 px phone: what each page's
width comes to (it must fit without scrolling sideways), its console errors, and screenshots.

`measure` is shared with dashboard_check.py; run alone (RefreshdPostgresTests' cluster
dashboard test) it prints one JSON object:

  page_widths.py BASE OUTDIR PATH...

Exits 0 when the browser ran (the test judges the widths), 3 when chromium or selenium is missing.
"""
import json
import os
import sys
import time


def measure(driver, base, pages, shots=None, console=None):
    """{"WIDTH PATH": [scrollWidth, innerWidth]} for every page at both widths; screenshots of
    `shots` ([(name, path, directory)]) into their directory, at 1400 px for a name beginning
    "desktop-", at 390 px otherwise; console errors by "WIDTH PATH" when given a dict."""
    widths = {}
    for width, height in ((1400, 1000), (390, 844)):
        driver.set_window_size(width, height)
        for path in pages:
            driver.get(base + path)
            time.sleep(0.2)
            widths["%d %s" % (width, path)] = driver.execute_script(
                "return [document.documentElement.scrollWidth, window.innerWidth]")
            if console is not None:
                errors = [entry["message"] for entry in driver.get_log("browser") if entry.get("level") == "SEVERE"]
                if errors:
                    console["%d %s" % (width, path)] = errors
        if width == 390:
            for name, path, directory in shots or []:
                if name.startswith("desktop-"):
                    continue
                driver.get(base + path)
                time.sleep(0.3)
                driver.save_screenshot("%s/%s.png" % (directory, name))
        if width == 1400:
            for name, path, directory in shots or []:
                if name.startswith("desktop-"):
                    driver.get(base + path)
                    time.sleep(0.3)
                    driver.save_screenshot("%s/%s.png" % (directory, name))
    driver.set_window_size(1400, 1000)
    return widths


def start_driver():
    """Debian's chromium, headless, at 1400x1000, keeping the console: (driver, None), or (None,
    what is missing) to print as {"missing": ...} (exit 3)."""
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError as error:
        return None, "python3-selenium: %s" % error
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--window-size=1400,1000", "--hide-scrollbars"):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    try:
        driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    except Exception as error:  # no chromium, no driver
        return None, "chromium/chromedriver: %s" % error
    driver.set_page_load_timeout(15)
    return driver, None


def main():
    base, out = sys.argv[1:3]
    pages = sys.argv[3:]
    driver, missing = start_driver()
    if missing:
        print(json.dumps({"missing": missing}))
        return 3
    console = {}
    try:
        shots = [("phone-" + (path.strip("/").replace("/", "-") or "overview"), path, out) for path in pages[:2]]
        shots.append(("desktop-" + (pages[0].strip("/").replace("/", "-") or "overview"), pages[0], out))
        widths = measure(driver, base, pages, shots, console)
    finally:
        driver.quit()
    print(json.dumps({"widths": widths, "console": console}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
