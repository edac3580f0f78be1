// The director's page: cards from the hall's server-sent events; the running reserve counts down
// here between two states, from the state's instant on the hall's clock (`reserves_at_ms`).
"use strict";

const cards = new Map();          // table -> the card JSON the hall sent
const archive = new Map();        // table/name -> verdict
let skewMs = 0;                   // the hall's clock minus this browser's
let onlyNeeds = false;
let openTable = null;
let forcing = null;               // {table, match}: the forced load the director is asked about
// The page's token (the hall puts it in the page and in each snapshot): every POST carries it,
// and a page of another origin can read neither.
let token = (document.querySelector('meta[name="hall-token"]') || {}).content || "";

const $ = (id) => document.getElementById(id);

// --- the page's language ------------------------------------------------------------------------
// Every text of the page is a key of the catalogue the hall puts in the page (texts.json: one
// table per language, the same keys in each). The hall's --language is the default; the switch
// chooses another for this browser, which remembers it. Texts go in as text, never as markup;
// a parameter is put in once (a name holding "{n}" stays as it is).

const LANGUAGE_KEY = "gammonclock.hall.language";
const TEXTS = (() => {
  try { return JSON.parse(($("hall-texts") || {}).textContent || "{}"); } catch (err) { return {}; }
})();
const own = (object, key) => object !== null && typeof object === "object" &&
                             Object.prototype.hasOwnProperty.call(object, key);
let language = chosenLanguage();

function chosenLanguage() {
  let stored = null;
  try { stored = window.localStorage.getItem(LANGUAGE_KEY); } catch (err) { /* no storage */ }
  if (own(TEXTS, stored)) return stored;
  const given = (document.querySelector('meta[name="hall-language"]') || {}).content;
  return own(TEXTS, given) ? given : "en";
}

function entry(key) {
  if (own(TEXTS, language) && own(TEXTS[language], key)) return TEXTS[language][key];
  if (own(TEXTS, "en") && own(TEXTS.en, key)) return TEXTS.en[key];
  return key;
}

function fill(template, args) {
  return String(template).replace(/\{(\w+)\}/g,
    (whole, name) => (own(args, name) ? String(args[name]) : whole));
}

// The text of KEY in the page's language, its {parameters} filled in from ARGS.
function t(key, args = {}) {
  const text = entry(key);
  return fill(typeof text === "string" ? text : (text.other || key), args);
}

// A figure as the page's language writes it: a decimal comma in Russian ("3,1 ГБ"), as the
// panels do (words.number). VALUE: a number or its text (`toFixed`'s).
function num(value) {
  const text = String(value);
  return language === "ru" ? text.replace(".", ",") : text;
}

// A count's text in its plural form (Russian: 1 стол, 2 стола, 5 столов), {n} the count.
function tn(key, n, args = {}) {
  const forms = entry(key);
  if (typeof forms === "string") return fill(forms, { ...args, n });
  const form = new Intl.PluralRules(language).select(n);
  return fill(own(forms, form) ? forms[form] : forms.other, { ...args, n });
}

// KEY's text as nodes, NODES put in for their {parameters} (a number in bold in a fact).
function tnodes(key, nodes) {
  const text = entry(key);
  return String(typeof text === "string" ? text : key).split(/(\{\w+\})/).filter(Boolean)
    .map((part) => {
      const name = part.slice(1, -1);
      return part.startsWith("{") && own(nodes, name) ? nodes[name] : part;
    });
}

// The page's fixed texts (data-t, and data-t-title / -placeholder / -aria-label for attributes).
function translateStatic() {
  document.documentElement.lang = language;
  for (const node of document.querySelectorAll("[data-t]")) node.textContent = t(node.dataset.t);
  for (const [attr, data] of [["title", "tTitle"], ["placeholder", "tPlaceholder"],
                              ["aria-label", "tAriaLabel"]]) {
    for (const node of document.querySelectorAll(`[data-t-${attr}]`)) {
      node.setAttribute(attr, t(node.dataset[data]));
    }
  }
  const select = $("language");
  if (select) select.value = language;
}

function setLanguage(chosen) {
  if (!own(TEXTS, chosen)) return;
  language = chosen;
  try { window.localStorage.setItem(LANGUAGE_KEY, chosen); } catch (err) { /* not remembered */ }
  translateStatic();
  setBroker(lastBroker);
  fillArchive();
  if ($("results-dialog").open) openResults();
  if ($("standings-dialog").open) openStandings();
  render();
}
const hallNow = () => Date.now() + skewMs;
const CARD_NEEDS = 4;              // needs listed on a card; the dialog lists them all
const RED = new Set(["flag", "refused", "overrun", "offline", "archive", "bad"]);
const PHASES = new Set(["between_games", "running", "cube_offered", "paused", "result_entry",
                        "break", "match_over", "idle", "ready", "arbiter", "offline"]);

// A loaded match before game 1 is "ready" wherever a person reads it (SPEC §13.2): its §9 phase
// is between_games, its lifecycle says ready.
function phaseName(state) {
  if (movedAway(state)) return t("phase.moved");
  const phase = state.lifecycle === "ready" ? "ready" : state.phase;
  return PHASES.has(phase) ? t(`phase.${phase}`) : (typeof phase === "string" && phase) || "—";
}

// A match continued on another clock (SPEC §13.5): over here, and the card says where it went.
function movedAway(state) {
  return state.phase === "match_over" && state.end_reason === "moved";
}

function movedTo(state) {
  return typeof state.moved_to === "string" ? t("card.moved_to", { table: state.moved_to })
                                            : t("card.moved_away");
}

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "class") node.className = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? "" : value);
  }
  for (const child of children.flat()) {
    if (child !== null && child !== undefined) node.append(child);
  }
  return node;
}

function clockText(ms) {
  const total = Math.max(0, Math.floor(ms / 1000));
  const h = Math.floor(total / 3600), m = Math.floor((total % 3600) / 60), s = total % 60;
  const ss = String(s).padStart(2, "0");
  return h ? `${h}:${String(m).padStart(2, "0")}:${ss}` : `${m}:${ss}`;
}

// The reserve of SIDE now: the last state's, less the time since that state for the side that
// is running. A side still inside its delay (when the clock says so) waits out the delay first.
function reserveNow(card, side) {
  const state = card.state || {};
  const clock = (state.clock || {})[side];
  if (!clock || typeof clock.reserve_ms !== "number") return null;
  if (state.running !== side || card.online === false || card.reserves_at_ms == null) {
    return clock.reserve_ms;
  }
  let elapsed = Math.max(0, hallNow() - card.reserves_at_ms);
  if (typeof clock.delay_ms === "number") elapsed = Math.max(0, elapsed - clock.delay_ms);
  return Math.max(0, clock.reserve_ms - elapsed);
}

function tickReserves() {
  for (const node of document.querySelectorAll(".reserve[data-side]")) {
    const card = cards.get(node.dataset.table);
    if (!card) continue;
    const ms = reserveNow(card, node.dataset.side);
    if (ms === null) continue;
    const text = clockText(ms);
    if (node.textContent !== text) node.textContent = text;
    node.classList.toggle("zero", ms <= 0);
    node.classList.toggle("low", ms > 0 && ms < lowMs);   // this browser's mark (hall_alerts.js)
  }
}

function player(card, side) {
  const players = (card.state || {}).players || {};
  return players[side] || t(side === "left" ? "player.left" : "player.right");
}

// "Anna 3–2 Boris (to 7, game 2)": a state's score in words ("" when it has none).
function scoreWords(state) {
  const score = state.score || {}, players = state.players || {};
  if (typeof score.left !== "number" || typeof score.right !== "number") return "";
  const more = [state.match_length ? t("score.to", { n: state.match_length }) : null,
                state.game ? t("score.game", { n: state.game }) : null].filter(Boolean);
  return `${players.left || t("side.left")} ${score.left}–${score.right} ` +
         `${players.right || t("side.right")}` +
         (more.length ? ` (${more.join(", ")})` : "");
}

function needClass(need) { return RED.has(need.kind) ? "need" : "need amber"; }

// An alert in the page's language. The hall says it as `say`: [id, ...parameters], the id a key
// of the catalogue (`alert.ID`, whose English is the hall's own `text`), the parameters named
// here in order: the hall's own words (a side, a reason's code, a count) or a table's text,
// bounded by the hall, put in as text. A player is named by side; the name is the card's.
// An alert the catalogue does not know shows the hall's text.
const SAY = new Map([
  ["offline", []], ["paused", []], ["arbiter", []], ["lost", ["side"]], ["late", ["side"]],
  ["flag", ["side"]], ["overrun", ["side"]], ["challenge", ["side", "verdict"]],
  ["pin", ["reason", "detail"]], ["chord", ["detail"]], ["bad", ["what", "why", "count"]],
  ["notice", ["detail"]], ["refused", ["reason"]], ["archive", ["detail"]], ["card", ["why"]],
  ["archive_failed", ["why", "code", "name", "size", "max"]],
  ["archive_cut_short", ["name", "records", "of"]],
  ["archive_cut_short_final", ["name", "records", "of"]],
  ["archive_not_verified", ["name", "code", "records", "key", "detail"]],
  ["copy_refused", ["code", "journal", "record"]],
]);

function who(card, side) {
  if (side !== "left" && side !== "right") return t("who.someone");
  const players = ((card || {}).state || {}).players || {};
  const name = typeof players[side] === "string" ? players[side] : "";
  return name ? t("who.named", { side: t(`side.${side}`), name }) : t(`side.${side}`);
}

function alertText(need, card) {
  const say = Array.isArray(need.say) ? need.say : [];
  const names = SAY.get(say[0]);
  if (!names || !own(TEXTS.en || {}, `alert.${say[0]}`)) return textOf(need.text);
  const args = {};
  names.forEach((name, i) => {
    const value = say[i + 1];
    args[name] = typeof value === "string" || Number.isFinite(value) ? value : "";
  });
  const key = `alert.${say[0]}`;
  switch (say[0]) {
    case "lost": case "late": case "flag": case "overrun":
      return t(key, { who: who(card, args.side) });
    case "challenge":
      return t(key, { who: who(card, args.side),
                      verdict: t(args.verdict === "upheld" ? "challenge.upheld" : "challenge.rejected") });
    case "pin":
      return t(key, { detail: args.detail ||
                      t(args.reason === "pin_timeout" ? "pin.pin_timeout" : "pin.pin_wrong") });
    case "chord":
      return t(key, { detail: args.detail || t("chord.locked") });
    case "bad":
      return t(key, { what: args.what, why: args.why,
                      count: args.count > 1 ? t("bad.count", { n: args.count }) : "" });
    case "refused":
      return t(key, { reason: args.reason || t("reason.none") });
    case "archive_failed":
      // In English the hall's own words (they name the parser's complaint too).
      return t(key, { why: language !== "en" && own(TEXTS.en || {}, `archive.failed.${args.code}`)
        ? t(`archive.failed.${args.code}`, args) : args.why });
    case "copy_refused": {
      // The hall refused journal lines of the table's events (the move's dialog says it whole).
      const fault = `copy_fault.${String(args.code).replace(/^copy_/, "")}`;
      return own(TEXTS.en || {}, fault)
        ? t(key, { journal: args.journal, record: args.record, fault: t(fault) })
        : textOf(need.text);
    }
    case "archive_not_verified": {
      // The archived journal's own verdict when the page holds it (its detail in each language).
      const entry = archive.get(`${(card || {}).table}/${args.name}`);
      const say = entry && entry.say && entry.say.code === args.code ? entry.say
        : { code: args.code, records: args.records, key: args.key, detail: args.detail };
      return t(key, { name: args.name, verdict: verdictText(say) });
    }
    default:
      return t(key, args);
  }
}

function renderCard(card) {
  const state = card.state || {};
  const score = state.score || {};
  const needs = card.needs || [];
  // An offline table's last state is history: nobody is shown on the clock.
  const running = card.online === false ? null : state.running;
  const classes = ["card"];
  if (needs.length) classes.push(needs.some((n) => RED.has(n.kind)) ? "need-red" : "need-amber");
  if (card.online === false) classes.push("offline");
  const sideRow = (side) => [
    el("span", { class: "player" + (running === side ? " running" : "") }, player(card, side)),
    el("span", { class: "score" }, score[side] ?? "–"),
    el("span", { class: "reserve" + (running === side ? " running" : ""), "data-side": side,
                 "data-table": card.table }, ""),
  ];
  const cube = state.cube || {};
  const facts = [];
  const bold = (value) => el("b", {}, String(value));
  const fact = (key, nodes) => el("span", {}, tnodes(key, nodes));
  if (movedAway(state)) facts.push(el("span", { class: "tag moved" }, movedTo(state)));
  if (state.match_length) facts.push(fact("fact.to", { n: bold(state.match_length) }));
  if (state.game) facts.push(fact("fact.game", { n: bold(state.game) }));
  if (cube.enabled === false) facts.push(el("span", {}, t("fact.no_cube")));
  else if (cube.value) {
    facts.push(cube.owner ? fact("fact.cube_owner", { n: bold(cube.value),
                                                      owner: player(card, cube.owner) })
                          : fact("fact.cube_centre", { n: bold(cube.value) }));
  }
  const breaks = state.breaks_left;
  if (breaks) facts.push(fact("fact.breaks", { n: bold(`${breaks.left}·${breaks.right}`) }));
  if (state.crawford_game) facts.push(el("span", { class: "tag crawford" }, t("fact.crawford")));
  const phase = card.online === false ? t("phase.offline") : phaseName(state);
  const node = el("article", { class: classes.join(" "), "data-table": card.table, tabindex: "0",
                               role: "button", "aria-label": t("table.aria", { table: card.table }),
                               onclick: () => openTableDialog(card.table),
                               onkeydown: (e) => { if (e.key === "Enter") openTableDialog(card.table); } },
    el("div", { class: "head" }, el("span", { class: "name" }, card.table),
       state.event ? el("span", { class: "counts event" }, state.event) : null,
       el("span", { class: "phase" }, phase)),
    el("div", { class: "players" }, sideRow("left"), sideRow("right")),
    el("div", { class: "facts" }, facts),
    healthRow(card),                                    // health.js
    movedLine(card),
    needsRow(card, needs),
    heldRow(card),                                      // hall_alerts.js
    badMessages(card));
  return node;
}

// Alerts the director can mark seen: those the card lists with a key, and those the hall
// counted but no longer lists (`alerts_dropped`).
function alertCount(card) {
  const listed = (card.needs || []).filter((n) => n.key).length;
  return listed + (dropped(card) > 0 ? dropped(card) : 0);
}

function dropped(card) {
  return Number.isFinite(card.alerts_dropped) ? card.alerts_dropped : 0;
}

function more(count) {
  return count > 0 ? el("span", { class: "need more", "data-kind": "more" }, t("alerts.more", { n: count }))
                   : null;
}

// A card lists its first few needs (the most urgent: the hall sorts them) and counts the rest,
// those it lists in the dialog and those the hall itself no longer lists; then "mark all seen".
function needsRow(card, needs) {
  const shown = needs.slice(0, CARD_NEEDS);
  const count = alertCount(card);
  if (!needs.length && !count) return null;
  return el("div", { class: "needs" },
    shown.map((n) => el("span", { class: needClass(n), "data-kind": n.kind }, alertText(n, card))),
    more(needs.length - shown.length + dropped(card)),
    count ? el("button", { class: "seen-all", type: "button",
                           title: t("alerts.seen_all_title"),
                           onclick: (e) => { e.stopPropagation(); dismissAll(card.table, e.currentTarget); },
                           onkeydown: (e) => e.stopPropagation() },
               t("alerts.seen_all", { n: count })) : null);
}

function badMessages(card) {
  const bad = Number.isFinite(card.bad_messages) ? card.bad_messages : 0;
  return bad > 0 ? el("div", { class: "bad-messages" }, tn("alerts.bad_messages", bad)) : null;
}

function sortedCards() {
  return [...cards.values()]
    .filter((c) => !onlyNeeds || (c.needs || []).length)
    .sort((a, b) => (a.urgency - b.urgency) || naturalCompare(a.table, b.table));
}

function naturalCompare(a, b) { return a.localeCompare(b, undefined, { numeric: true }); }

function render() {
  const box = $("cards");
  box.replaceChildren(...sortedCards().map(renderCard));
  $("empty").hidden = cards.size > 0;
  const all = [...cards.values()];
  const needing = all.filter((c) => (c.needs || []).length).length;
  const offline = all.filter((c) => c.online === false).length;
  $("counts").textContent = t("count.joined", { tables: tn("count.tables", all.length),
                                                needing: tn("count.needing", needing),
                                                offline: tn("count.offline", offline) });
  tickReserves();
  if (openTable) fillTableDialog(openTable);
  if (forcing && $("force-dialog").open) fillForce();
  if (moveTo && $("move-dialog").open) fillMove();
}

let renderQueued = false;
function scheduleRender() {
  if (renderQueued) return;
  renderQueued = true;
  requestAnimationFrame(() => { renderQueued = false; render(); });
}

// The broker's status as the hall says it, in the page's language where the words are known.
function brokerStatus(status) {
  const text = textOf(status);
  if (text === "connecting") return t("broker.connecting");
  if (text === "hall unreachable; retrying") return t("broker.unreachable");
  let found = /^refused by the broker: (.*)$/s.exec(text);
  if (found) return t("broker.refused", { reason: found[1] });
  found = /^disconnected \((.*)\); reconnecting$/s.exec(text);
  if (found) return t("broker.disconnected", { reason: found[1] });
  return text;
}

let lastBroker = null;
function setBroker(broker) {
  lastBroker = broker;
  if (!broker) return;
  const pill = $("broker");
  pill.className = "pill " + (broker.connected ? "pill-ok" : "pill-bad");
  pill.textContent = broker.connected ? t("broker.connected")
                                      : t("broker.status", { status: brokerStatus(broker.status) });
  pill.title = textOf(broker.url) || t("broker.title");
}

function setArchive(entries) {
  for (const entry of entries) archive.set(`${entry.table}/${entry.name}`, entry);
  $("archive-count").textContent = String(archive.size);
  fillArchive();
}

function connect() {
  const source = new EventSource("/events");
  const clock = (data) => { skewMs = data.server_now_ms - Date.now(); };
  source.addEventListener("snapshot", (e) => {
    const data = JSON.parse(e.data);
    clock(data);
    cards.clear();
    for (const card of data.cards) cards.set(card.table, card);
    hearCards(data.cards, true);
    setBroker(data.broker);
    if (data.token) token = data.token;
    archive.clear();
    setArchive(data.archive);
    setCounting(data.counting);
    scheduleRender();
  });
  source.addEventListener("cards", (e) => {
    const data = JSON.parse(e.data);
    clock(data);
    for (const card of data.cards) cards.set(card.table, card);
    hearCards(data.cards, false);
    scheduleRender();
  });
  source.addEventListener("broker", (e) => setBroker(JSON.parse(e.data).broker));
  source.addEventListener("archive", (e) => setArchive([JSON.parse(e.data)]));
  source.onerror = () => setBroker({ connected: false, status: "hall unreachable; retrying", url: "" });
}

// --- a table's dialog: its alerts, replies and a command ------------------------------------

async function post(path, body) {
  const response = await fetch(path, { method: "POST",
                                       headers: { "Content-Type": "application/json",
                                                  "X-Hall-Token": token },
                                       body: JSON.stringify(body) });
  const data = await response.json().catch(() => ({ error: `HTTP ${response.status}` }));
  if (!response.ok) {
    // The hall's own errors the page knows are said in its language; others as the hall says.
    const known = typeof data.code === "string" && own(TEXTS.en || {}, `error.${data.code}`);
    const args = {};
    for (const [name, value] of Object.entries(own(data, "fields") && typeof data.fields === "object"
                                               && data.fields ? data.fields : {})) {
      if (typeof value === "string" || Number.isFinite(value)) args[name] = value;
    }
    throw new Error(known ? t(`error.${data.code}`, args) : textOf(data.error) || `HTTP ${response.status}`);
  }
  return data;
}

function openTableDialog(table) {
  openTable = table;
  $("cmd-result").textContent = "";
  fillTableDialog(table);
  const dialog = $("table-dialog");
  if (!dialog.open) dialog.showModal();
}

function fillTableDialog(table) {
  const card = cards.get(table);
  if (!card) return;
  const state = card.state || {};
  $("td-title").textContent = t("table.title_players", { table, left: player(card, "left"),
                                                         right: player(card, "right") });
  const alerts = (card.needs || []).map((n) => el("div", { class: "alert-row" },
    el("span", { class: needClass(n) }, alertText(n, card)),
    forceable(card, n.match) ? el("button", { class: "force", type: "button",
                                              onclick: () => askForce(table, n.match) },
                                  t("alerts.force")) : null,
    n.key ? el("button", { onclick: () => dismiss(table, n.key) }, t("alerts.seen")) : null));
  const replies = (card.replies || []).map((r) => replyNode(sentOf(r), r, card, "li"));
  const events = (card.recent || []).map((ev) => el("li", {},
    `#${ev.seq} ${textOf(ev.at).slice(11, 19)} `, eventNode(ev)));
  // Its alert marked seen, a match that waits can still be forced from the notice's line.
  const offered = (card.needs || []).some((n) => forceable(card, n.match));
  const notice = card.notice ? el("p", { class: "notice" },
    t("notice.line", { verdict: t(card.notice.ok ? "notice.loaded" : "notice.refused") }),
    lines(card.notice.said).filter((l) => !l.startsWith("arbiter: ")).map(arrows).join("; ") ||
    textOf(card.notice.error),
    !offered && forceable(card, card.notice.match)
      ? el("button", { class: "force", type: "button",
                       onclick: () => askForce(table, card.notice.match) }, t("alerts.force"))
      : null) : null;
  const parts = [
    el("p", { class: "facts" }, t("dialog.facts", { phase: phaseName(state),
                                                    journal: state.journal || "—" }),
       ` · ${tn("dialog.events", Number.isFinite(card.events) ? card.events : 0)}`),
    card.error ? el("p", { class: "badmark" }, card.error) : null,
    alertCount(card) ? el("button", { class: "seen-all", type: "button",
                                      onclick: (e) => dismissAll(table, e.currentTarget) },
                          t("alerts.seen_all", { n: alertCount(card) })) : null,
    ...alerts, more(dropped(card)), badMessages(card), notice,
    card.health ? el("h3", {}, t("health.title")) : null, ...healthLines(card),   // health.js
    replies.length ? el("h3", {}, t("dialog.replies")) : null, el("ul", { class: "log" }, replies),
    events.length ? el("h3", {}, t("dialog.last_events")) : null, el("ul", { class: "log" }, events)];
  $("td-body").replaceChildren(...parts.filter((part) => part !== null && part !== undefined));
}

// What an event did, in the page's language as the hall words it (`said`, hall/events.py: "arbiter:
// score set to 3-2"); from an older hall, its kinds, the journal's own names, as code.
function eventNode(ev) {
  const said = ev.said && typeof ev.said === "object" ? ev.said : {};
  const text = textOf(own(said, language) ? said[language] : said.en);
  if (text) return el("span", { class: "said" }, text);
  return el("code", { class: "kinds" }, (Array.isArray(ev.kinds) ? ev.kinds : []).join(", "));
}

// --- a match moved here from another table (SPEC §13.5, §14.1) --------------------------------
// The spare's "Move a match here…": the tables whose journal the hall holds, those offline first
// with their last contact, none chosen; a copy the hall cannot move says why. A table not known
// to be offline is moved only after a second confirmation that names what it does (its clock is
// stopped for good); the hall refuses it without that confirmation (`live`) or when the journal
// shown is no longer the table's newest.

let moveTo = null;                // the spare the move dialog is for
let moveChosenTable = null;       // the table chosen in it (none at first)
let moveAsked = null;             // {from, to, journal}: what the confirmation is about

function openMove() {
  if (!openTable) return;
  if (moveTo !== openTable) moveChosenTable = null;
  moveTo = openTable;
  $("move-result").textContent = "";
  $("move-result").className = "result";
  fillMove();
  if (!$("move-dialog").open) $("move-dialog").showModal();
}

// An instant of the hall's clock (ms) as this browser's time of day, "14:03".
function timeOfDay(hallMs) {
  const at = new Date(hallMs - skewMs);
  return `${String(at.getHours()).padStart(2, "0")}:${String(at.getMinutes()).padStart(2, "0")}`;
}

function agoWords(hallMs) {
  const minutes = Math.floor(Math.max(0, hallNow() - hallMs) / 60000);
  return minutes < 1 ? t("move.ago_now") : t("move.ago_min", { n: minutes });
}

function sourceKind(card) {
  return card.online === false ? "offline" : card.online === true ? "online" : "unknown";
}

// A match in progress on the table, as its state says (a loaded match before game 1 is not).
function playing(state) {
  if (typeof state.lifecycle === "string") return state.lifecycle === "in_progress";
  return typeof state.phase === "string" && !["idle", "ready", "match_over"].includes(state.phase);
}

function contactWords(card) {
  const at = Number.isFinite(card.last_contact_ms) ? card.last_contact_ms : null;
  const kind = sourceKind(card);
  if (kind === "offline") {
    return at === null ? t("move.offline_unknown")
                       : t("move.offline_since", { time: timeOfDay(at), ago: agoWords(at) });
  }
  const phase = phaseName(card.state || {});
  return t(kind === "online" ? "move.online" : "move.unknown_online", { phase }) +
         (at === null ? "" : t("move.last_contact", { time: timeOfDay(at), ago: agoWords(at) }));
}

// Why the hall cannot move a table's copy, in the page's language.
function copyWhy(copy) {
  const code = textOf(copy.code);
  if (!own(TEXTS.en || {}, `error.${code}`)) return textOf(copy.error);
  const args = {};
  for (const [name, value] of Object.entries(copy.fields && typeof copy.fields === "object" ? copy.fields : {})) {
    if (typeof value === "string" || Number.isFinite(value)) args[name] = value;
  }
  return t(`error.${code}`, args);
}

function movable(card) {
  return !!card && !!card.copy && typeof card.copy === "object" && card.copy.movable === true;
}

function sourceRow(card) {
  const copy = card.copy, can = movable(card), kind = sourceKind(card);
  const state = card.state || {};
  const input = el("input", { type: "radio", name: "move-from", value: card.table, disabled: !can,
                              "data-kind": kind });
  input.checked = can && moveChosenTable === card.table;
  input.addEventListener("change", () => { moveChosenTable = card.table; fillMove(); });
  const score = scoreWords(state) || t("score.unknown", { left: player(card, "left"),
                                                         right: player(card, "right") });
  return el("label", { class: "source" + (can ? "" : " disabled"), "data-table": card.table,
                       "data-kind": kind },
    input,
    el("span", { class: "source-lines" },
       el("span", {}, el("b", {}, card.table), ` · ${score}`),
       el("span", { class: kind === "offline" ? "when" : "live" }, contactWords(card)),
       el("span", { class: can ? "counts" : "why" },
          can ? t("move.copy_ok", { journal: textOf(copy.journal), seq: copy.last_seq ?? "—" })
              : copyWhy(copy))));
}

function fillMove() {
  if (!moveTo) return;
  const spare = cards.get(moveTo) || { state: {} };
  $("md-title").textContent = t("move.title", { to: moveTo });
  $("md-intro").textContent = t("move.intro", { to: moveTo });
  const busy = playing(spare.state || {});
  $("md-busy").hidden = !busy;
  $("md-busy").textContent = busy ? t("move.spare_busy", { to: moveTo }) : "";
  const sources = [...cards.values()].filter((c) => c.table !== moveTo && c.copy && typeof c.copy === "object");
  const offline = sources.filter((c) => sourceKind(c) === "offline").sort((a, b) => naturalCompare(a.table, b.table));
  const others = sources.filter((c) => sourceKind(c) !== "offline")
    .sort((a, b) => (sourceKind(a) === "online") - (sourceKind(b) === "online") || naturalCompare(a.table, b.table));
  if (!sources.some((c) => c.table === moveChosenTable && movable(c))) moveChosenTable = null;
  const parts = [];
  if (offline.length) parts.push(el("h3", {}, t("move.offline_group")), ...offline.map(sourceRow));
  if (others.length) parts.push(el("h3", {}, t("move.online_group")), ...others.map(sourceRow));
  if (!sources.length) parts.push(el("p", { class: "counts" }, t("move.none")));
  $("move-from").replaceChildren(...parts);
  $("move-send").disabled = busy || moveChosenTable === null;
  if (moveAsked && $("move-confirm").open) fillMoveConfirm();
}

// "Move here": an offline table's match moves at once; any other asks again first.
function askMove() {
  const card = cards.get(moveChosenTable);
  if (!moveTo || !movable(card)) return;
  const request = { from: card.table, to: moveTo, journal: card.copy.journal };
  if (sourceKind(card) === "offline") {
    sendMove(request);
    return;
  }
  moveAsked = request;
  fillMoveConfirm();
  $("move-confirm").showModal();
}

function fillMoveConfirm() {
  const asked = moveAsked, card = asked && cards.get(asked.from);
  if (!card) return;
  const state = card.state || {};
  const kind = sourceKind(card);
  const key = kind === "unknown" ? "move.confirm_unknown"
    : kind === "offline" ? "move.confirm_offline"
    : playing(state) ? "move.confirm_playing" : "move.confirm_online";
  $("mc-title").textContent = t("move.confirm_title", { from: asked.from, to: asked.to });
  $("mc-body").replaceChildren(
    el("p", { class: "moving" }, scoreWords(state) || t("score.unknown", { left: player(card, "left"),
                                                                         right: player(card, "right") })),
    el("p", { class: "stops" }, t(key, { from: asked.from, to: asked.to })),
    el("p", { class: "counts" }, t("move.confirm_then", { to: asked.to, journal: asked.journal,
                                                          seq: card.copy && card.copy.last_seq })));
  $("mc-confirm").textContent = t("move.confirm", { from: asked.from });
  // The copy shown must still be the one the hall would move.
  $("mc-confirm").disabled = !movable(card) || card.copy.journal !== asked.journal;
}

async function confirmMove() {
  const asked = moveAsked;
  $("move-confirm").close();
  if (!asked || asked.to !== moveTo) return;
  await sendMove({ ...asked, live: true });
}

async function sendMove(request) {
  const result = $("move-result");
  const command = `continue ${request.from}`;
  result.className = "result";
  result.textContent = t("move.sending", { from: request.from, to: request.to });
  try {
    const answer = await post("/api/move", request);
    const reply = answer.reply;
    if (!reply) {
      result.textContent = t("cmd.no_reply", { command });
    } else {
      result.className = "result " + (reply.ok === true ? "ok" : "bad");
      result.replaceChildren(replyNode(command, reply, cards.get(request.to)),
        answer.moved ? el("div", { class: "moved-told" },
                          t("move.told", { from: request.from, to: request.to })) : null);
    }
  } catch (err) {
    result.className = "result bad";
    result.textContent = t("cmd.failed", { command, error: err.message });
  }
  result.scrollIntoView({ block: "nearest" });
}

// The card of a table whose match moved away: "moved to table-9 by td at 14:03".
function movedLine(card) {
  const moved = card.moved;
  if (!moved || typeof moved !== "object") return null;
  const at = Date.parse(textOf(moved.at));
  return el("div", { class: "moved" }, t("card.moved", {
    to: textOf(moved.to), by: textOf(moved.by),
    time: Number.isFinite(at) ? timeOfDay(at) : "—" }));
}


async function dismiss(table, key) {
  try { await post("/api/dismiss", { table, key }); } catch (err) { /* already gone */ }
}

async function dismissAll(table, button) {
  if (button) button.disabled = true;
  try {
    await post("/api/dismiss-all", { table });
  } catch (err) {
    if (button) { button.disabled = false; button.textContent = t("error.failed", { error: err.message }); }
  }
}

// --- what a table answered, in words --------------------------------------------------------
// Every text here is the table's (bounded by the hall) and goes in as text, never as markup.

const textOf = (value) => (typeof value === "string" ? value : "");
const lines = (said) => (Array.isArray(said) ? said : [said]).filter((l) => typeof l === "string" && l);
const arrows = (line) => line.replace(/ -> /g, " → ");
// A match's sha256 in a command is long: its first 8 letters say which.
const shownCommand = (command) => command.replace(/\b([0-9a-f]{8})[0-9a-f]{56}\b/g, "$1…");

// The command a reply answers: the hall's own record of what it sent, else the table's echo.
function sentOf(reply) {
  if (textOf(reply.command)) return reply.command;
  const echo = lines(reply.said).find((l) => l.startsWith("arbiter: "));
  return echo ? echo.slice("arbiter: ".length) : "";
}

// A `status` reply's state in words: "playing · Anna 3–2 Boris (to 7, game 2) · left 9:41 · …"
// (the players' names from the card when the table's status has none).
function stateWords(state, card) {
  const clock = state.clock || {};
  const players = state.players || ((card || {}).state || {}).players || {};
  const parts = [phaseName(state), scoreWords({ ...state, players })];
  for (const side of ["left", "right"]) {
    const reserve = (clock[side] || {}).reserve_ms;
    if (typeof reserve === "number") {
      parts.push(t("clock.side", { side: t(`side.${side}`), time: clockText(reserve) }));
    }
  }
  return parts.filter(Boolean).join(" · ");
}

// A Map, not an object: a table's outcome "constructor" is not a key of it.
const OUTCOME_WORDS = new Map([["refused", "reply.refused"], ["bad request", "reply.bad_request"],
                               ["not applied", "reply.not_applied"],
                               ["unknown", "reply.unknown"]]);

// The table's own echo of a command ("arbiter: abandon") says nothing the line does not.
function replyWords(command, reply, card) {
  const said = lines(reply.said).filter((l) => !l.startsWith("arbiter: ")).map(arrows);
  let reason = textOf(reply.reason);
  if (command && reason.startsWith(`${command}: `)) reason = reason.slice(command.length + 2);
  let words;
  if (reply.ok === true) {
    const outcome = textOf(reply.outcome) !== "acted" ? textOf(reply.outcome) : "";
    words = said.join("; ") || (reply.state ? stateWords(reply.state, card) : "") || outcome ||
            t("reply.done");
  } else {
    const known = OUTCOME_WORDS.get(textOf(reply.outcome));
    const outcome = known ? t(known) : textOf(reply.outcome) || t("reply.refused");
    words = t("reply.why", { outcome, reason: reason || said.join("; ") || t("reply.no_reason") });
  }
  if (reply.repeated === true) words += t("reply.repeated");
  return words.length > 1200 ? words.slice(0, 1199) + "…" : words;
}

// One reply: its mark, the command sent, and what the table did or why not.
function replyNode(command, reply, card, tag = "div") {
  const unknown = reply.ok !== true && reply.outcome === "unknown";
  return el(tag, { class: "reply " + (reply.ok === true ? "ok" : unknown ? "unknown" : "bad") },
    el("span", { class: reply.ok === true ? "okmark" : unknown ? "warnmark" : "badmark" },
       reply.ok === true ? "✓ " : unknown ? "? " : "✗ "),
    command ? el("code", { class: "sent" }, shownCommand(command)) : null,
    command ? " → " : null,
    el("span", { class: "words" }, replyWords(command, reply, card)));
}

async function sendCommand(command) {
  const result = $("cmd-result");
  if (!openTable || !command.trim()) return;
  const shown = shownCommand(command.trim());
  result.className = "result";
  result.textContent = t("cmd.sending", { command: shown });
  result.scrollIntoView({ block: "nearest" });
  try {
    const answer = await post("/api/cmd", { table: openTable, command, wait: 10 });
    const reply = answer.reply;
    if (!reply) {
      result.textContent = t("cmd.no_reply", { command: shown });
    } else {
      result.className = "result " + (reply.ok === true ? "ok" : "bad");
      result.replaceChildren(replyNode(textOf(answer.command) || command.trim(), reply,
                                       cards.get(openTable)));
    }
    result.scrollIntoView({ block: "nearest" });
  } catch (err) {
    result.className = "result bad";
    result.textContent = t("cmd.failed", { command: shown, error: err.message });
  }
}

// --- forcing a match that waits for the one in progress ----------------------------------------

// The table's last notice still says this match waits for the one in progress (and the table
// is there to take the command).
function forceable(card, match) {
  const notice = card.notice || {};
  return typeof match === "string" && card.online !== false && notice.ok === false &&
         notice.pending === true && notice.code === "match_in_progress" && notice.match === match;
}

function askForce(table, match) {
  forcing = { table, match };
  fillForce();
  $("force-dialog").showModal();
}

function fillForce() {
  const card = forcing && cards.get(forcing.table);
  if (!card) return;
  const state = card.state || {};
  const score = scoreWords(state) || t("score.unknown", { left: player(card, "left"),
                                                         right: player(card, "right") });
  $("fd-title").textContent = t("force.title_table", { table: card.table });
  $("fd-body").replaceChildren(
    el("p", {}, t("force.ends")),
    el("p", { class: "abandoned" }, score),
    el("p", { class: "counts" }, t("force.loads")));
  $("fd-confirm").disabled = !forceable(card, forcing.match);
}

async function confirmForce() {
  const chosen = forcing;
  $("force-dialog").close();
  if (!chosen || chosen.table !== openTable) return;
  await sendCommand(`new-match --force --waiting ${chosen.match}`);
}

// --- a round's pairings -------------------------------------------------------------------

async function pushRound(event) {
  event.preventDefault();
  const out = $("round-result");
  out.textContent = t("round.pushing");
  try {
    const answer = await post("/api/round", { csv: $("round-csv").value,
                                              event: $("round-event").value,
                                              round: $("round-name").value });
    out.replaceChildren(
      el("p", {}, t("round.result", { pushed: answer.pushed, errors: answer.errors })),
      el("table", { class: "rows" }, answer.rows.map((row) => el("tr", {},
        el("td", {}, row.ok ? el("span", { class: "okmark" }, "✓") : el("span", { class: "badmark" }, "✗")),
        el("td", {}, row.table || t("round.line", { n: row.line })),
        el("td", {}, row.error ? rowError(row) : row.bye ? t("round.bye", { player: textOf(row.bye.player) })
                   : t(row.acknowledged ? "round.published" : "round.queued"),
           row.warning ? el("div", { class: "warnmark" }, rowWarning(row)) : null)))));
  } catch (err) {
    out.textContent = t("error.failed", { error: err.message });
  }
}

// An archived journal's verdict in the page's language, from the hall's code and fields
// (hall_words.py); what the hall's code does not name (an older hall) as the hall says it.
const VERDICTS = new Set(["intact", "other_device", "other_key", "not_checked", "tampered",
                          "unchecked", "unchecked_no_keys", "unreadable"]);
function verdictText(say, message = "") {
  if (!say || !VERDICTS.has(say.code)) return textOf(message);
  const records = Number.isInteger(say.records) ? tn("count.records", say.records) : "";
  const detail = detailOf(say);
  const args = { records, sealed_by: textOf(say.sealed_by), this_key: textOf(say.this_key),
                 key: textOf(say.key), table: textOf(say.table), detail: detail };
  switch (say.code) {
    case "intact": case "other_device": case "not_checked":
      args.detail = detail;                    // the journal's own note (a torn last line)
      args.why = say.why === "no device key given" ? t("archive.no_key") : textOf(say.why);
      break;
    case "unchecked": case "unchecked_no_keys":
      args.detail = detail ? `; ${detail}` : "";
      break;
    default:
  }
  return t(`archive.say.${say.code}`, args);
}

// A verdict's detail (the journal's own words: what verify or the reader found) in the page's
// language when the hall gives it in each (`details`), else as the hall says it.
function detailOf(say) {
  const each = say.details && typeof say.details === "object" ? say.details : {};
  return textOf(own(each, language) ? each[language] : "") || textOf(say.detail);
}

// What a cut-short copy is, before its verdict ("" when it is not one).
const CUTS = new Set(["set_aside", "no_complete", "received", "final"]);
function cutText(cut) {
  if (!cut || !CUTS.has(cut.code)) return "";
  return t(`archive.cut.${cut.code}`, { complete: textOf(cut.complete), records: cut.records ?? "",
                                        of: cut.of ?? "" });
}

// An archived journal's message: its cut and its verdict, in words of the page's language.
function archiveMessage(v) {
  if (!v.say || !VERDICTS.has(v.say.code) || (v.cut_short && !CUTS.has((v.cut || {}).code))) {
    return textOf(v.message);
  }
  return cutText(v.cut) + verdictText(v.say, v.message);
}

// What an archived journal holds: its discipline, length, players, score and phase.
function archiveSummary(v) {
  const s = v.summary_say;
  if (!s || typeof s !== "object") return textOf(v.summary);
  if (s.code === "cannot_replay") return t("archive.cannot_replay", { detail: detailOf(s) });
  if (language === "en" || !Number.isInteger(s.length)) return textOf(v.summary);
  const discipline = own(TEXTS.en || {}, `discipline.${s.discipline}`)
    ? t(`discipline.${s.discipline}`) : textOf(s.discipline);
  const phase = own(TEXTS.en || {}, `phase.${s.phase}`) ? t(`phase.${s.phase}`) : textOf(s.phase);
  return t("archive.summary", { discipline, length: tn("count.upto", s.length),
                                left: textOf(s.left), right: textOf(s.right),
                                score: `${textOf(String(s.score_left))}-${textOf(String(s.score_right))}`,
                                phase });
}

// A round's row refused, in the page's language from the hall's code and fields; the hall's
// words when it gives no code the page knows.
function rowError(row) {
  const code = textOf(row.code);
  const fields = row.fields && typeof row.fields === "object" ? row.fields : {};
  if (!own(TEXTS.en || {}, `round.error.${code}`)) return textOf(row.error);
  const args = {};
  for (const [name, value] of Object.entries(fields)) {
    if (typeof value === "string" || Number.isFinite(value)) args[name] = value;
  }
  if (code === "config") {
    const problem = fields.problem && typeof fields.problem === "object" ? fields.problem : {};
    args.problem = textOf(problem[language]) || textOf(problem.en) || textOf(row.error);
  }
  const why = t(`round.error.${code}`, args);
  return Number.isInteger(fields.line) ? t("round.error_line", { line: fields.line, why }) : why;
}

function rowWarning(row) {
  return row.warning_code === "never_seen" ? t("round.warning.never_seen", { table: row.table })
                                           : textOf(row.warning);
}

function fillArchive() {
  const entries = [...archive.values()].sort((a, b) => naturalCompare(a.table, b.table) ||
                                                        a.name.localeCompare(b.name));
  $("archive-list").replaceChildren(...(entries.length ? entries.map((v) => el("li", {},
    el("span", { class: v.ok ? "okmark" : "badmark" }, v.ok ? "✓ " : "✗ "),
    el("b", {}, v.table), " ",
    el("a", { href: `/archive/${encodeURIComponent(v.table)}/${encodeURIComponent(v.name)}` }, v.name),
    el("div", {}, t(v.verified ? "archive.verified" : v.ok ? "archive.readable"
                                                          : "archive.not_verified")),
    el("div", { class: "counts" }, archiveMessage(v)),
    v.summary ? el("div", {}, archiveSummary(v)) : null,
    v.ok && !v.cut_short ? el("div", {}, reportLink(v.table, v.name)) : null))
    : [el("li", { class: "counts" }, t("archive.empty"))]));
}

// --- results back: each finished match's result, recomputed by the hall from its journal -------

// An archived journal's HTML report (after_play.py: made by the hall on demand), in the page's
// language; the round's printable sheet and its archive as one zip.
function reportLink(table, name) {
  return el("a", { class: "report", target: "_blank", rel: "noopener", title: t("report.link_title"),
                   href: `/report/${encodeURIComponent(table)}/${encodeURIComponent(name || "")}` +
                         `?lang=${language}` }, t("report.link"));
}

function afterPlayLinks(round) {
  const query = `round=${encodeURIComponent(round)}&lang=${language}`;
  return el("p", { class: "after-play" },
    el("a", { class: "round-sheet", target: "_blank", rel: "noopener", href: `/round-sheet?${query}` },
       t("sheet.link")), " · ",
    el("a", { class: "round-zip", href: `/api/round.zip?${query}` }, t("sheet.zip")));
}

const ENDED = { score: "results.ended.score", flag: "results.ended.flag",
                forfeit: "results.ended.forfeit", disqualified: "results.ended.disqualified",
                challenges: "results.ended.challenges", abandoned: "results.ended.abandoned",
                moved: "results.ended.moved", bye: "results.ended.bye",
                unfinished: "results.ended.unfinished" };
const VERDICT = { "intact": "results.verdict.intact", "seal not checked": "results.verdict.unchecked",
                  "TAMPERED": "results.verdict.tampered" };
let results = null;               // the hall's /api/results.json, when the dialog last asked
let resultsRound = null;          // the round the director chose in the dialog ("*": all)

// A hall given no --keys-dir verifies nothing, so it counts nothing by itself: the page says so
// on its main view and in the Results and Standings dialogs.
function setCounting(counting) {
  $("no-keys").hidden = !(counting && counting.keys_dir === false);
}

// Why a result is held or not counted (the hall's code and fields), in the page's language;
// the hall's English when the page does not know the code (a newer hall).
function whyText(why, english = "") {
  if (!why || typeof why !== "object" || !own(TEXTS.en || {}, `results.why.${why.code}`)) {
    return textOf(english);
  }
  const args = {};
  for (const [name, value] of Object.entries(why)) {
    if (typeof value === "string" || Number.isFinite(value)) args[name] = value;
  }
  args.event = textOf(why.event) || "—";
  args.discipline = textOf(why.discipline) ? `, ${why.discipline}` : "";
  args.detail = textOf(why.detail);
  return t(`results.why.${why.code}`, args);
}

function whenText(ms) {
  if (!Number.isFinite(ms) || ms <= 0) return "—";
  return new Intl.DateTimeFormat(language, { day: "numeric", month: "short", hour: "2-digit",
                                             minute: "2-digit" }).format(new Date(ms));
}

// Where a result stands: counted; held, with why and the director's Accept; accepted by whom and
// when; not counted, with why; not finished; moved on (its match goes on in another journal).
function standingNode(r) {
  const why = whyText(r.why, r.why_text);
  switch (r.standing) {
    case "counted":
      return el("span", { class: "okmark" }, t("results.standing.counted"));
    case "accepted":
      return el("span", {}, el("span", { class: "okmark" }, "✓ "),
                t("results.standing.accepted", { by: textOf(r.accepted && r.accepted.by),
                                                 at: whenText(r.accepted && r.accepted.at_ms) }));
    case "held":
      return el("span", {}, el("span", { class: "warnmark" }, t("results.standing.held", { why })),
                el("div", {}, el("button", { type: "button", class: "accept",
                                             title: t("results.accept_title"),
                                             onclick: () => acceptResult(r) },
                                 t("results.accept"))));
    case "not_counted":
      return el("span", { class: "badmark" }, t("results.standing.not_counted", { why }));
    case "moved":
      return el("span", {}, t("results.standing.moved"));
    default:
      return el("span", {}, t("results.standing.playing"));
  }
}

async function acceptResult(r) {
  const out = $("results-accept");
  out.className = "result";
  out.textContent = t("results.accepting", { journal: r.journal });
  try {
    const answer = await post("/api/accept", { journal: r.journal, sha256: r.sha256 });
    out.className = "result ok";
    out.textContent = t("results.accepted_now", {
      journal: r.journal, by: textOf(answer.accepted.by), at: whenText(answer.accepted.at_ms) });
  } catch (err) {
    out.className = "result bad";
    out.textContent = t("results.accept_failed", { journal: r.journal, error: err.message });
  }
  await openResults(false);
}

async function openResults(fresh = true) {
  $("results-status").textContent = t("results.loading");
  if (fresh) $("results-accept").textContent = "";
  if (!$("results-dialog").open) $("results-dialog").showModal();
  try {
    const response = await fetch("/api/results.json", { cache: "no-store" });
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    results = await response.json();
  } catch (err) {
    $("results-status").textContent = t("error.failed", { error: err.message });
    return;
  }
  $("results-no-keys").hidden = results.keys_dir !== false;
  setCounting(results);
  const select = $("results-round");
  // Every round pushed or named by a result, in the order they began (the hall's list).
  const names = Array.isArray(results.round_names) ? results.round_names
    : [...new Set([...results.rounds.map((r) => r.round), ...results.results.map((r) => r.round)])];
  select.replaceChildren(el("option", { value: "*" }, t("results.all_rounds")),
    ...names.map((name) => el("option", { value: name }, name || "—")));
  // The round last pushed, the first time; the director's choice after.
  const latest = results.rounds.length ? results.rounds[results.rounds.length - 1].round : "*";
  select.value = resultsRound !== null && (names.includes(resultsRound) || resultsRound === "*")
    ? resultsRound : latest;
  fillResults();
}

function fillResults() {
  if (!results) return;
  const chosen = $("results-round").value;
  const shown = results.results.filter((r) => chosen === "*" || r.round === chosen);
  const pushed = results.rounds.find((r) => r.round === chosen);
  const status = [];
  const waiting = pushed && Array.isArray(pushed.waiting) ? pushed.waiting : [];
  if (pushed) {
    if (pushed.complete) status.push(t("results.complete", { round: pushed.round }));
    if (pushed.playing.length || !waiting.length && !pushed.complete) {
      status.push(tn("results.incomplete", pushed.playing.length, { round: pushed.round }));
    }
    if (waiting.length) status.push(tn("results.waiting_count", waiting.length, { round: pushed.round }));
  } else if (chosen !== "*") {
    status.push(t("results.not_pushed"));
  }
  const excluded = results.standings.excluded.filter((e) => chosen === "*" || e.round === chosen);
  const held = excluded.filter((e) => e.held).length;
  if (held) status.push(tn("results.held_count", held));
  if (excluded.length > held) status.push(tn("results.excluded", excluded.length - held));
  $("results-status").textContent = status.join(" ");
  const head = el("tr", {}, ["table", "players", "score", "winner", "ended", "games", "time",
                              "journal", "counted"].map((c) => el("th", {}, t(`results.col.${c}`))));
  const rows = shown.map((r) => {
    if (r.bye) return byeRow(r);
    const bad = r.verdict !== "intact" && r.verdict !== "seal not checked";
    const rowClass = bad || r.standing === "not_counted" ? "result-bad"
                   : r.standing === "held" ? "result-held" : null;
    const ended = r.error ? t("results.ended.unreadable")
                          : own(ENDED, r.ended_by) ? t(ENDED[r.ended_by]) : r.ended_by;
    const verdict = own(VERDICT, r.verdict) ? t(VERDICT[r.verdict]) : t("results.verdict.unreadable");
    const [table, name] = r.journal.split("/");
    return el("tr", { class: rowClass, "data-journal": r.journal, "data-standing": r.standing },
      el("td", {}, r.table),
      el("td", {}, playerNode(r.left, r.left_id), " — ", playerNode(r.right, r.right_id)),
      el("td", { class: "num" }, `${r.score} / ${r.length}`),
      el("td", {}, r.winner_name || t("results.no_winner")),
      el("td", {}, ended),
      el("td", { class: "num" }, String(r.games)),
      el("td", { class: "num" }, clockText(r.match_s * 1000)),
      el("td", {}, el("span", { class: bad ? "badmark" : "okmark" }, bad ? "✗ " : "✓ "), verdict, " ",
         el("a", { href: `/archive/${encodeURIComponent(table)}/${encodeURIComponent(name || "")}` }, "⤓"),
         bad ? null : [" ", reportLink(table, name)]),
      el("td", { class: "standing" }, standingNode(r)));
  });
  const body = [rows.length ? el("table", { class: "rows results" }, el("thead", {}, head), el("tbody", {}, rows))
                            : el("p", { class: "counts" }, t("results.none"))];
  if (chosen !== "*" && rows.length) body.unshift(afterPlayLinks(chosen));
  if (pushed && pushed.playing.length) {
    body.push(el("h3", {}, t("results.playing")), el("ul", { class: "log playing" },
      pushed.playing.map((p) => {
        const card = cards.get(p.table);
        const live = (side, given) => { const ms = card ? reserveNow(card, side) : given;
                                        return ms == null ? "—" : clockText(ms); };
        const score = p.left_score == null ? "—" : `${p.left_score}-${p.right_score}`;
        return el("li", { "data-table": p.table }, el("b", {}, p.table), " ",
          p.left || p.right ? `${p.left} — ${p.right}: ` : "",
          p.online ? t("results.playing_row", { score, length: p.match_length ?? "—",
                                                left_time: live("left", p.left_ms),
                                                right_time: live("right", p.right_ms) })
                   : t("results.offline"));
      })));
  }
  if (waiting.length) {
    body.push(el("h3", {}, t("results.waiting")), el("ul", { class: "log waiting" },
      waiting.map((p) => el("li", { "data-table": p.table }, el("b", {}, p.table), " ",
                            waitingText(p)))));
  }
  $("results-body").replaceChildren(...body);
}

// A player's name, and its id (the pairings') when it has one: two players of one name are two.
function playerNode(name, id) {
  const text = textOf(name);
  return id ? el("span", {}, text, " ", el("span", { class: "pid" }, `#${id}`)) : text;
}

// A bye the director pushed: no table, no opponent, no journal; it counts on his word.
function byeRow(r) {
  return el("tr", { class: "result-bye", "data-bye": textOf(r.left_id || r.left),
                    "data-standing": r.standing },
    el("td", {}, "—"),
    el("td", {}, playerNode(r.left, r.left_id), " — ", t("results.bye_opponent")),
    el("td", { class: "num" }, "—"),
    el("td", {}, textOf(r.winner_name)),
    el("td", {}, t("results.ended.bye")),
    el("td", { class: "num" }, "—"),
    el("td", { class: "num" }, "—"),
    el("td", {}, t("results.bye_journal")),
    el("td", { class: "standing" }, standingNode(r)));
}

// A table of the round whose card shows another match (a round before still on, or over and
// this round's not loaded yet) or none: waiting, never "still playing" this round.
function waitingText(p) {
  if (!p.online) return t("results.offline");
  if (p.idle) return t("results.waiting_idle");
  const score = p.left_score == null ? "—" : `${p.left_score}-${p.right_score}`;
  const args = { round: p.after || "—", left: textOf(p.left), right: textOf(p.right), score,
                 length: p.match_length ?? "—" };
  if (p.over) return t(p.after ? "results.waiting_over" : "results.waiting_other_over", args);
  return t(p.after ? "results.waiting_row" : "results.waiting_other", args);
}

function setup() {
  translateStatic();
  $("language").addEventListener("change", (e) => setLanguage(e.currentTarget.value));
  $("only-needs").addEventListener("click", (e) => {
    onlyNeeds = !onlyNeeds;
    e.currentTarget.setAttribute("aria-pressed", String(onlyNeeds));
    render();
  });
  $("open-round").addEventListener("click", () => $("round-dialog").showModal());
  $("open-archive").addEventListener("click", () => { fillArchive(); $("archive-dialog").showModal(); });
  $("open-results").addEventListener("click", openResults);
  $("results-round").addEventListener("change", (e) => { resultsRound = e.currentTarget.value;
                                                        fillResults(); });
  $("table-dialog").addEventListener("close", () => { openTable = null; });
  $("force-dialog").addEventListener("close", () => { forcing = null; });
  $("fd-cancel").addEventListener("click", () => $("force-dialog").close());
  $("fd-confirm").addEventListener("click", confirmForce);
  $("cmd-form").addEventListener("submit", (e) => { e.preventDefault(); sendCommand($("cmd-input").value); });
  $("move-open").addEventListener("click", openMove);
  $("move-send").addEventListener("click", askMove);
  $("md-cancel").addEventListener("click", () => $("move-dialog").close());
  $("move-dialog").addEventListener("close", () => { moveTo = null; });
  $("mc-cancel").addEventListener("click", () => $("move-confirm").close());
  $("mc-confirm").addEventListener("click", confirmMove);
  $("move-confirm").addEventListener("close", () => { moveAsked = null; });
  for (const button of document.querySelectorAll(".quick button")) {
    button.addEventListener("click", () => sendCommand(button.dataset.cmd));
  }
  $("round-form").addEventListener("submit", pushRound);
  $("round-file").addEventListener("change", async (e) => {
    const file = e.target.files[0];
    const name = $("round-file-name");
    name.removeAttribute("data-t");            // the file's own name, in no language
    name.textContent = file ? file.name : t("round.no_file");
    if (file) $("round-csv").value = await file.text();
  });
  setupAlerts();
  connect();
  setInterval(tickReserves, 200);
}

setup();
