"""The same match file again after a restart (SPEC §13.2, §13.4): the waiting match's journal
header holds its clear PIN's hash with the salt drawn by the process before the restart. The
file's clear PIN is verified against that hash, not hashed again with a new salt (which never
gives the same header text), so the match is kept, not abandoned and started again; and the
clear PIN costs at most one scrypt per load."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest

import gammonclock.core.pin as pin_module
from gammonclock.config.loading import parse_device_config
from gammonclock.core.pin import make_hash, pepper_of, redact_pin, redact_pin_as
from gammonclock.core.rules import EndReason
from gammonclock.device.build import build_device
from gammonclock.journal.reader import read_journal
from gammonclock.journal.records import JOURNALS_DIR
from gammonclock.journal.replay import replay
from gammonclock.runtime.lifecycle import load_next_match
from keyed_pin_helpers import DEVICE_TEXT, MATCH_TEXT, OTHER_MATCH, PIN, header_hash, live_check


class Scrypts:
    """The scrypt hashes computed (each is ~0.1 s on a laptop core, more on a Pi)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.count = 0
        real = pin_module._scrypt

        def counted(*args):
            self.count += 1
            return real(*args)

        monkeypatch.setattr(pin_module, "_scrypt", counted)

    def during(self, work):
        before = self.count
        result = work()
        return result, self.count - before


def new_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """What a restart forgets: every hash and verdict this process made (restored after the
    test, for the other tests of this process)."""
    monkeypatch.setattr(pin_module, "_HASHED", {})
    monkeypatch.setattr(pin_module, "_is_pin", functools.cache(pin_module._is_pin.__wrapped__))


def device_on(tmp_path: Path, text: str = DEVICE_TEXT):
    return build_device(parse_device_config(text, str(tmp_path / "device.toml")),
                        tmp_path / "state")


def journals(tmp_path: Path) -> list[Path]:
    return sorted((tmp_path / "state" / JOURNALS_DIR).glob("match-*.jsonl"))


def test_the_same_match_file_after_a_restart_is_the_same_waiting_match(tmp_path, monkeypatch):
    scrypts = Scrypts(monkeypatch)
    new_process(monkeypatch)
    device = device_on(tmp_path)
    try:
        loaded = load_next_match(device.service, device.table, MATCH_TEXT, "match.toml")
        assert loaded.ok and not loaded.kept
        waiting = Path(device.session.journal.path)
        hashed = live_check(device.session).hashed
    finally:
        device.close()

    new_process(monkeypatch)                                    # the restart
    device = device_on(tmp_path)
    try:
        assert Path(device.session.journal.path) == waiting     # resumed, waiting
        same, cost = scrypts.during(
            lambda: load_next_match(device.service, device.table, MATCH_TEXT, "match.toml"))
        assert same.ok and same.kept, same.said
        assert same.said == ["next match already loaded: Анна-Boris, 5 points"]
        assert cost == 1                       # the file's PIN verified against the header's
        assert Path(device.session.journal.path) == waiting and journals(tmp_path) == [waiting]
        assert replay(read_journal(waiting)).engine.match.end_reason is None   # not abandoned
        again, cost = scrypts.during(
            lambda: load_next_match(device.service, device.table, MATCH_TEXT, "match.toml"))
        assert again.kept and cost == 0        # verified once
        # The next match's header holds the hash verified, with no scrypt: hashed once per load.
        other, cost = scrypts.during(
            lambda: load_next_match(device.service, device.table, OTHER_MATCH, "other.toml"))
        assert other.ok and not other.kept and cost == 0
        assert header_hash(Path(device.session.journal.path)) == hashed
        assert live_check(device.session).hashed == hashed
    finally:
        device.close()


def test_after_a_restart_the_same_match_file_on_another_pin_is_another_match(tmp_path,
                                                                            monkeypatch):
    new_process(monkeypatch)
    device = device_on(tmp_path)
    try:
        load_next_match(device.service, device.table, MATCH_TEXT, "match.toml")
        waiting = Path(device.session.journal.path)
    finally:
        device.close()
    new_process(monkeypatch)
    device = device_on(tmp_path, DEVICE_TEXT.replace(f'pin = "{PIN}"', 'pin = "RRCC"'))
    try:
        outcome = load_next_match(device.service, device.table, MATCH_TEXT, "match.toml")
        assert outcome.ok and not outcome.kept
        assert Path(device.session.journal.path) != waiting
        assert replay(read_journal(waiting)).engine.match.end_reason is EndReason.ABANDONED
    finally:
        device.close()


TEXT = '[table]\nid = "T1"\n\n[arbiter]\npin = "LRCL"\nchord_s = 3.0\n'


@pytest.mark.parametrize("pepper", [None, pepper_of(b"k" * 32)])
def test_a_clear_pin_is_written_as_the_hash_it_verifies_against(pepper, monkeypatch):
    new_process(monkeypatch)
    check = pin_module.PinCheck(make_hash("LRCL", pepper=pepper), pepper=pepper)
    kept = redact_pin_as(TEXT, check)
    assert kept == TEXT.replace('pin = "LRCL"', f'pin_hash = "{check.hashed}"')
    assert redact_pin(TEXT, pepper) == kept            # the hash verified is the PIN's now
    assert redact_pin_as(TEXT.replace("LRCL", "LRCC"), check) is None      # another PIN
    assert redact_pin_as(TEXT, None) is None                               # a PIN added
    assert redact_pin_as('[table]\nid = "T1"\n', check) == '[table]\nid = "T1"\n'
    if pepper is not None:                       # a keyed hash without its pepper cannot tell
        assert redact_pin_as(TEXT, pin_module.PinCheck(check.hashed)) is None
