"use strict";
// The page: live state from the service's events (/api/events, Server-Sent Events),
// polling /api/status only while those cannot be had; capture buttons; the camera
// switch; the camera settings; the gallery. Same origin, the session cookie;
// POST and DELETE carry the session's CSRF token.
let csrf = sessionStorage.getItem("csrf");
let page = 1, pageCount = 1, recording = false, current = null;
const $ = (id) => document.getElementById(id);

async function api(method, url, body) {
  if (!csrf && method !== "GET") {
    const s = await fetch("/api/session"); if (s.ok) { csrf = (await s.json()).csrf; sessionStorage.setItem("csrf", csrf); }
  }
  const opt = {method, headers: {}};
  if (method !== "GET") opt.headers["X-CSRF-Token"] = csrf || "";
  if (body) { opt.headers["Content-Type"] = "application/json"; opt.body = JSON.stringify(body); }
  const r = await fetch(url, opt);
  if (r.status === 401) { location.replace("/login"); throw new Error("logged out"); }
  return [r, await r.json().catch(() => ({}))];
}

// ---- The state, in words -------------------------------------------------------------
// `live`: the last `state` event (the service's own figures: no estimate here);
// `detail`: the last /api/status (LEDs, free space, last error), fetched when the state
// changes (and every 3 s while polling).
const ledWords = {off: "off", booting: "blinking: starting", ready: "steady: ready", photoTaken: "blinked: photo taken",
  recording: "on: recording", saving: "flickering: saving", shutdownCountdown: "counting down to power-off",
  busyRefused: "flickered: busy, press refused", error: "blinking an error code", errorOnce: "blinked an error code"};
// Event states (ready, recording, saving, starting, error) and status states (idle, taking-photo...).
const stateWords = {ready: "Ready", idle: "Ready", starting: "Starting", booting: "Starting", pressed: "Button pressed",
  "taking-photo": "Taking a photo", recording: "Recording", saving: "Saving", finalising: "Saving the clip",
  error: "Error", "camera-unavailable": "Waiting for the camera", "shutdown-countdown": "Powering off soon",
  "shutting-down": "Shutting down", "powered-off": "Off", stopping: "Stopping"};
let live = null, detail = null;

function seconds(s) {
  s = Math.max(0, Math.floor(s));
  return s < 60 ? s + " s" : Math.floor(s / 60) + ":" + String(s % 60).padStart(2, "0");
}
const number = (v) => typeof v === "number" && isFinite(v) ? v : null;

function render() {
  const state = (live && live.state) || (detail && detail.state) || "";
  // While polling, a status that carries the clip's figures shows them too.
  const from = live || (detail && (detail.recording || detail)) || {};
  const elapsed = number(from.elapsedSeconds), remaining = number(from.remainingSeconds);
  recording = state === "recording";
  const rec = $("record");
  rec.textContent = recording ? "Stop recording" + (elapsed !== null ? " · " + seconds(elapsed) : "") : "Start recording";
  if (recording && elapsed !== null) rec.dataset.elapsed = elapsed; else delete rec.dataset.elapsed;
  document.body.dataset.state = state;

  // A state event may also carry the service's own word (`detail`: taking-photo, finalising...).
  const finer = live && live.state !== "error" && typeof live.detail === "string" ? stateWords[live.detail] : null;
  let words = finer || stateWords[state] || (state.startsWith("storage-unavailable") ? "Storage unavailable" : state || "…");
  if (recording && elapsed !== null) words += " " + seconds(elapsed) + (remaining !== null ? " (" + seconds(remaining) + " left)" : "");
  const parts = [words];
  if (live && live.state === "error") {
    if (live.message) parts.push(live.message);
    if (number(live.ledCode) !== null) parts.push("status light code " + live.ledCode);
  }
  if (detail) {
    const led = detail.leds && detail.leds.status;
    if (led && !(live && live.state === "error")) parts.push("status light " + (ledWords[led.pattern] || led.pattern));
    if (detail.freeBytes != null) parts.push((detail.freeBytes / 1e9).toFixed(1) + " GB free");
    if (detail.lastError) parts.push("last error: " + detail.lastError);
    showCamera(detail.camera);
  }
  $("status").textContent = parts.join(" · ");
}

async function refreshStatus() {
  try {
    const [r, j] = await api("GET", "/api/status");
    if (!r.ok) { $("status").textContent = j.error || "no status"; return; }
    detail = j.status;
    for (const t of detail.triggers || []) triggerActive[t.name] = t.active;
    renderTriggers();
    render();
  } catch (e) { /* logged out */ }
}
let statusSoon = null;
function refreshStatusSoon() { clearTimeout(statusSoon); statusSoon = setTimeout(refreshStatus, 200); }

// ---- Trigger inputs (triggers.inputs): which are active, and the last file one made -----
const triggerActive = {};
let lastTriggered = null;
function renderTriggers() {
  const names = Object.keys(triggerActive);
  const p = $("triggers");
  p.hidden = names.length === 0 && !lastTriggered;
  const parts = names.map((n) => "Trigger " + n + (triggerActive[n] ? ": active" : ""));
  if (lastTriggered) parts.push("last: " + lastTriggered.file + " by trigger " + lastTriggered.trigger);
  p.textContent = parts.join(" · ");
}

// ---- Live events, else polling ---------------------------------------------------------
// One EventSource; the browser reconnects it by itself. Three errors with no event
// between them (a server without /api/events, a proxy that cuts it) or a refusal: poll
// /api/status every 3 s as before, and try the events again every 60 s.
const handlers = {
  state(d) {
    const changed = !live || live.state !== d.state;
    live = d;
    render();
    if (changed) refreshStatusSoon();  // free space, LEDs, last error: not every second
  },
  // A new file: the first page shows it; an older page stays as it is under the user's fingers.
  file(d) {
    if (typeof d.trigger === "string") { lastTriggered = {file: d.name, trigger: d.trigger}; renderTriggers(); }
    if (page === 1) galleryChanged();
  },
  // A trigger input became active or inactive.
  trigger(d) { if (typeof d.name === "string") { triggerActive[d.name] = !!d.active; renderTriggers(); } },
  deleted(d) {
    const li = document.querySelector('#items li[data-number="' + d.number + '"]');
    if (li) { li.remove(); shownItems = null; }
    if (current && current.number === d.number) closeViewer();
    galleryChanged();
  },
  setting(d) {
    // Not under the user's fingers: a list rebuilt while a field is being edited would lose it.
    if ($("settings-panel").open && !$("settings").contains(document.activeElement)) loadSettings();
  },
  camera(d) { refreshStatusSoon(); loadCameras(); },
  // A copy verified on the upload remote: the file's mark on the page shown.
  uploaded(d) { galleryChanged(); },
};
let events = null, errorsInARow = 0, poller = null, retry = null;

function listen() {
  clearTimeout(retry);
  if (events) events.close();
  const es = events = new EventSource("/api/events");
  es.addEventListener("open", () => { document.body.dataset.live = "events"; });
  for (const type of Object.keys(handlers)) {
    es.addEventListener(type, (e) => {
      errorsInARow = 0;
      if (poller) { clearInterval(poller); poller = null; }
      document.body.dataset.live = "events";
      let data;
      try { data = JSON.parse(e.data); } catch (err) { return; }
      if (data && typeof data === "object") handlers[type](data);
    });
  }
  es.addEventListener("error", () => {
    errorsInARow++;
    if (es.readyState === EventSource.CLOSED || errorsInARow >= 3) poll();
  });
}

function poll() {
  if (events) { events.close(); events = null; }
  errorsInARow = 0;
  live = null;
  document.body.dataset.live = "polling";
  if (!poller) { refreshStatus(); poller = setInterval(refreshStatus, 3000); }
  clearTimeout(retry);
  retry = setTimeout(listen, 60000);
}

// ---- Captures --------------------------------------------------------------------------
function say(j) {
  if (j.ok) $("result").textContent = (j.items && j.items.length) ? "Saved " + j.items.map(f => f.name).join(", ") : (j.note || "Done");
  else $("result").textContent = j.error || "Refused";
}

$("photo").addEventListener("click", async () => {
  $("photo").disabled = true; $("result").textContent = "Taking a photo…";
  try { const [, j] = await api("POST", "/api/photo"); say(j); } finally { $("photo").disabled = false; }
  page = 1; loadPage(); refreshStatus();
});
$("record").addEventListener("click", async () => {
  const [, j] = await api("POST", "/api/record", {action: recording ? "stop" : "start"});
  say(j); refreshStatus(); loadPage();
});

// ---- The camera ------------------------------------------------------------------------
// The switch shows when the board has more than one camera (`shutterctl camera next`).
let cameraCount = 0;
function showCamera(c) {
  if (!c || !c.model) return;
  $("camera").textContent = "Camera " + (c.index != null ? c.index + " " : "") + "(" + c.model + ")"
    + (cameraCount > 1 ? " of " + cameraCount : "");
  $("camera").dataset.index = c.index != null ? c.index : "";
}
async function loadCameras() {
  const [r, j] = await api("GET", "/api/camera");
  if (!r.ok || !j.cameras) return;
  cameraCount = j.cameras.length;
  $("camera-switch").hidden = cameraCount < 2;
  const inUse = j.cameras.find(c => c.inUse);
  if (inUse) showCamera(inUse);
}
$("camera-switch").addEventListener("click", async () => {
  const b = $("camera-switch");
  b.disabled = true; $("result").textContent = "Switching camera…";
  try {
    // Answered once the new camera's frames arrive (or it went back to the one before).
    const [, j] = await api("POST", "/api/camera", {camera: "next"});
    $("result").textContent = j.ok ? (j.note || "Switched camera") : (j.error || "Refused");
  } finally { b.disabled = false; }
  loadCameras(); refreshStatus();
});

// ---- The gallery -----------------------------------------------------------------------
// The list is redrawn only when what it shows changed: a reply and an event often ask
// for the same page (a photo from this page), and a redraw under the user's finger loses
// what they were about to tap.
let shownItems = null;
async function loadPage() {
  const [r, j] = await api("GET", "/api/files?page=" + page + "&perPage=12");
  if (!r.ok) return;
  pageCount = j.pageCount;
  if (page > pageCount) { page = pageCount; return loadPage(); }
  $("page").textContent = j.itemCount ? ("page " + j.page + " of " + j.pageCount) : "nothing yet";
  $("prev").disabled = page <= 1; $("next").disabled = page >= pageCount;
  const key = JSON.stringify(j.items);
  if (key === shownItems) return;
  shownItems = key;
  const ul = $("items"); ul.textContent = "";
  for (const it of j.items) {
    const li = document.createElement("li"); li.dataset.number = it.number; li.dataset.kind = it.kind;
    if (it.thumbnail) { const img = document.createElement("img"); img.src = it.thumbnail; img.alt = it.name; img.loading = "lazy"; li.append(img); }
    else { const d = document.createElement("div"); d.className = "noimg"; d.textContent = it.kind === "video" ? "▶" : "?"; li.append(d); }
    const tag = document.createElement("span"); tag.className = "tag"; tag.textContent = it.name; li.append(tag);
    if (it.uploaded === true) { const up = document.createElement("span"); up.className = "uploaded"; up.textContent = "☁✓"; up.title = "a verified copy is on the upload remote"; li.append(up); }
    li.addEventListener("click", () => openItem(it));
    ul.append(li);
  }
}
// Several events at once (a burst of photos) make one request.
let gallerySoon = null;
function galleryChanged() { clearTimeout(gallerySoon); gallerySoon = setTimeout(loadPage, 150); }

function openItem(it) {
  current = it;
  const v = $("view"); v.textContent = "";
  if (it.kind === "video") { const el = document.createElement("video"); el.src = it.url; el.controls = true; el.playsInline = true; el.preload = "metadata"; v.append(el); }
  else { const el = document.createElement("img"); el.src = it.url; el.alt = it.name; v.append(el); }
  $("download").href = it.url; $("download").setAttribute("download", it.name);
  $("viewer").showModal();
}

function closeViewer() { $("view").textContent = ""; if ($("viewer").open) $("viewer").close(); current = null; }

$("close").addEventListener("click", closeViewer);
$("delete").addEventListener("click", async () => {
  if (!current || !confirm("Delete " + current.name + "? This cannot be undone.")) return;
  const gone = current;
  const [r, j] = await api("DELETE", "/api/files/" + gone.number);
  $("result").textContent = r.ok ? ("Deleted " + gone.name) : (j.error || "Not deleted");
  closeViewer(); loadPage();
});
$("prev").addEventListener("click", () => { if (page > 1) { page--; loadPage(); } });
$("next").addEventListener("click", () => { if (page < pageCount) { page++; loadPage(); } });
$("logout").addEventListener("click", async () => { await api("POST", "/api/logout"); sessionStorage.removeItem("csrf"); location.replace("/login"); });

// ---- The live preview ------------------------------------------------------------------
// The camera's own H.264 (/api/live.mp4, fragmented MP4) through Media Source Extensions
// where the browser plays it; else the MJPEG preview. localStorage "preview" = "mjpeg"
// keeps to MJPEG.
let liveVideo = null;  // {abort} while the H.264 plays
const previewShown = () => !$("preview").hidden || !$("live-video").hidden;
function concatBytes(parts) {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0; for (const p of parts) { out.set(p, at); at += p.length; }
  return out;
}
// RFC 6381 codec from the init segment's avcC box (profile, compatibility, level).
function avcCodec(b) {
  for (let i = 4; i + 8 < b.length; i++) {
    if (b[i] === 0x61 && b[i + 1] === 0x76 && b[i + 2] === 0x63 && b[i + 3] === 0x43) {
      return "avc1." + [b[i + 5], b[i + 6], b[i + 7]].map((x) => x.toString(16).padStart(2, "0")).join("");
    }
  }
  return null;
}
async function startH264() {
  if (!window.MediaSource || localStorage.getItem("preview") === "mjpeg") return false;
  const ctl = new AbortController();
  let r;
  try { r = await fetch("/api/live.mp4", {signal: ctl.signal, cache: "no-store"}); } catch (e) { return false; }
  if (!r.ok || !r.body) { ctl.abort(); return false; }
  const reader = r.body.getReader();
  const first = []; let codec = null;
  while (!codec) {
    const {value, done} = await reader.read();
    if (done) return false;
    first.push(value);
    const head = concatBytes(first);
    codec = avcCodec(head);
    if (!codec && head.length > 65536) break;
  }
  const type = 'video/mp4; codecs="' + codec + '"';
  if (!codec || !MediaSource.isTypeSupported(type)) { ctl.abort(); return false; }
  const video = $("live-video"), ms = new MediaSource();
  video.src = URL.createObjectURL(ms);
  await new Promise((res) => ms.addEventListener("sourceopen", res, {once: true}));
  const sb = ms.addSourceBuffer(type);
  let queue = first;
  const next = () => {
    if (sb.updating || !queue.length || ms.readyState !== "open") return;
    // Live: keep near the newest frame (a jump back when over 0.5 s behind), and only the
    // last seconds in memory.
    const b = sb.buffered;
    if (b.length) {
      const end = b.end(b.length - 1);
      if (end - video.currentTime > 0.5) video.currentTime = end - 0.1;
      if (video.currentTime - b.start(0) > 20) { sb.remove(b.start(0), video.currentTime - 10); return; }
    }
    sb.appendBuffer(concatBytes(queue)); queue = [];
  };
  sb.addEventListener("updateend", next);
  next();
  liveVideo = {abort: () => ctl.abort()};
  video.hidden = false;
  video.play().catch(() => {});
  (async () => {
    try {
      for (;;) { const {value, done} = await reader.read(); if (done) break; queue.push(value); next(); }
    } catch (e) { /* aborted */ }
    if (liveVideo && !video.hidden) { $("preview-off").textContent = "Live video ended"; stopPreview(); }
  })();
  return true;
}
function stopPreview() {
  if (liveVideo) { const l = liveVideo; liveVideo = null; l.abort(); }
  const video = $("live-video");
  video.pause(); video.removeAttribute("src"); video.load(); video.hidden = true;
  $("preview").removeAttribute("src"); $("preview").hidden = true;
  $("preview-off").hidden = false; $("focus-hint").hidden = true; $("preview-toggle").textContent = "Show live preview";
}
$("preview-toggle").addEventListener("click", async () => {
  if (previewShown()) return stopPreview();
  $("preview-off").hidden = true; $("focus-hint").hidden = false; $("preview-toggle").textContent = "Hide live preview";
  if (await startH264()) return;
  const img = $("preview");
  img.src = "/preview.mjpg?t=" + Date.now(); img.hidden = false;
});
$("preview").addEventListener("error", () => { $("preview").hidden = true; $("preview-off").hidden = false; $("preview-off").textContent = "No live preview"; });
// The preview is only streamed while the page is visible.
document.addEventListener("visibilitychange", () => { if (document.hidden && previewShown()) stopPreview(); });

// Tap-to-focus: the point as fractions of the picture (the preview is drawn over the whole box).
for (const id of ["preview", "live-video"]) $(id).addEventListener("click", async (e) => {
  const box = $(id).getBoundingClientRect();
  const x = Math.min(1, Math.max(0, (e.clientX - box.left) / box.width)), y = Math.min(1, Math.max(0, (e.clientY - box.top) / box.height));
  $("result").textContent = "Focusing at " + x.toFixed(2) + ", " + y.toFixed(2) + "…";
  const [, j] = await api("POST", "/api/focus", {x, y});
  $("result").textContent = j.ok ? ("Focus and exposure at " + x.toFixed(2) + ", " + y.toFixed(2) + (j.note ? ": " + j.note : "")) : (j.error || "Refused");
  if ($("settings-panel").open) loadSettings();
});

// ---- Camera settings: one row per runtime setting, the control its schema names -----
const show = (v) => v === undefined ? "—" : JSON.stringify(v);
function valueOf(input, kind) {
  if (kind === "bool") return input.checked;
  if (kind === "number") return input.value.trim() === "" ? input.value : Number(input.value);
  if (kind === "choice") return JSON.parse(input.value);
  // JSON text; a bare word is a string, as shutterctl takes it.
  try { return JSON.parse(input.value); } catch (e) { return input.value; }
}
function settingRow(s) {
  const row = document.createElement("div"); row.className = "setting"; row.dataset.key = s.key;
  const form = document.createElement("form"); form.noValidate = true;
  const id = "set-" + s.key.replace(/\./g, "-");
  const label = document.createElement("label"); label.htmlFor = id; label.textContent = s.key;
  const kind = (s.input && s.input.type) || "json";
  let input;
  if (kind === "choice") {
    input = document.createElement("select");
    for (const c of s.input.choices) { const o = document.createElement("option"); o.value = JSON.stringify(c); o.textContent = c; input.append(o); }
    input.value = JSON.stringify(s.value);
  } else {
    input = document.createElement("input");
    if (kind === "bool") { input.type = "checkbox"; input.checked = s.value === true; }
    else if (kind === "number") {
      input.type = "number"; input.inputMode = "decimal";
      input.min = s.input.min; input.max = s.input.max; input.step = s.input.step || "any"; input.value = s.value;
    } else { input.type = "text"; input.value = JSON.stringify(s.value); input.spellcheck = false; input.autocapitalize = "off"; }
  }
  input.id = id; input.dataset.kind = kind;
  form.append(label, input);
  if (kind === "number" || kind === "json") { const b = document.createElement("button"); b.type = "submit"; b.className = "apply"; b.textContent = "Set"; form.append(b); }
  const reset = document.createElement("button"); reset.type = "button"; reset.className = "reset"; reset.textContent = "Reset";
  reset.disabled = s.source !== "runtime"; form.append(reset);
  const info = document.createElement("p"); info.className = "info";
  info.textContent = "value " + show(s.value) + " · " + (s.source === "runtime" ? "set at runtime (runtime)" : "from the configuration (config)")
    + (("effective" in s) ? " · in effect " + show(s.effective) : "");
  const allowed = document.createElement("p"); allowed.className = "allowed"; allowed.textContent = "allowed: " + s.allowed;
  const error = document.createElement("p"); error.className = "error"; error.setAttribute("role", "alert");
  row.append(form, info, allowed, error);
  const apply = () => change("/api/settings", {key: s.key, value: valueOf(input, kind)}, s.key);
  form.addEventListener("submit", (e) => { e.preventDefault(); apply(); });
  if (kind === "choice" || kind === "bool") input.addEventListener("change", apply);
  reset.addEventListener("click", () => change("/api/settings/reset", {key: s.key}, s.key));
  return row;
}
// Redrawn only when a setting changed (a reply and a `setting` event often both ask).
let shownSettings = null;
async function loadSettings() {
  const [r, j] = await api("GET", "/api/settings");
  const box = $("settings");
  if (!r.ok) { $("settings-result").textContent = j.error || "No settings"; return; }
  const key = JSON.stringify(j.settings);
  if (key === shownSettings) return;
  shownSettings = key;
  box.textContent = "";
  for (const s of j.settings) box.append(settingRow(s));
}
async function change(url, body, key) {
  const [r, j] = await api("POST", url, body);
  if (r.ok) {
    await loadSettings();
    const what = key ? (j.key ? key + " is " + show(j.value) + (j.source === "runtime" ? "" : " (the configuration's)") : key + " reset")
      : "every setting back to the configuration's";
    $("settings-result").textContent = what + (j.note ? " — " + j.note : "");
  } else {
    const row = key && document.querySelector('.setting[data-key="' + key + '"] .error');
    const words = j.error || ("Refused (" + r.status + ")");
    if (row) row.textContent = words;
    $("settings-result").textContent = words;
  }
}
$("settings-panel").addEventListener("toggle", () => { if ($("settings-panel").open) loadSettings(); });
$("reset-all").addEventListener("click", () => change("/api/settings/reset", {}, null));

refreshStatus(); loadPage(); loadCameras(); listen();
