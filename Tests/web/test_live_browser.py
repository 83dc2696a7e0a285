#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""The page's live H.264 in a real browser: Debian's chromium headless (python3-selenium)
against a real shutterd on the simulated board (LiveWebTests.swift gives BASE_URL, PASSWORD,
OUT_DIR). The preview toggle plays /api/live.mp4 through Media Source Extensions: the video's
currentTime advances, a screenshot goes to OUT_DIR/web-live-390x844.png, and the shown
frame's top rows (luma, as drawn on a canvas) go to OUT_DIR/web-live-label.gray for the
Swift side to read the burned-in frame label from. With LATENCY_SAMPLES=N, N samples of
(CLOCK_MONOTONIC ms once the shown frame was read back, its label rows, the read's own
round trip in ms) go to OUT_DIR/web-live-latency.txt.
"""
import webcheck
from webcheck import ok
import base64, os, time
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

BASE, OUT = os.environ["BASE_URL"], os.environ["OUT_DIR"]
opts = webdriver.ChromeOptions()
opts.binary_location = "/usr/bin/chromium"
for a in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--autoplay-policy=no-user-gesture-required"]:
    opts.add_argument(a)
opts.add_experimental_option("mobileEmulation", {"deviceMetrics": {"width": 390, "height": 844, "pixelRatio": 1}})
driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=opts)
driver.set_window_size(390, 844)
wait = WebDriverWait(driver, 30)
# The label's rows of the frame now shown, as luma bytes (the canvas is the video's own size).
GRAB = """
const v = document.getElementById('live-video');
const c = document.createElement('canvas'); c.width = v.videoWidth; c.height = Math.ceil(v.videoHeight / 8);
const g = c.getContext('2d'); g.drawImage(v, 0, 0, v.videoWidth, v.videoHeight);
const d = g.getImageData(0, 0, c.width, c.height).data;
let out = '';
for (let i = 0; i < d.length; i += 4) out += String.fromCharCode(Math.round(0.299 * d[i] + 0.587 * d[i + 1] + 0.114 * d[i + 2]));
return [c.width, c.height, btoa(out)];
"""
try:
    driver.get(BASE + "/login")
    driver.find_element(By.ID, "password").send_keys(os.environ["PASSWORD"])
    driver.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    wait.until(lambda d: d.current_url.rstrip("/") == BASE)
    ok(driver.execute_script("return MediaSource.isTypeSupported('video/mp4; codecs=\"avc1.42c01f\"')"),
       "this chromium plays H.264 through Media Source Extensions")
    driver.find_element(By.ID, "preview-toggle").click()
    wait.until(lambda d: d.execute_script("const v = document.getElementById('live-video'); return !v.hidden && v.currentTime > 0.5"))
    t0 = driver.execute_script("return document.getElementById('live-video').currentTime")
    time.sleep(1.5)
    t1 = driver.execute_script("return document.getElementById('live-video').currentTime")
    ok(t1 > t0 + 0.5, f"the H.264 preview plays: currentTime {t0:.2f} -> {t1:.2f} s")
    ok(driver.execute_script("return document.getElementById('preview').hidden"), "the MJPEG preview stays off")
    size = driver.execute_script("const v = document.getElementById('live-video'); return [v.videoWidth, v.videoHeight]")
    ok(size[0] > 0 and size[1] > 0, f"the video's size {size[0]}x{size[1]}")
    driver.save_screenshot(os.path.join(OUT, "web-live-390x844.png"))
    w, h, luma = driver.execute_script(GRAB)
    with open(os.path.join(OUT, "web-live-label.gray"), "wb") as f:
        f.write(f"{w} {h}\n".encode())
        f.write(base64.b64decode(luma))
    ok(True, "the frame shown, its label rows saved")
    samples = int(os.environ.get("LATENCY_SAMPLES", "0"))
    if samples:
        with open(os.path.join(OUT, "web-live-latency.txt"), "w") as f:
            for _ in range(samples):
                before = time.clock_gettime(time.CLOCK_MONOTONIC) * 1000
                w, h, luma = driver.execute_script(GRAB)
                now = time.clock_gettime(time.CLOCK_MONOTONIC) * 1000
                f.write(f"{now:.1f} {w} {h} " + base64.b64decode(luma).hex() + f" {now - before:.1f}\n")
                time.sleep(0.1)
        ok(True, f"{samples} latency samples")
    driver.find_element(By.ID, "preview-toggle").click()
    ok(driver.execute_script("return document.getElementById('live-video').hidden"), "the toggle hides it again")
finally:
    driver.quit()
webcheck.passed("live browser: ")
