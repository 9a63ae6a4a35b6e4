#!/usr/bin/python3
"""Drives refreshd's web dashboard in headless Chromium (selenium + chromium-driver).

Run by RefreshdWebTests (DashboardBrowserTests) against a real `refreshd run --http`. Prints
one JSON object with what it saw; the Swift test checks it. Exits 0 when it could run the
browser at all (the checks themselves are judged by the test), 3 when chromium or selenium is
missing.

  dashboard_check.py BASE TOKEN OUTDIR REFRESHD STATE JOB WIDGET_KIND WIDGET_FAMILY TEMPLATE PID

After the pages and actions: live updates leave the operator alone (a typed value, its focus and
an open <details> survive 20 events; action results stay 5 s later, on every page), every page
fits 390 px and 1400 px without scrolling sideways, and, last, refreshd (PID) is stopped and the
page must say its stream is down and stop its countdowns.
"""
import json
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import page_widths  # noqa: E402


def main():
    base, token, out, refreshd, state, job, kind, family, template, pid = sys.argv[1:11]
    result = {"pages": {}, "errors": [], "screenshots": [], "refreshd": refreshd, "state": state}
    driver, missing = page_widths.start_driver()
    if missing:
        print(json.dumps({"missing": missing}))
        return 3
    from selenium.webdriver.common.by import By

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

    def message():
        # The action results shown (they stay until dismissed), newest last.
        items = driver.find_elements(By.CSS_SELECTOR, "#messages .message")
        return items[-1].text.rstrip("×").strip() if items else ""

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
                 "activities": "/activities", "template": "/jobs/" + template, "simulate": "/simulate?days=3",
                 "failures": "/failures"}
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
            if name == "failures":
                result["pages"][name]["exhausted"] = [e.get_attribute("data-job") for e in driver.find_elements(By.CSS_SELECTOR, "#exhausted tr.failure-row")]
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
        wait(lambda: message() != "", 5)
        result["actions"]["button"] = message()
        # An instance added from the template's page with the token, then removed from it.
        driver.get(base + "/jobs/" + template)
        driver.find_element(By.CSS_SELECTOR, "form.action input[name='key']").send_keys("erin")
        driver.find_element(By.CSS_SELECTOR, "form.action[action$='/instances'] button").click()
        wait(lambda: message() != "", 5)
        wait(lambda: len(driver.find_elements(By.CSS_SELECTOR, "form.action[action$='/instances/erin/remove']")) > 0, 5)
        result["actions"]["instanceAdded"] = len(driver.find_elements(By.CSS_SELECTOR, "form.action[action$='/instances/erin/remove']")) > 0
        screenshot("template-after-add")
        driver.find_element(By.CSS_SELECTOR, "form.action[action$='/instances/erin/remove'] button").click()
        result["actions"]["instanceRemoved"] = wait(lambda: len(driver.find_elements(By.CSS_SELECTOR, "form.action[action$='/instances/erin/remove']")) == 0, 5)
        console("instances")
        # The Failures page (issue 33): Retry now for one row, then for the whole list, which
        # asks first (dismissed: nothing sent; accepted: each submitted).
        driver.get(base + "/failures")
        wait(lambda: driver.find_element(By.ID, "live").text == "live", 5)
        failures = {}
        shown = len(driver.find_elements(By.CSS_SELECTOR, "#messages .message"))
        driver.find_element(By.CSS_SELECTOR, "#exhausted tr.failure-row form.action button").click()
        wait(lambda: len(driver.find_elements(By.CSS_SELECTOR, "#messages .message")) > shown, 5)
        failures["one"] = message()
        bulk = "#exhausted form.bulk button"
        def confirm(accept):
            driver.find_element(By.CSS_SELECTOR, bulk).click()
            if not wait(lambda: driver.switch_to.alert is not None, 3):
                return None
            alert = driver.switch_to.alert
            text = alert.text
            if accept:
                alert.accept()
            else:
                alert.dismiss()
            return text
        shown = len(driver.find_elements(By.CSS_SELECTOR, "#messages .message"))
        failures["confirm"] = confirm(False)
        wait(lambda: len(driver.find_elements(By.CSS_SELECTOR, "#messages .message")) > shown, 3)
        failures["dismissed"] = message()
        shown = len(driver.find_elements(By.CSS_SELECTOR, "#messages .message"))
        confirm(True)
        wait(lambda: len(driver.find_elements(By.CSS_SELECTOR, "#messages .message")) > shown, 8)
        failures["bulk"] = message()
        result["failures"] = failures
        screenshot("failures-after-retry")
        console("failures")
        status, body = post("/api/widgets/%s/reload" % kind, "Bearer " + token)
        result["actions"]["reload"] = [status, body.get("message")]
        status, body = post("/api/activities/web-pack/end", "Bearer " + token)
        result["actions"]["end"] = [status, body.get("message") or body.get("error")]
        console("actions")
        operator(driver, By, base, token, job, template, kind, int(pid), result, wait, message, post, console)
    finally:
        driver.quit()
    print(json.dumps(result))
    return 0



def operator(driver, By, base, token, job, template, kind, pid, result, wait, message, post, console):
    """What an operator feels: live updates that leave them alone, results that stay, any
    screen, and a page that says when refreshd is gone."""
    checks = result["operator"] = {}

    def attempt(name, body):
        # A phase that throws (an element replaced under the driver: the bug itself) is recorded,
        # and the next phases still run.
        try:
            body()
        except Exception as error:
            checks.setdefault(name, {})["error"] = repr(error)[:300]
    stop = threading.Event()

    def pump():
        # Events: "Run now" of a job that runs `true` (submitted, launched, finished: 3 events).
        while not stop.is_set():
            post("/api/jobs/web.nightly/run", "Bearer " + token)
            stop.wait(0.3)

    def events(count, timeout=20, duration=0):
        # Waits until the open page has been sent `count` more events (those it refreshes for),
        # and at least `duration` seconds, with events coming all along.
        begun = time.monotonic()
        driver.execute_script("""
            window.__seen = 0;
            var s = new EventSource('/api/events');
            s.addEventListener('observation', function (e) { if (JSON.parse(e.data).kind !== 'output') window.__seen++; });
            window.__counter = s;""")
        worker = threading.Thread(target=pump)
        stop.clear()
        worker.start()
        try:
            seen = wait(lambda: driver.execute_script("return window.__seen") >= count, timeout)
            time.sleep(max(0, duration - (time.monotonic() - begun)))
            time.sleep(0.6)  # the refresh of the last event lands
        finally:
            stop.set()
            worker.join()
        got = driver.execute_script("window.__counter.close(); return window.__seen")
        return seen, got

    # A half-typed key keeps its value and its focus through 20 events.
    def phase_typed():
        driver.get(base + "/jobs/" + template)
        wait(lambda: driver.find_element(By.ID, "live").text == "live", 5)
        field = driver.find_element(By.CSS_SELECTOR, "form.action input[name='key']")
        field.send_keys("half-typ")
        _, got = events(20)
        field = driver.find_element(By.CSS_SELECTOR, "form.action input[name='key']")
        checks["typed"] = {"events": got, "value": field.get_attribute("value"),
                           "focused": driver.execute_script("return document.activeElement && document.activeElement.name === 'key'")}

    attempt("typed", phase_typed)

    # An opened <details> stays open, and a reload's result stays 5 s with events coming.
    def phase_widgets():
        driver.get(base + "/widgets")
        wait(lambda: driver.find_element(By.ID, "live").text == "live", 5)
        driver.execute_script("sessionStorage.setItem('refreshd-token', arguments[0])", token)
        driver.find_element(By.CSS_SELECTOR, "article.widget details summary").click()
        driver.find_element(By.CSS_SELECTOR, "form.action[action$='/reload'] button").click()
        wait(lambda: message() != "", 5)
        said = message()
        _, got = events(20, duration=5)
        checks["widgets"] = {"events": got, "open": driver.execute_script("return document.querySelector('article.widget details').open"),
                             "message": said, "after5s": message()}

    attempt("widgets", phase_widgets)

    # Activities: a wrong token is said and stays; a cancelled token prompt is said too.
    def phase_activities():
        driver.get(base + "/activities")
        wait(lambda: driver.find_element(By.ID, "live").text == "live", 5)
        driver.execute_script("sessionStorage.setItem('refreshd-token', 'x'.repeat(24))")
        buttons = driver.find_elements(By.CSS_SELECTOR, "form.action[action$='/end'] button")
        if buttons:
            buttons[0].click()
            wait(lambda: message() != "", 5)
        wrong = message()
        driver.get_log("browser")  # the refused request (403) the browser logs is the point here
        _, got = events(12, duration=5)
        checks["activities"] = {"events": got, "message": wrong, "after5s": message()}
        buttons = driver.find_elements(By.CSS_SELECTOR, "form.action[action$='/end'] button")
        cancelled = ""
        if buttons:
            buttons[0].click()  # no token now (the wrong one was forgotten): the prompt asks
            if wait(lambda: driver.switch_to.alert is not None, 3):
                driver.switch_to.alert.dismiss()
            wait(lambda: "no token" in message(), 3)
            cancelled = message()
        checks["cancelled"] = cancelled

    attempt("activities", phase_activities)

    # The job page: the button's result is still there 5 s later, with events coming.
    def phase_job():
        driver.get(base + "/jobs/" + job)
        wait(lambda: driver.find_element(By.ID, "live").text == "live", 5)
        driver.execute_script("sessionStorage.setItem('refreshd-token', arguments[0])", token)
        driver.find_element(By.CSS_SELECTOR, "form.action[action$='/cancel'] button").click()
        wait(lambda: message() != "", 5)
        said = message()
        _, got = events(12, duration=5)
        checks["job"] = {"events": got, "message": said, "after5s": message()}
        # Until dismissed: the button takes it away.
        shown = len(driver.find_elements(By.CSS_SELECTOR, "#messages .message"))
        driver.find_elements(By.CSS_SELECTOR, "#messages .message .dismiss")[-1].click()
        checks["job"]["dismissed"] = len(driver.find_elements(By.CSS_SELECTOR, "#messages .message")) == shown - 1
        console("operator")

    attempt("job", phase_job)

    # Search (issue 33, item 5): a half-typed search keeps its value and focus through 20
    # events; sent (Enter: a GET form), it finds the failing instance; the results page both
    # ways with their position; the Runs page filters by outcome.
    def phase_search():
        from selenium.webdriver.common.keys import Keys
        keys = ["p%02d" % i for i in range(60)]
        subprocess.run([result["refreshd"], "ctl", "instance", "add", template] + keys + ["--state", result["state"]],
                       capture_output=True, text=True, timeout=30)
        search = checks["search"] = {}
        driver.get(base + "/jobs/" + template)
        wait(lambda: driver.find_element(By.ID, "live").text == "live", 5)
        field = driver.find_element(By.ID, "instances-q")
        field.click()
        field.send_keys("bo")
        _, got = events(20)
        field = driver.find_element(By.ID, "instances-q")
        search["typed"] = {"events": got, "value": field.get_attribute("value"),
                           "focused": driver.execute_script("return document.activeElement && document.activeElement.id === 'instances-q'")}
        field.send_keys(Keys.ENTER)
        wait(lambda: "q=bo" in driver.current_url, 5)
        wait(lambda: driver.find_element(By.ID, "live").text == "live", 5)
        search["found"] = [e.text for e in driver.find_elements(By.CSS_SELECTOR, "tr.instance td:first-child")]
        search["foundPosition"] = driver.find_element(By.CSS_SELECTOR, "#instances-pager .position").text
        search["kept"] = driver.find_element(By.ID, "instances-q").get_attribute("value")
        # The search's results as an operator sees them (README's picture of search).
        driver.set_window_size(1400, 1400)
        driver.execute_script("document.getElementById('instances').scrollIntoView()")
        path = os.path.join(os.path.dirname(result["screenshots"][0]), "template-search.png")
        driver.save_screenshot(path)
        result["screenshots"].append(path)
        driver.set_window_size(1400, 1000)
        driver.get(base + "/jobs/" + template)
        search["first"] = driver.find_element(By.CSS_SELECTOR, "#instances-pager .position").text
        driver.find_element(By.CSS_SELECTOR, "#instances-pager a[rel=next]").click()
        wait(lambda: "after=" in driver.current_url, 5)
        search["next"] = driver.find_element(By.CSS_SELECTOR, "#instances-pager .position").text
        search["nextRows"] = len(driver.find_elements(By.CSS_SELECTOR, "tr.instance"))
        driver.find_element(By.CSS_SELECTOR, "#instances-pager a[rel=prev]").click()
        wait(lambda: "beforeKey=" in driver.current_url, 5)
        search["previous"] = driver.find_element(By.CSS_SELECTOR, "#instances-pager .position").text
        driver.get(base + "/runs")
        driver.find_element(By.CSS_SELECTOR, "#runs-outcome option[value=failed]").click()
        driver.find_element(By.CSS_SELECTOR, "#runs-form button").click()
        wait(lambda: "outcome=failed" in driver.current_url, 5)
        search["failedRuns"] = sorted(set(e.text for e in driver.find_elements(By.CSS_SELECTOR, "tr.run-row td:nth-child(4)")))
        console("search")

    attempt("search", phase_search)

    # Every page at 1400 px and at 390 px: no sideways scroll of the page itself.
    def phase_widths():
        pages = ["/", "/jobs", "/jobs/" + job, "/jobs/" + template, "/jobs/" + template + "%5Balice%5D", "/widgets",
                 "/activities", "/simulate", "/simulate?days=3", "/failures", "/no-such-page",
                 "/runs", "/runs?outcome=failed", "/jobs?q=web&state=failing", "/jobs/" + template + "?q=p&state=pending"]
        shots = os.path.dirname(result["screenshots"][0])
        checks["widths"] = page_widths.measure(driver, base, pages, [
            ("phone-overview", "/", shots), ("phone-template", "/jobs/" + template, shots), ("phone-failures", "/failures", shots),
            ("phone-runs", "/runs", shots)])

    attempt("widths", phase_widths)

    # Refreshd stops: the page says its stream is down, and no countdown moves any more.
    def phase_down():
        driver.get(base + "/")
        wait(lambda: driver.find_element(By.ID, "live").text == "live", 5)
        texts = "return Array.prototype.map.call(document.querySelectorAll('[data-countdown]'), function (t) { return t.textContent; })"
        before = driver.execute_script(texts)
        time.sleep(2.2)
        ticking = driver.execute_script(texts) != before
        os.kill(pid, signal.SIGTERM)
        shown = wait(lambda: driver.find_element(By.ID, "stream-down").is_displayed(), 10)
        frozen = driver.execute_script(texts)
        time.sleep(2.2)
        checks["down"] = {"banner": shown, "text": driver.execute_script("var b = document.getElementById('stream-down'); return b && b.textContent"),
                          "tickedWhileUp": ticking, "frozen": driver.execute_script(texts) == frozen}

    attempt("down", phase_down)


if __name__ == "__main__":
    sys.exit(main())
