"""The director's pages after play (issue 32), under the page's Host check and password like
`/api/results.csv` (GETs: no token), each in the page's language (`?lang=en|ru`, default the
hall's `--language`):

- `/round-sheet?round=NAME`: the round's printable sheet, one match a printed page (print CSS:
  `@page`, `break-after: page`): event, round, table, the players (with their ids when the
  pairings gave them), the final score, the winner, how it ended, the journal's verdict, and
  three signature lines (both players and the arbiter). Every result of the round but a match
  moved on (its result is the journal it went on in) and one of a TAMPERED or unreadable
  journal (no record: the zip and the results list it), by table. Nothing in it runs: it is
  made here, every text escaped, and served with a policy that runs no script.
- `/report/TABLE/NAME`: that archived journal's HTML report (reports.py), served with a
  policy that runs no script and loads nothing but its own inline images.
- `/api/round.zip?round=NAME`: the round's archive in one file, streamed as it is made
  (Python's zipfile into the response, a chunk at a time): `round-NAME/results.csv` (the
  round's counted results, as `/api/results.csv`), `round-NAME/TABLE/NAME.jsonl` (each of its
  results' journals) and the reports made of them (`round-NAME/TABLE/NAME.SHA.LANG.html`).
  Every name inside is a table id, a journal's name or the round's name made safe (letters,
  digits, `-`, `_`): no `/` of its own, no `..`.

A round with nothing archived: 404, said in words. A round's name is at most
`MAX_ROUND_NAME` characters (longer: 400).
"""

from __future__ import annotations

import asyncio
import contextlib
import html
import io
import re
import zipfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from aiohttp import web

from gammonclock.wire import JOURNAL_NAME

from .accounts import TABLE_ID
from .counting import TAMPERED
from .page import HALL, LANGUAGES, page_texts
from .reports import Refusal, ReportRefused, Reports, cached_reports
from .results import MAX_ROUND_NAME, Result, file_sha256, results_csv

REPORTS: web.AppKey[Reports] = web.AppKey("reports", Reports)
# The page's own (web.SECURITY_HEADERS): a streamed response is sent before the guard adds them.
SECURITY_HEADERS = {"Cache-Control": "no-store", "X-Frame-Options": "DENY",
                    "X-Content-Type-Options": "nosniff", "Referrer-Policy": "same-origin"}
SHEET_LANGUAGE: web.AppKey[str] = web.AppKey("sheet_language", str)
ZIP_CHUNKS = 8               # chunks of the zip waiting for the network, at most
ZIP_STALL_S = 60.0           # a client that takes nothing this long ends the zip
SAFE = re.compile(r"[^\w-]", re.ASCII)
# What a page the hall makes may load: its own style sheet and inline images; no script.
SHEET_POLICY = ("default-src 'none'; style-src 'self'; img-src 'self' data:; "
                "frame-ancestors 'none'; base-uri 'none'; form-action 'none'")
REPORT_POLICY = ("default-src 'none'; style-src 'unsafe-inline'; img-src data:; "
                 "frame-ancestors 'none'; base-uri 'none'; form-action 'none'")
STATUS = {Refusal.NOT_ARCHIVED: 404, Refusal.TAMPERED: 409, Refusal.BUSY: 503,
          Refusal.SLOW: 503, Refusal.FAILED: 500}


def add_after_play_routes(app: web.Application, language: str) -> None:
    app[SHEET_LANGUAGE] = language
    app[REPORTS] = Reports(app[HALL].options.keys_dir if HALL in app else None)

    async def close(app: web.Application) -> None:
        app[REPORTS].close()

    app.on_cleanup.append(close)
    app.router.add_get("/round-sheet", _round_sheet)
    app.router.add_get("/report/{table}/{name}", _report)
    app.router.add_get("/api/round.zip", _round_zip)


# --- words ---------------------------------------------------------------------------------------

class Words:
    """The page's catalogue (static/texts.json) in one language."""

    def __init__(self, language: str) -> None:
        texts = page_texts()
        self.language, self.own, self.en = language, texts[language], texts["en"]

    def __call__(self, key: str, **args: object) -> str:
        text = self.own.get(key, self.en.get(key, key))
        text = text if isinstance(text, str) else text.get("other", key)
        return re.sub(r"\{(\w+)\}", lambda m: str(args[m[1]]) if m[1] in args else m[0], text)


def _language(request: web.Request) -> str:
    lang = request.query.get("lang", "")
    return lang if lang in LANGUAGES else request.app[SHEET_LANGUAGE]


def _round(request: web.Request) -> str:
    name = request.query.get("round")
    if name is None:
        raise web.HTTPBadRequest(text="name the round: ?round=NAME\n")
    if len(name) > MAX_ROUND_NAME:
        raise web.HTTPBadRequest(text=f"a round's name is at most {MAX_ROUND_NAME} "
                                      "characters\n")
    return name


def round_results(results: Iterable[Result], name: str) -> list[Result]:
    """The round's results a sheet and a zip hold: every one of the round but a match moved on
    (it goes on in another journal, whose result is the round's), each with a journal's path."""
    return [r for r in results if r.round == name and r.ended_by != "moved"
            and _journal_path(r.journal) is not None]


def _journal_path(journal: str) -> tuple[str, str] | None:
    """(table, name) of a result's `TABLE/NAME`, when both are what the archive names."""
    table, _, name = journal.partition("/")
    if TABLE_ID.fullmatch(table) is None or JOURNAL_NAME.fullmatch(name) is None:
        return None
    return table, name


def _nothing(words: Words, name: str) -> web.Response:
    return web.Response(status=404, text=words("sheet.nothing", round=name) + "\n")


# --- the round sheet -----------------------------------------------------------------------------

ENDED = ("score", "flag", "forfeit", "disqualified", "challenges", "abandoned", "moved",
         "unfinished")
VERDICTS = {"intact": "results.verdict.intact", "seal not checked": "results.verdict.unchecked",
            "TAMPERED": "results.verdict.tampered"}


async def _round_sheet(request: web.Request) -> web.StreamResponse:
    name, words = _round(request), Words(_language(request))
    results = [r for r in round_results(request.app[HALL].results.results(), name)
               if r.verdict in VERDICTS and r.verdict != TAMPERED and not r.error]
    if not results:
        return _nothing(words, name)
    return web.Response(text=round_sheet_html(results, name, words), content_type="text/html",
                        headers={"Content-Security-Policy": SHEET_POLICY})


def round_sheet_html(results: list[Result], name: str, words: Words) -> str:
    e = html.escape
    title = words("sheet.title", round=name or "—")
    sheets = "\n".join(_sheet(r, words) for r in results)
    return (f'<!doctype html>\n<html lang="{words.language}">\n<head><meta charset="utf-8">'
            f"<title>{e(title)}</title>"
            '<link rel="stylesheet" href="/static/sheet.css"></head>\n<body>\n'
            f'<p class="hint">{e(words("sheet.hint", n=len(results)))}</p>\n{sheets}\n'
            "</body>\n</html>\n")


def _sheet(result: Result, words: Words) -> str:
    e = html.escape
    data = result.as_json()

    def player(side: str) -> str:
        who = e(str(data.get(side) or "—"))
        given = data.get(f"{side}_id")
        ident = (f' <span class="id">{e(words("sheet.id", id=str(given)[:64]))}</span>'
                 if isinstance(given, str | int) and not isinstance(given, bool) and
                 str(given) else "")
        return f'<b class="name">{who}</b>{ident}'

    ended = (words("results.ended.unreadable") if result.error else
             words(f"results.ended.{result.ended_by}") if result.ended_by in ENDED
             else result.ended_by)
    verdict = words(VERDICTS.get(result.verdict, "results.verdict.unreadable"))
    score = words("sheet.score_value", left=_points(result.left_score, words),
                  right=_points(result.right_score, words), length=result.length)
    rows = [("sheet.event", e(result.event or "—")), ("sheet.round", e(result.round or "—")),
            ("sheet.table", e(result.table)), ("sheet.left", player("left")),
            ("sheet.right", player("right")), ("sheet.score", e(score)),
            ("sheet.winner", e(result.winner_name or words("results.no_winner"))),
            ("sheet.ended", e(ended)),
            ("sheet.journal", f'{e(verdict)} <span class="file">{e(result.journal)}</span>')]
    facts = "\n".join(f'<tr><th>{e(words(key))}</th><td data-fact="{key[6:]}">{value}</td></tr>'
                      for key, value in rows)
    signs = "\n".join(
        f'<div class="sign"><div class="line"></div><div>{e(text)}</div></div>'
        for text in (words("sheet.sign_player", name=result.left or words("side.left")),
                     words("sheet.sign_player", name=result.right or words("side.right")),
                     words("sheet.sign_arbiter")))
    return (f'<section class="sheet" data-table="{e(result.table)}">\n'
            f'<h1>{e(words("sheet.heading", table=result.table))}</h1>\n'
            f'<table class="facts">\n{facts}\n</table>\n<div class="signs">\n{signs}\n</div>\n'
            "</section>")


def _points(value: int | float, words: Words) -> str:
    text = str(int(value)) if float(value).is_integer() else str(value)
    return text.replace(".", ",") if words.language == "ru" else text


# --- a match's report ---------------------------------------------------------------------------

async def _report(request: web.Request) -> web.StreamResponse:
    table, name = request.match_info["table"], request.match_info["name"]
    words = Words(_language(request))
    if TABLE_ID.fullmatch(table) is None or JOURNAL_NAME.fullmatch(name) is None:
        raise web.HTTPNotFound()
    hall = request.app[HALL]
    verdict = hall.archive.get(str(hall.options.archive / table / name))
    try:
        path = await request.app[REPORTS].report(verdict, words.language)
    except ReportRefused as refused:
        text = words(f"report.{refused.refusal.value}", journal=f"{table}/{name}",
                     detail=refused.detail)
        return web.Response(status=STATUS[refused.refusal], text=text + "\n")
    return web.FileResponse(path, headers={"Content-Type": "text/html; charset=utf-8",
                                           "Content-Security-Policy": REPORT_POLICY})


# --- a round's archive as one zip ----------------------------------------------------------------

def safe_name(text: str) -> str:
    """A round's name as a folder in the zip: letters, digits, `-` and `_`, nothing else."""
    return SAFE.sub("_", text)[:MAX_ROUND_NAME] or "_"


def zip_entries(archive: Path, results: list[Result], name: str
                ) -> list[tuple[str, Path | bytes]]:
    """(name inside, file or bytes) of the round's zip: its results.csv, each result's journal
    and the reports made of it. Every name is checked: no `..`, no leading `/`."""
    folder = f"round-{safe_name(name)}"
    entries: list[tuple[str, Path | bytes]] = [
        (f"{folder}/results.csv", results_csv(results).encode("utf-8"))]
    for result in results:
        where = _journal_path(result.journal)
        if where is None:
            continue
        table, journal = where
        path = archive / table / journal
        if not path.is_file():
            continue
        entries.append((f"{folder}/{table}/{journal}", path))
        try:
            made = cached_reports(path, file_sha256(path))
        except OSError:
            made = []
        entries += [(f"{folder}/{table}/{report.name}", report) for report in made]
    for inside, _ in entries:
        parts = inside.split("/")
        assert all(p and p not in (".", "..") for p in parts), inside
    return entries


class _Pipe(io.RawIOBase):
    """What zipfile writes, handed to the loop a chunk at a time (a bounded queue: the thread
    waits for the network); `stop` ends the writing (the client went away)."""

    def __init__(self, loop: asyncio.AbstractEventLoop, queue: asyncio.Queue[bytes | None]
                 ) -> None:
        super().__init__()
        self.loop, self.queue, self.stopped = loop, queue, False

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        if self.stopped:
            raise OSError("the client went away")
        chunk = bytes(data)
        asyncio.run_coroutine_threadsafe(self.queue.put(chunk), self.loop).result(ZIP_STALL_S)
        return len(chunk)


def _write_zip(pipe: _Pipe, entries: list[tuple[str, Path | bytes]]) -> None:
    try:
        with zipfile.ZipFile(pipe, "w", zipfile.ZIP_DEFLATED) as out:
            for inside, what in entries:
                if isinstance(what, bytes):
                    out.writestr(inside, what)
                else:
                    with contextlib.suppress(FileNotFoundError):
                        out.write(what, inside)
    finally:
        if not pipe.stopped:
            asyncio.run_coroutine_threadsafe(pipe.queue.put(None), pipe.loop).result(ZIP_STALL_S)


async def _round_zip(request: web.Request) -> web.StreamResponse:
    name, words = _round(request), Words(_language(request))
    hall = request.app[HALL]
    results = round_results(hall.results.results(), name)
    entries = await asyncio.to_thread(zip_entries, hall.options.archive, results, name)
    if len(entries) < 2:                        # results.csv alone: no journal of the round
        return _nothing(words, name)
    response = web.StreamResponse(headers={
        **SECURITY_HEADERS, "Content-Type": "application/zip",
        "Content-Disposition": f'attachment; filename="round-{safe_name(name)}.zip"'})
    await response.prepare(request)
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[bytes | None] = asyncio.Queue(ZIP_CHUNKS)
    pipe = _Pipe(loop, queue)
    writing = loop.run_in_executor(None, _write_zip, pipe, entries)
    try:
        while (chunk := await queue.get()) is not None:
            await response.write(chunk)
        await writing
    finally:
        pipe.stopped = True
        while not queue.empty():                # a write waiting for room goes on, and stops
            queue.get_nowait()
        with contextlib.suppress(Exception):
            await writing
    await response.write_eof()
    return response
