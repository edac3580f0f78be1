// Alerts the director can hear (the "Sound" switch, off until switched on, remembered by this
// browser): a flag that fell, a PIN refused at the panels (or the chord locked after failed
// PINs), a challenge decided, a match a table refused, a player late from a break, a table gone
// offline in a match (and back online), a running reserve under the low-time mark: a short
// WebAudio beep and, where the browser allows it, a notification. An alert sounds once, when it
// first appears; those already on the page when it opens are not news. The low-time mark is this
// browser's ("warn under M:SS", remembered; 0 = off): the hall knows nothing of it; the cards'
// low-time style (hall.js's `tickReserves`) follows the same mark. Uses
// hall.js's `t`, `alertText`, `who`, `clockText`, `reserveNow` and `cards`.
"use strict";

const ALERTS_KEY = "gammonclock.hall.alerts";
const LOW_KEY = "gammonclock.hall.low_time";
const AUDIBLE = new Set(["flag", "pin", "challenge", "notice", "overrun"]);
const LOW_DEFAULT_MS = 60000;     // "warn under 1:00"
const LOW_MAX_MS = 30 * 60000;    // the mark goes up to 30:00
// A match is in progress in these phases (a table offline then is news; idle, ready or over: not).
const IN_MATCH = new Set(["running", "cube_offered", "paused", "result_entry", "break",
                          "between_games", "arbiter"]);
const HEARD_KEPT = 5000;
const heard = new Set();          // the alerts already sounded (or there when the page opened)
let audible = (() => { try { return window.localStorage.getItem(ALERTS_KEY) === "on"; } catch (err) { return false; } })();
let audio = null;
const FLAG = [880, 660, 880], TWO = [660, 880], LOW = [880, 440];    // the beeps' tones (Hz)
let lowMs = (() => {
  try { return lowOf(window.localStorage.getItem(LOW_KEY)); } catch (err) { return null; }
})() ?? LOW_DEFAULT_MS;
const lastOnline = new Map();     // table -> its last `online` (true, false, null)
const wentOffline = new Set();    // tables announced offline, not yet back

// The low-time mark of TEXT ("M:SS", "MM:SS" or "0"), in ms; null when it is not one (or over
// LOW_MAX_MS). 0 is off.
function lowOf(text) {
  if (typeof text !== "string") return null;
  const value = text.trim();
  if (/^0+$/.test(value)) return 0;
  const parts = /^(\d{1,2}):([0-5]\d)$/.exec(value);
  if (!parts) return null;
  const ms = (Number(parts[1]) * 60 + Number(parts[2])) * 1000;
  return ms <= LOW_MAX_MS ? ms : null;
}

function alertId(card, need) {
  return need.key ? `${card.table}/${need.key}`
                  : `${card.table}/${need.kind}/${(card.state || {}).journal || ""}`;
}

// The cards the hall sent: their new audible alerts sound, unless FIRST (the page's snapshot).
function hearCards(list, first) {
  for (const card of list || []) {
    for (const need of card.needs || []) {
      if (!AUDIBLE.has(need.kind)) continue;
      // A late return from a break shows twice: the table's state says so (no key: only while
      // the break runs over) and its `break_overrun` event makes an alert: one occurrence, one
      // sound.
      const late = need.kind === "overrun", id = late ? lateId(card, need) : alertId(card, need);
      if (late && need.key && !hear(alertId(card, need))) continue;
      if (!hear(id)) continue;
      if (!first) announce(card, id, alertText(need, card), need.kind === "flag" ? FLAG : TWO);
    }
    hearOnline(card, first);
    hearLow(card, first);
  }
}

// ID heard now (true) or already (false).
function hear(id) {
  if (heard.has(id)) return false;
  heard.add(id);
  if (heard.size > HEARD_KEPT) heard.delete(heard.values().next().value);
  return true;
}

// A break's overrun: its table, match, game (breaks are between games, `game` is the next) and
// the late side.
function lateId(card, need) {
  const state = card.state || {}, say = Array.isArray(need.say) ? need.say : [];
  return `${card.table}/late/${state.journal || ""}/${state.game ?? ""}/${say[1] || ""}`;
}

// A table gone offline while a match is in progress (its last state's phase), and back online.
function hearOnline(card, first) {
  const before = lastOnline.has(card.table) ? lastOnline.get(card.table) : card.online;
  lastOnline.set(card.table, card.online);
  if (first) return;
  const state = card.state || {};
  if (card.online === false && before !== false && IN_MATCH.has(state.phase)
      && state.lifecycle !== "ready") {
    if (audible) wentOffline.add(card.table);        // "back online" follows an announced one
    announce(card, `${card.table}/offline/${Date.now()}`, t("alert.offline_match"), LOW);
  } else if (card.online === true && wentOffline.delete(card.table)) {
    announce(card, `${card.table}/online/${Date.now()}`, t("alert.online_again"), [660]);
  }
}

// The running side's reserve under the mark: once per table, match, game and side.
function hearLow(card, first) {
  if (!lowMs || card.online === false) return;
  const state = card.state || {}, side = state.running;
  if (side !== "left" && side !== "right") return;
  const ms = reserveNow(card, side);
  if (ms === null || ms <= 0 || ms >= lowMs) return;
  const id = `${card.table}/low/${state.journal || ""}/${state.game ?? ""}/${side}`;
  if (!hear(id)) return;
  if (!first) announce(card, id, t("alert.low_time", { who: who(card, side), time: clockText(ms) }), LOW);
}

function tickLow() {
  if (typeof cards === "undefined") return;
  for (const card of cards.values()) hearLow(card, false);
}

// Sound TONES and notify BODY, tagged ID (one occurrence: a new ID is a new notification).
function announce(card, id, body, tones) {
  if (!audible) return;
  beep(tones);
  if (!("Notification" in window) || Notification.permission !== "granted") return;
  try {
    new Notification(t("notify.title", { table: card.table }),
                     { body, tag: id, renotify: false });
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

// The low-time field: the mark as M:SS; a bad one is said so and changes nothing.
function setupLowTime() {
  const input = document.getElementById("low-time");
  if (!input) return;
  input.value = lowMs ? clockText(lowMs) : "0";
  input.addEventListener("change", () => {
    const ms = lowOf(input.value);
    input.setAttribute("aria-invalid", String(ms === null));
    input.dataset.tTitle = ms === null ? "low_time.bad" : "low_time.title";
    input.title = t(input.dataset.tTitle);
    if (ms === null) return;
    lowMs = ms;
    input.value = ms ? clockText(ms) : "0";
    try { window.localStorage.setItem(LOW_KEY, input.value); } catch (err) { /* not remembered */ }
  });
  setInterval(tickLow, 1000);
}

function setupAlerts() {
  showAudible();
  setupLowTime();
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
