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
