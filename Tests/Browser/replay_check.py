#!/usr/bin/python3
"""The Simulate page's replay in headless Chromium (ReplayPageTests):

  replay_check.py BASE TOKEN SHOTS QUERY WHATIF

At 1400 px and at a 390 px phone: the replay alone by the plain form (from/to filled in, no
script needed), then a what-if sent by the page's script with the token; the table's columns,
the picture's lanes, the page's width against the window's, whether the picture scrolls in its
own box. Then the what-if with no token (the prompt cancelled). Screenshots into SHOTS
(replay-phone.png, replay-desktop.png). Prints one JSON object; exits 3 when chromium or
selenium is missing.
"""
import json
import sys
import time
import urllib.parse

from page_widths import start_driver


def main():
    base, token, shots, query, what_if = sys.argv[1:6]
    driver, missing = start_driver()
    if missing:
        print(json.dumps({"missing": missing}))
        return 3
    from selenium.webdriver.common.by import By
    fields = dict(urllib.parse.parse_qsl(query))
    result = {"console": {}}

    def wait(condition, timeout=20):
        end = time.time() + timeout
        while time.time() < end:
            try:
                if condition():
                    return True
            except Exception:
                pass
            time.sleep(0.1)
        return False

    def heads():
        return [th.text for th in driver.find_elements(By.CSS_SELECTOR, "#replay-jobs tr:first-child th")]

    def fill(jobs):
        for name, value in (("from", fields["from"]), ("to", fields["to"]), ("jobs", jobs)):
            box = driver.find_element(By.NAME, name)
            box.clear()
            box.send_keys(value)
        driver.find_element(By.CSS_SELECTOR, "form.replay button").click()

    def console(name):
        errors = [e["message"] for e in driver.get_log("browser") if e.get("level") == "SEVERE"]
        if errors:
            result["console"][name] = errors

    try:
        for width, height in ((1400, 1000), (390, 844)):
            driver.set_window_size(width, height)
            r = {}
            driver.get(base + "/simulate/replay")
            driver.execute_script("sessionStorage.setItem('refreshd-token', arguments[0])", token)
            fill("")
            wait(lambda: len(heads()) > 0)
            r["aloneHeads"] = heads()
            driver.get(base + "/simulate/replay")
            fill(what_if)
            wait(lambda: "what if" in heads())
            r["whatIfHeads"] = heads()
            r["lanes"] = len([t for t in driver.find_elements(By.CSS_SELECTOR, "#replay-picture svg text") if " · " in t.text])
            r["page"] = driver.execute_script("return [document.documentElement.scrollWidth, window.innerWidth]")
            r["pictureScrolls"] = driver.execute_script(
                "var b = document.getElementById('replay-picture'); return b.scrollWidth > b.clientWidth")
            driver.save_screenshot("%s/replay-%s.png" % (shots, "phone" if width == 390 else "desktop"))
            console("%d" % width)
            result["%d" % width] = r
        # No token: the prompt cancelled, said, nothing sent.
        driver.get(base + "/simulate/replay")
        driver.execute_script("sessionStorage.removeItem('refreshd-token'); window.prompt = function () { return null; };")
        fill(what_if)
        wait(lambda: "no token given" in driver.find_element(By.ID, "messages").text, 5)
        result["noToken"] = driver.find_element(By.ID, "messages").text
    finally:
        driver.quit()
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
