// The web page's files, as they are served. Plain HTML/CSS/JS: edit and rebuild.

extension WebPage {
    static let loginHTML = #"""
<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Shutter: log in</title><link rel="stylesheet" href="/static/style.css"></head>
<body><main class="login">
<h1>Shutter</h1>
<form id="login"><label>Password <input id="password" type="password" autocomplete="current-password" autofocus required></label>
<button type="submit">Log in</button></form>
<p id="message" role="status"></p>
</main><script src="/static/login.js"></script></body></html>
"""#

    static let loginJS = #"""
"use strict";
document.getElementById("login").addEventListener("submit", async (e) => {
  e.preventDefault();
  const msg = document.getElementById("message");
  msg.textContent = "Checking…";
  const r = await fetch("/api/login", {method: "POST", headers: {"Content-Type": "application/json"},
    body: JSON.stringify({password: document.getElementById("password").value})});
  const j = await r.json().catch(() => ({}));
  if (r.ok) { sessionStorage.setItem("csrf", j.csrf); location.replace("/"); }
  else { msg.textContent = j.error || ("Refused (" + r.status + ")"); }
});
"""#

    static let appHTML = #"""
<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Shutter</title><link rel="stylesheet" href="/static/style.css"></head>
<body>
<header><h1>Shutter</h1><button id="logout" class="quiet">Log out</button></header>
<section id="live"><img id="preview" alt="Live preview" hidden><p id="preview-off" class="quiet">Live preview off</p>
<button id="preview-toggle">Show live preview</button></section>
<section id="controls">
<button id="photo" class="big">Take photo</button>
<button id="record" class="big">Start recording</button>
<p id="status" role="status">…</p><p id="result" role="status"></p>
</section>
<section id="gallery"><h2>Photos and clips</h2>
<ul id="items"></ul>
<nav><button id="prev">Newer</button><span id="page"></span><button id="next">Older</button></nav>
</section>
<dialog id="viewer"><div id="view"></div>
<p><a id="download" download>Download</a> <button id="delete" class="danger">Delete…</button> <button id="close">Close</button></p></dialog>
<script src="/static/app.js"></script></body></html>
"""#

    static let styleCSS = #"""
:root { font-family: system-ui, sans-serif; color-scheme: light dark; }
body { margin: 0 auto; max-width: 720px; padding: 0 12px 24px; }
header { display: flex; justify-content: space-between; align-items: center; }
h1 { font-size: 1.4rem; } h2 { font-size: 1.1rem; }
button, a#download { font-size: 1rem; padding: 10px 14px; border-radius: 8px; border: 1px solid #888; background: Canvas; color: CanvasText; text-decoration: none; }
button.big { width: 48%; padding: 16px; font-size: 1.1rem; }
button.danger { border-color: #c00; color: #c00; }
.quiet { opacity: .7; }
#preview { width: 100%; max-width: 640px; aspect-ratio: 16/9; background: #000; display: block; }
[hidden], #preview[hidden] { display: none; }
#items { list-style: none; padding: 0; display: grid; grid-template-columns: repeat(auto-fill, minmax(110px, 1fr)); gap: 8px; }
#items li { position: relative; cursor: pointer; }
#items img, #items .noimg { width: 100%; aspect-ratio: 4/3; object-fit: cover; background: #333; display: block; border-radius: 6px; }
#items .noimg { display: flex; align-items: center; justify-content: center; color: #ddd; }
#items .tag { position: absolute; left: 4px; bottom: 4px; background: rgba(0,0,0,.6); color: #fff; font-size: .75rem; padding: 1px 5px; border-radius: 4px; }
nav { display: flex; justify-content: space-between; align-items: center; }
dialog { width: 92vw; max-width: 700px; } #view img, #view video { width: 100%; }
.login { max-width: 340px; margin: 20vh auto; } .login input { width: 100%; font-size: 1.1rem; padding: 8px; margin: 8px 0; box-sizing: border-box; }
"""#

    static let appJS = #"""
"use strict";
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

const ledWords = {off: "off", booting: "blinking: starting", ready: "steady: ready", photoTaken: "blinked: photo taken",
  recording: "on: recording", saving: "flickering: saving", shutdownCountdown: "counting down to power-off",
  busyRefused: "flickered: busy, press refused", error: "blinking an error code", errorOnce: "blinked an error code"};
const stateWords = {idle: "Ready", booting: "Starting", pressed: "Button pressed", "taking-photo": "Taking a photo",
  recording: "Recording", finalising: "Saving the clip", "camera-unavailable": "Waiting for the camera",
  "shutdown-countdown": "Powering off soon", "shutting-down": "Shutting down", "powered-off": "Off"};
let recordingSince = null;
function describe(s) {
  const parts = [stateWords[s.state] || (s.state.startsWith("storage-unavailable") ? "Storage unavailable" : s.state)];
  if (s.state === "recording") {
    recordingSince = recordingSince || Date.now();
    parts[0] += " " + Math.round((Date.now() - recordingSince) / 1000) + " s";
  } else recordingSince = null;
  const led = s.leds && s.leds.status;
  if (led) parts.push("status light " + (ledWords[led.pattern] || led.pattern));
  if (s.freeBytes != null) parts.push((s.freeBytes / 1e9).toFixed(1) + " GB free");
  if (s.lastError) parts.push("last error: " + s.lastError);
  return parts.join(" · ");
}

async function refreshStatus() {
  try {
    const [r, j] = await api("GET", "/api/status");
    if (!r.ok) { $("status").textContent = j.error || "no status"; return; }
    const s = j.status; recording = s.state === "recording";
    $("record").textContent = recording ? "Stop recording" : "Start recording";
    $("status").textContent = describe(s);
  } catch (e) { /* logged out */ }
}

function say(j) {
  if (j.ok) $("result").textContent = (j.files && j.files.length) ? "Saved " + j.files.map(f => f.split("/").pop()).join(", ") : (j.note || "Done");
  else $("result").textContent = j.error || "Refused";
}

async function loadPage() {
  const [r, j] = await api("GET", "/api/files?page=" + page + "&perPage=12");
  if (!r.ok) return;
  pageCount = j.pageCount;
  const ul = $("items"); ul.textContent = "";
  for (const it of j.items) {
    const li = document.createElement("li"); li.dataset.number = it.number; li.dataset.kind = it.kind;
    if (it.thumbnail) { const img = document.createElement("img"); img.src = it.thumbnail; img.alt = it.name; img.loading = "lazy"; li.append(img); }
    else { const d = document.createElement("div"); d.className = "noimg"; d.textContent = it.kind === "video" ? "▶" : "?"; li.append(d); }
    const tag = document.createElement("span"); tag.className = "tag"; tag.textContent = it.name; li.append(tag);
    li.addEventListener("click", () => openItem(it));
    ul.append(li);
  }
  $("page").textContent = j.itemCount ? ("page " + j.page + " of " + j.pageCount) : "nothing yet";
  $("prev").disabled = page <= 1; $("next").disabled = page >= pageCount;
}

function openItem(it) {
  current = it;
  const v = $("view"); v.textContent = "";
  if (it.kind === "video") { const el = document.createElement("video"); el.src = it.url; el.controls = true; el.playsInline = true; el.preload = "metadata"; v.append(el); }
  else { const el = document.createElement("img"); el.src = it.url; el.alt = it.name; v.append(el); }
  $("download").href = it.url; $("download").setAttribute("download", it.name);
  $("viewer").showModal();
}

function closeViewer() { $("view").textContent = ""; $("viewer").close(); current = null; }

$("close").addEventListener("click", closeViewer);
$("delete").addEventListener("click", async () => {
  if (!current || !confirm("Delete " + current.name + "? This cannot be undone.")) return;
  const [r, j] = await api("DELETE", "/api/files/" + current.number);
  $("result").textContent = r.ok ? ("Deleted " + current.name) : (j.error || "Not deleted");
  closeViewer(); loadPage();
});
$("photo").addEventListener("click", async () => {
  $("photo").disabled = true; $("result").textContent = "Taking a photo…";
  try { const [, j] = await api("POST", "/api/photo"); say(j); } finally { $("photo").disabled = false; }
  page = 1; loadPage(); refreshStatus();
});
$("record").addEventListener("click", async () => {
  const [, j] = await api("POST", "/api/record", {action: recording ? "stop" : "start"});
  say(j); refreshStatus(); loadPage();
});
$("prev").addEventListener("click", () => { if (page > 1) { page--; loadPage(); } });
$("next").addEventListener("click", () => { if (page < pageCount) { page++; loadPage(); } });
$("logout").addEventListener("click", async () => { await api("POST", "/api/logout"); sessionStorage.removeItem("csrf"); location.replace("/login"); });
$("preview-toggle").addEventListener("click", () => {
  const img = $("preview");
  if (img.hidden) { img.src = "/preview.mjpg?t=" + Date.now(); img.hidden = false; $("preview-off").hidden = true; $("preview-toggle").textContent = "Hide live preview"; }
  else { img.removeAttribute("src"); img.hidden = true; $("preview-off").hidden = false; $("preview-toggle").textContent = "Show live preview"; }
});
$("preview").addEventListener("error", () => { $("preview").hidden = true; $("preview-off").hidden = false; $("preview-off").textContent = "No live preview"; });
// The preview is only streamed while the page is visible.
document.addEventListener("visibilitychange", () => { if (document.hidden && !$("preview").hidden) $("preview-toggle").click(); });

refreshStatus(); loadPage();
setInterval(refreshStatus, 3000);
"""#
}
