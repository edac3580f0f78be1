// The table's health on its card (issue 24; hall/PROTOCOL.md `health`). The hall sends the last
// health it took from the table, when it took it (`received_ms`, the hall's clock) and its marks
// (hall_health.py: supply, hot, card_full, slow, clock); the page adds two that depend on the
// time and on the other tables: `stale` (no health for more than 3 minutes) and `version` (not
// the version most tables run, when most run one). Loaded before hall.js; uses its `el`, `t`,
// `tn`, `num`, `cards` and `hallNow` when it is called.
"use strict";

const HEALTH_STALE_MS = 180000;
// Red: a supply that sags now (the clock may reset mid-match); every other mark is amber.
const red = (kind, health) => kind === "supply" && (health.throttled || {}).under_voltage === true;

// The version most tables with a health run: null when none has a strict plurality.
function majorityVersion() {
  const counts = new Map();
  for (const card of cards.values()) {
    const version = (card.health || {}).version;
    if (typeof version === "string" && version) counts.set(version, (counts.get(version) || 0) + 1);
  }
  let best = null, bestCount = 0, tie = false;
  for (const [version, count] of counts) {
    if (count > bestCount) { best = version; bestCount = count; tie = false; }
    else if (count === bestCount) tie = true;
  }
  return tie || counts.size < 2 ? null : best;
}

function healthStale(health) {
  return Number.isFinite(health.received_ms) && hallNow() - health.received_ms > HEALTH_STALE_MS;
}

function sizeText(bytes) {
  return bytes >= 1e9 ? t("health.gb", { n: num((bytes / 1e9).toFixed(1)) })
                      : t("health.mb", { n: Math.round(bytes / 1e6) });
}

// Every mark of a card's health: [kind, text], the most serious first.
function healthMarks(card, majority = majorityVersion()) {
  const health = card.health;
  if (!health || typeof health !== "object") return [];
  const marks = Array.isArray(health.marks) ? health.marks : [];
  const throttled = health.throttled || {};
  const disk = health.disk || {};
  const out = [];
  if (marks.includes("supply")) {
    out.push(["supply", t(throttled.under_voltage ? "health.mark.supply" : "health.mark.supply_boot")]);
  }
  if (healthStale(health)) {
    out.push(["stale", t("health.mark.stale",
                         { n: Math.floor((hallNow() - health.received_ms) / 60000) })]);
  }
  if (marks.includes("hot")) out.push(["hot", t("health.mark.hot")]);
  if (marks.includes("card_full") && Number.isFinite(disk.free_bytes)) {
    out.push(["card_full", t("health.mark.card_full", { free: sizeText(disk.free_bytes) })]);
  }
  if (marks.includes("slow") && Number.isFinite(health.fsync_p99_ms)) {
    out.push(["slow", t("health.mark.slow", { ms: Math.round(health.fsync_p99_ms) })]);
  }
  if (marks.includes("clock")) out.push(["clock", t("health.mark.clock")]);
  if (majority && typeof health.version === "string" && health.version !== majority) {
    out.push(["version", t("health.mark.version", { version: health.version, majority })]);
  }
  return out;
}

// The card's health: its marks, then the figures in one dim line.
function healthRow(card) {
  const health = card.health;
  if (!health || typeof health !== "object") return null;
  const marks = healthMarks(card);
  const figures = [];
  const notPi = health.pi === null || health.pi === undefined;
  figures.push(Number.isFinite(health.cpu_temp_c) ? t("health.temp", { c: health.cpu_temp_c.toFixed(0) })
               : t(notPi ? "health.not_pi" : "health.temp_unknown"));
  const disk = health.disk || {};
  if (Number.isFinite(disk.free_bytes)) figures.push(t("health.free", { size: sizeText(disk.free_bytes) }));
  if (Number.isFinite(health.fsync_p99_ms)) {
    figures.push(t("health.sync", { ms: health.fsync_p99_ms < 10 ? num(health.fsync_p99_ms.toFixed(1))
                                                                  : Math.round(health.fsync_p99_ms) }));
  }
  const synced = (health.clock || {}).synchronized;
  figures.push(t(synced === true ? "health.time_ok" : synced === false ? "health.time_bad"
                                                                       : "health.time_unknown"));
  if (typeof health.version === "string") figures.push(t("health.version", { version: health.version }));
  const backlog = health.hall_backlog || {};
  if (Number.isFinite(backlog.records) && backlog.records > 0) {
    figures.push(t("health.backlog", { n: backlog.records }));
  }
  return el("div", { class: "health", "data-marks": marks.map(([kind]) => kind).join(" ") },
    marks.map(([kind, text]) => el("span", { class: "hmark" + (red(kind, health) ? " red" : ""),
                                             "data-mark": kind }, text)),
    // Each figure whole on its line: a line breaks between them, never inside one.
    el("span", { class: "hfigures" },
       figures.flatMap((text, i) => [i ? " · " : null, el("span", { class: "hfig" }, text)])));
}

// The health's lines in the table's dialog: every figure, in words.
function healthLines(card) {
  const health = card.health;
  if (!health || typeof health !== "object") return [];
  const th = health.throttled;
  const notPi = health.pi === null || health.pi === undefined;
  const flags = (suffix) => ["under_voltage", "freq_capped", "throttled", "soft_temp_limit"]
    .filter((name) => th[name + suffix]).map((name) => t(`health.flag.${name}`)).join(", ") ||
    t("health.flag.none");
  const clock = health.clock || {};
  const disk = health.disk || {};
  const rows = [
    [t("health.board"), notPi ? t("health.not_pi") : health.pi],
    [t("health.supply"), th ? `${th.raw}: ${t("health.now")} ${flags("")}; ` +
                              `${t("health.since_boot")} ${flags("_since_boot")}`
                            : t(notPi ? "health.not_pi" : "health.unknown")],
    [t("health.card"), Number.isFinite(disk.free_bytes)
      ? t("health.card_free", { free: sizeText(disk.free_bytes), total: sizeText(disk.total_bytes) })
      : t("health.unknown")],
    [t("health.sync_title"), Number.isFinite(health.fsync_p99_ms)
      ? tn("health.sync_p99", health.fsyncs_in_hour ?? 0, { ms: num(health.fsync_p99_ms) })
      : t("health.unknown")],
    [t("health.clock"), t(clock.synchronized === true ? "health.synced" : clock.synchronized === false
                                                      ? "health.not_synced" : "health.unknown") +
                        (typeof clock.source === "string" ? ` (${clock.source})` : "")],
    [t("health.uptime"), Number.isFinite(health.uptime_s)
      ? t("health.uptime_h", { n: num((health.uptime_s / 3600).toFixed(1)) }) : t("health.unknown")],
  ];
  return rows.map(([name, value]) => el("div", { class: "hline" }, el("b", {}, name + ": "), String(value)));
}

// A health goes stale by itself: the cards are drawn again when one does (or stops being).
let staleShown = "";
setInterval(() => {
  if (typeof cards === "undefined") return;
  const now = [...cards.values()].filter((c) => c.health && healthStale(c.health))
    .map((c) => c.table).join(",");
  if (now !== staleShown) {
    staleShown = now;
    if (typeof scheduleRender === "function") scheduleRender();
  }
}, 5000);
