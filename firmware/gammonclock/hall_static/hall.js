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
const hallNow = () => Date.now() + skewMs;
const CARD_NEEDS = 4;              // needs listed on a card; the dialog lists them all
const RED = new Set(["flag", "refused", "overrun", "offline", "archive", "bad"]);
const PHASES = {
  between_games: "between games", running: "playing", cube_offered: "cube offered",
  paused: "paused", result_entry: "result entry", break: "break", match_over: "match over",
  idle: "idle", ready: "ready", arbiter: "arbiter at the panels",
};

// A loaded match before game 1 is "ready" wherever a person reads it (SPEC §13.2): its §9 phase
// is between_games, its lifecycle says ready.
function phaseName(state) {
  const phase = state.lifecycle === "ready" ? "ready" : state.phase;
  return PHASES[phase] || phase || "—";
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
    node.classList.toggle("low", ms > 0 && ms < 60000);
  }
}

function player(card, side) {
  const players = (card.state || {}).players || {};
  return players[side] || (side === "left" ? "Left" : "Right");
}

// "Anna 3–2 Boris (to 7, game 2)": a state's score in words ("" when it has none).
function scoreWords(state) {
  const score = state.score || {}, players = state.players || {};
  if (typeof score.left !== "number" || typeof score.right !== "number") return "";
  const more = [state.match_length ? `to ${state.match_length}` : null,
                state.game ? `game ${state.game}` : null].filter(Boolean);
  return `${players.left || "left"} ${score.left}–${score.right} ${players.right || "right"}` +
         (more.length ? ` (${more.join(", ")})` : "");
}

function needClass(need) { return RED.has(need.kind) ? "need" : "need amber"; }

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
  if (state.match_length) facts.push(el("span", {}, "to ", el("b", {}, String(state.match_length))));
  if (state.game) facts.push(el("span", {}, "game ", el("b", {}, String(state.game))));
  if (cube.enabled === false) facts.push(el("span", {}, "no cube"));
  else if (cube.value) facts.push(el("span", {}, "cube ", el("b", {}, String(cube.value)),
                                      cube.owner ? ` ${player(card, cube.owner)}` : " centre"));
  const breaks = state.breaks_left;
  if (breaks) facts.push(el("span", {}, "breaks ", el("b", {}, `${breaks.left}·${breaks.right}`)));
  if (state.crawford_game) facts.push(el("span", { class: "tag crawford" }, "CRAWFORD"));
  const phase = card.online === false ? "offline" : phaseName(state);
  const node = el("article", { class: classes.join(" "), "data-table": card.table, tabindex: "0",
                               role: "button", "aria-label": `table ${card.table}`,
                               onclick: () => openTableDialog(card.table),
                               onkeydown: (e) => { if (e.key === "Enter") openTableDialog(card.table); } },
    el("div", { class: "head" }, el("span", { class: "name" }, card.table),
       state.event ? el("span", { class: "counts event" }, state.event) : null,
       el("span", { class: "phase" }, phase)),
    el("div", { class: "players" }, sideRow("left"), sideRow("right")),
    el("div", { class: "facts" }, facts),
    needsRow(card, needs),
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
  return count > 0 ? el("span", { class: "need more", "data-kind": "more" }, `and ${count} more`)
                   : null;
}

// A card lists its first few needs (the most urgent: the hall sorts them) and counts the rest,
// those it lists in the dialog and those the hall itself no longer lists; then "mark all seen".
function needsRow(card, needs) {
  const shown = needs.slice(0, CARD_NEEDS);
  const count = alertCount(card);
  if (!needs.length && !count) return null;
  return el("div", { class: "needs" },
    shown.map((n) => el("span", { class: needClass(n), "data-kind": n.kind }, n.text)),
    more(needs.length - shown.length + dropped(card)),
    count ? el("button", { class: "seen-all", type: "button",
                           title: "mark every alert of this table seen",
                           onclick: (e) => { e.stopPropagation(); dismissAll(card.table, e.currentTarget); },
                           onkeydown: (e) => e.stopPropagation() },
               `Mark all seen (${count})`) : null);
}

function badMessages(card) {
  const bad = Number.isFinite(card.bad_messages) ? card.bad_messages : 0;
  return bad > 0 ? el("div", { class: "bad-messages" },
                      `${bad} bad message${bad === 1 ? "" : "s"} from this table`) : null;
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
  $("counts").textContent = `${all.length} tables · ${needing} need you · ${offline} offline`;
  tickReserves();
  if (openTable) fillTableDialog(openTable);
  if (forcing && $("force-dialog").open) fillForce();
}

let renderQueued = false;
function scheduleRender() {
  if (renderQueued) return;
  renderQueued = true;
  requestAnimationFrame(() => { renderQueued = false; render(); });
}

function setBroker(broker) {
  const pill = $("broker");
  pill.className = "pill " + (broker.connected ? "pill-ok" : "pill-bad");
  pill.textContent = broker.connected ? "broker connected" : `broker: ${broker.status}`;
  pill.title = broker.url;
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
    setBroker(data.broker);
    if (data.token) token = data.token;
    archive.clear();
    setArchive(data.archive);
    scheduleRender();
  });
  source.addEventListener("cards", (e) => {
    const data = JSON.parse(e.data);
    clock(data);
    for (const card of data.cards) cards.set(card.table, card);
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
  if (!response.ok) throw new Error(data.error || `HTTP ${response.status}`);
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
  $("td-title").textContent = `${table}: ${player(card, "left")} v ${player(card, "right")}`;
  const alerts = (card.needs || []).map((n) => el("div", { class: "alert-row" },
    el("span", { class: needClass(n) }, n.text),
    forceable(card, n.match) ? el("button", { class: "force", type: "button",
                                              onclick: () => askForce(table, n.match) },
                                  "Force load…") : null,
    n.key ? el("button", { onclick: () => dismiss(table, n.key) }, "seen") : null));
  const replies = (card.replies || []).map((r) => replyNode(sentOf(r), r, card, "li"));
  const events = (card.recent || []).map((ev) => el("li", {},
    `#${ev.seq} ${(ev.at || "").slice(11, 19)} ${(ev.kinds || []).join(", ")}`));
  // Its alert marked seen, a match that waits can still be forced from the notice's line.
  const offered = (card.needs || []).some((n) => forceable(card, n.match));
  const notice = card.notice ? el("p", { class: "notice" },
    `Match file: ${card.notice.ok ? "loaded" : "refused"}: `,
    lines(card.notice.said).filter((l) => !l.startsWith("arbiter: ")).map(arrows).join("; ") ||
    textOf(card.notice.error),
    !offered && forceable(card, card.notice.match)
      ? el("button", { class: "force", type: "button",
                       onclick: () => askForce(table, card.notice.match) }, "Force load…")
      : null) : null;
  const parts = [
    el("p", { class: "facts" }, `phase ${phaseName(state)}`,
       ` · journal ${state.journal || "—"} · ${card.events} events`),
    card.error ? el("p", { class: "badmark" }, card.error) : null,
    alertCount(card) ? el("button", { class: "seen-all", type: "button",
                                      onclick: (e) => dismissAll(table, e.currentTarget) },
                          `Mark all seen (${alertCount(card)})`) : null,
    ...alerts, more(dropped(card)), badMessages(card), notice,
    replies.length ? el("h3", {}, "Replies") : null, el("ul", { class: "log" }, replies),
    events.length ? el("h3", {}, "Last events") : null, el("ul", { class: "log" }, events)];
  $("td-body").replaceChildren(...parts.filter((part) => part !== null && part !== undefined));
}


async function dismiss(table, key) {
  try { await post("/api/dismiss", { table, key }); } catch (err) { /* already gone */ }
}

async function dismissAll(table, button) {
  if (button) button.disabled = true;
  try {
    await post("/api/dismiss-all", { table });
  } catch (err) {
    if (button) { button.disabled = false; button.textContent = `✗ ${err.message}`; }
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
    if (typeof reserve === "number") parts.push(`${side} ${clockText(reserve)}`);
  }
  return parts.filter(Boolean).join(" · ");
}

// A Map, not an object: a table's outcome "constructor" is not a key of it.
const OUTCOME_WORDS = new Map([["refused", "refused"], ["bad request", "not understood"],
                               ["not applied", "not applied (send it again)"],
                               ["unknown", "outcome unknown (look at its state)"]]);

// The table's own echo of a command ("arbiter: abandon") says nothing the line does not.
function replyWords(command, reply, card) {
  const said = lines(reply.said).filter((l) => !l.startsWith("arbiter: ")).map(arrows);
  let reason = textOf(reply.reason);
  if (command && reason.startsWith(`${command}: `)) reason = reason.slice(command.length + 2);
  let words;
  if (reply.ok === true) {
    const outcome = textOf(reply.outcome) !== "acted" ? textOf(reply.outcome) : "";
    words = said.join("; ") || (reply.state ? stateWords(reply.state, card) : "") || outcome ||
            "done";
  } else {
    const outcome = OUTCOME_WORDS.get(textOf(reply.outcome)) || textOf(reply.outcome) || "refused";
    words = `${outcome}: ${reason || said.join("; ") || "no reason given"}`;
  }
  if (reply.repeated === true) words += " (answered before)";
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
  result.textContent = `sending “${shown}”…`;
  result.scrollIntoView({ block: "nearest" });
  try {
    const answer = await post("/api/cmd", { table: openTable, command, wait: 10 });
    const reply = answer.reply;
    if (!reply) {
      result.textContent = `“${shown}” sent; no reply yet (it shows under Replies when it comes)`;
    } else {
      result.className = "result " + (reply.ok === true ? "ok" : "bad");
      result.replaceChildren(replyNode(textOf(answer.command) || command.trim(), reply,
                                       cards.get(openTable)));
    }
    result.scrollIntoView({ block: "nearest" });
  } catch (err) {
    result.className = "result bad";
    result.textContent = `✗ ${shown}: ${err.message}`;
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
  const score = scoreWords(state) || `${player(card, "left")} v ${player(card, "right")}, score unknown`;
  $("fd-title").textContent = `Force the next match on ${card.table}?`;
  $("fd-body").replaceChildren(
    el("p", {}, "The match in progress ends now as abandoned, on its record, at:"),
    el("p", { class: "abandoned" }, score),
    el("p", { class: "counts" }, "The match that waits loads in its place."));
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
  out.textContent = "pushing…";
  try {
    const answer = await post("/api/round", { csv: $("round-csv").value,
                                              event: $("round-event").value,
                                              round: $("round-name").value });
    out.replaceChildren(
      el("p", {}, `${answer.pushed} pushed, ${answer.errors} with errors`),
      el("table", { class: "rows" }, answer.rows.map((row) => el("tr", {},
        el("td", {}, row.ok ? el("span", { class: "okmark" }, "✓") : el("span", { class: "badmark" }, "✗")),
        el("td", {}, row.table || `line ${row.line}`),
        el("td", {}, row.error || (row.acknowledged ? "published" : "queued (broker away)"),
           row.warning ? el("div", { class: "warnmark" }, row.warning) : null)))));
  } catch (err) {
    out.textContent = `✗ ${err.message}`;
  }
}

function fillArchive() {
  const entries = [...archive.values()].sort((a, b) => naturalCompare(a.table, b.table) ||
                                                        a.name.localeCompare(b.name));
  $("archive-list").replaceChildren(...(entries.length ? entries.map((v) => el("li", {},
    el("span", { class: v.ok ? "okmark" : "badmark" }, v.ok ? "✓ " : "✗ "),
    el("b", {}, v.table), " ",
    el("a", { href: `/archive/${encodeURIComponent(v.table)}/${encodeURIComponent(v.name)}` }, v.name),
    el("div", { class: "counts" }, v.message), v.summary ? el("div", {}, v.summary) : null))
    : [el("li", { class: "counts" }, "No finished journal yet.")]));
}

function setup() {
  $("only-needs").addEventListener("click", (e) => {
    onlyNeeds = !onlyNeeds;
    e.currentTarget.setAttribute("aria-pressed", String(onlyNeeds));
    render();
  });
  $("open-round").addEventListener("click", () => $("round-dialog").showModal());
  $("open-archive").addEventListener("click", () => { fillArchive(); $("archive-dialog").showModal(); });
  $("table-dialog").addEventListener("close", () => { openTable = null; });
  $("force-dialog").addEventListener("close", () => { forcing = null; });
  $("fd-cancel").addEventListener("click", () => $("force-dialog").close());
  $("fd-confirm").addEventListener("click", confirmForce);
  $("cmd-form").addEventListener("submit", (e) => { e.preventDefault(); sendCommand($("cmd-input").value); });
  for (const button of document.querySelectorAll(".quick button")) {
    button.addEventListener("click", () => sendCommand(button.dataset.cmd));
  }
  $("round-form").addEventListener("submit", pushRound);
  $("round-file").addEventListener("change", async (e) => {
    const file = e.target.files[0];
    if (file) $("round-csv").value = await file.text();
  });
  connect();
  setInterval(tickReserves, 200);
}

setup();
