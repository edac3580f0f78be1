// Alerts the director can hear (the "Sound" switch, off until switched on, remembered by this
// browser): a flag that fell, a PIN refused at the panels (or the chord locked after failed
// PINs), a challenge decided, a match a table refused, a player late from a break, a table gone
// offline in a match (and back online), a running reserve under the low-time mark: a short
// WebAudio beep and, where the browser allows it, a notification. An alert sounds once, when it
// first appears; those already on the page when it opens are not news. The low-time mark is this
// browser's ("warn under M:SS", remembered; 0 = off): the hall knows nothing of it; the cards'
// low-time style (hall.js's `tickReserves`) follows the same mark. Uses
// hall.js's `t`, `tn`, `el`, `alertText`, `who`, `clockText`, `reserveNow`, `cards`
// and `scheduleRender`; hall.js's cards show `heldRow`.
//
// The page draws attention; it is not drawn by tables (SPEC §14.1): per table and kind at most
// one sound and one notification a minute (`QUIET_MS`); what comes within that minute is held
// and said in one announcement when the minute is over ("57 more alerts in the last minute:
// flag ×19, offline ×19, back online ×19"; a single one in its own words), and the card says
// how many are held. Offline and back online are two kinds (a held "back online" must not hold
// a later outage). Other tables are not held by one: each table's first alert of a kind sounds
// at once. For the page as a whole, one beep covers the alerts of a second (`BEEP_GAP_MS`: five
// flags at once are one beep, five notifications); a flag's tones still sound after a lesser
// beep. The cards list every alert (the hall bounds them); only sound and notifications are
// limited. Time is the page's clock (`alertNow`: monotonic; a test's browser clock drives it).
"use strict";

const ALERTS_KEY = "gammonclock.hall.alerts";
const LOW_KEY = "gammonclock.hall.low_time";
const AUDIBLE = new Set(["flag", "pin", "challenge", "notice", "overrun"]);
const LOW_DEFAULT_MS = 60000;     // "warn under 1:00"
const LOW_MAX_MS = 30 * 60000;    // the mark goes up to 30:00
// A match is in progress in these phases (a table offline then is news; idle, ready or over: not).
const IN_MATCH = new Set(["running", "cube_offered", "paused", "result_entry", "break",
                          "between_games", "arbiter"]);
const HEARD_KEPT = 200;           // per table (a card lists at most ~55 alerts: the hall's 50)
// The alerts already sounded (or there when the page opened), per table, the least recently
// listed first: a table's flood of new alerts pushes out only its own old ones, never an alert
// still on a card (one that came back would sound again).
const heard = new Map();          // table -> Set of alert ids
const QUIET_MS = 60000;           // per table and kind: one announcement a minute
const GATHER_MS = 2000;           // held kinds whose minutes end this close are said together
const BEEP_GAP_MS = 1000;         // the page's beeps: one for the alerts of a second
// The kinds of alerts, each limited by itself: their words in a summary, in the order said.
const KINDS = new Map([["flag", "alert.kind.flag"], ["overrun", "alert.kind.overrun"],
                       ["pin", "alert.kind.pin"], ["challenge", "alert.kind.challenge"],
                       ["notice", "alert.kind.notice"], ["low", "alert.kind.low"],
                       ["offline", "alert.kind.offline"], ["online", "alert.kind.online"]]);
// table -> {kinds: Map(kind -> {at: when it last sounded, held: how many since, last: the last
// held {words, tones}}), timer: the summary's}. Bounded by the tables and kinds.
const limits = new Map();
let lastBeep = null;              // {at, flag}: the page's last beep
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
      if (late && need.key && !hear(card.table, alertId(card, need))) continue;
      if (!hear(card.table, id)) continue;
      if (!first) announce(card, id, need.kind, () => alertText(need, card),
                           need.kind === "flag" ? FLAG : TWO);
    }
    hearOnline(card, first);
    hearLow(card, first);
  }
}

// TABLE's alert ID heard now (true) or already (false: it is kept as listed just now).
function hear(table, id) {
  let ids = heard.get(table);
  if (!ids) heard.set(table, ids = new Set());
  const known = ids.delete(id);
  ids.add(id);
  if (ids.size > HEARD_KEPT) ids.delete(ids.values().next().value);
  return !known;
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
    announce(card, `${card.table}/offline/${alertNow()}`, "offline",
             () => t("alert.offline_match"), LOW);
  } else if (card.online === true && wentOffline.delete(card.table)) {
    announce(card, `${card.table}/online/${alertNow()}`, "online",
             () => t("alert.online_again"), [660]);
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
  if (!hear(card.table, id)) return;
  if (first) return;
  // Said when held: the reserve then, if that game still runs.
  const words = () => {
    const latest = cards.get(card.table), now = (latest || {}).state || {};
    const same = latest && now.journal === state.journal && now.game === state.game;
    const left = same ? reserveNow(latest, side) : null;
    return t("alert.low_time", { who: who(card, side), time: clockText(left ?? ms) });
  };
  announce(card, id, "low", words, LOW);
}

function tickLow() {
  if (typeof cards === "undefined") return;
  for (const card of cards.values()) hearLow(card, false);
}

// The page's clock for the limits: monotonic (a wall clock set back must not hold alerts for
// longer), and a test's browser clock drives it.
function alertNow() { return performance.now(); }

// An alert of CARD's table, its KIND ("flag", "offline", …: a key of KINDS), WORDS (its text,
// made when said: in the page's language then), TONES: sounded and notified now, or held while
// its table's kind sounded less than a minute ago (then said with the others held when that
// minute is over).
function announce(card, id, kind, words, tones) {
  if (!audible) return;
  const table = card.table, now = alertNow();
  const limit = limitOf(table, kind);
  if (limit.at !== null && now - limit.at < QUIET_MS) {
    limit.held += 1;
    limit.last = { words, tones };
    planSummary(table);
    return;
  }
  limit.at = now;
  tell(table, id, words(), tones);
}

function limitOf(table, kind) {
  let own = limits.get(table);
  if (!own) limits.set(table, own = { kinds: new Map(), timer: null });
  let limit = own.kinds.get(kind);
  if (!limit) own.kinds.set(kind, limit = { at: null, held: 0, last: null });
  return limit;
}

// TABLE's summary, when the first of its held kinds' minutes is over, waiting for those whose
// minutes end within GATHER_MS of it (one announcement, not one per kind a moment apart).
function planSummary(table) {
  const own = limits.get(table);
  if (!own) return;
  if (own.timer !== null) clearTimeout(own.timer);
  own.timer = null;
  const ends = [...own.kinds.values()].filter((l) => l.held).map((l) => l.at + QUIET_MS)
    .sort((a, b) => a - b);
  if (!ends.length) return;
  let at = ends[0];
  for (const end of ends) if (end <= at + GATHER_MS) at = end;
  own.timer = setTimeout(() => { own.timer = null; sayHeld(table); },
                         Math.max(0, at - alertNow()));
}

// What TABLE's kinds held while their minute ran, said in one: a single alert in its own words,
// more as "N more alerts in the last minute: flag ×6, offline ×6". Those kinds' minutes start
// again now.
function sayHeld(table) {
  const own = limits.get(table);
  if (!own || !audible) return;
  const now = alertNow(), counts = new Map();
  let total = 0, last = null;
  for (const [kind, limit] of own.kinds) {
    if (!limit.held || now - limit.at < QUIET_MS) continue;
    counts.set(kind, limit.held);
    total += limit.held;
    last = limit.last;
    Object.assign(limit, { at: now, held: 0, last: null });
  }
  if (total === 1) {
    tell(table, `${table}/held/${now}`, last.words(), last.tones);
  } else if (total > 1) {
    const said = [...KINDS].filter(([kind]) => counts.has(kind))
      .map(([kind, key]) => counts.get(kind) > 1
        ? t("alert.summary_kind", { kind: t(key), n: counts.get(kind) }) : t(key));
    tell(table, `${table}/held/${now}`, tn("alert.summary", total, { kinds: said.join(", ") }),
         counts.has("flag") ? FLAG : TWO);
  }
  planSummary(table);
  scheduleRender();                                  // the card's held count (`heldRow`)
}

// Forget every limit and what it held (the director switched the sound off: nothing is owed).
function forgetLimits() {
  for (const own of limits.values()) if (own.timer !== null) clearTimeout(own.timer);
  limits.clear();
  scheduleRender();
}

// What a card says while its table's alerts are held: how many, and why (null: none held).
function heldRow(card) {
  const own = limits.get(card.table);
  const n = own ? [...own.kinds.values()].reduce((sum, limit) => sum + limit.held, 0) : 0;
  return n ? el("div", { class: "held" }, tn("alerts.held", n)) : null;
}

// Sound TONES and notify BODY, tagged ID (one occurrence: a new ID is a new notification).
function tell(table, id, body, tones) {
  beep(tones);
  if (!("Notification" in window) || Notification.permission !== "granted") return;
  try {
    new Notification(t("notify.title", { table }), { body, tag: id, renotify: false });
  } catch (err) { /* not on this browser (a phone wants a service worker) */ }
}

// TONES, unless the page beeped less than BEEP_GAP_MS ago (that beep said it; a flag's tones
// are not covered by a lesser beep).
function beep(tones) {
  const now = alertNow(), flag = tones === FLAG;
  if (lastBeep && now - lastBeep.at < BEEP_GAP_MS && (lastBeep.flag || !flag)) return;
  lastBeep = { at: now, flag };
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
    forgetLimits();
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
