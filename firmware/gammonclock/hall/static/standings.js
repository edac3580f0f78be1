// The event's standings (the hall's /api/standings.json, from the results it read in the archived
// journals): each player's place, wins and losses, points for and against, the tie-break values
// of the chosen format and each round's result (a bye: won, no opponent); what is not counted,
// with why. The format is the event's (`gammonclock hall --format`) until the director picks the
// other here. Uses hall.js's `$`, `el`, `t`, `own`, `num`, `whyText`, `playerNode`.
"use strict";

let standingsFormat = null;       // the format the director chose here (null: the event's)
let standingsEvent = null;        // the event chosen here (null: every result in the archive)

async function openStandings() {
  const status = $("standings-status");
  if (!$("standings-dialog").open) $("standings-dialog").showModal();
  status.textContent = t("results.loading");
  const query = new URLSearchParams();
  if (standingsFormat) query.set("format", standingsFormat);
  if (standingsEvent !== null) query.set("event", standingsEvent);
  let data;
  try {
    const response = await fetch(`/api/standings.json?${query}`, { cache: "no-store" });
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    data = await response.json();
  } catch (err) {
    status.textContent = t("error.failed", { error: err.message });
    return;
  }
  fillStandings(data);
}

function formatName(format) {
  return t(`standings.format.${format === "round-robin" ? "round-robin" : "swiss"}`);
}

// An archive holding more than one event's journals: the director picks one, or all.
function fillEvents(data) {
  const pick = $("standings-event");
  $("standings-event-pick").hidden = data.events.length < 2 && data.event === null;
  pick.replaceChildren(el("option", { value: "*" }, t("standings.all_events")),
    ...data.events.map((name) => el("option", { value: `=${name}` }, name || "—")));
  pick.value = data.event === null ? "*" : `=${data.event}`;
}

function fillStandings(data) {
  $("standings-no-keys").hidden = data.keys_dir !== false;
  $("standings-format").value = data.format;
  fillEvents(data);
  const params = new URLSearchParams({ format: data.format });
  if (data.event !== null) params.set("event", data.event);
  $("standings-dl-csv").setAttribute("href", `/api/standings.csv?${params}`);
  $("standings-dl-json").setAttribute("href", `/api/standings.json?${params}`);
  const steps = data.tie_breaks.map((s) => t(`standings.step.${s}`)).join(", ");
  const said = [t("standings.by", { steps })];
  if (data.format !== data.event_format) {
    said.push(t("standings.other_format", { format: formatName(data.event_format) }));
  }
  $("standings-status").textContent = said.join(" ");
  const swiss = data.format === "swiss";
  const draws = data.players.some((p) => p.draws > 0);
  const columns = ["rank", "player", "played", "wins", draws ? "draws" : null, "losses", "points",
                   "difference", swiss ? "buchholz" : null, swiss ? "sonneborn_berger" : null,
                   "decided"].filter(Boolean);
  const head = el("tr", {}, columns.map((c) => el("th", {}, t(`standings.col.${c}`))),
                  data.rounds.map((r) => el("th", {}, t("standings.col.round", { round: r || "—" }))));
  const rows = data.players.map((p) => {
    const cell = {
      rank: p.shared ? `${p.rank}=` : String(p.rank), player: p.player, played: p.played,
      wins: p.wins, draws: p.draws, losses: p.losses,
      points: `${p.points_for}–${p.points_against}`,
      difference: p.point_difference > 0 ? `+${p.point_difference}` : String(p.point_difference),
      buchholz: num(p.buchholz), sonneborn_berger: num(p.sonneborn_berger),
      decided: p.decided_by ? t(`standings.step.${p.decided_by}`) : "",
    };
    return el("tr", { "data-player": p.player, "data-player-id": p.player_id || "" },
      columns.map((c) => el("td", { class: c === "player" || c === "decided" ? null : "num" },
                            c === "player" ? playerNode(p.player, p.player_id) : String(cell[c]))),
      data.rounds.map((r) => el("td", { class: "round" }, (own(p.rounds, r) ? p.rounds[r] : [])
        .map((m) => m.bye
          ? el("div", { class: "bye" }, el("b", { class: `mark mark-${m.result}` },
                                          t(`standings.result.${m.result}`)),
               " ", t("standings.bye"))
          : el("div", {}, el("b", { class: `mark mark-${m.result}` },
                             `${t(`standings.result.${m.result}`)} ${m.for}-${m.against}`),
               " ", el("span", { class: "opponent" }, playerNode(m.opponent, m.opponent_id)))))));
  });
  const body = [rows.length
    ? el("table", { class: "rows results standings" }, el("thead", {}, head), el("tbody", {}, rows))
    : el("p", { class: "counts" }, t("standings.none"))];
  if (data.excluded.length) {
    body.push(el("h3", {}, t("standings.excluded")), el("ul", { class: "log excluded" },
      data.excluded.map((e) => el("li", { "data-journal": e.journal },
        t(e.held ? "standings.excluded_held" : "standings.excluded_row", {
          table: e.table, round: e.round || "—",
          why: whyText({ ...(e.fields && typeof e.fields === "object" ? e.fields : {}),
                         code: e.code }, e.why) })))));
  }
  $("standings-body").replaceChildren(...body);
}

function setupStandings() {
  $("open-standings").addEventListener("click", openStandings);
  $("standings-format").addEventListener("change", (e) => {
    standingsFormat = e.currentTarget.value;
    openStandings();
  });
  $("standings-event").addEventListener("change", (e) => {
    const value = e.currentTarget.value;
    standingsEvent = value === "*" ? null : value.slice(1);
    openStandings();
  });
}

setupStandings();
