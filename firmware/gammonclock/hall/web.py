"""The director's page (SPEC §14), served by aiohttp: one process, one asyncio loop shared with
the MQTT hand-over, its own HTTP server (no separate ASGI server to pick and run), and server-sent
events to the browser (one long GET per page; the browser's EventSource reconnects by itself).

The page speaks English or Russian (`--language`, the default; a switch on the page overrides it
in that browser): its texts are one catalogue per language, hall/static/texts.json, put in the
page as data (`page_texts` checks that every text is in every language).

Routes: `/` the page, `/static/…` its assets, `/events` the stream, `/api/…` the director's
actions (JSON in, JSON out; `/api/accept`: a held result accepted, recorded in the hall's journal
of decisions before it counts), `/archive/TABLE/NAME` an archived journal, `/api/results.csv`,
`/api/results.json`, `/api/standings.csv` and `/api/standings.json` the results recomputed from
the archived journals (results.py, standings_web.py), `/round-sheet`, `/report/TABLE/NAME` and
`/api/round.zip` a round's printable sheet, a match's HTML report and a round's archive
(after_play.py; GETs: under the Host check and the password, no token).

Security, outermost first:
- The connections (`Gate`, started by `start_page`): a deadline for a request's headers from the
  accept, for its body, and for a peer that reads nothing it is sent; an idle kept-alive
  connection closes; connections are capped per client address and in all (beyond a cap the
  oldest connection still waiting for its headers is closed, else the new one); the log says so
  at most once per 10 s per kind (`QuietLog`).
- The `Host` of every request must be one of the hall's own names (`PageHosts`): a page of
  another name whose DNS now points at the hall (DNS rebinding) gets 421 for every route.
- On a loopback address no password is asked (the director's own machine); bound to any other
  address, every request needs HTTP basic authentication with the password from
  `--page-password-file` (any user name; use it over a trusted network or behind TLS).
- A POST must be JSON, from the page's own origin, and carry the page's token (`X-Hall-Token`),
  a random value made at the hall's start that only the hall's own page can read (it is in the
  page and in the stream's snapshot, both under the Host check and the same-origin policy).
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import hmac
import html
import ipaddress
import json
import logging
import secrets
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from gammonclock.wire import JOURNAL_NAME

from .accounts import TABLE_ID
from .connections import GuardedSite, Limits, WrongPasswords
from .continuation import Refused
from .decisions import DecisionError
from .page import HALL, LANGUAGES, STATIC, page_texts
from .public import is_public_path
from .results import results_csv
from .server import Hall, Listener, now_ms
from .view import SHA256

log = logging.getLogger(__name__)

KEEPALIVE_S = 15.0            # the stream's comment line, so proxies and browsers keep it open
MAX_BODY = 2 << 20            # a pairings CSV of a few hundred rows is a few KiB
TOKEN_HEADER = "X-Hall-Token"
TOKEN_META = '<meta name="hall-token" content="">'
LANGUAGE_META = '<meta name="hall-language" content="en">'
TEXTS_SCRIPT = '<script id="hall-texts" type="application/json">{}</script>'
WILDCARDS = ("", "0.0.0.0", "::")

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


@dataclass(frozen=True)
class PageHosts:
    """The names the page answers to (its `Host`). A name is only trusted when the director gave
    it: the bind address itself, `--page-host` names, and on a loopback or wildcard bind the
    machine's own loopback names. On a wildcard bind any address literal is taken too: an
    address is never a rebinding name (a rebinding page has a name its owner's DNS resolves)."""

    bind: str = "127.0.0.1"
    names: frozenset[str] = frozenset()

    @classmethod
    def of(cls, bind: str, names: Iterable[str] = ()) -> PageHosts:
        return cls(_normal(bind), frozenset(_normal(n) for n in names))

    @property
    def local(self) -> bool:
        return self.bind in WILDCARDS or is_loopback(self.bind)

    def allows(self, host_header: str | None) -> bool:
        name = host_name(host_header or "")
        if name is None:
            return False
        if name in self.names or (name == self.bind and self.bind not in WILDCARDS):
            return True
        if self.local and is_loopback(name):
            return True
        return self.bind in WILDCARDS and is_address(name)

    def describe(self) -> str:
        shown = sorted(self.names | ({self.bind} - set(WILDCARDS)))
        if self.local:
            shown.insert(0, "localhost and loopback addresses")
        if self.bind in WILDCARDS:
            shown.append("any IP address (never another name)")
        return ", ".join(shown)


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def is_address(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


def _normal(name: str) -> str:
    return name.strip().strip("[]").rstrip(".").lower()


def host_name(header: str) -> str | None:
    """The name of a `Host` header without its port (`[::1]:8080` -> `::1`), lower case; None
    for a header that is not a host."""
    text = header.strip().lower()
    if text.startswith("["):
        end = text.find("]")
        rest = text[end + 1:]
        if end < 0 or (rest and not (rest[0] == ":" and rest[1:].isdigit())):
            return None
        return text[1:end] or None
    if ":" in text:
        text, _, port = text.rpartition(":")
        if not port.isdigit() or ":" in text:
            return None
    name = text.rstrip(".")
    return name if name and all(c.isalnum() or c in "-._" for c in name) else None


# --- the app -----------------------------------------------------------------------------------

PASSWORD: web.AppKey[str] = web.AppKey("password", str)   # "": none asked
HOSTS: web.AppKey[PageHosts] = web.AppKey("hosts", PageHosts)
TOKEN: web.AppKey[str] = web.AppKey("token", str)
GUESSES: web.AppKey[WrongPasswords] = web.AppKey("guesses", WrongPasswords)
LIMITS: web.AppKey[Limits] = web.AppKey("limits", Limits)
LANGUAGE: web.AppKey[str] = web.AppKey("language", str)
PAGE: web.AppKey[str] = web.AppKey("page", str)        # the page, made once (token, language)


def page_html(language: str, token: str) -> str:
    """The page for a browser: its token, its default language and the catalogue filled in."""
    data = json.dumps(page_texts(), ensure_ascii=False, separators=(",", ":"))  # checked first
    text = (STATIC / "index.html").read_text(encoding="utf-8")
    data = data.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return (text.replace(TOKEN_META, TOKEN_META.replace(
                'content=""', f'content="{html.escape(token, quote=True)}"'))
            .replace(LANGUAGE_META, LANGUAGE_META.replace('"en"', f'"{language}"'))
            .replace('<html lang="en">', f'<html lang="{language}">')
            .replace(TEXTS_SCRIPT.format(""), TEXTS_SCRIPT.format(data)))


def make_app(hall: Hall, password: str | None = None, *, hosts: PageHosts | None = None,
             limits: Limits | None = None, token: str | None = None,
             language: str = "en", public: Any = None,
             standings_format: str = "swiss") -> web.Application:
    """The page's app. `hosts`: the names it answers to (default: a loopback bind's);
    `token`: the page's token (default: a new random one); `language`: the page's language
    where a browser has not chosen one (en or ru); `public`: the spectators' pages'
    settings (public_web.PublicPage; default: not published); `standings_format`: the
    event's format, its standings' tie-breaks (swiss or round-robin)."""
    if language not in LANGUAGES:
        raise ValueError(f"the page's language {language!r} is not one of {', '.join(LANGUAGES)}")
    app = web.Application(middlewares=[_guard], client_max_size=MAX_BODY)
    app[HALL], app[PASSWORD] = hall, password or ""
    app[LANGUAGE] = language
    app[HOSTS] = hosts or PageHosts()
    app[LIMITS] = limits or Limits()
    app[TOKEN] = token or secrets.token_urlsafe(32)
    app[GUESSES] = WrongPasswords()
    # Made once, off any request (a catalogue that is not whole stops the hall at its start).
    app[PAGE] = page_html(language, app[TOKEN])
    app.router.add_get("/", _page)
    app.router.add_static("/static/", STATIC)
    app.router.add_get("/events", _events)
    app.router.add_get("/api/cards", _cards)
    app.router.add_post("/api/round", _round)
    app.router.add_post("/api/cmd", _command)
    app.router.add_post("/api/move", _move)
    app.router.add_post("/api/accept", _accept)
    app.router.add_post("/api/dismiss", _dismiss)
    app.router.add_post("/api/dismiss-all", _dismiss_all)
    app.router.add_get("/api/archive", _archive_list)
    app.router.add_get("/api/results.json", _results_json)
    app.router.add_get("/api/results.csv", _results_csv)
    app.router.add_get("/archive/{table}/{name}", _archive_file)
    from .public_web import add_public_routes  # /public, /overlay/TABLE: no password
    add_public_routes(app, public, language)
    from .standings_web import add_standings_routes  # /api/standings.json and .csv
    add_standings_routes(app, standings_format)
    from .after_play import add_after_play_routes  # /round-sheet, /report/…, /api/round.zip
    add_after_play_routes(app, language)
    return app


async def start_page(app: web.Application, host: str, port: int) -> web.AppRunner:
    """Serve APP on HOST:PORT behind the `Gate` (the app's `Limits`); clean up the runner."""
    limits = app[LIMITS]
    runner = web.AppRunner(app, access_log=None, keepalive_timeout=limits.idle_s)
    await runner.setup()
    try:
        await GuardedSite(runner, host, port, limits).start()
    except BaseException:
        await runner.cleanup()
        raise
    return runner


# --- security ----------------------------------------------------------------------------------

SECURITY_HEADERS = {"Cache-Control": "no-store", "X-Frame-Options": "DENY",
                    "Content-Security-Policy": "frame-ancestors 'none'",
                    "X-Content-Type-Options": "nosniff", "Referrer-Policy": "same-origin"}


@web.middleware
async def _guard(request: web.Request, handler: Handler) -> web.StreamResponse:
    hosts = request.app[HOSTS]
    host = request.headers.get("Host")
    if not hosts.allows(host):
        log.warning("page: a request for host %s refused (not one of the hall's names)",
                    repr(host)[:80])
        return web.Response(status=421, text=(
            f"421: this hall answers to its own names only ({hosts.describe()}); this request "
            f"was for {repr(host)[:80]}. To use another name, start the hall with "
            "--page-host NAME.\n"))
    password = request.app[PASSWORD]
    if password and not is_public_path(request.path):
        guesses, address = request.app[GUESSES], request.remote or "?"
        wait_s = guesses.wait_s(address)
        if wait_s > 0:
            return web.Response(status=429, text=(
                f"too many wrong passwords from {address}; try again in {wait_s} s\n"),
                headers={"Retry-After": str(wait_s)})
        if not _authorised(request, password):
            if _credentials(request) is not None:      # a browser's first request has none
                guesses.wrong(address)
            return web.Response(status=401, text="the hall's password, please\n",
                                headers={"WWW-Authenticate": 'Basic realm="gammonclock hall"'})
    if request.method == "POST":
        if request.content_type != "application/json":
            return _error(415, "send JSON (Content-Type: application/json)")
        origin = request.headers.get("Origin")
        if origin is not None and origin.split("://", 1)[-1] != request.host:
            return _error(403, f"a request from {origin} is refused: only the hall's own page "
                               "may act")
        given = request.headers.get(TOKEN_HEADER, "")
        if not hmac.compare_digest(given.encode(), request.app[TOKEN].encode()):
            return _error(403, "the page's token is missing or stale (the hall restarted?): "
                               "reload the page", code="token")
    response = await handler(request)
    for name, value in SECURITY_HEADERS.items():
        response.headers.setdefault(name, value)
    return response


def _credentials(request: web.Request) -> tuple[str, str] | None:
    """The (user, password) of the request's HTTP basic authentication, if it has one."""
    scheme, _, encoded = request.headers.get("Authorization", "").partition(" ")
    if scheme.lower() != "basic":
        return None
    try:
        user, _, given = base64.b64decode(encoded, validate=True).decode().partition(":")
    except (binascii.Error, UnicodeDecodeError):
        return None
    return user, given


def _authorised(request: web.Request, password: str) -> bool:
    credentials = _credentials(request)
    return credentials is not None and hmac.compare_digest(credentials[1].encode(),
                                                           password.encode())


def _error(status: int, message: str, code: str | None = None,
           fields: dict[str, object] | None = None) -> web.Response:
    """An error for the page: its message, and a `code` (with its `fields`) where the page says
    it in its own language (`error.CODE` in texts.json)."""
    body: dict[str, object] = {"error": message} if code is None else {"error": message,
                                                                        "code": code}
    if code is not None and fields:
        body["fields"] = fields
    return web.json_response(body, status=status)


def _by(request: web.Request) -> str:
    """Who acts, for the clock's journal: the page's user name if it gave one, else the hall."""
    credentials = _credentials(request)
    user = credentials[0].strip() if credentials is not None else ""
    return user[:40] if user else request.app[HALL].options.user


# --- the page and its stream -------------------------------------------------------------------

async def _page(request: web.Request) -> web.StreamResponse:
    return web.Response(text=request.app[PAGE], content_type="text/html")


async def _cards(request: web.Request) -> web.StreamResponse:
    return web.Response(text=snapshot_json(request.app[HALL].snapshot()),
                        content_type="application/json")


def card_json(card: dict[str, Any]) -> str:
    """One card as JSON; a card that is not JSON (NaN, Infinity, …) becomes a stub that says so,
    so one table's bad data never breaks the page for the others."""
    try:
        return json.dumps(card, separators=(",", ":"), allow_nan=False)
    except (ValueError, TypeError) as exc:
        table = str(card.get("table", "?"))
        log.warning("page: the card of table %s is not JSON (%s); shown as an error", table, exc)
        text = f"this table's card cannot be shown: {exc}"
        return json.dumps({"table": table, "online": None, "state": {}, "error": text,
                           "needs": [{"kind": "bad", "text": text, "key": None,
                                      "say": ["card", str(exc)[:200]]}],
                           "urgency": 0, "recent": [], "events": 0, "replies": []},
                          separators=(",", ":"))


def snapshot_json(data: dict[str, Any]) -> str:
    """A payload with a `cards` list as JSON, each card on its own (`card_json`)."""
    rest = {k: v for k, v in data.items() if k != "cards"}
    head = json.dumps(rest, separators=(",", ":"), allow_nan=False)
    cards = ",".join(card_json(c) for c in data.get("cards", []))
    return head[:-1] + ("," if rest else "") + f'"cards":[{cards}]}}'


async def _events(request: web.Request) -> web.StreamResponse:
    hall = request.app[HALL]
    response = web.StreamResponse(headers={"Content-Type": "text/event-stream",
                                           "Cache-Control": "no-store",
                                           "X-Accel-Buffering": "no"})
    await response.prepare(request)
    listener = Listener()
    hall.listeners.append(listener)
    try:
        await _send(response, "snapshot", {**hall.snapshot(), "token": request.app[TOKEN]})
        while True:
            try:
                await asyncio.wait_for(listener.wake.wait(), KEEPALIVE_S)
            except TimeoutError:
                await response.write(b": keepalive\n\n")
                continue
            listener.wake.clear()
            if hall.closing:
                break
            await _flush(response, hall, listener)
    except (ConnectionResetError, asyncio.CancelledError):
        pass
    finally:
        hall.listeners.remove(listener)
    return response


async def _flush(response: web.StreamResponse, hall: Hall, listener: Listener) -> None:
    tables, listener.tables = listener.tables, set()
    archive, listener.archive = listener.archive, []
    if tables:
        await _send(response, "cards", {"server_now_ms": now_ms(),
                                        "cards": [hall.card(t) for t in tables]})
    if listener.broker:
        listener.broker = False
        await _send(response, "broker", {"server_now_ms": now_ms(),
                                         "broker": hall.broker_json()})
    for entry in archive:
        await _send(response, "archive", entry)


async def _send(response: web.StreamResponse, event: str, data: dict[str, Any]) -> None:
    text = (snapshot_json(data) if "cards" in data
            else json.dumps(data, separators=(",", ":"), allow_nan=False))
    await response.write(f"event: {event}\ndata: {text}\n\n".encode())


# --- the director's actions --------------------------------------------------------------------

async def _json(request: web.Request, keys: frozenset[str]) -> dict[str, Any]:
    """The action's JSON object (hall/PROTOCOL.md "The page's API" lists each one's keys); a
    key it does not know is refused, never passed over (a misspelt `live` would otherwise move
    nothing and say nothing)."""
    try:
        async with asyncio.timeout(request.app[LIMITS].body_s):
            raw = await request.read()
    except TimeoutError:
        raise web.HTTPRequestTimeout(text="the request's body came too slowly") from None
    try:
        body = json.loads(raw)
    except ValueError:
        raise web.HTTPBadRequest(text="the body is not JSON") from None
    if not isinstance(body, dict):
        raise web.HTTPBadRequest(text="the body is not a JSON object")
    unknown = sorted(set(body) - keys)
    if unknown:
        raise web.HTTPBadRequest(text=f"unknown key {unknown[0][:40]!r}; {request.path} takes "
                                      f"{', '.join(sorted(keys))}")
    return body


def _text(body: dict[str, Any], key: str, default: str = "") -> str:
    value = body.get(key, default)
    if not isinstance(value, str):
        raise web.HTTPBadRequest(text=f"`{key}` must be a string")
    return value


async def _round(request: web.Request) -> web.StreamResponse:
    body = await _json(request, frozenset({"csv", "event", "round"}))
    rows = await request.app[HALL].push_round(_text(body, "csv"), _text(body, "event"),
                                              _text(body, "round"))
    return web.json_response({"rows": rows,
                              "pushed": sum(1 for r in rows if r["ok"]),
                              "errors": sum(1 for r in rows if not r["ok"])})


async def _command(request: web.Request) -> web.StreamResponse:
    body = await _json(request, frozenset({"table", "command", "text", "wait"}))
    wait = body.get("wait", 10)
    if not isinstance(wait, int | float) or not 0 <= wait <= 30:
        return _error(400, "`wait` is a number of seconds from 0 to 30")
    text = body.get("text")
    if text is not None and not isinstance(text, str):
        return _error(400, "`text` (a match file for new-match) must be a string")
    hall, table, command = request.app[HALL], _text(body, "table"), _text(body, "command")
    try:
        answer = await hall.command(table, command, _by(request), text, float(wait))
    except Refused as exc:
        return _error(exc.status, str(exc), exc.code, exc.fields)
    except ValueError as exc:
        return _error(400, str(exc))
    # The reply as the hall's view took it from THIS table (checked and bounded: what the card
    # shows), never the raw payload (`Hall.command` waits only for this table's reply).
    command = " ".join(command.split())
    kept = hall.view.note_command(table, answer["id"], command)
    hall.changed(table)
    reply = None if kept is None else {k: v for k, v in kept.items()
                                       if k not in ("received_ms", "command")}
    return web.json_response({"id": answer["id"], "command": command, "reply": reply})


async def _move(request: web.Request) -> web.StreamResponse:
    """`{"from": TABLE, "to": SPARE, "live": false, "journal": NAME, "force": false}`: the
    spare continues the table's match from the hall's verified copy of its journal (SPEC
    §13.5, §14.1; actions.py). A table not known to be offline is moved only with `"live":
    true` (the page's second confirmation: its clock is stopped for good), else 409 with the
    code `source_live`; `journal`, the journal the dialog showed (409 `move_stale` when the
    hall's newest is another). The answer: the spare's reply, and `moved` once it continued."""
    body = await _json(request, frozenset({"from", "to", "live", "journal", "force"}))
    force, live = body.get("force", False), body.get("live", False)
    if not isinstance(force, bool):
        return _error(400, "`force` is true or false")
    if not isinstance(live, bool):
        return _error(400, "`live` is true or false (true: the director confirmed that the "
                           "table's clock is stopped for good)")
    journal = body.get("journal")
    if journal is not None and (not isinstance(journal, str) or not 0 < len(journal) <= 255):
        return _error(400, "`journal` is the name of the journal the dialog showed")
    hall, source, spare = request.app[HALL], _text(body, "from"), _text(body, "to")
    try:
        answer = await hall.move(source, spare, _by(request), force, live=live,
                                 journal=journal)
    except Refused as exc:
        return _error(exc.status, str(exc), exc.code, exc.fields)
    except ValueError as exc:
        return _error(400, str(exc))
    command = f"continue {source} (moved by the hall)"
    kept = hall.view.note_command(spare, answer["id"], command)
    hall.changed(spare)
    if source in hall.view.tables:           # its card: the match moved away (or not)
        hall.changed(source)
    reply = None if kept is None else {k: v for k, v in kept.items()
                                       if k not in ("received_ms", "command")}
    return web.json_response({"id": answer["id"], "command": command, "reply": reply,
                              "moved": answer.get("moved")})


async def _accept(request: web.Request) -> web.StreamResponse:
    """`{"journal": "TABLE/NAME.jsonl", "sha256": HEX}`: the director accepts a held result (the
    file the page showed, by its SHA-256). The decision is in the hall's journal (synced) before
    the answer; the results and standings count it from then on."""
    body = await _json(request, frozenset({"journal", "sha256"}))
    journal, digest = _text(body, "journal"), _text(body, "sha256")
    table, _, name = journal.partition("/")
    if TABLE_ID.fullmatch(table) is None or JOURNAL_NAME.fullmatch(name) is None:
        return _error(400, "`journal` is TABLE/NAME.jsonl, as the results list it")
    if SHA256.fullmatch(digest) is None:
        return _error(400, "`sha256` is the journal's SHA-256 in 64 lower-case hex digits")
    hall = request.app[HALL]
    try:
        result, decision = await hall.accept(journal, digest, _by(request))
    except Refused as exc:
        return _error(404 if exc.code == "no_result" else 409, str(exc), exc.code, exc.fields)
    except DecisionError as exc:
        return _error(400, str(exc))
    except OSError as exc:
        log.warning("page: the acceptance of %s is not recorded: %s", journal,
                    exc.strerror or exc)
        return _error(500, f"not recorded (nothing counts): {exc.strerror or exc}",
                      code="not_recorded", fields={"why": str(exc.strerror or exc)})
    return web.json_response({"ok": True, "journal": result.journal,
                              "accepted": {"by": decision.by, "at_ms": decision.at_ms}})


async def _dismiss(request: web.Request) -> web.StreamResponse:
    body = await _json(request, frozenset({"table", "key"}))
    hall, table = request.app[HALL], _text(body, "table")
    if not hall.view.dismiss(table, _text(body, "key")):
        return _error(404, "no such alert (already marked seen?)", code="no_alert")
    hall.changed(table)
    return web.json_response({"ok": True})


async def _dismiss_all(request: web.Request) -> web.StreamResponse:
    """Mark every alert of one table seen ("mark all seen"): the number marked."""
    body = await _json(request, frozenset({"table"}))
    hall, table = request.app[HALL], _text(body, "table")
    if table not in hall.view.tables:
        return _error(404, f"no table {table[:40]!r}", code="no_table")
    count = hall.view.dismiss_all(table)
    hall.changed(table)
    return web.json_response({"ok": True, "dismissed": count})


async def _archive_list(request: web.Request) -> web.StreamResponse:
    return web.json_response({"archive": request.app[HALL].archive_list()})


async def _results_json(request: web.Request) -> web.StreamResponse:
    return web.json_response(request.app[HALL].results_json())


def _csv_file(text: str, name: str) -> web.Response:
    return web.Response(body=text.encode("utf-8"), headers={
        "Content-Type": "text/csv; charset=utf-8",
        "Content-Disposition": f'attachment; filename="{name}"'})


async def _results_csv(request: web.Request) -> web.StreamResponse:
    return _csv_file(results_csv(request.app[HALL].results.results()), "results.csv")


async def _archive_file(request: web.Request) -> web.StreamResponse:
    table, name = request.match_info["table"], request.match_info["name"]
    if TABLE_ID.fullmatch(table) is None or JOURNAL_NAME.fullmatch(name) is None:
        raise web.HTTPNotFound()
    path = request.app[HALL].options.archive / table / name
    if not path.is_file():
        raise web.HTTPNotFound()
    return web.FileResponse(path, headers={"Content-Type": "application/x-ndjson"})








