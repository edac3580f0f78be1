"""`gammonclock hall --broker …`: check the arguments, then run the hall and its page until
SIGINT or SIGTERM."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import signal
import sys
from pathlib import Path

from aiohttp import web

from .errors import GammonclockError
from .hall_mqtt import BrokerURL, BrokerURLError
from .hall_server import Hall, HallOptions
from .hall_web import is_loopback, make_app

EXIT_BAD_INPUT = 2


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


def options_of(args: argparse.Namespace) -> tuple[HallOptions, str, int, str | None]:
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
    options = HallOptions(broker, args.user, read_secret(args.password_file,
                                                         "the broker password (--password-file)"),
                          args.prefix.rstrip("/"), args.ca_file, args.archive, args.keys_dir)
    return options, host, port, page_password


def serve(args: argparse.Namespace) -> int:
    try:
        options, host, port, page_password = options_of(args)
    except UsageError as exc:
        print(f"gammonclock hall: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    logging.basicConfig(level=logging.INFO, format="gammonclock hall: %(message)s")
    try:
        asyncio.run(run(options, host, port, page_password))
    except OSError as exc:
        print(f"gammonclock hall: cannot serve on {host}:{port}: {exc.strerror or exc}",
              file=sys.stderr)
        return 1
    return 0


async def run(options: HallOptions, host: str, port: int, page_password: str | None) -> None:
    hall = Hall(options)
    await hall.start()
    runner = web.AppRunner(make_app(hall, page_password), access_log=None)
    await runner.setup()
    try:
        await web.TCPSite(runner, host, port).start()
        shown = f"[{host}]" if ":" in host else host
        print(f"gammonclock hall: the page is http://{shown}:{port}/"
              + (" (password asked)" if page_password else ""), flush=True)
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError):
                loop.add_signal_handler(sig, stop.set)
        await stop.wait()
    finally:
        await hall.stop()
        await runner.cleanup()
