"""`gammonclock arbiter …` and `usb-stick`: a request to the clock's socket (the socket's own
client), its answer printed, its exit status the outcome's."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from gammonclock import words as catalogue
from gammonclock.config.loading import (
    ConfigError,
    read_config_text,
)
from gammonclock.config.problems import Problem, language_in, message_of, said
from gammonclock.words import WORDS

from .common import DEFAULT_STATE_DIR, fail


def arbiter_command(args: argparse.Namespace) -> int:
    """Send one arbiter command (or `status`) to the clock running with this state directory.
    Exit status: 0 acted, 1 refused, 2 bad words or a bad reply, 3 no clock, 4 not applied (busy,
    timed out) or outcome unknown, 5 this login may not use the socket: see arbiter_socket."""
    from gammonclock.runtime.arbiter_client import ClientError, ask, os_error_words
    from gammonclock.runtime.arbiter_requests import EXIT_NO_CLOCK, EXIT_NOT_ALLOWED, exit_status

    try:
        words = _arbiter_options(args, args.words)
    except ValueError as exc:
        return fail(f"arbiter: {said(message_of(exc), client_language(args))}")
    lang = client_language(args)
    if not words:
        return fail(f"arbiter: {catalogue.say('cl.no_command', lang)}")
    text, file = None, None
    if words[0] == "new-match":
        try:
            words, text, file = _new_match_request(words)
        except ConfigError as exc:
            return fail(f"arbiter: {exc.said(lang)}")
    elif words[0] == "continue":                 # SPEC §13.5: the clock reads FROM itself
        sources = [word for word in words[1:] if not word.startswith("--")]
        if len(sources) != 1:
            return fail(f"arbiter: {catalogue.say('cl.one_source', lang)}")
        words = ["continue", *[word for word in words[1:] if word.startswith("--")]]
        file = str(Path(sources[0]).resolve())
    path = _asking_path(args)
    try:
        answer = ask(path, words, text=text, file=file)
    except ClientError as exc:
        return fail(f"arbiter: {said(message_of(exc), lang)}", status=exc.exit_status)
    except PermissionError:
        return fail(f"arbiter: {catalogue.say('cl.not_allowed', lang, path=path)}",
                    status=EXIT_NOT_ALLOWED)
    except OSError as exc:
        why = said(os_error_words(exc), lang)
        return fail(f"arbiter: {catalogue.say('cl.no_clock', lang, path=path, why=why)}",
                    status=EXIT_NO_CLOCK)
    lang = reply_language(args, answer)
    if args.json or "said" not in answer:
        if "state" in answer and answer.get("ok"):
            print(json.dumps(answer["state"], indent=None if args.json else 2))
        elif args.json:
            print(json.dumps(answer))
    else:
        for line in answer["said"]:
            # A refusal is said once, on stderr with the exit status (below), not also here
            # (in the match's language: "refused …", "отказано …").
            if answer.get("ok") or not line.startswith(REFUSED):
                print(line)
        for key in ("reapplied", "no_longer_applied"):
            for line in answer.get(key, []):
                print(f"{catalogue.say(f'cl.{key}', lang)}: {line}")
    if not answer.get("ok"):
        error = answer.get("error") or catalogue.say("cl.refused", lang)
        print(f"gammonclock: {error}", file=sys.stderr)
    return exit_status(answer)


# The device config the clock on this Pi runs with: its `[display] language` is the client's
# before any reply (`client_language`).
DEVICE_CONFIG = Path("/etc/gammonclock/device.toml")


def client_language(args: argparse.Namespace) -> str:
    """The language of the client's own words before the clock answers (no clock, a refused
    connection, a timeout, words that cannot be sent): `--language`, else the `[display]
    language` of this Pi's device config when it can be read (best effort: a file missing,
    unreadable or not TOML says nothing), else English."""
    if getattr(args, "language", None):
        return catalogue.language(args.language)
    try:
        text = DEVICE_CONFIG.read_text("utf-8")
    except (OSError, UnicodeDecodeError):
        return catalogue.DEFAULT
    return language_in(text) or catalogue.DEFAULT


def reply_language(args: argparse.Namespace, answer: dict[str, object]) -> str:
    """The language of what the client prints beside a reply (its labels): `--language`, else
    the reply's (the match's `[display] language`, which the clock's words are in), else the
    client's."""
    if getattr(args, "language", None):
        return catalogue.language(args.language)
    told = answer.get("language")
    if isinstance(told, str) and told in catalogue.LANGUAGES:
        return told
    return client_language(args)

# How a refusal's line starts in each language (words.py's "e.refused": "refused {what}: …").
REFUSED = tuple({text.split("{", 1)[0] for text in (WORDS["e.refused"].en,
                                                      WORDS["e.refused"].ru)})


def _asking_path(args: argparse.Namespace) -> Path:
    """The socket a client asks at: --state-dir's, else $GAMMONCLOCK_STATE_DIR's, else where a
    clock serves (`asking_path`)."""
    from gammonclock.runtime.arbiter_socket import asking_path

    told = args.state_dir or os.environ.get("GAMMONCLOCK_STATE_DIR") or None
    return asking_path(told, DEFAULT_STATE_DIR)

def _arbiter_options(args: argparse.Namespace, words: list[str]) -> list[str]:
    """The command's words with `--json`, `--state-dir DIR` and `--language LANG` taken out
    wherever they stand
    (`arbiter status --json` as well as `arbiter --json status`); a command's own words that
    start with "-" (`adjust left -30s`) are left alone. ValueError for `--state-dir` without a
    folder."""
    kept: list[str] = []
    rest = iter(words)
    for word in rest:
        if word == "--json":
            args.json = True
        elif word == "--state-dir" or word.startswith("--state-dir="):
            value = word.partition("=")[2] or next(rest, "")
            if not value:
                raise ValueError(Problem("cl.state_dir_needs"))
            args.state_dir = Path(value)
        elif word == "--language" or word.startswith("--language="):
            value = word.partition("=")[2] or next(rest, "")
            if value not in catalogue.LANGUAGES:
                raise ValueError(Problem("cl.language_choice", value=repr(value),
                                         languages=", ".join(catalogue.LANGUAGES)))
            args.language = value
        else:
            kept.append(word)
    return kept

def _new_match_request(words: list[str]) -> tuple[list[str], str, str]:
    """`new-match FILE [--force]` (the flag on either side): the words to send, the match
    file's text and its name. Raises ConfigError for a file that cannot be read."""
    force = "--force" in words[1:]
    files = [word for word in words[1:] if word != "--force"]
    if len(files) != 1:
        raise ConfigError("new-match", [Problem("cl.one_match_file")])
    text = read_config_text(files[0])
    return ["new-match"] + (["--force"] if force else []), text, files[0]

# A stick's copy of many matches' reports; the unit allows 10 min, and this leaves the helper the
# time to sync and unmount before systemd would kill it.
USB_STICK_TIMEOUT_S = 540.0

def usb_stick_command(args: argparse.Namespace) -> int:
    """A stick was plugged in (the udev-started unit, as root): mount it, have the clock export
    to it and load its next match, unmount it."""
    from gammonclock.runtime.arbiter_client import ask
    from gammonclock.runtime.usb_mount import usb_stick_main

    path = _asking_path(args)
    return usb_stick_main(args.target,
                          lambda words: ask(path, words, timeout_s=USB_STICK_TIMEOUT_S))
