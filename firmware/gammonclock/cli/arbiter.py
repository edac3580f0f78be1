"""`gammonclock arbiter …` and `usb-stick`: a request to the clock's socket (the socket's own
client), its answer printed, its exit status the outcome's."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from gammonclock.config.loading import (
    ConfigError,
    read_config_text,
)
from gammonclock.words import WORDS

from .common import DEFAULT_STATE_DIR, fail


def arbiter_command(args: argparse.Namespace) -> int:
    """Send one arbiter command (or `status`) to the clock running with this state directory.
    Exit status: 0 acted, 1 refused, 2 bad words or a bad reply, 3 no clock, 4 not applied (busy,
    timed out) or outcome unknown, 5 this login may not use the socket: see arbiter_socket."""
    from gammonclock.runtime.arbiter_client import ClientError, ask
    from gammonclock.runtime.arbiter_requests import EXIT_NO_CLOCK, EXIT_NOT_ALLOWED, exit_status

    try:
        words = _arbiter_options(args, args.words)
    except ValueError as exc:
        return fail(f"arbiter: {exc}")
    if not words:
        return fail("arbiter: give a command, e.g. `gammonclock arbiter status`")
    text, file = None, None
    if words[0] == "new-match":
        try:
            words, text, file = _new_match_request(words)
        except ConfigError as exc:
            return fail(f"arbiter: {exc}")
    elif words[0] == "continue":                 # SPEC §13.5: the clock reads FROM itself
        sources = [word for word in words[1:] if not word.startswith("--")]
        if len(sources) != 1:
            return fail("arbiter: give one journal or folder: continue FROM [--force] "
                         "[--unverified]")
        words = ["continue", *[word for word in words[1:] if word.startswith("--")]]
        file = str(Path(sources[0]).resolve())
    path = _asking_path(args)
    try:
        answer = ask(path, words, text=text, file=file)
    except ClientError as exc:
        return fail(f"arbiter: {exc}", status=exc.exit_status)
    except PermissionError:
        return fail(f"arbiter: {path}: permission denied: this login may not use the clock's "
                     f"socket; an administrator adds it to the arbiters' groups (sudo "
                     f"scripts/install --arbiter $USER), then log in again",
                     status=EXIT_NOT_ALLOWED)
    except OSError as exc:
        return fail(f"arbiter: no clock answers at {path} ({exc.strerror or exc})",
                     status=EXIT_NO_CLOCK)
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
        for label, key in (("applied again", "reapplied"),
                           ("no longer applies", "no_longer_applied")):
            for line in answer.get(key, []):
                print(f"{label}: {line}")
    if not answer.get("ok"):
        print(f"gammonclock: {answer.get('error', 'refused')}", file=sys.stderr)
    return exit_status(answer)

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
    """The command's words with `--json` and `--state-dir DIR` taken out wherever they stand
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
                raise ValueError("--state-dir needs a folder")
            args.state_dir = Path(value)
        else:
            kept.append(word)
    return kept

def _new_match_request(words: list[str]) -> tuple[list[str], str, str]:
    """`new-match FILE [--force]` (the flag on either side): the words to send, the match
    file's text and its name. Raises ConfigError for a file that cannot be read."""
    force = "--force" in words[1:]
    files = [word for word in words[1:] if word != "--force"]
    if len(files) != 1:
        raise ConfigError("new-match", ["give one match file: new-match FILE [--force]"])
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
