// A round pushed (issue 32; hall/PROTOCOL.md "The page's API"): the push's reply in words of the
// page's language ("6 pushed: 1 loaded, 5 queued"; every problem of a refused row; a round not
// pushed at all because a table is paired twice), and a card's next match queued while its
// match is in progress ("round 2 queued"). Loaded before hall.js; uses its `el`, `t`, `tn`, `own`,
// `textOf`, `language` and `TEXTS` when it is called.
"use strict";

// What became of a pushed row (queued.Delivery), as the row says it.
const DELIVERY = new Map([["loaded", "round.delivery.loaded"], ["sent", "round.delivery.sent"],
                          ["queued", "round.delivery.queued"], ["refused", "round.delivery.refused"]]);

// The push's first line: how many rows went, and what became of them.
function pushSummary(answer) {
  if (answer.round_refused === true) return t("round.refused_round");
  const count = (key) => (Number.isInteger(answer[key]) ? answer[key] : 0);
  const outcomes = [["loaded", "round.loaded_n"], ["queued", "round.queued_n"],
                    ["sent", "round.sent_n"], ["refused", "round.refused_n"]]
    .filter(([key]) => count(key) > 0).map(([key, text]) => t(text, { n: count(key) }));
  const byes = (Array.isArray(answer.rows) ? answer.rows : []).filter((r) => r.ok && r.bye).length;
  if (byes) outcomes.push(tn("round.byes_n", byes));
  const pushed = t("round.pushed_n", { n: count("pushed") });
  const head = outcomes.length ? t("round.summary", { pushed, outcomes: outcomes.join(", ") }) : pushed;
  return count("errors") ? t("round.with_errors", { head, errors: t("round.errors_n", { n: count("errors") }) })
                         : head;
}

// One problem of a row in the page's language from its code and fields; the hall's words when
// the page does not know the code.
function problemText(problem, row) {
  const code = textOf(problem.code);
  const fields = problem.fields && typeof problem.fields === "object" ? problem.fields : {};
  if (!own(TEXTS.en || {}, `round.error.${code}`)) return textOf(problem.error || row.error);
  const args = {};
  for (const [name, value] of Object.entries(fields)) {
    if (typeof value === "string" || Number.isFinite(value)) args[name] = value;
  }
  if (code === "config") {
    const said = fields.problem && typeof fields.problem === "object" ? fields.problem : {};
    args.problem = textOf(said[language]) || textOf(said.en) || textOf(problem.error);
  }
  return t(`round.error.${code}`, args);
}

// A refused row: every problem it has, after its line.
function rowProblems(row) {
  const problems = Array.isArray(row.problems) && row.problems.length ? row.problems
    : [{ code: row.code, fields: row.fields, error: row.error }];
  const fields = row.fields && typeof row.fields === "object" ? row.fields : {};
  const why = problems.map((p) => problemText(p, row)).join("; ");
  return Number.isInteger(fields.line) ? t("round.error_line", { line: fields.line, why }) : why;
}

// A pushed row: what became of it, and the queued round it replaced.
function rowDelivery(row) {
  const key = DELIVERY.get(row.delivery);
  const said = row.acknowledged === false ? t("round.queued")
    : key ? t(key) : t(row.acknowledged ? "round.published" : "round.queued");
  const replaced = row.replaced && typeof row.replaced === "object"
    ? t("round.replaced", { round: textOf(row.replaced.round), left: textOf(row.replaced.left),
                            right: textOf(row.replaced.right) }) : "";
  return replaced ? `${said}; ${replaced}` : said;
}

// The card's next match while it is queued: not a need (the director has nothing to do).
function queuedLine(card) {
  const queued = card.queued;
  if (!queued || typeof queued !== "object") return null;
  const args = { round: textOf(queued.round), left: textOf(queued.left), right: textOf(queued.right) };
  return el("div", { class: "queued", "data-status": textOf(queued.status) },
            t(args.round ? "card.queued" : "card.queued_match", args));
}

// The hall holds MATCH queued for the card's table (not yet sent: its match is in progress).
function queuedHere(card, match) {
  const queued = card.queued || {};
  return queued.status === "held" && typeof match === "string" && queued.match === match;
}

// The table's dialog: its queued next match, and "Force load…" while the hall holds it (the
// hall sends it with `new-match --force` once the director confirms, naming the score).
function queuedRow(card) {
  const line = queuedLine(card);
  if (!line) return null;
  const match = card.queued.match;
  return el("div", { class: "alert-row queued-row" }, line,
            forceable(card, match) ? el("button", { class: "force", type: "button",
                                                    onclick: () => askForce(card.table, match) },
                                        t("alerts.force")) : null);
}
