"""`gammonclock hall --broker …`: check the arguments, then run the hall and its page until
SIGINT or SIGTERM."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import signal
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from gammonclock.errors import GammonclockError
from gammonclock.wire import BrokerURL, BrokerURLError

from .connections import Gate, GuardedSite, Limits, open_files_limit, quiet_logs
from .public import PublicError, PublicOptions, PublicPublisher, websocket_url
from .server import Hall, HallOptions
from .web import PageHosts, host_name, is_address, is_loopback, make_app, start_page

EXIT_BAD_INPUT = 2
SWITCH_INTERVAL_S = 0.0005


class UsageError(GammonclockError, ValueError):
    pass


def read_secret(path: Path | None, what: str) -> str:
    if path is None:
        raise UsageError(f"{what}: give the file that holds it")
    try:
        text = path.read_text(encoding="utf-8").strip()
    except OSError as exc:
        raise UsageError(f"{path}: cannot read {what}: {exc.strerror}") from None
    if not text or "\n" in text:
        raise UsageError(f"{path}: {what} is one line of text; the file holds "
                         f"{'nothing' if not text else 'several lines'}")
    return text


def http_address(text: str) -> tuple[str, int]:
    host, sep, port = text.rpartition(":")
    host = host.strip("[]")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise UsageError(f"--http {text!r} is not HOST:PORT, e.g. 127.0.0.1:8080 or "
                         "0.0.0.0:8080 (with --page-password-file)")
    return host, int(port)


@dataclass(frozen=True)
class PageOptions:
    """Where and how the director's page is served."""

    host: str
    port: int
    password: str | None = None
    hosts: PageHosts = field(default_factory=PageHosts)
    limits: Limits = field(default_factory=Limits)
    language: str = "en"           # the page's, where a browser has not chosen one
    public: Any = None             # the spectators' pages (public_web.PublicPage)
    standings_format: str = "swiss"   # the event's format: its standings' tie-breaks


def page_hosts(bind: str, names: list[str] | None) -> PageHosts:
    """The names the page answers to: the bind address's and the `--page-host` ones."""
    given = []
    for name in names or []:
        plain = name.strip().strip("[]")
        if not (is_address(plain) or (":" not in plain and host_name(plain) is not None)):
            raise UsageError(f"--page-host {name!r} is not a host name or an address, e.g. "
                             "hall.local or 10.0.0.2 (no port)")
        given.append(plain)
    return PageHosts.of(bind, given)


def raise_open_files_limit() -> int:
    """Raise the soft limit of open files to the hard one (the archive and the broker keep
    their files while the page is under a flood of connections); the new soft limit."""
    try:
        import resource
    except ImportError:                           # not on Unix
        return open_files_limit()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and soft != hard:
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return open_files_limit()


def options_of(args: argparse.Namespace) -> tuple[HallOptions, PageOptions]:
    if not args.broker:
        raise UsageError("--broker is required, e.g. mqtt://127.0.0.1:1883")
    try:
        broker = BrokerURL.parse(args.broker)
    except BrokerURLError as exc:
        raise UsageError(str(exc)) from None
    if args.ca_file and not broker.tls:
        raise UsageError("--ca-file is for an mqtts:// broker")
    host, port = http_address(args.http)
    page_password = None
    if args.page_password_file is not None or not is_loopback(host):
        page_password = read_secret(args.page_password_file,
                                    f"the page's password (--http {host} is not loopback: "
                                    "--page-password-file)")
    header_s = args.page_header_timeout
    if header_s is not None and not 0 < header_s <= 300:
        raise UsageError(f"--page-header-timeout {header_s:g}: give seconds from 0 to 300")
    limits = Limits() if header_s is None else Limits(header_s=header_s,
                                                      idle_s=min(Limits.idle_s, header_s))
    page = PageOptions(host, port, page_password,
                       page_hosts(host, args.page_host), limits,
                       getattr(args, "language", None) or "en",
                       standings_format=getattr(args, "standings_format", None) or "swiss")
    options = HallOptions(broker, args.user, read_secret(args.password_file,
                                                         "the broker password (--password-file)"),
                          args.prefix.rstrip("/"), args.ca_file, args.archive, args.keys_dir)
    return options, page


def public_of(args: argparse.Namespace) -> tuple[PublicOptions | None, Any]:
    """The public view's options (None: not published) and what its pages are told."""
    from .public_web import PublicPage
    url = getattr(args, "public_broker", None)
    delay = getattr(args, "public_delay", 0.0) or 0.0
    socket = getattr(args, "public_websocket", None)
    try:
        shown = websocket_url(socket) if socket else None
        if url is None:
            if socket or delay:
                raise UsageError("--public-websocket and --public-delay need --public-broker "
                                 "(the spectators' Mosquitto, e.g. mqtt://127.0.0.1:1884)")
            return None, PublicPage()
        broker = BrokerURL.parse(url)
        public = PublicOptions(broker, read_secret(args.public_password_file,
                                                   "the public broker's password "
                                                   "(--public-password-file)"),
                               args.public_user, args.ca_file, delay)
    except (BrokerURLError, PublicError) as exc:
        raise UsageError(str(exc).replace("broker ", "--public-broker ", 1)) from None
    return public, PublicPage(True, shown, delay)


def serve(args: argparse.Namespace) -> int:
    try:
        options, page = options_of(args)
        public, shown = public_of(args)
        page = replace(page, public=shown)
    except UsageError as exc:
        print(f"gammonclock hall: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    logging.basicConfig(level=logging.INFO, format="gammonclock hall: %(message)s")
    # paho's network thread takes every message off the broker's one connection; while the loop
    # is busy with a table's flood it waited up to Python's 5 ms switch interval for the GIL per
    # message, and every other table's messages waited behind the flood in the socket
    sys.setswitchinterval(SWITCH_INTERVAL_S)
    quiet_logs()
    raise_open_files_limit()
    return serve_until_stopped(options, page, "gammonclock hall", public)


def serve_until_stopped(options: HallOptions, page: PageOptions, who: str,
                        public: PublicOptions | None = None) -> int:
    """Run the hall and its page until SIGINT or SIGTERM: 0, or 1 (said) when the page's
    address cannot be served."""
    try:
        asyncio.run(run(options, page, public))
    except OSError as exc:
        print(f"{who}: cannot serve on {page.host}:{page.port}: {exc.strerror or exc}",
              file=sys.stderr)
        return 1
    return 0


async def run(options: HallOptions, page: PageOptions,
              public: PublicOptions | None = None) -> None:
    hall = Hall(options)
    await hall.start()
    publisher = PublicPublisher(hall, public) if public is not None else None
    if publisher is not None:
        publisher.start()
    runner = None
    try:
        runner = await start_page(make_app(hall, page.password, hosts=page.hosts,
                                           limits=page.limits, language=page.language,
                                           public=page.public,
                                           standings_format=page.standings_format),
                                  page.host, page.port)
        shown = f"[{page.host}]" if ":" in page.host else page.host
        print(f"gammonclock hall: the page is http://{shown}:{page.port}/"
              + (" (password asked)" if page.password else ""), flush=True)
        if public is not None:
            print(f"gammonclock hall: spectators: http://{shown}:{page.port}/public and "
                  f"/overlay/TABLE (no password), published to {public.broker.host}:"
                  f"{public.broker.port}" + (f", {public.delay_s:g} s late"
                                             if public.delay_s else ""),
                  flush=True)
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError):
                loop.add_signal_handler(sig, stop.set)
        gates = [site.gate for site in runner.sites if isinstance(site, GuardedSite)]
        report = asyncio.ensure_future(_report(gates))
        try:
            await stop.wait()
        finally:
            report.cancel()
            _say(gates, 0)
    finally:
        if publisher is not None:
            publisher.stop()
        await hall.stop()
        if runner is not None:
            await runner.cleanup()


REPORT_S = 60.0


def _say(gates: list[Gate], said: int) -> int:
    """Log how many connections the page turned away, when more were since the count SAID (the
    rate-limited log says each kind once per 10 s; this says how many); the count now."""
    now = sum(gate.counts.turned_away for gate in gates)
    if now > said:
        logging.getLogger(__name__).info("page so far: %s", "; ".join(
            gate.counts.summary() for gate in gates))
    return now


async def _report(gates: list[Gate]) -> None:
    said = 0
    while True:
        await asyncio.sleep(REPORT_S)
        said = _say(gates, said)
