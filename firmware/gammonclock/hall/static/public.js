// The spectators' pages: /public (every table) and /overlay/TABLE (one table, a transparent
// stream overlay). The hall puts the broker's address and the public tree in the page; the
// page subscribes to the spectators' broker itself (mqtt_ws.js) and never asks the hall again.
// Every view is checked key by key and bounded before it is kept (`cleanView`); anything else
// is dropped. Texts go in as text, never as markup.
"use strict";

const MAX_TABLES = 500;            // views kept; more tables are not shown
const MAX_VIEW_BYTES = 4096;       // hall_public.MAX_VIEW_BYTES
const MAX_LIVE_BYTES = 65536;      // a `live` message (hall_public.MAX_BATCH_BYTES, with room)
const MAX_LIVE_VIEWS = 256;
const STALE_MS = 30000;            // a running clock is counted this long past its view, no more
const TABLE_NAME = /^[A-Za-z0-9_-]{1,32}$/;
const SIDES = ["left", "right"];
const PHASES = new Set(["between_games", "running", "cube_offered", "paused", "result_entry",
                        "break", "match_over", "idle", "ready"]);
const END_REASONS = new Set(["score", "flag", "disqualified", "challenges", "abandoned",
                             "moved"]);

const $ = (id) => document.getElementById(id);
const body = document.body;
const MODE = body.dataset.mode === "overlay" ? "overlay" : "public";
const ONLY = MODE === "overlay" && TABLE_NAME.test(body.dataset.table || "") ? body.dataset.table : null;
const json = (id) => { try { return JSON.parse(($(id) || {}).textContent || "{}"); } catch (err) { return {}; } };
const SETTINGS = json("public-settings");
const TEXTS = json("public-texts");
const own = (object, key) => object !== null && typeof object === "object" &&
                             Object.prototype.hasOwnProperty.call(object, key);
const language = own(TEXTS, body.dataset.lang) ? body.dataset.lang
               : own(TEXTS, SETTINGS.language) ? SETTINGS.language : "en";

const views = new Map();           // table -> its clean view
let skewMs = 0;                    // the hall's clock minus this browser's (from live views)
let status = "connecting";

function entry(key) {
  if (own(TEXTS, language) && own(TEXTS[language], key)) return TEXTS[language][key];
  if (own(TEXTS, "en") && own(TEXTS.en, key)) return TEXTS.en[key];
  return key;
}
function fill(template, args) {
  return String(template).replace(/\{(\w+)\}/g, (whole, name) => (own(args, name) ? String(args[name]) : whole));
}
function t(key, args = {}) {
  const text = entry(key);
  return fill(typeof text === "string" ? text : (text.other || key), args);
}
function tn(key, n) {
  const forms = entry(key);
  if (typeof forms === "string") return fill(forms, { n });
  const form = new Intl.PluralRules(language).select(n);
  return fill(own(forms, form) ? forms[form] : forms.other, { n });
}

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "class") node.className = value;
    else node.setAttribute(key, value === true ? "" : value);
  }
  for (const child of children.flat()) if (child !== null && child !== undefined) node.append(child);
  return node;
}

// --- a view, checked -------------------------------------------------------------------------

const isObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v);
const text = (v, max) => (typeof v === "string" ? v.slice(0, max) : null);
const int = (v, low, high) => (Number.isInteger(v) && v >= low && v <= high ? v : null);
const points = (v) => (typeof v === "number" && Number.isFinite(v) && v >= 0 && v <= 100000 ? v : null);
const side = (v) => (v === "left" || v === "right" ? v : null);
const pair = (v, check) => { const o = isObject(v) ? v : {}; return { left: check(o.left), right: check(o.right) }; };

function cleanReserve(v) {
  if (!isObject(v)) return null;
  const reserve = int(v.reserve_ms, -1e10, 1e10);
  if (reserve === null) return null;
  return { reserve_ms: reserve, delay_ms: int(v.delay_ms, 0, 1e10) };
}

function cleanView(table, raw) {
  if (!isObject(raw) || raw.v !== 1 || raw.table !== table) return null;
  const cube = isObject(raw.cube) ? raw.cube : {};
  return {
    table,
    online: typeof raw.online === "boolean" ? raw.online : null,
    event: text(raw.event, 120),
    players: pair(raw.players, (v) => text(v, 64)),
    phase: PHASES.has(raw.phase) ? raw.phase : null,
    match_length: int(raw.match_length, 1, 10000),
    game: int(raw.game, 0, 100000),
    score: pair(raw.score, points),
    crawford: raw.crawford === true,
    cube: { value: int(cube.value, 1, 1 << 20), owner: side(cube.owner), enabled: cube.enabled !== false },
    running: side(raw.running),
    clock: pair(raw.clock, cleanReserve),
    reserves_at_ms: int(raw.reserves_at_ms, 0, 1e14),
    breaks_left: pair(raw.breaks_left, (v) => int(v, 0, 99)),
    winner: side(raw.winner),
    end_reason: END_REASONS.has(raw.end_reason) ? raw.end_reason : null,
    flag: side(raw.flag),
    sent_ms: int(raw.sent_ms, 0, 1e14),
  };
}

// A message of the public tree: a table's retained view (`ROOT/t/TABLE`) or the hall's
// stream of the views that changed (`ROOT/live`, `{"v": 1, "sent_ms", "views": [...]}`).
function received(topic, payload, retained) {
  if (typeof topic !== "string") return;
  const tableHead = `${SETTINGS.root}/t/`;
  let raw;
  const parse = (limit) => {
    if (payload.length > limit) return false;
    try { raw = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(payload)); } catch (err) { return false; }
    return true;
  };
  if (topic === `${SETTINGS.root}/live`) {
    if (!parse(MAX_LIVE_BYTES) || !isObject(raw) || raw.v !== 1 || !Array.isArray(raw.views)) return;
    if (!retained && int(raw.sent_ms, 0, 1e14) !== null) skewMs = raw.sent_ms - Date.now();
    for (const one of raw.views.slice(0, MAX_LIVE_VIEWS)) {
      if (isObject(one) && typeof one.table === "string") take(one.table, one);
    }
  } else if (topic.startsWith(tableHead)) {
    const table = topic.slice(tableHead.length);
    if (payload.length === 0 && TABLE_NAME.test(table)) { views.delete(table); scheduleRender(); return; }
    if (!parse(MAX_VIEW_BYTES)) return;
    const view = take(table, raw);
    // A live view was sent just now: its clock is the hall's. A retained one may be old.
    if (view && !retained && view.sent_ms !== null) skewMs = view.sent_ms - Date.now();
  }
}

function take(table, raw) {
  if (!TABLE_NAME.test(table) || (ONLY && table !== ONLY)) return null;
  if (!views.has(table) && views.size >= MAX_TABLES) return null;
  const view = cleanView(table, raw);
  if (!view) return null;
  const had = views.get(table);
  if (had && had.sent_ms !== null && view.sent_ms !== null && view.sent_ms < had.sent_ms) return null;
  views.set(table, view);
  scheduleRender();
  return view;
}

// --- the clocks ------------------------------------------------------------------------------

const hallNow = () => Date.now() + skewMs;

function clockText(ms) {
  const total = Math.max(0, Math.floor(ms / 1000));
  const h = Math.floor(total / 3600), m = Math.floor((total % 3600) / 60), s = total % 60;
  const ss = String(s).padStart(2, "0");
  return h ? `${h}:${String(m).padStart(2, "0")}:${ss}` : `${m}:${ss}`;
}

function ticking(view, s) {
  return view.running === s && view.online !== false && view.reserves_at_ms !== null &&
         (view.phase === "running" || view.phase === "cube_offered");
}

function stale(view) {
  return view.running !== null && view.reserves_at_ms !== null &&
         hallNow() - view.reserves_at_ms > STALE_MS;
}

// SIDE's reserve now, and what is left of its delay (null: none shown).
function reserveNow(view, s) {
  const c = view.clock[s];
  if (!c) return null;
  if (!ticking(view, s)) return { ms: c.reserve_ms, delay: null };
  let elapsed = Math.max(0, Math.min(hallNow(), view.reserves_at_ms + STALE_MS) - view.reserves_at_ms);
  let delay = null;
  if (c.delay_ms !== null) {
    delay = Math.max(0, c.delay_ms - elapsed);
    elapsed = Math.max(0, elapsed - c.delay_ms);
  }
  return { ms: Math.max(0, c.reserve_ms - elapsed), delay };
}

function tick() {
  for (const node of document.querySelectorAll(".reserve[data-side]")) {
    const view = views.get(node.dataset.table);
    if (!view) continue;
    const now = reserveNow(view, node.dataset.side);
    const shown = now === null ? "–" : clockText(now.ms);
    if (node.textContent !== shown) node.textContent = shown;
    node.classList.toggle("zero", now !== null && now.ms <= 0);
    node.classList.toggle("low", now !== null && now.ms > 0 && now.ms < 60000);
    const delay = node.parentNode.querySelector(".delay");
    if (delay) {
      const left = now && now.delay ? `+${Math.ceil(now.delay / 1000)}` : "";
      if (delay.textContent !== left) delay.textContent = left;
    }
  }
  for (const node of document.querySelectorAll("[data-view]")) {
    const view = views.get(node.dataset.view);
    if (view) node.classList.toggle("stale", stale(view));
  }
}

// --- the pages -------------------------------------------------------------------------------

function playerName(view, s) { return view.players[s] || t(`side.${s}`); }

function phaseText(view) {
  if (view.online === false) return t("phase.offline");
  return view.phase ? t(`phase.${view.phase}`) : "";
}

function facts(view) {
  const out = [];
  if (view.match_length) out.push(t("fact.to", { n: view.match_length }));
  if (view.game) out.push(t("fact.game", { n: view.game }));
  if (!view.cube.enabled) out.push(t("fact.no_cube"));
  else if (view.cube.value && !view.cube.owner) out.push(t("fact.cube", { n: view.cube.value }));
  return out;
}

function result(view) {
  if (view.phase !== "match_over") return null;
  const how = view.end_reason ? t(`end.${view.end_reason}`) : "";
  if (view.end_reason === "moved") return how;       // no result here: it goes on elsewhere
  const who = view.winner ? t("result.won", { name: playerName(view, view.winner) }) : t("result.draw");
  return how ? `${who} (${how})` : who;
}

function sideRow(view, s, cls) {
  const running = ticking(view, s);
  const score = view.score[s];
  return el("div", { class: `${cls}${running ? " running" : ""}${view.winner === s ? " winner" : ""}`,
                     "data-side": s },
    el("span", { class: "turn", title: running ? t("turn") : null }, running ? "▶" : ""),
    el("span", { class: "player" }, playerName(view, s)),
    view.cube.enabled && view.cube.owner === s && view.cube.value
      ? el("span", { class: "cube" }, String(view.cube.value)) : el("span", { class: "cube none" }),
    el("span", { class: "score" }, score === null ? "–" : String(score)),
    el("span", { class: "delay" }, ""),
    el("span", { class: "reserve", "data-side": s, "data-table": view.table }, ""));
}

function card(view) {
  const done = result(view);
  return el("article", { class: `table${view.online === false ? " offline" : ""}`, "data-view": view.table },
    el("div", { class: "head" },
       el("span", { class: "name" }, view.table),
       view.event ? el("span", { class: "event" }, view.event) : null,
       el("span", { class: "phase" }, phaseText(view))),
    sideRow(view, "left", "row"), sideRow(view, "right", "row"),
    el("div", { class: "facts" }, facts(view).join(" · "),
       view.crawford ? el("span", { class: "tag" }, t("fact.crawford")) : null,
       done ? el("span", { class: "result" }, done) : null));
}

function overlay(view) {
  const done = result(view);
  const head = [view.table, view.event, ...facts(view)].filter(Boolean).join(" · ");
  return el("div", { class: `panel${view.online === false ? " offline" : ""}`, "data-view": view.table },
    el("div", { class: "ov-head" }, el("span", {}, head),
       view.crawford ? el("span", { class: "tag" }, t("fact.crawford")) : null,
       el("span", { class: "phase" }, done || phaseText(view))),
    sideRow(view, "left", "ov-row"), sideRow(view, "right", "ov-row"));
}

const natural = (a, b) => a.localeCompare(b, undefined, { numeric: true });

function render() {
  if (MODE === "overlay") {
    const view = views.get(ONLY);
    $("overlay").replaceChildren(view ? overlay(view)
      : el("div", { class: "panel waiting" }, t("waiting", { table: ONLY || "?" })));
  } else {
    const all = [...views.values()].sort((a, b) => natural(a.table, b.table));
    $("tables").replaceChildren(...all.map(card));
    const playing = all.filter((v) => v.online !== false && v.running !== null).length;
    $("counts").textContent = `${tn("count.tables", all.length)} · ${tn("count.playing", playing)}`;
    showMessage(!SETTINGS.published ? t("off") : all.length ? "" : t("empty"));
  }
  tick();
}

function showMessage(words) {
  const node = $("message");
  node.textContent = words;
  node.hidden = !words;
}

let queued = false;
function scheduleRender() {
  if (queued) return;
  queued = true;
  requestAnimationFrame(() => { queued = false; render(); });
}

function setStatus(now) {
  status = now;
  const pill = $("status");
  if (!pill) return;
  const delay = Number(SETTINGS.delay_s) || 0;
  pill.textContent = now === "connected" ? (delay > 0 ? t("status.delayed", { n: Math.round(delay) }) : t("status.live"))
                   : now === "connecting" ? t("status.connecting") : t("status.lost");
  pill.className = "pill " + (now === "connected" ? "pill-ok" : now === "connecting" ? "pill-wait" : "pill-bad");
  body.dataset.status = now;
}

function brokerUrl() {
  if (typeof SETTINGS.websocket === "string" && SETTINGS.websocket) return SETTINGS.websocket;
  const host = location.hostname.includes(":") ? `[${location.hostname}]` : location.hostname;
  const scheme = location.protocol === "https:" ? "wss" : "ws";
  return `${scheme}://${host}:${Number(SETTINGS.port) || 9001}/`;
}

function setup() {
  document.documentElement.lang = language;
  body.classList.add(MODE);
  document.title = MODE === "overlay" ? t("overlay.title", { table: ONLY || "?" }) : t("page.title");
  const heading = $("heading");
  if (heading) heading.textContent = t("heading");
  setStatus("connecting");
  render();
  if (!SETTINGS.published || typeof SETTINGS.root !== "string") {
    setStatus("lost");
    return;
  }
  // An overlay follows its table's topic; the public page takes every table's retained view
  // once, then the hall's stream of changes (one message per flush, whatever the tables).
  const filters = ONLY ? [`${SETTINGS.root}/t/${ONLY}`] : [`${SETTINGS.root}/live`];
  const snapshot = ONLY ? [] : [`${SETTINGS.root}/t/+`];
  mqttSubscriber({ url: brokerUrl(), filters, snapshot, onMessage: received,
                   onStatus: (now) => setStatus(now) });
  setInterval(tick, 200);
}

setup();
