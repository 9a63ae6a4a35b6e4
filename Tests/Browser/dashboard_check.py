#!/usr/bin/python3
"""Drives refreshd's web dashboard in headless Chromium (selenium + chromium-driver).

Run by RefreshdWebTests (DashboardBrowserTests) against a real `refreshd run --http`. Prints
one JSON object with what it saw; the Swift test checks it. Exits 0 when it could run the
browser at all (the checks themselves are judged by the test), 3 when chromium or selenium is
missing.

  dashboard_check.py BASE TOKEN OUTDIR REFRESHD STATE JOB WIDGET_KIND WIDGET_FAMILY TEMPLATE
"""
import json
import subprocess
import sys
import time
import urllib.error
import urllib.request


def main():
    base, token, out, refreshd, state, job, kind, family, template = sys.argv[1:10]
    result = {"pages": {}, "errors": [], "screenshots": []}
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
        from selenium.webdriver.common.by import By
    except ImportError as error:
        print(json.dumps({"missing": "python3-selenium: %s" % error}))
        return 3
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--window-size=1400,1000", "--hide-scrollbars"):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    try:
        driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    except Exception as error:  # no chromium, no driver
        print(json.dumps({"missing": "chromium/chromedriver: %s" % error}))
        return 3
    driver.set_page_load_timeout(15)

    def console(name):
        # Console messages of level SEVERE (errors, CSP violations, failed loads).
        for entry in driver.get_log("browser"):
            if entry.get("level") == "SEVERE":
                result["errors"].append("%s: %s" % (name, entry.get("message")))

    def wait(condition, timeout):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            try:
                if condition():
                    return True
            except Exception:
                pass
            time.sleep(0.02)
        return False

    def screenshot(name):
        height = driver.execute_script("return Math.min(4000, document.documentElement.scrollHeight)")
        driver.set_window_size(1400, max(800, height))
        path = "%s/%s.png" % (out, name)
        driver.save_screenshot(path)
        result["screenshots"].append(path)
        driver.set_window_size(1400, 1000)

    try:
        # Live: a run started with `refreshd ctl` shows on the open overview within 1 s.
        driver.get(base + "/")
        wait(lambda: driver.find_element(By.ID, "live").text == "live", 5)
        driver.execute_script("window.__notReloaded = 42")
        launched = subprocess.run([refreshd, "ctl", "simulate-launch", job, "--state", state],
                                  capture_output=True, text=True, timeout=20)
        started = time.monotonic()
        words = launched.stdout.split()
        run = words[words.index("run") + 1].rstrip(",") if "run" in words else None
        result["ctl"] = launched.stdout.strip() + launched.stderr.strip()
        selector = "tr.running-run[data-run='%s']" % run
        seen = wait(lambda: len(driver.find_elements(By.CSS_SELECTOR, selector)) > 0, 3)
        result["liveRun"] = {"run": run, "seen": seen, "seconds": round(time.monotonic() - started, 3),
                             "notReloaded": driver.execute_script("return window.__notReloaded") == 42}
        console("overview-live")
        screenshot("overview-live")

        pages = {"overview": "/", "jobs": "/jobs", "job": "/jobs/" + job, "widgets": "/widgets",
                 "activities": "/activities", "template": "/jobs/" + template, "simulate": "/simulate?days=3"}
        for name, path in pages.items():
            driver.get(base + path)
            live = wait(lambda: driver.find_element(By.ID, "live").text == "live", 5)
            result["pages"][name] = {"title": driver.title, "live": live,
                                     "h1": driver.find_element(By.TAG_NAME, "h1").text}
            if name == "overview":
                # The picture is loaded (drawn by the simulator's renderer).
                result["pages"][name]["picture"] = wait(lambda: driver.execute_script(
                    "var i = document.querySelector('img.picture'); return i && i.complete && i.naturalWidth > 0"), 5)
            if name == "job":
                # The run the live check started has ended and shows its output.
                wait(lambda: len(driver.find_elements(By.CSS_SELECTOR, "article.run details")) > 0 and
                     "running" not in driver.find_element(By.CSS_SELECTOR, "article.run h3").text, 8)
            if name == "overview":
                result["pages"][name]["heldNotifications"] = len(driver.find_elements(By.CSS_SELECTOR, "tr.held-notification"))
            if name == "template":
                result["pages"][name]["instances"] = len(driver.find_elements(By.CSS_SELECTOR, "tr.instance"))
                result["pages"][name]["failingInstances"] = [e.text for e in driver.find_elements(By.CSS_SELECTOR, "tr.failing-instance td:first-child")]
                result["pages"][name]["count"] = driver.find_element(By.CSS_SELECTOR, "#instances h2").text
            if name == "simulate":
                # The report's table and its picture (the simulator's SVG) are shown.
                result["pages"][name]["picture"] = wait(lambda: driver.execute_script(
                    "var i = document.getElementById('simulation-picture'); return i && i.complete && i.naturalWidth > 0"), 15)
                result["pages"][name]["report"] = driver.find_element(By.CSS_SELECTOR, "pre.report").text[:20000]
            if name == "widgets":
                result["widgetImage"] = wait(lambda: driver.execute_script(
                    "var i = document.querySelector('img.rendition'); return i && i.complete && i.naturalWidth > 0"), 5)
            time.sleep(0.3)
            screenshot(name)
            console(name)

        # Actions: refused without the token (401) and with a wrong one (403); done with it.
        def post(path, header):
            request = urllib.request.Request(base + path, method="POST", data=b"")
            if header:
                request.add_header("Authorization", header)
            try:
                with urllib.request.urlopen(request, timeout=10) as response:
                    return response.status, json.loads(response.read() or b"{}")
            except urllib.error.HTTPError as error:
                return error.code, json.loads(error.read() or b"{}")
        cancel = "/api/jobs/%s/cancel" % job
        result["actions"] = {"none": post(cancel, None)[0], "wrong": post(cancel, "Bearer " + "x" * 24)[0]}
        # With the token, from the page: the button sends it from sessionStorage.
        driver.get(base + "/jobs/" + job)
        driver.execute_script("sessionStorage.setItem('refreshd-token', arguments[0])", token)
        driver.find_element(By.CSS_SELECTOR, "form.action[action$='/run'] button").click()
        wait(lambda: driver.find_element(By.ID, "action-result").text != "", 5)
        result["actions"]["button"] = driver.find_element(By.ID, "action-result").text
        # An instance added from the template's page with the token, then removed from it.
        driver.get(base + "/jobs/" + template)
        driver.find_element(By.CSS_SELECTOR, "form.action input[name='key']").send_keys("erin")
        driver.find_element(By.CSS_SELECTOR, "form.action[action$='/instances'] button").click()
        wait(lambda: driver.find_element(By.ID, "action-result").text != "" if driver.find_elements(By.ID, "action-result") else False, 5)
        wait(lambda: len(driver.find_elements(By.CSS_SELECTOR, "form.action[action$='/instances/erin/remove']")) > 0, 5)
        result["actions"]["instanceAdded"] = len(driver.find_elements(By.CSS_SELECTOR, "form.action[action$='/instances/erin/remove']")) > 0
        screenshot("template-after-add")
        driver.find_element(By.CSS_SELECTOR, "form.action[action$='/instances/erin/remove'] button").click()
        result["actions"]["instanceRemoved"] = wait(lambda: len(driver.find_elements(By.CSS_SELECTOR, "form.action[action$='/instances/erin/remove']")) == 0, 5)
        console("instances")
        status, body = post("/api/widgets/%s/reload" % kind, "Bearer " + token)
        result["actions"]["reload"] = [status, body.get("message")]
        status, body = post("/api/activities/web-pack/end", "Bearer " + token)
        result["actions"]["end"] = [status, body.get("message") or body.get("error")]
        console("actions")
    finally:
        driver.quit()
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
