// Alerts the director can hear (the "Sound" switch, off until switched on, remembered by this
// browser): a flag that fell, a PIN refused at the panels (or the chord locked after failed
// PINs), a challenge decided: a short WebAudio beep and, where the browser allows it, a
// notification. An alert sounds once, when it first appears; those already on the page when it
// opens are not news. Uses hall.js's `t` and `alertText`.
"use strict";

const ALERTS_KEY = "gammonclock.hall.alerts";
const AUDIBLE = new Set(["flag", "pin", "challenge"]);
const HEARD_KEPT = 5000;
const heard = new Set();          // the alerts already sounded (or there when the page opened)
let audible = (() => { try { return window.localStorage.getItem(ALERTS_KEY) === "on"; } catch (err) { return false; } })();
let audio = null;

function alertId(card, need) {
  return need.key ? `${card.table}/${need.key}`
                  : `${card.table}/${need.kind}/${(card.state || {}).journal || ""}`;
}

// The cards the hall sent: their new audible alerts sound, unless FIRST (the page's snapshot).
function hearCards(list, first) {
  for (const card of list || []) {
    for (const need of card.needs || []) {
      if (!AUDIBLE.has(need.kind)) continue;
      const id = alertId(card, need);
      if (heard.has(id)) continue;
      heard.add(id);
      if (heard.size > HEARD_KEPT) heard.delete(heard.values().next().value);
      if (!first && audible) announce(card, need, id);
    }
  }
}

function announce(card, need, id) {
  beep(need.kind === "flag" ? [880, 660, 880] : [660, 880]);
  if (!("Notification" in window) || Notification.permission !== "granted") return;
  try {
    new Notification(t("notify.title", { table: card.table }),
                     { body: alertText(need, card), tag: id, renotify: false });
  } catch (err) { /* not on this browser (a phone wants a service worker) */ }
}

function beep(tones) {
  try {
    audio = audio || new (window.AudioContext || window.webkitAudioContext)();
    let at = audio.currentTime + 0.02;
    for (const frequency of tones) {
      const tone = audio.createOscillator(), gain = audio.createGain();
      tone.type = "sine";
      tone.frequency.value = frequency;
      gain.gain.setValueAtTime(0.0001, at);
      gain.gain.exponentialRampToValueAtTime(0.3, at + 0.02);
      gain.gain.exponentialRampToValueAtTime(0.0001, at + 0.16);
      tone.connect(gain).connect(audio.destination);
      tone.start(at);
      tone.stop(at + 0.18);
      at += 0.2;
    }
  } catch (err) { /* no sound on this browser */ }
}

function showAudible() {
  const button = document.getElementById("alerts-toggle");
  if (button) button.setAttribute("aria-pressed", String(audible));
}

function setupAlerts() {
  showAudible();
  const button = document.getElementById("alerts-toggle");
  if (!button) return;
  button.addEventListener("click", () => {
    audible = !audible;
    try { window.localStorage.setItem(ALERTS_KEY, audible ? "on" : "off"); } catch (err) { /* not remembered */ }
    showAudible();
    if (!audible) return;
    // Both need the director's click: the browser's permission, and sound on this page.
    if ("Notification" in window && Notification.permission === "default") {
      try { Notification.requestPermission(); } catch (err) { /* an old browser */ }
    }
    try {
      audio = audio || new (window.AudioContext || window.webkitAudioContext)();
      audio.resume();
    } catch (err) { /* no sound on this browser */ }
  });
}
