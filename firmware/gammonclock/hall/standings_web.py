"""The event's standings on the director's page (SPEC §14 "Results"): `/api/standings.json` and
`/api/standings.csv`, under the page's Host check and password like `/api/results.csv` (GETs:
no token). The tie-breaks are the event's format's (`gammonclock hall --format swiss|
round-robin`, default swiss); `?format=round-robin` asks for the other (anything else: 400);
`?event=NAME` only that event's results (default: every result in the archive).

The CSV is the pairing software's: a stable English header (as `/api/results.csv`), UTF-8,
CRLF, text cells a spreadsheet would run quoted with `'` (numbers as they are: `-2`):
`rank,player,played,wins,draws,losses,score,points_for,points_against,point_difference,
buchholz,sonneborn_berger,player_id,round NAME…`, each round's cell `W 7-3 v Boris` (`W bye`
for a bye; `; ` between two matches of one round); `player_id` is the pairings' id of the
player ("" when none was given: the player is its name).
"""

from __future__ import annotations

from typing import Any

from aiohttp import web

from .messages import MAX_EVENT_NAME
from .page import HALL
from .results import csv_text
from .standings import FORMATS, SWISS

STANDING_COLUMNS = ("rank", "player", "played", "wins", "draws", "losses", "score",
                    "points_for", "points_against", "point_difference", "buchholz",
                    "sonneborn_berger", "player_id")
STANDINGS_FORMAT: web.AppKey[str] = web.AppKey("standings_format", str)


def standings_csv(data: dict[str, Any]) -> str:
    rounds: list[str] = data["rounds"]
    return csv_text((*STANDING_COLUMNS, *(f"round {r}" if r else "round" for r in rounds)), (
        [*(p[c] for c in STANDING_COLUMNS), *(p["round_texts"].get(r, "") for r in rounds)]
        for p in data["players"]))


def add_standings_routes(app: web.Application, form: str = SWISS) -> None:
    """The two routes, the event's format FORM their default (and the hall's results')."""
    if form not in FORMATS:
        raise ValueError(f"the event's format {form!r} is not one of {', '.join(FORMATS)}")
    app[STANDINGS_FORMAT] = form
    if HALL in app:
        app[HALL].results.form = form      # /api/results.json's standings too
    app.router.add_get("/api/standings.json", _standings_json)
    app.router.add_get("/api/standings.csv", _standings_csv)


def _standings(request: web.Request) -> dict[str, Any]:
    form = request.query.get("format", request.app[STANDINGS_FORMAT])
    if form not in FORMATS:
        raise web.HTTPBadRequest(text=f"format {form[:40]!r} is not one of "
                                      f"{', '.join(FORMATS)}\n")
    event = request.query.get("event")
    if event is not None and len(event) > MAX_EVENT_NAME:
        raise web.HTTPBadRequest(text=f"an event's name is at most {MAX_EVENT_NAME} "
                                      "characters\n")
    return request.app[HALL].results.standings(form, event)


async def _standings_json(request: web.Request) -> web.StreamResponse:
    return web.json_response({**_standings(request),
                              "event_format": request.app[STANDINGS_FORMAT]})


async def _standings_csv(request: web.Request) -> web.StreamResponse:
    return web.Response(body=standings_csv(_standings(request)).encode("utf-8"), headers={
        "Content-Type": "text/csv; charset=utf-8",
        "Content-Disposition": 'attachment; filename="standings.csv"'})
