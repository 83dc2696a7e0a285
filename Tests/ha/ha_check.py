# SPDX-License-Identifier: BSD-2-Clause
"""Shutter against a real Home Assistant (issue 41): the driver of deploy/ha/test-ha.sh.

    ha_check.py requirements
        The pinned requirements of the integrations this test makes Home Assistant load
        (its default ones, the onboarding's, MQTT and the entity platforms Shutter's
        discovery names), read from the installed manifests: test-ha.sh installs them into
        the venv with Home Assistant, so Home Assistant's first start installs nothing.

    ha_check.py run --ha URL --config-dir DIR --broker-port N --broker-user U
                    --broker-password-file F --card DIR --name NAME --hass-pid PID
                    --shutterd-pidfile F --shutterd-log F -- SHUTTERD ARGS...
        With Home Assistant and Mosquitto started by test-ha.sh: onboarding's first user
        and an access token, the MQTT integration through its config flow, then the camera
        (the shutterd command line given, started here, as a person adds the integration
        and then starts the camera) and what Home Assistant makes of it: the device, its
        entities, the button's photo, the event and image entities, the state sensor
        following a clip, the camera's restarts; then Home Assistant's log lines about it.

Standard library only (runs on the venv's Python 3.11). Exit status: 0 when the mechanics
work, 1 when one does not (Home Assistant not up, MQTT not added, no device discovered,
the button not taking a photo, or what Home Assistant shows not following the camera: the
event and image entities, the state sensor, the restarts).
What Home Assistant logs about Shutter at WARNING or above is printed as findings and
fails the run (FINDINGS_FAIL below).
"""
import argparse
import glob
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

# Home Assistant's log lines about Shutter at WARNING or above are findings: printed, listed
# at the end, not failures. Those known on 2024.3.3 when this test was written (a finding
# that contains one of these is marked "known", any other "new"):
# Warnings found and not fixed yet (none now: the Free space sensor's freeBytes warning,
# from the `status` sent before the card is checked, was fixed with an `is defined` template).
KNOWN_FINDINGS: list[str] = []
# Every warning Home Assistant logs about Shutter fails the run.
FINDINGS_FAIL = True
# What makes a log entry one about Shutter: its logger, message or exception naming
# shutter, the camera or MQTT (not the file names in a traceback: the venv and the work
# directory have "shutter" in their paths), or quoting a template of Shutter's discovery
# configs (Home Assistant's template warnings name only the template).
ABOUT_SHUTTER = re.compile(r"shutter|garden|mqtt", re.IGNORECASE)

# The entities Shutter's discovery announces (docs/home-automation.md), by object id.
EXPECTED = ["button.{d}_take_photo", "switch.{d}_recording", "binary_sensor.{d}_recording_in_progress",
            "sensor.{d}_state", "sensor.{d}_free_space", "image.{d}_last_photo",
            "event.{d}_capture", "select.{d}_flash", "button.{d}_next_camera", "event.{d}_button",
            "switch.{d}_torch", "number.{d}_exposure_compensation", "button.{d}_focus", "sensor.{d}_uptime",
            "sensor.{d}_last_error", "sensor.{d}_cpu_temperature", "binary_sensor.{d}_power_or_temperature_problem",
            "select.{d}_video_size"]


class Failure(Exception):
    """A mechanic that did not work: the run fails."""


def say(msg=""):
    print(msg, flush=True)


def requirements():
    """The requirements (name==version) of the integrations a run loads, with their dependencies."""
    import homeassistant
    from homeassistant import bootstrap
    components = os.path.join(os.path.dirname(homeassistant.__file__), "components")
    wanted = (set(bootstrap.CORE_INTEGRATIONS) | set(bootstrap.LOGGING_INTEGRATIONS) - {"sentry"}
              | set(bootstrap.DEFAULT_INTEGRATIONS)
              | {"api", "http", "onboarding", "mqtt", "button", "switch", "binary_sensor", "sensor",
                 "image", "event", "device_automation", "automation", "notify", "file", "select", "number"})
    seen, reqs, todo = set(), set(), list(wanted)
    while todo:
        domain = todo.pop()
        if domain in seen:
            continue
        seen.add(domain)
        with open(os.path.join(components, domain, "manifest.json"), encoding="utf-8") as f:
            manifest = json.load(f)
        reqs.update(manifest.get("requirements", []))
        todo.extend(manifest.get("dependencies", []))
    for r in sorted(reqs):
        print(r)


class HA:
    """Home Assistant's REST API (and its auth endpoints) at `base`."""

    def __init__(self, base):
        self.base = base.rstrip("/")
        self.token = None

    def call(self, method, path, body=None, form=None, timeout=30, raw=False):
        headers = {}
        data = None
        if self.token:
            headers["Authorization"] = "Bearer " + self.token
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        elif form is not None:
            data = urllib.parse.urlencode(form).encode()
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        req = urllib.request.Request(self.base + path, data=data, headers=headers, method=method)
        try:
            with urllib.request.urlopen(req, timeout=timeout) as r:
                payload = r.read()
                status = r.status
        except urllib.error.HTTPError as e:
            payload, status = e.read(), e.code
        if raw:
            return status, payload
        try:
            return status, json.loads(payload) if payload else None
        except ValueError:
            return status, payload.decode(errors="replace")

    def states(self):
        status, body = self.call("GET", "/api/states")
        if status != 200:
            raise Failure(f"GET /api/states: {status} {body}")
        return {s["entity_id"]: s for s in body}

    def state(self, entity_id):
        status, body = self.call("GET", "/api/states/" + entity_id)
        return body if status == 200 else None

    def template(self, text):
        status, body = self.call("POST", "/api/template", {"template": text})
        if status != 200:
            raise Failure(f"POST /api/template: {status} {body}")
        return body


def wait(what, timeout, probe, interval=0.5):
    """probe() until it returns something true; that value, or None after `timeout` s."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            v = probe()
        except (OSError, urllib.error.URLError):
            v = None
        if v:
            return v
        if time.monotonic() > deadline:
            say(f"  (gave up waiting {timeout} s for {what})")
            return None
        time.sleep(interval)


def onboard(ha, t0, hass_pid):
    """Home Assistant up, onboarding's first user, an access token (30 min) for the API."""
    answers = []

    def up():
        try:
            os.kill(hass_pid, 0)
        except ProcessLookupError:
            raise Failure("Home Assistant exited before its HTTP server answered")
        status, body = ha.call("GET", "/api/onboarding", timeout=5)
        answers.append(status)
        # A server error three times in a row: Home Assistant is up, and broken.
        if answers[-3:] == [500] * 3:
            raise Failure(f"Home Assistant answers /api/onboarding with 500 (its log says why): {body}")
        return body if status == 200 else None
    steps = wait("Home Assistant's HTTP server", 600, up, interval=1)
    if not steps:
        raise Failure("Home Assistant did not start (no /api/onboarding within 600 s; see its log)")
    say(f"ha-test: Home Assistant answers after {time.monotonic() - t0:.0f} s; onboarding steps {steps}")
    client_id = ha.base + "/"
    status, body = ha.call("POST", "/api/onboarding/users", {
        "client_id": client_id, "name": "Shutter Test", "username": "shutter-test",
        "password": "shutter-test-password", "language": "en"})
    if status != 200 or "auth_code" not in (body or {}):
        raise Failure(f"onboarding's user step: {status} {body}")
    status, body = ha.call("POST", "/auth/token", form={
        "grant_type": "authorization_code", "code": body["auth_code"], "client_id": client_id})
    if status != 200 or "access_token" not in (body or {}):
        raise Failure(f"/auth/token: {status} {body}")
    ha.token = body["access_token"]
    say("ha-test: ok   onboarding: user shutter-test created, access token from /auth/token")
    running = wait("Home Assistant's state RUNNING", 300,
                   lambda: (lambda r: r[1].get("state") == "RUNNING" and r[1])(ha.call("GET", "/api/config")),
                   interval=1)
    if not running:
        raise Failure("Home Assistant never reached the state RUNNING (see its log)")
    say(f"ha-test: ok   Home Assistant {running.get('version')} running after {time.monotonic() - t0:.0f} s")


def add_mqtt(ha, port, user, password):
    """The MQTT integration through its config flow, as Settings → Add integration does."""
    status, form = ha.call("POST", "/api/config/config_entries/flow",
                           {"handler": "mqtt", "show_advanced_options": False})
    if status != 200 or form.get("type") != "form":
        raise Failure(f"starting the MQTT config flow: {status} {form}")
    fields = [f["name"] for f in form.get("data_schema", [])]
    say(f"ha-test: MQTT config flow, step {form.get('step_id')!r}, fields {fields}")
    status, result = ha.call("POST", "/api/config/config_entries/flow/" + form["flow_id"],
                             {"broker": "127.0.0.1", "port": port, "username": user, "password": password},
                             timeout=60)
    if status != 200 or result.get("type") != "create_entry":
        raise Failure(f"the MQTT config flow's broker step: {status} {result}")
    entry = result.get("result", {})
    say(f"ha-test: ok   MQTT integration added: entry {entry.get('title')!r}, state {entry.get('state')!r}")
    loaded = wait("the MQTT entry loaded", 60, lambda: [
        e for e in ha.call("GET", "/api/config/config_entries/entry")[1]
        if e.get("domain") == "mqtt" and e.get("state") == "loaded"])
    if not loaded:
        raise Failure("the MQTT config entry was created but did not load")


def discover(ha, name):
    """The device Home Assistant made from Shutter's discovery, and its entities' states."""
    d = "shutter_" + name
    expected = [e.format(d=d) for e in EXPECTED]

    # There, and available: discovery makes an entity, its availability topic (retained
    # `online`) then makes it usable (a press on an unavailable button goes nowhere).
    def all_there():
        states = ha.states()
        return states if all(states.get(e, {}).get("state", "unavailable") != "unavailable" for e in expected) else None
    t = time.monotonic()
    states = wait("the discovered entities, available", 60, all_there)
    mine = {k: v for k, v in ha.states().items() if name in k}
    if not mine:
        raise Failure(f"no entity of the camera (ids with {name!r}) after 60 s: no device discovered")
    say(f"ha-test: entities with {name!r} in their id, {time.monotonic() - t:.1f} s after shutterd's start:")
    for eid, s in sorted(mine.items()):
        say(f"    {eid:40} {s['state']!r:28} {s['attributes'].get('friendly_name', '')}")
    if not states:
        missing = [e for e in expected if e not in mine]
        raise Failure(f"entities missing: {missing}" if missing else "the entities never became available")
    device = ha.template(
        "{% set d = device_id('button." + d + "_take_photo') %}"
        "{{ {'id': d, 'name': device_attr(d, 'name'), 'model': device_attr(d, 'model'),"
        " 'manufacturer': device_attr(d, 'manufacturer'), 'sw_version': device_attr(d, 'sw_version'),"
        " 'entities': device_entities(d) | sort} | tojson }}")
    device = json.loads(device) if isinstance(device, str) else device
    if not device.get("id"):
        raise Failure("the button entity belongs to no device: no device discovered")
    say(f"ha-test: ok   device {device['name']!r} (manufacturer {device['manufacturer']!r}, model "
        f"{device['model']!r}, software {device['sw_version']!r}) with {len(device['entities'])} entities:")
    say("    " + ", ".join(device["entities"]))
    stray = sorted(set(expected) - set(device["entities"]))
    if stray:
        raise Failure(f"entities not on the device: {stray}")
    return d


def discovery_templates(port, user, password, name):
    """The templates in Shutter's retained discovery configs (mosquitto_sub, 2 s)."""
    out = subprocess.run(["mosquitto_sub", "-h", "127.0.0.1", "-p", str(port), "-u", user, "-P", password,
                          "-t", f"homeassistant/+/{name}/+/config", "-F", "%p", "-W", "2"],
                         capture_output=True, text=True, check=False).stdout
    templates = set()
    for line in out.splitlines():
        try:
            config = json.loads(line)
        except ValueError:
            continue
        templates.update(v for k, v in config.items() if k.endswith("template") and isinstance(v, str))
    return templates


def rediscovery(ha, d, port, user, password, name):
    """Home Assistant announces itself (`online` on homeassistant/status when its MQTT
    integration starts: here a reload of the entry, as Settings → MQTT → Reload does) and the
    camera sends its discovery configs again; the entities stay available."""
    lines = []
    sub = subprocess.Popen(["mosquitto_sub", "-h", "127.0.0.1", "-p", str(port), "-u", user, "-P", password, "-v", "-R",
                            "-t", f"homeassistant/+/{name}/+/config", "-t", "homeassistant/status",
                            "-t", "shutter-ha-test/probe"], stdout=subprocess.PIPE, text=True)
    reader = threading.Thread(target=lambda: [lines.append(line.rstrip("\n")) for line in sub.stdout], daemon=True)
    reader.start()
    try:
        # Subscribed once its own probe comes back (no sleep: the probe says so).
        def probed():
            subprocess.run(["mosquitto_pub", "-h", "127.0.0.1", "-p", str(port), "-u", user, "-P", password,
                            "-t", "shutter-ha-test/probe", "-m", "x"], check=False)
            return any(line.startswith("shutter-ha-test/probe") for line in lines)
        if not wait("mosquitto_sub subscribed", 20, probed):
            return ["rediscovery: mosquitto_sub never subscribed"]
        entry = next(e for e in ha.call("GET", "/api/config/config_entries/entry")[1] if e.get("domain") == "mqtt")
        status, body = ha.call("POST", f"/api/config/config_entries/entry/{entry['entry_id']}/reload", timeout=60)
        if status != 200:
            return [f"reloading the MQTT entry: {status} {body}"]

        def resent():
            i = next((n for n, line in enumerate(lines) if line == "homeassistant/status online"), None)
            configs = {line.split(" ", 1)[0] for line in lines[i + 1:] if line.endswith("}")} if i is not None else set()
            return configs if len(configs) >= len(EXPECTED) else None
        configs = wait("the configs sent again after Home Assistant's online", 60, resent)
        if not configs:
            return [f"after the MQTT entry's reload: {lines[-5:]!r}, not Home Assistant's online and the configs again"]
        back = wait("the entities available again", 60, lambda: all(
            (ha.state(e.format(d=d)) or {}).get("state", "unavailable") != "unavailable" for e in EXPECTED))
        say(f"ha-test: ok   the MQTT entry reloaded: Home Assistant said online on homeassistant/status, the camera "
            f"sent its {len(configs)} configs again" + (", every entity available" if back else ""))
        return [] if back else ["after the MQTT entry's reload, entities unavailable"]
    finally:
        sub.terminate()
        sub.wait(10)


def photos(card):
    return set(glob.glob(os.path.join(card, "DCIM", "*", "*.JPG")))


def press(ha, d, card):
    """HA's button → shutterd's photo on the card → HA's event and image entities."""
    before = photos(card)
    event0 = ha.state(f"event.{d}_capture")
    image0 = ha.state(f"image.{d}_last_photo")
    t = time.monotonic()
    status, body = ha.call("POST", "/api/services/button/press", {"entity_id": f"button.{d}_take_photo"})
    if status != 200:
        raise Failure(f"button.press: {status} {body}")
    new = wait("a new photo on the card", 30, lambda: sorted(photos(card) - before))
    if not new:
        raise Failure("pressing Home Assistant's button took no photo (no new JPG in the card's DCIM)")
    say(f"ha-test: ok   button.press → {os.path.relpath(new[0], card)} on the card "
        f"({os.path.getsize(new[0])} bytes) after {time.monotonic() - t:.2f} s")
    problems = []
    event = wait("the event entity's update", 15, lambda: (
        lambda s: s if s and s.get("state") != (event0 or {}).get("state") else None)(ha.state(f"event.{d}_capture")))
    if event:
        a = event["attributes"]
        say(f"ha-test: event.{d}_capture: {event['state']} event_type {a.get('event_type')!r} "
            f"name {a.get('name')!r} number {a.get('number')!r} size {a.get('size')!r}")
        if a.get("event_type") != "photo" or a.get("name") != os.path.basename(new[0]):
            problems.append(f"the event entity shows {a.get('event_type')!r} {a.get('name')!r}, "
                            f"not the photo {os.path.basename(new[0])!r}")
        else:
            say("ha-test: ok   the event entity shows the photo")
    else:
        problems.append("the event entity did not change after the photo")
    image = wait("the image entity's update", 15, lambda: (
        lambda s: s if s and s.get("state") != (image0 or {}).get("state") else None)(ha.state(f"image.{d}_last_photo")))
    if image:
        status, jpeg = ha.call("GET", f"/api/image_proxy/image.{d}_last_photo", raw=True)
        if status == 200 and jpeg[:2] == b"\xff\xd8":
            say(f"ha-test: ok   image.{d}_last_photo updated ({image['state']}); "
                f"/api/image_proxy gives a JPEG of {len(jpeg)} bytes")
        else:
            problems.append(f"/api/image_proxy/image.{d}_last_photo: {status}, {jpeg[:16]!r}")
    else:
        problems.append("the image entity did not change after the photo")
    return problems


def notifications(config_dir):
    """The recipe's messages, as the file notifier standing for the phone wrote them."""
    path = os.path.join(config_dir, "notify.txt")
    if not os.path.exists(path):
        return []
    with open(path, encoding="utf-8") as f:
        return [line.strip() for line in f if line.startswith("New photo")]


def recipe(ha, d, card, config_dir):
    """docs/home-automation.md's recipe (deploy/ha/test-ha.sh pasted it): a second photo in a
    row notifies too (a trigger on the Event type attribute did not)."""
    problems = press(ha, d, card)
    got = wait("two notifications", 30, lambda: (lambda n: n if len(n) >= 2 else None)(notifications(config_dir)))
    if got:
        say(f"ha-test: ok   the docs' recipe notified for both photos in a row: {got}")
    else:
        problems.append(f"the docs' recipe notified {notifications(config_dir)} for two photos in a row")
    return problems


def gesture(ha, d, argv):
    """A tap of the button (a client's own press and release) in the Button event entity."""
    ctl = os.path.join(os.path.dirname(argv[0]), "shutterctl")
    sock = argv[argv.index("--control-socket") + 1]
    before = (ha.state(f"event.{d}_button") or {}).get("state")
    subprocess.run([ctl, "--socket", sock, "press"], capture_output=True, timeout=30)
    time.sleep(0.2)
    subprocess.run([ctl, "--socket", sock, "release"], capture_output=True, timeout=60)
    got = wait("the Button event", 15, lambda: (lambda s: s if s and s.get("state") != before else None)(
        ha.state(f"event.{d}_button")))
    if got and got["attributes"].get("event_type") == "tap":
        say(f"ha-test: ok   a tap of the button: event.{d}_button event_type 'tap' ({got['state']})")
        return []
    return [f"event.{d}_button after a tap: {got!r}"]


def flash_select(ha, d):
    """The Flash select sets flash.mode on the camera and shows what the camera says."""
    problems = []
    for option in ["off", "on", "auto"]:
        ha.call("POST", "/api/services/select/select_option", {"entity_id": f"select.{d}_flash", "option": option})
        got = wait(f"the Flash select at {option}", 15,
                   lambda: (ha.state(f"select.{d}_flash") or {}).get("state") == option or None)
        if got:
            say(f"ha-test: ok   select.{d}_flash → {option}, and the camera's status says {option}")
        else:
            problems.append(f"select.{d}_flash shows {(ha.state(f'select.{d}_flash') or {}).get('state')!r} after {option!r}")
    return problems


def shutterctl(argv, *args):
    """shutterctl's JSON reply from the camera's control socket (as a person checks by hand)."""
    ctl = os.path.join(os.path.dirname(argv[0]), "shutterctl")
    sock = argv[argv.index("--control-socket") + 1]
    out = subprocess.run([ctl, "--socket", sock, *args], capture_output=True, text=True, timeout=30).stdout
    try:
        return json.loads(out)
    except ValueError:
        return {}


def settings_entities(ha, d, argv):
    """The torch switch, the EV number and the focus button act on the camera (shutterctl get
    reads it back) and show what the camera's status says."""
    problems = []

    def acts(what, service, data, key, expected, entity, shown):
        ha.call("POST", f"/api/services/{service}", data)
        got = wait(f"{key} {expected!r}", 20, lambda: shutterctl(argv, "get", key).get("value") == expected or None)
        seen = wait(f"{entity} at {shown!r}", 20, lambda: (ha.state(entity) or {}).get("state") == shown or None)
        if got and seen:
            say(f"ha-test: ok   {what}: shutterctl get {key} → {expected!r}, {entity} {shown!r}")
        else:
            problems.append(f"{what}: shutterctl get {key} {shutterctl(argv, 'get', key).get('value')!r}, "
                            f"{entity} {(ha.state(entity) or {}).get('state')!r} (wanted {expected!r}, {shown!r})")
    acts("switch.turn_on Torch", "switch/turn_on", {"entity_id": f"switch.{d}_torch"}, "video.torch", True,
         f"switch.{d}_torch", "on")
    acts("switch.turn_off Torch", "switch/turn_off", {"entity_id": f"switch.{d}_torch"}, "video.torch", False,
         f"switch.{d}_torch", "off")
    acts("number.set_value Exposure compensation 1.5", "number/set_value",
         {"entity_id": f"number.{d}_exposure_compensation", "value": 1.5}, "camera.exposure.ev", 1.5,
         f"number.{d}_exposure_compensation", "1.5")
    # The Video size select (640x360, the configuration's only size: the camera restarts at it).
    acts("select.select_option Video size 640x360", "select/select_option",
         {"entity_id": f"select.{d}_video_size", "option": "640x360"}, "video.sizes", ["640x360"],
         f"select.{d}_video_size", "640x360")
    before = shutterctl(argv, "get", "camera.focus.window").get("value")
    ha.call("POST", "/api/services/button/press", {"entity_id": f"button.{d}_focus"})
    window = wait("a focus window", 20, lambda: shutterctl(argv, "get", "camera.focus.window").get("value"))
    if before is None and window:
        say(f"ha-test: ok   button.press Focus: shutterctl get camera.focus.window → {window}")
    else:
        problems.append(f"button.press Focus: camera.focus.window {before!r} → {window!r}")
    return problems


def diagnostics(ha, d):
    """The diagnostic entities: uptime, last error, and the board's (test-ha.sh's fake sysfs:
    51.234 °C, firmware flags 0x50005)."""
    problems = []
    s = ha.states()

    def state(e):
        return s.get(e, {}).get("state"), s.get(e, {}).get("attributes", {})
    uptime, _ = state(f"sensor.{d}_uptime")
    error, _ = state(f"sensor.{d}_last_error")
    temp, temp_attrs = state(f"sensor.{d}_cpu_temperature")
    problem, flags = state(f"binary_sensor.{d}_power_or_temperature_problem")
    say(f"ha-test: diagnostics: uptime {uptime!r} s, last error {error!r}, CPU {temp!r} "
        f"{temp_attrs.get('unit_of_measurement')}, power or temperature problem {problem!r} (flags {flags.get('flags')!r})")
    try:
        if float(uptime) <= 0:
            problems.append(f"Uptime {uptime!r}")
    except (TypeError, ValueError):
        problems.append(f"Uptime {uptime!r}, not a number")
    if error in (None, "unknown", "unavailable"):
        problems.append(f"Last error {error!r}")
    if temp != "51.2":
        problems.append(f"CPU temperature {temp!r}, not 51.2 (the fake thermal zone's 51234)")
    if problem != "on" or flags.get("underVoltage") is not True:
        problems.append(f"the problem sensor {problem!r} {flags!r}, not on with underVoltage (flags 0x50005)")
    if not problems:
        say("ha-test: ok   the diagnostics read the camera's status and the board's (fake) sysfs")
    return problems


def follows(ha, d, card):
    """The state sensor, binary sensor and switch follow a clip started and stopped from HA."""
    problems = []

    def states_are(state, on):
        s = ha.states()
        got = (s[f"sensor.{d}_state"]["state"], s[f"binary_sensor.{d}_recording_in_progress"]["state"],
               s[f"switch.{d}_recording"]["state"])
        return got if got == (state, on, on) else None

    def check(what, state, on):
        t = time.monotonic()
        got = wait(what, 20, lambda: states_are(state, on))
        if got:
            say(f"ha-test: ok   {what}: state {got[0]!r}, binary sensor {got[1]!r}, switch {got[2]!r} "
                f"after {time.monotonic() - t:.2f} s")
        else:
            s = ha.states()
            problems.append(f"{what}: state {s[f'sensor.{d}_state']['state']!r}, binary sensor "
                            f"{s[f'binary_sensor.{d}_recording_in_progress']['state']!r}, switch "
                            f"{s[f'switch.{d}_recording']['state']!r}, not {state!r}/{on!r}")
    check("before", "ready", "off")
    ha.call("POST", "/api/services/switch/turn_on", {"entity_id": f"switch.{d}_recording"})
    check("switch.turn_on", "recording", "on")
    time.sleep(2)
    ha.call("POST", "/api/services/switch/turn_off", {"entity_id": f"switch.{d}_recording"})
    check("switch.turn_off", "ready", "off")
    clips = wait("the clip on the card", 20, lambda: glob.glob(os.path.join(card, "DCIM", "*", "*.MP4")))
    if clips:
        say(f"ha-test: ok   the clip: {os.path.relpath(clips[0], card)}")
    else:
        problems.append("no clip on the card after switch on/off")
    return problems


class Shutterd:
    """The camera: shutterd started and stopped as its owner would (its pid in `pidfile`, so
    test-ha.sh's trap stops it should this driver die; its output appended to `log`)."""

    def __init__(self, argv, pidfile, log):
        self.argv, self.pidfile, self.log = argv, pidfile, log
        self.proc = None

    def start(self):
        with open(self.log, "ab") as out:
            self.proc = subprocess.Popen(self.argv, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT)
        with open(self.pidfile, "w", encoding="utf-8") as f:
            f.write(f"{self.proc.pid}\n")

    def stop(self):
        """SIGTERM (a clean stop: shutterd publishes `offline`), up to 30 s; its exit status."""
        if self.proc is None or self.proc.poll() is not None:
            return None if self.proc is None else self.proc.returncode
        self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait()


# The camera's restarts while Home Assistant watches. Several: at a start, MQTT may connect
# before the service is ready, and the first status then has no freeBytes (state
# "booting"), which Home Assistant warns about: in some starts, not in every run.
RESTARTS = 5


def camera_entity(entity_id, d):
    """An entity of the camera's device (not the recipe's automation, whose id starts alike)."""
    domain, rest = entity_id.split(".", 1)
    return rest.startswith(d) and domain != "automation"


def restart(ha, d, camera, n):
    """The camera restarts while Home Assistant watches: its entities go unavailable on the
    clean stop, and come back with the camera's state."""
    problems = []
    t = time.monotonic()
    code = camera.stop()
    gone = wait("the entities unavailable", 20, lambda: all(
        s["state"] == "unavailable" for k, s in ha.states().items() if camera_entity(k, d)))
    if gone:
        say(f"ha-test: ok   restart {n}: shutterd stopped (SIGTERM, exit status {code}), every entity "
            f"of the camera unavailable after {time.monotonic() - t:.2f} s")
    else:
        problems.append(f"restart {n}: the entities did not go unavailable when shutterd stopped")
    t = time.monotonic()
    camera.start()
    back = wait("the camera back", 60, lambda: (lambda s: s if s and s["state"] == "ready" else None)(
        ha.state(f"sensor.{d}_state")))
    if back:
        states = {k: s["state"] for k, s in ha.states().items() if camera_entity(k, d)}
        still = sorted(k for k, v in states.items() if v == "unavailable")
        say(f"ha-test: ok   restart {n}: shutterd started again, state 'ready' in Home Assistant after "
            f"{time.monotonic() - t:.2f} s" + (f"; still unavailable: {still}" if still else ""))
        if still:
            problems.append(f"after restart {n}, still unavailable: {still}")
    else:
        problems.append(f"after shutterd's restart {n}, the state sensor never read 'ready' again")
    return problems


def about_shutter(text, templates):
    lines = [line for line in text.splitlines() if not line.startswith('  File "') and not line.startswith("    ")]
    return any(ABOUT_SHUTTER.search(line) or any(t in line for t in templates) for line in lines)


def log_entries(path):
    """home-assistant.log's entries (a line with a level, and its continuation lines)."""
    head = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(\.\d+)? (DEBUG|INFO|WARNING|ERROR|CRITICAL) ")
    entries = []
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            m = head.match(line)
            if m:
                entries.append([m.group(2), line.rstrip("\n")])
            elif entries:
                entries[-1][1] += "\n" + line.rstrip("\n")
    return entries


def run(a):
    t0 = time.monotonic()
    ha = HA(a.ha)
    with open(a.broker_password_file, encoding="utf-8") as f:
        password = f.read().strip()
    camera = Shutterd(a.shutterd, a.shutterd_pidfile, a.shutterd_log)
    problems = []
    failure = None
    try:
        onboard(ha, t0, a.hass_pid)
        add_mqtt(ha, a.broker_port, a.broker_user, password)
        # As docs/home-automation.md has it: the MQTT integration first, then the camera.
        camera.start()
        say(f"ha-test: shutterd started: {' '.join(a.shutterd)}")
        d = discover(ha, a.name)
        problems += press(ha, d, a.card)
        problems += recipe(ha, d, a.card, a.config_dir)
        problems += flash_select(ha, d)
        problems += gesture(ha, d, a.shutterd)
        problems += settings_entities(ha, d, a.shutterd)
        problems += diagnostics(ha, d)
        problems += rediscovery(ha, d, a.broker_port, a.broker_user, password, a.name)
        free = ha.state(f"sensor.{d}_free_space") or {}
        unit = free.get("attributes", {}).get("unit_of_measurement")
        try:
            shown = float(free.get("state", "x"))
        except ValueError:
            shown = -1
        if unit == "GB" and 0 < shown < 100000:
            say(f"ha-test: ok   Free space shows {shown} {unit}")
        else:
            problems.append(f"Free space shows {free.get('state')!r} {unit!r}, not GB")
        problems += follows(ha, d, a.card)
        shots = sorted(os.path.basename(p) for p in photos(a.card))
        if sorted(n.split()[-1] for n in notifications(a.config_dir)) != shots:
            problems.append(f"the docs' recipe notified {notifications(a.config_dir)}; the photos are {shots}")
        else:
            say(f"ha-test: ok   the recipe notified once for each of the {len(shots)} photos and not for the clip")
        for n in range(1, RESTARTS + 1):
            problems += restart(ha, d, camera, n)
        # The event entity came back with its last photo at each restart and at the MQTT
        # entry's reload: the recipe must not notify again for it.
        if sorted(n.split()[-1] for n in notifications(a.config_dir)) != shots:
            problems.append(f"after the reload and {RESTARTS} restarts the docs' recipe notified "
                            f"{notifications(a.config_dir)}; the photos are {shots}")
        else:
            say(f"ha-test: ok   the recipe did not notify again after the MQTT entry's reload and {RESTARTS} restarts")
        say("ha-test: entities at the end:")
        for eid, s in sorted((k, v) for k, v in ha.states().items() if a.name in k):
            say(f"    {eid:40} {s['state']!r}")
    except Failure as e:
        failure = str(e)
    finally:
        camera.stop()
    # (Retained: still on the broker after the camera stopped.)
    templates = discovery_templates(a.broker_port, a.broker_user, password, a.name)
    say(f"ha-test: the discovery configs' templates (log entries quoting one are about Shutter): {sorted(templates)}")
    # Home Assistant's log: every entry at WARNING or above about Shutter (findings), and how
    # many others there were.
    log = os.path.join(a.config_dir, "home-assistant.log")
    findings, others = {}, {}
    if os.path.exists(log):
        for level, text in log_entries(log):
            if level in ("WARNING", "ERROR", "CRITICAL"):
                # The same entry again (a later time stamp) is counted, not printed again.
                key = text.split(" ", 2)[2]
                which = findings if about_shutter(text, templates) else others
                which[key] = which.get(key, 0) + 1
    say(f"ha-test: Home Assistant's log: {sum(findings.values())} entries at WARNING or above about "
        f"Shutter, {sum(others.values())} others ({log}); the others:")
    for text, n in others.items():
        say(f"    {text.splitlines()[0]}" + (f" (×{n})" if n > 1 else ""))
    for p in problems:
        say(f"ha-test: FAIL {p}")
    if failure:
        say(f"ha-test: FAIL {failure}")
    say(f"ha-test: findings (Home Assistant's warnings about Shutter; {'failing' if FINDINGS_FAIL else 'not failing yet'}):")
    for i, (text, n) in enumerate(findings.items(), 1):
        known = "known" if any(k in text for k in KNOWN_FINDINGS) else "new"
        say(f"  {i}. ({known}{f', ×{n}' if n > 1 else ''}) {text}")
    if not findings:
        say("  none")
    if failure or problems or (FINDINGS_FAIL and findings):
        return 1
    return 0


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    sub.add_parser("requirements")
    r = sub.add_parser("run")
    r.add_argument("--ha", required=True)
    r.add_argument("--config-dir", required=True)
    r.add_argument("--broker-port", type=int, required=True)
    r.add_argument("--broker-user", required=True)
    r.add_argument("--broker-password-file", required=True)
    r.add_argument("--card", required=True)
    r.add_argument("--name", required=True)
    r.add_argument("--hass-pid", type=int, required=True)
    r.add_argument("--shutterd-pidfile", required=True)
    r.add_argument("--shutterd-log", required=True)
    r.add_argument("shutterd", nargs="+", help="shutterd's command line (after --)")
    a = p.parse_args()
    if a.cmd == "requirements":
        requirements()
        return 0
    return run(a)


if __name__ == "__main__":
    sys.exit(main())
