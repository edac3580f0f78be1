"""The director's page (SPEC §14), served by aiohttp: one process, one asyncio loop shared with
the MQTT hand-over, its own HTTP server (no separate ASGI server to pick and run), and server-sent
events to the browser (one long GET per page; the browser's EventSource reconnects by itself).

Routes: `/` the page, `/static/…` its assets, `/events` the stream, `/api/…` the director's
actions (JSON in, JSON out), `/archive/TABLE/NAME` an archived journal.

Security: on a loopback address no password is asked (the director's own machine); bound to
any other address, every request needs HTTP basic authentication with the password from
`--page-password-file` (any user name; use it over a trusted network or behind TLS). A POST must
be JSON from the page's own origin, so another site open in the director's browser cannot
send a command with the cached password.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import hmac
import ipaddress
import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from aiohttp import web

from .hall_accounts import TABLE_ID
from .hall_archive import JOURNAL_NAME
from .hall_server import Hall, Listener, now_ms

STATIC = Path(__file__).with_name("hall_static")
KEEPALIVE_S = 15.0
MAX_BODY = 2 << 20            # a pairings CSV of a few hundred rows is a few KiB

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
HALL: web.AppKey[Hall] = web.AppKey("hall", Hall)
PASSWORD: web.AppKey[str] = web.AppKey("password", str)   # "": none asked


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def make_app(hall: Hall, password: str | None = None) -> web.Application:
    app = web.Application(middlewares=[_guard], client_max_size=MAX_BODY)
    app[HALL], app[PASSWORD] = hall, password or ""
    app.router.add_get("/", _page)
    app.router.add_static("/static/", STATIC)
    app.router.add_get("/events", _events)
    app.router.add_get("/api/cards", _cards)
    app.router.add_post("/api/round", _round)
    app.router.add_post("/api/cmd", _command)
    app.router.add_post("/api/dismiss", _dismiss)
    app.router.add_get("/api/archive", _archive_list)
    app.router.add_get("/archive/{table}/{name}", _archive_file)
    return app


# --- security ----------------------------------------------------------------------------------

@web.middleware
async def _guard(request: web.Request, handler: Handler) -> web.StreamResponse:
    password = request.app[PASSWORD]
    if password and not _authorised(request, password):
        return web.Response(status=401, text="the hall's password, please\n",
                            headers={"WWW-Authenticate": 'Basic realm="gammonclock hall"'})
    if request.method == "POST":
        if request.content_type != "application/json":
            return _error(415, "send JSON (Content-Type: application/json)")
        origin = request.headers.get("Origin")
        if origin is not None and origin.split("://", 1)[-1] != request.host:
            return _error(403, f"a request from {origin} is refused: only the hall's own page "
                               "may act")
    response = await handler(request)
    response.headers.setdefault("Cache-Control", "no-store")
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


def _error(status: int, message: str) -> web.Response:
    return web.json_response({"error": message}, status=status)


def _by(request: web.Request) -> str:
    """Who acts, for the clock's journal: the page's user name if it gave one, else the hall."""
    credentials = _credentials(request)
    user = credentials[0].strip() if credentials is not None else ""
    return user[:40] if user else request.app[HALL].options.user


# --- the page and its stream -------------------------------------------------------------------

async def _page(_request: web.Request) -> web.StreamResponse:
    return web.FileResponse(STATIC / "index.html")


async def _cards(request: web.Request) -> web.StreamResponse:
    return web.json_response(request.app[HALL].snapshot())


async def _events(request: web.Request) -> web.StreamResponse:
    hall = request.app[HALL]
    response = web.StreamResponse(headers={"Content-Type": "text/event-stream",
                                           "Cache-Control": "no-store",
                                           "X-Accel-Buffering": "no"})
    await response.prepare(request)
    listener = Listener()
    hall.listeners.append(listener)
    try:
        await _send(response, "snapshot", hall.snapshot())
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
                                        "cards": [hall.view.card(t) for t in tables]})
    if listener.broker:
        listener.broker = False
        await _send(response, "broker", {"server_now_ms": now_ms(),
                                         "broker": hall.broker_json()})
    for entry in archive:
        await _send(response, "archive", entry)


async def _send(response: web.StreamResponse, event: str, data: Any) -> None:
    text = json.dumps(data, separators=(",", ":"))
    await response.write(f"event: {event}\ndata: {text}\n\n".encode())


# --- the director's actions --------------------------------------------------------------------

async def _json(request: web.Request) -> dict[str, Any]:
    try:
        body = await request.json()
    except ValueError:
        raise web.HTTPBadRequest(text="the body is not JSON") from None
    if not isinstance(body, dict):
        raise web.HTTPBadRequest(text="the body is not a JSON object")
    return body


def _text(body: dict[str, Any], key: str, default: str = "") -> str:
    value = body.get(key, default)
    if not isinstance(value, str):
        raise web.HTTPBadRequest(text=f"`{key}` must be a string")
    return value


async def _round(request: web.Request) -> web.StreamResponse:
    body = await _json(request)
    rows = await request.app[HALL].push_round(_text(body, "csv"), _text(body, "event"),
                                              _text(body, "round"))
    return web.json_response({"rows": rows,
                              "pushed": sum(1 for r in rows if r["ok"]),
                              "errors": sum(1 for r in rows if not r["ok"])})


async def _command(request: web.Request) -> web.StreamResponse:
    body = await _json(request)
    wait = body.get("wait", 10)
    if not isinstance(wait, int | float) or not 0 <= wait <= 30:
        return _error(400, "`wait` is a number of seconds from 0 to 30")
    text = body.get("text")
    if text is not None and not isinstance(text, str):
        return _error(400, "`text` (a match file for new-match) must be a string")
    try:
        answer = await request.app[HALL].command(_text(body, "table"), _text(body, "command"),
                                                 _by(request), text, float(wait))
    except ValueError as exc:
        return _error(400, str(exc))
    return web.json_response(answer)


async def _dismiss(request: web.Request) -> web.StreamResponse:
    body = await _json(request)
    hall, table = request.app[HALL], _text(body, "table")
    if not hall.view.dismiss(table, _text(body, "key")):
        return _error(404, "no such alert (already marked seen?)")
    hall.changed(table)
    return web.json_response({"ok": True})


async def _archive_list(request: web.Request) -> web.StreamResponse:
    return web.json_response({"archive": request.app[HALL].archive_list()})


async def _archive_file(request: web.Request) -> web.StreamResponse:
    table, name = request.match_info["table"], request.match_info["name"]
    if TABLE_ID.fullmatch(table) is None or JOURNAL_NAME.fullmatch(name) is None:
        raise web.HTTPNotFound()
    path = request.app[HALL].options.archive / table / name
    if not path.is_file():
        raise web.HTTPNotFound()
    return web.FileResponse(path, headers={"Content-Type": "application/x-ndjson"})
