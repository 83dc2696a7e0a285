#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""The web page in a real browser: Debian's chromium + chromium-driver, headless,
through python3-selenium, against a real shutterd on the simulated board (started by
Tests/ShutterServiceTests/WebEndToEndTests.swift with BASE_URL, STORAGE, SHUTTERCTL,
SOCKET, PASSWORD, OUT_DIR). Phone-sized window (390x844); a screenshot of the gallery
goes to OUT_DIR/web-gallery-390x844.png. One line per check; exit 1 on the first failure.
"""
import webcheck
from webcheck import ok
import glob, hashlib, json, os, subprocess, sys, time
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.select import Select
from selenium.webdriver.support.ui import WebDriverWait
from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException

BASE, STORAGE = os.environ["BASE_URL"], os.environ["STORAGE"]




def ctl(*args):
    return subprocess.run([os.environ["SHUTTERCTL"], "--socket", os.environ["SOCKET"], *args],
                          capture_output=True, text=True, timeout=60)


def setting(key=None):
    return json.loads(ctl("get", *([key] if key else [])).stdout)


def on_disk():
    return sorted(glob.glob(os.path.join(STORAGE, "DCIM", "*", "SHTR*.*")))


def sha(path):
    return hashlib.sha256(open(path, "rb").read()).hexdigest()


ok(ctl("tap").returncode == 0, "a photo by the button (shutterctl tap)")
ok(ctl("hold", "2").returncode == 0, "a 2 s clip (shutterctl hold 2)")
clip = [f for f in on_disk() if f.endswith(".MP4")][0]
ok(os.path.exists(clip[:-4] + ".THM"), "the clip's poster frame is saved beside it as .THM")

opts = webdriver.ChromeOptions()
opts.binary_location = "/usr/bin/chromium"
for a in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--autoplay-policy=no-user-gesture-required"]:
    opts.add_argument(a)
opts.add_experimental_option("mobileEmulation", {"deviceMetrics": {"width": 390, "height": 844, "pixelRatio": 1}})
driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=opts)
driver.set_window_size(390, 844)
# The page redraws its lists when a reply or a status poll comes: an element found an
# instant before is then stale; the wait looks it up again rather than failing.
wait = WebDriverWait(driver, 30, ignored_exceptions=[NoSuchElementException, StaleElementReferenceException])
try:
    driver.get(BASE + "/")
    wait.until(lambda d: d.current_url.endswith("/login"))
    ok(True, "without a session / goes to the login page")
    driver.find_element(By.ID, "password").send_keys("not the password")
    driver.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    wait.until(lambda d: "wrong password" in d.find_element(By.ID, "message").text)
    ok(True, "a wrong password is refused in the page: " + driver.find_element(By.ID, "message").text)
    time.sleep(1.2)  # the address waits 1 s after one wrong password
    box = driver.find_element(By.ID, "password")
    box.clear()
    box.send_keys(os.environ["PASSWORD"])
    driver.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    wait.until(lambda d: d.current_url.rstrip("/") == BASE and len(d.find_elements(By.CSS_SELECTOR, "#items li")) >= 2)
    ok(True, "logged in: the gallery shows the photo and the clip")
    wait.until(lambda d: "Ready" in d.find_element(By.ID, "status").text)
    ok(True, "the status in words: " + driver.find_element(By.ID, "status").text)
    kinds = driver.execute_script(
        "return [...document.querySelectorAll('#items li')].map(li => [li.dataset.kind, (li.querySelector('img')||{}).naturalWidth||0])")
    ok(kinds[0][0] == "video" and kinds[1][0] == "photo", "newest first (the clip, then the photo)", kinds)
    wait.until(lambda d: all(w > 0 for _, w in d.execute_script(
        "return [...document.querySelectorAll('#items li')].map(li => [li.dataset.kind, (li.querySelector('img')||{}).naturalWidth||0])")))
    ok(True, "a thumbnail for the photo (EXIF) and for the clip (.THM) is shown")
    shot = os.path.join(os.environ["OUT_DIR"], "web-gallery-390x844.png")
    driver.save_screenshot(shot)
    ok(os.path.getsize(shot) > 1000, f"screenshot of the gallery at 390x844: {shot}")

    # Take a photo from the page and see it appear.
    before = on_disk()
    driver.find_element(By.ID, "photo").click()
    wait.until(lambda d: "Saved SHTR" in d.find_element(By.ID, "result").text)
    new = [f for f in on_disk() if f not in before]
    ok(len(new) == 1 and new[0].endswith(".JPG"), "the page's photo button took one photo: " + os.path.basename(new[0]))
    wait.until(lambda d: d.find_element(By.CSS_SELECTOR, "#items li .tag").text == os.path.basename(new[0]))
    ok(True, "and it appears first in the gallery")

    # Download: the bytes the page gets are the file's.
    fetch_hash = """
      const [url, done] = arguments;
      fetch(url).then(r => r.arrayBuffer()).then(b => crypto.subtle.digest('SHA-256', b))
        .then(h => done([...new Uint8Array(h)].map(x => x.toString(16).padStart(2, '0')).join('')))
        .catch(e => done('error ' + e));"""
    driver.set_script_timeout(60)
    number = driver.execute_script("return document.querySelector('#items li').dataset.number")
    ok(driver.execute_async_script(fetch_hash, f"/files/{number}") == sha(new[0]), "download of the photo is byte-identical")
    driver.find_element(By.CSS_SELECTOR, "#items li").click()
    href = driver.find_element(By.ID, "download").get_attribute("href")
    ok(href.endswith(f"/files/{number}") and driver.find_element(By.ID, "download").get_attribute("download") == os.path.basename(new[0]),
       "the viewer's Download link names the file")
    driver.find_element(By.ID, "close").click()

    # Play the clip in the page's <video>.
    clip_li = driver.find_element(By.CSS_SELECTOR, "#items li[data-kind=video]")
    clip_number = clip_li.get_attribute("data-number")
    ok(driver.execute_async_script(fetch_hash, f"/files/{clip_number}") == sha(clip), "download of the clip is byte-identical")
    clip_li.click()
    can = driver.execute_script("return document.createElement('video').canPlayType('video/mp4; codecs=\"avc1.42E01E, mp4a.40.2\"')")
    if can:
        wait.until(lambda d: d.execute_script("const v=document.querySelector('#view video'); return v && v.readyState >= 2"))
        driver.execute_script("const v=document.querySelector('#view video'); v.muted=true; v.play()")
        wait.until(lambda d: d.execute_script("return document.querySelector('#view video').currentTime") > 0.3)
        duration = driver.execute_script("return document.querySelector('#view video').duration")
        ok(True, f"the clip plays in the page's <video> (canPlayType: {can!r}, duration {duration:.2f} s)")
        # A finished clip is a regular MP4: the browser knows its duration from the moov
        # (a fragmented one shows Infinity or 0 in some players) and seeks into it.
        probed = float(subprocess.run(["ffprobe", "-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0", clip],
                                      capture_output=True, text=True).stdout.strip())
        ok(duration == duration and duration != float("inf") and abs(duration - probed) < 0.2,
           f"<video> reports a finite duration, {duration:.3f} s (ffprobe {probed:.3f} s)")
        driver.execute_script("const v=document.querySelector('#view video'); v.pause(); v.currentTime = v.duration * 0.8")
        wait.until(lambda d: d.execute_script(
            "const v=document.querySelector('#view video'); return !v.seeking && v.readyState >= 2 && Math.abs(v.currentTime - v.duration * 0.8) < 0.2"))
        shown = driver.execute_script("""
          const v = document.querySelector('#view video'), c = document.createElement('canvas');
          c.width = 64; c.height = 36; const g = c.getContext('2d'); g.drawImage(v, 0, 0, 64, 36);
          const px = g.getImageData(0, 0, 64, 36).data; let sum = 0;
          for (let i = 0; i < px.length; i += 4) sum += px[i] + px[i + 1] + px[i + 2];
          return [v.currentTime, sum / (px.length / 4) / 3];""")
        ok(shown[1] > 8, f"after seeking to 80 % ({shown[0]:.2f} s) the <video> shows a frame (mean level {shown[1]:.0f})")
    else:
        print("note this chromium cannot decode H.264 (canPlayType is empty): checking the bytes and Range answers instead")
        ranged = driver.execute_async_script("""
          const [url, done] = arguments;
          fetch(url, {headers: {Range: 'bytes=0-99'}}).then(async r => done([r.status, r.headers.get('content-range'), (await r.arrayBuffer()).byteLength]));""",
          f"/files/{clip_number}")
        ok(ranged[0] == 206 and ranged[1] == f"bytes 0-99/{os.path.getsize(clip)}" and ranged[2] == 100, "Range from the page: 206", ranged)
    driver.find_element(By.ID, "close").click()

    # The live preview: several JPEG parts (the MJPEG fallback, chosen by hand here; the
    # H.264 preview has its own script, test_live_browser.py).
    driver.execute_script("localStorage.setItem('preview', 'mjpeg')")
    driver.find_element(By.ID, "preview-toggle").click()
    wait.until(lambda d: d.execute_script("return document.getElementById('preview').naturalWidth") > 0)
    width = driver.execute_script("return document.getElementById('preview').naturalWidth")
    ok(0 < width <= 640, f"the live preview shows in the page ({width} px wide)")
    parts = driver.execute_async_script("""
      const done = arguments[0];
      fetch('/preview.mjpg').then(async r => {
        const reader = r.body.getReader(); let text = '', jpegs = 0;
        const ct = r.headers.get('content-type');
        while (jpegs < 3) {
          const {value, done: end} = await reader.read(); if (end) break;
          for (let i = 0; i + 1 < value.length; i++) if (value[i] === 0xff && value[i+1] === 0xd8) jpegs++;
        }
        reader.cancel(); done([ct, jpegs]);
      }).catch(e => done(['error ' + e, 0]));""")
    ok(parts[0].startswith("multipart/x-mixed-replace") and parts[1] >= 3, "the preview stream sends several JPEG parts", parts)
    driver.find_element(By.ID, "preview-toggle").click()

    # Camera settings: change the exposure compensation in the page, see it applied.
    driver.find_element(By.CSS_SELECTOR, "#settings-panel summary").click()
    row = '.setting[data-key="camera.exposure.ev"]'
    wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, row + " input[type=number]"))
    count = len(driver.find_elements(By.CSS_SELECTOR, ".setting"))
    ok(count == len(setting()["settings"]), f"the settings list shows every runtime setting ({count})")
    kinds = driver.execute_script("""return Object.fromEntries(['camera.whiteBalance.mode', 'video.torch', 'camera.roi']
      .map(k => [k, document.querySelector('.setting[data-key="' + k + '"] [data-kind]').tagName + ':' +
                    document.querySelector('.setting[data-key="' + k + '"] [data-kind]').type]))""")
    ok(kinds == {"camera.whiteBalance.mode": "SELECT:select-one", "video.torch": "INPUT:checkbox", "camera.roi": "INPUT:text"},
       "a select for choices, a checkbox for a bool, text for a rectangle or null", kinds)
    box = driver.find_element(By.CSS_SELECTOR, row + " input")
    box.clear()
    box.send_keys("1")
    driver.find_element(By.CSS_SELECTOR, row + " button.apply").click()
    wait.until(lambda d: "runtime" in d.find_element(By.CSS_SELECTOR, row + " .info").text)
    ok("value 1" in driver.find_element(By.CSS_SELECTOR, row + " .info").text,
       "the page shows ev 1 set at runtime: " + driver.find_element(By.CSS_SELECTOR, row + " .info").text)
    got = setting("camera.exposure.ev")
    ok(got["value"] == 1 and got["source"] == "runtime", "shutterctl get shows it applied (runtime 1)", got)
    box = driver.find_element(By.CSS_SELECTOR, row + " input")
    box.clear()
    box.send_keys("9")
    driver.find_element(By.CSS_SELECTOR, row + " button.apply").click()
    wait.until(lambda d: d.find_element(By.CSS_SELECTOR, row + " .error").text)
    err = driver.find_element(By.CSS_SELECTOR, row + " .error").text
    ok("camera.exposure.ev" in err and "-8...8" in err, "a bad value (9) shows the service's words: " + err)
    ok(setting("camera.exposure.ev")["value"] == 1, "and changes nothing")
    sel = driver.find_element(By.CSS_SELECTOR, '.setting[data-key="camera.whiteBalance.mode"] select')
    Select(sel).select_by_visible_text("daylight")
    wait.until(lambda d: setting("camera.whiteBalance.mode")["value"] == "daylight")
    ok(True, "choosing daylight in the select applies it")
    driver.find_element(By.CSS_SELECTOR, row + " button.reset").click()
    wait.until(lambda d: "config" in d.find_element(By.CSS_SELECTOR, row + " .info").text)
    ok(setting("camera.exposure.ev")["source"] == "config", "Reset: ev back to the configuration's")
    driver.find_element(By.ID, "reset-all").click()
    wait.until(lambda d: all(x["source"] == "config" for x in setting()["settings"]))
    ok(True, "Reset every setting: nothing left at runtime")

    # Tap-to-focus: a click on the live preview sets both windows around the point.
    driver.find_element(By.ID, "preview-toggle").click()
    wait.until(lambda d: d.execute_script("return document.getElementById('preview').naturalWidth") > 0)
    img = driver.find_element(By.ID, "preview")
    # Wholly in view: WebDriver offsets are from the centre of the element's visible part.
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", img)
    size = img.size
    webdriver.ActionChains(driver).move_to_element_with_offset(img, int(size["width"] * 0.25) - size["width"] // 2,
                                                               int(size["height"] * 0.75) - size["height"] // 2).click().perform()
    wait.until(lambda d: d.find_element(By.ID, "result").text.startswith("Focus and exposure at"))
    ok(True, "a tap on the preview: " + driver.find_element(By.ID, "result").text)
    win = setting("camera.focus.window")
    cx, cy = win["value"][0] + win["value"][2] / 2, win["value"][1] + win["value"][3] / 2
    ok(win["source"] == "runtime" and abs(cx - 0.25) < 0.03 and abs(cy - 0.75) < 0.03,
       f"the focus window is centred where the picture was tapped ({cx:.2f}, {cy:.2f})", win)
    driver.find_element(By.ID, "preview-toggle").click()
    ctl("focus", "reset")

    # Delete after confirming (and not when the confirmation is dismissed).
    driver.find_element(By.CSS_SELECTOR, "#items li").click()
    driver.find_element(By.ID, "delete").click()
    driver.switch_to.alert.dismiss()
    time.sleep(0.5)
    ok(os.path.exists(new[0]) and driver.find_element(By.ID, "viewer").get_attribute("open") is not None,
       "delete dismissed: the file stays, the viewer stays open")
    driver.find_element(By.ID, "delete").click()
    driver.switch_to.alert.accept()
    wait.until(lambda d: not os.path.exists(new[0]))
    wait.until(lambda d: d.find_element(By.CSS_SELECTOR, "#items li .tag").text != os.path.basename(new[0]))
    ok(True, "delete confirmed: the file is gone from the card and the gallery")

    # Switching camera (the daemon runs two simulated cameras): the page's button asks for
    # the next one, as `shutterctl camera next` does.
    cameras = json.loads(ctl("camera").stdout)["cameras"]
    ok(len(cameras) == 2 and cameras[0]["inUse"], "two cameras, the first in use", cameras)
    wait.until(lambda d: d.find_element(By.ID, "camera-switch").is_displayed())
    ok(cameras[0]["model"] in driver.find_element(By.ID, "camera").text,
       "the switch shows, beside the camera in use: " + driver.find_element(By.ID, "camera").text)
    driver.find_element(By.ID, "camera-switch").click()
    wait.until(lambda d: "switched from camera 0" in d.find_element(By.ID, "result").text)
    ok(True, "Switch camera: " + driver.find_element(By.ID, "result").text)
    cameras = json.loads(ctl("camera").stdout)["cameras"]
    ok(cameras[1]["inUse"] and not cameras[0]["inUse"], "shutterctl camera: the second camera is in use", cameras)
    wait.until(lambda d: cameras[1]["model"] in d.find_element(By.ID, "camera").text)
    ok(True, "the page names it: " + driver.find_element(By.ID, "camera").text)

    # Live events (issue 20 item 4): a shutterd with /api/events keeps the page current
    # without a reload; one without it is polled (the page says which in data-live).
    live = driver.execute_script("return document.body.dataset.live")
    if live == "events":
        driver.execute_script("window.notReloaded = true")
        before = on_disk()
        ok(ctl("tap").returncode == 0, "a photo by shutterctl tap while the page is open")
        replied = time.time()
        tapped = os.path.basename([f for f in on_disk() if f not in before][0])
        wait.until(lambda d: d.find_element(By.CSS_SELECTOR, "#items li .tag").text == tapped)
        ok(driver.execute_script("return window.notReloaded === true"),
           f"it is first in the gallery without a reload ({time.time() - replied:.2f} s after the reply)")
        ok(ctl("delete", "last").returncode == 0, "shutterctl delete last")
        wait.until(lambda d: tapped not in [e.text for e in d.find_elements(By.CSS_SELECTOR, "#items li .tag")])
        ok(True, "and it leaves the gallery")
        ok(ctl("record", "start").returncode == 0, "shutterctl record start")
        wait.until(lambda d: int(d.find_element(By.ID, "record").get_attribute("data-elapsed") or 0) >= 2)
        ok(True, "the record button counts the service's seconds: " + driver.find_element(By.ID, "record").text)
        ok(ctl("record", "stop").returncode == 0, "shutterctl record stop")
        wait.until(lambda d: d.find_element(By.ID, "record").text == "Start recording")
        ok(True, "and is back to Start recording")
    else:
        ok(live == "polling", "no /api/events on this shutterd: the page polls /api/status", live)
finally:
    driver.quit()
webcheck.passed("web browser: ")
