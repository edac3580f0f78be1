"""The spectators' pages, served by the hall without its password (SPEC §14): `/public` (every
table) and `/overlay/TABLE` (a transparent 1920x1080 stream overlay for an OBS browser source).
Both are static: the hall puts in the page where the spectators' broker is (its WebSocket URL),
the public topic tree and the catalogue of texts; the browser then subscribes to the broker
itself (static/mqtt_ws.js, MQTT 3.1.1 over WebSocket, subscribe only) and never asks the
hall again. `?lang=ru` chooses the page's language (default: the hall's `--language`).
"""

from __future__ import annotations

import html
import json
from dataclasses import dataclass

from aiohttp import web

from .accounts import TABLE_ID
from .page import HALL, LANGUAGES, STATIC, page_texts
from .public import WEBSOCKET_PORT, public_root

ASSETS = {"public.js": "application/javascript", "mqtt_ws.js": "application/javascript",
          "public.css": "text/css"}
PUBLIC_HEADERS = {
    "Cache-Control": "no-cache",
    # Scripts and styles of the hall only; the page connects to the broker's WebSocket.
    "Content-Security-Policy": ("default-src 'self'; script-src 'self'; style-src 'self'; "
                                "connect-src 'self' ws: wss:; img-src 'self' data:; "
                                "frame-ancestors 'none'"),
}


@dataclass(frozen=True)
class PublicPage:
    """What the spectators' pages are told. `websocket`: the broker's URL for browsers (None:
    ws://the page's own host:9001/); `published`: whether the hall publishes at all (without
    `--public-broker` the page says it is not set up); `delay_s`: shown on the page."""

    published: bool = False
    websocket: str | None = None
    delay_s: float = 0.0


PUBLIC_PAGE: web.AppKey[PublicPage] = web.AppKey("public_page", PublicPage)
PUBLIC_HTML: web.AppKey[str] = web.AppKey("public_html", str)


def public_html(page: PublicPage, root: str, language: str) -> str:
    """public.html with its settings and catalogue filled in (a `{MODE}`/`{TABLE}` left for
    each request)."""
    texts = json.dumps(page_texts("public_texts.json"), ensure_ascii=False,
                       separators=(",", ":"))
    texts = texts.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    settings = {"websocket": page.websocket or "", "port": WEBSOCKET_PORT, "root": root,
                "published": page.published, "delay_s": page.delay_s, "language": language}
    data = json.dumps(settings, separators=(",", ":")).replace("<", "\\u003c")
    text = (STATIC / "public.html").read_text(encoding="utf-8")
    return (text.replace('<script id="public-texts" type="application/json"></script>',
                         f'<script id="public-texts" type="application/json">{texts}</script>')
                .replace('<script id="public-settings" type="application/json"></script>',
                         f'<script id="public-settings" type="application/json">{data}'
                         '</script>'))


def add_public_routes(app: web.Application, page: PublicPage | None, language: str) -> None:
    page = page or PublicPage()
    app[PUBLIC_PAGE] = page
    app[PUBLIC_HTML] = public_html(page, public_root(app[HALL].options.prefix), language)
    app.router.add_get("/public", _public)
    app.router.add_get("/overlay/{table}", _overlay)
    app.router.add_get("/public/assets/{name}", _asset)


def _page(request: web.Request, mode: str, table: str) -> web.Response:
    lang = request.query.get("lang", "")
    text = (request.app[PUBLIC_HTML]
            .replace('data-mode=""', f'data-mode="{mode}"')
            .replace('data-table=""', f'data-table="{html.escape(table, quote=True)}"')
            .replace('data-lang=""', f'data-lang="{lang if lang in LANGUAGES else ""}"'))
    return web.Response(text=text, content_type="text/html", headers=PUBLIC_HEADERS)


async def _public(request: web.Request) -> web.StreamResponse:
    return _page(request, "public", "")


async def _overlay(request: web.Request) -> web.StreamResponse:
    table = request.match_info["table"]
    if TABLE_ID.fullmatch(table) is None:
        raise web.HTTPNotFound(text="no such table: a table's name is letters, digits, - and _")
    return _page(request, "overlay", table)


async def _asset(request: web.Request) -> web.StreamResponse:
    name = request.match_info["name"]
    kind = ASSETS.get(name)
    if kind is None:
        raise web.HTTPNotFound()
    return web.Response(body=(STATIC / name).read_bytes(), content_type=kind,
                        charset="utf-8", headers=PUBLIC_HEADERS)
