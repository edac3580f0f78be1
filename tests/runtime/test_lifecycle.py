"""A table's matches one after another (SPEC §13.1-13.3): the device and match files, idle and
ready, the next match over the socket and from a USB stick, and what a boot plays."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest
from PIL import ImageChops

from device_helpers import MOCK_TEXT
from gammonclock.cli.main import main
from gammonclock.config.loading import (
    ConfigError,
    config_of_header,
    device_part,
    parse_config,
    parse_device_config,
    parse_match_config,
)
from gammonclock.core.arbiter import parse_command
from gammonclock.core.effects import MatchEnded, Refused
from gammonclock.core.engine import ButtonEdge
from gammonclock.core.match import ArbiterAction, Phase
from gammonclock.core.reasons import Reason
from gammonclock.core.rules import EndReason
from gammonclock.device.build import Device, build_device
from gammonclock.hardware.screens import (
    config_error_view,
    idle_view,
    message_view,
    panel_view,
    render,
)
from gammonclock.hardware.texts import Text
from gammonclock.journal.reader import read_header, read_journal
from gammonclock.journal.records import JOURNALS_DIR
from gammonclock.journal.replay import replay
from gammonclock.runtime.inbox import Task
from gammonclock.runtime.lifecycle import journal_path, load_next_match, match_words, run_on_loop
from gammonclock.runtime.network import local_addresses
from gammonclock.runtime.service import ClockService
from gammonclock.runtime.stick_handler import StickHandler
from gammonclock.sides import Button, Side
from lifecycle_helpers import (
    DEVICE_TEXT,
    MATCH_TEXT,
    OTHER_MATCH,
    now,
    on_loop,
    tap,
    uptime_clock,
)

S = 1_000_000_000

def device_file(tmp_path: Path, match_file: str | None = None):
    text = DEVICE_TEXT
    if match_file is not None:
        text = text.replace('event = "Moscow Open"\n',
                            f'event = "Moscow Open"\nmatch_file = "{match_file}"\n')
    return parse_device_config(text, str(tmp_path / "device.toml"))


@pytest.fixture
def build(tmp_path):
    """Builds devices on a device file (not running: the test is the loop's thread), on a
    monotonic clock three hours after boot, so that engine time and monotonic time differ."""
    made: list[Device] = []

    def make(match_file: str | None = None, state: Path | None = None) -> Device:
        device = build_device(device_file(tmp_path, match_file), state or tmp_path / "state",
                              clock_ns=uptime_clock)
        made.append(device)
        device.service.present_all([])
        return device

    yield make
    for device in made:
        device.close()


def journals(state: Path) -> list[Path]:
    return sorted((state / JOURNALS_DIR).glob("match-*.jsonl"))


def command(device: Device, *words: str):
    t = max(now(device), device.session.engine.now) if device.session else now(device)
    return device.service.apply(ArbiterAction(t, parse_command(list(words))))


def shows(device: Device, view) -> bool:
    image = render(view)
    return all(ImageChops.difference(panel.device.image.convert("1"), image).getbbox() is None
               for panel in device.panels)


# --- the two kinds of files (SPEC §13.1) ------------------------------------------------------

@pytest.mark.parametrize("section, text", [
    ("pins", "[pins]\nleft = 5\n"),
    ("hardware", '[hardware]\npin_factory = "mock"\n'),
    ("displays", "[displays.left]\naddress = 0x3D\n"),
    ("journal", 'state_dir = "/tmp"\n'.join(["[journal]\n", ""])),
    ("buttons", "[buttons]\nhold_s = 1\n"),
    ("table", '[table]\nid = "T1"\n'),
    ("arbiter", '[arbiter]\npin = "LRCL"\n'),
    ("hall", '[hall]\nbroker = "mqtt://h"\n'),
])
def test_a_device_section_in_a_match_file_is_an_error_naming_it(section, text):
    with pytest.raises(ConfigError) as caught:
        parse_match_config(MATCH_TEXT + text, "m.toml", device_file(Path("/tmp")))
    assert f"m.toml: {section}: a device section" in str(caught.value)


@pytest.mark.parametrize("section", ["match", "players", "time", "breaks", "event"])
def test_a_match_section_in_a_device_file_is_an_error_naming_it(section):
    with pytest.raises(ConfigError) as caught:
        parse_device_config(DEVICE_TEXT + f"[{section}]\n", "device.toml")
    assert f"device.toml: {section}: a match section" in str(caught.value)


def test_a_match_file_is_read_on_its_device_and_may_set_the_language():
    device = device_file(Path("/tmp"))
    config = parse_match_config(MATCH_TEXT + '[display]\nlanguage = "ru"\n', "m.toml", device)
    assert config.rules.hold_ns == 3 * S // 2             # the device's [buttons]
    assert config.device.language == "ru"                 # the match's [display] wins
    assert config.device.table_id == "T12"
    assert config.rules.names.left == "Анна" and config.rules.length == 5


def test_a_journal_header_reads_the_match_as_the_clock_did():
    device = device_file(Path("/tmp"))
    config = parse_match_config(MATCH_TEXT, "m.toml", device)
    again = config_of_header({"config": config.text, "device": config.device_text}, "j.jsonl")
    assert again.rules == config.rules
    # One file holding both still works, as a header and as a device part.
    both = parse_config(MOCK_TEXT, "mock.toml")
    assert config_of_header({"config": MOCK_TEXT}, "j.jsonl").rules == both.rules
    assert device_part(MOCK_TEXT, "mock.toml").device == both.device


def test_check_config_reads_a_match_file_on_the_device_file_before_it(tmp_path, capsys):
    (tmp_path / "device.toml").write_text(DEVICE_TEXT, encoding="utf-8")
    (tmp_path / "match.toml").write_text(MATCH_TEXT, encoding="utf-8")
    (tmp_path / "old.toml").write_text(MOCK_TEXT, encoding="utf-8")   # device and match
    files = [str(tmp_path / name) for name in ("device.toml", "match.toml")]
    assert main(["check-config", *files]) == 0
    out = capsys.readouterr().out
    assert "table        T12, Moscow Open" in out
    assert "players     left: Анна, right: Boris" in out
    # After a device file every file is a match file: an old combined one is refused, naming
    # its device sections, as the clock would refuse it.
    assert main(["check-config", files[0], str(tmp_path / "old.toml")]) == 2
    err = capsys.readouterr().err
    assert "old.toml: hardware: a device section" in err
    # On its own the combined file is still good.
    assert main(["check-config", str(tmp_path / "old.toml")]) == 0


# --- idle, ready and boot (SPEC §13.2) --------------------------------------------------------

def test_without_a_match_file_the_clock_is_idle_and_shows_the_table(build, tmp_path):
    device = build()
    assert device.session is None
    state = device.service.status()
    assert state["phase"] == "idle" and state["table"] == "T12"
    assert state["event"] == "Moscow Open"
    assert shows(device, idle_view("T12", "Moscow Open", local_addresses()))
    assert journals(tmp_path / "state") == []
    # Presses and rolls do nothing; a command is refused and says how to load a match.
    tap(device, Button.LEFT)
    effects = command(device, "pause")
    assert [(type(e), e.reason) for e in effects] == [(Refused, Reason.NO_MATCH)]
    assert "new-match" in effects[0].why
    assert journals(tmp_path / "state") == []


def test_with_a_match_file_the_clock_is_ready(build, tmp_path):
    (tmp_path / "match.toml").write_text(MATCH_TEXT, encoding="utf-8")
    device = build(str(tmp_path / "match.toml"))
    assert device.session is not None
    assert device.service.status()["phase"] == "between_games"
    [journal] = journals(tmp_path / "state")
    assert journal.name.endswith("-T12-Анна-Boris.jsonl")
    header = read_header(journal).data
    assert header["table"] == "T12" and header["device"].startswith(DEVICE_TEXT[:40])
    assert header["config"] == MATCH_TEXT


def test_a_bad_match_file_at_boot_leaves_the_clock_idle_with_its_errors_shown(build, tmp_path):
    (tmp_path / "match.toml").write_text(MATCH_TEXT + "[pins]\nleft = 5\n", encoding="utf-8")
    device = build(str(tmp_path / "match.toml"))
    assert device.session is None and device.problem is not None
    assert "pins: a device section" in str(device.problem)
    assert shows(device, config_error_view(str(device.problem), "MATCH REFUSED"))
    assert journals(tmp_path / "state") == []


def test_boot_resumes_the_unfinished_match_whatever_the_match_file_says(build, tmp_path):
    match_file = tmp_path / "match.toml"
    match_file.write_text(MATCH_TEXT, encoding="utf-8")
    first = build(str(match_file))
    tap(first, Button.LEFT)                                 # game 1 starts
    journal = first.session.journal.path
    first.close()
    match_file.write_text(OTHER_MATCH, encoding="utf-8")    # the arbiter edits the file
    second = build(str(match_file))
    assert second.session.journal.path == journal
    assert second.session.engine.match.phase is Phase.PAUSED
    assert second.session.engine.rules.names.right == "Boris"
    second.close()
    # Once that match is over, the next boot loads the file.
    third = build(str(match_file))
    command(third, "abandon")
    third.close()
    fourth = build(str(match_file))
    assert fourth.session.engine.rules.names.right == "Carla"
    assert fourth.session.engine.match.phase is Phase.BETWEEN_GAMES
    assert len(journals(tmp_path / "state")) == 2


# --- the next match ---------------------------------------------------------------------------

def test_a_next_match_loads_in_idle_and_then_boots_as_the_match(build, tmp_path):
    device = build()
    outcome = load_next_match(device.service, device.table, MATCH_TEXT, "match.toml")
    assert outcome.ok and outcome.said[0] == "next match loaded: Анна-Boris, 5 points"
    assert device.service.status()["phase"] == "between_games"
    assert shows(device, message_view("NEXT MATCH", ["Анна-Boris, 5 points", "10:00 each"]))
    device.close()
    again = build()                                        # no match file: the journal counts
    assert again.session.engine.rules.names.left == "Анна"


def test_a_match_in_progress_is_not_replaced_unless_forced(build, tmp_path):
    device = build()
    load_next_match(device.service, device.table, MATCH_TEXT, "match.toml")
    tap(device, Button.LEFT)                               # game 1 is on
    first = Path(device.session.journal.path)
    before = first.read_bytes()
    refused = load_next_match(device.service, device.table, OTHER_MATCH, "next.toml")
    assert not refused.ok and refused.reason is Reason.MATCH_IN_PROGRESS
    assert "game 1, score 0-0" in refused.error and "--force" in refused.error
    assert first.read_bytes() == before and device.session.journal.path == first
    started = device.session.engine.match.turn.started_at
    forced = load_next_match(device.service, device.table, OTHER_MATCH, "next.toml", force=True)
    assert forced.ok
    assert forced.said[0] == "arbiter: abandon"
    assert "match abandoned by the arbiter at 0-0" in forced.said
    assert not any("flag" in line for line in forced.said)
    assert forced.said[-2] == "next match loaded: Анна-Carla, 3 points"
    assert device.session.engine.rules.names.right == "Carla"
    # The abandoned match is on its own record, over, with no winner.
    old = replay(read_journal(first)).engine.match
    assert old.phase is Phase.MATCH_OVER and old.end_reason is EndReason.ABANDONED
    assert old.winner is None
    # The running side was charged the time it really ran, not the Pi's uptime.
    right = old.reserve_at(Side.RIGHT)
    assert 0 <= 10 * 60 * S - right < 5 * S, (started, right)
    assert len(journals(tmp_path / "state")) == 2


def test_a_ready_match_is_replaced_and_ends_abandoned_the_same_one_is_kept(build, tmp_path):
    device = build()
    load_next_match(device.service, device.table, MATCH_TEXT, "match.toml")
    ready = Path(device.session.journal.path)
    same = load_next_match(device.service, device.table, MATCH_TEXT, "match.toml")
    assert same.ok and same.said == ["next match already loaded: Анна-Boris, 5 points"]
    assert device.session.journal.path == ready
    other = load_next_match(device.service, device.table, OTHER_MATCH, "other.toml")
    assert other.ok and device.session.journal.path != ready
    assert replay(read_journal(ready)).engine.match.end_reason is EndReason.ABANDONED


def test_after_a_match_is_over_the_next_loads_without_force(build, tmp_path):
    device = build()
    load_next_match(device.service, device.table, MATCH_TEXT, "match.toml")
    tap(device, Button.LEFT)
    command(device, "disqualify", "left")
    finished = Path(device.session.journal.path)
    before = finished.read_bytes()
    outcome = load_next_match(device.service, device.table, OTHER_MATCH, "next.toml")
    assert outcome.ok and not any("abandon" in line for line in outcome.said)
    assert finished.read_bytes() == before                 # its record is untouched


def test_a_bad_match_file_is_refused_with_every_error_and_changes_nothing(build, tmp_path):
    device = build()
    load_next_match(device.service, device.table, MATCH_TEXT, "match.toml")
    journal, state = device.session.journal.path, device.service.status()
    bad = "[match]\nlength = 500\n[players]\nleft = 7\n[pins]\nleft = 5\n"
    outcome = load_next_match(device.service, device.table, bad, "bad.toml")
    assert not outcome.ok and outcome.reason is Reason.MATCH_FILE_BAD
    for fragment in ("bad.toml: match.length", "bad.toml: players.left", "bad.toml: pins"):
        assert fragment in outcome.error
    assert device.session.journal.path == journal and device.service.status() == state
    assert shows(device, config_error_view(outcome.error, "MATCH REFUSED"))
    # In a game the panels keep the clocks in view: the refusal goes to the arbiter only.
    device.service.showing.message = None
    tap(device, Button.LEFT)
    device.service.present_all([])
    load_next_match(device.service, device.table, bad, "bad.toml")
    assert not shows(device, config_error_view(outcome.error, "MATCH REFUSED"))


@pytest.mark.parametrize("taken", [True, False], ids=["pending", "still-in-the-inbox"])
def test_inputs_made_for_the_match_before_are_dropped_at_the_swap(build, taken):
    device = build()
    load_next_match(device.service, device.table, MATCH_TEXT, "match.toml")
    service: ClockService = device.service
    mono = service.clock_ns()
    service.submit(ButtonEdge(mono - S // 50, Button.LEFT, True))    # a tap before the swap
    service.submit(ButtonEdge(mono - S // 100, Button.LEFT, False))
    if taken:
        service._take_arrivals()
    dropped = load_next_match(service, device.table, OTHER_MATCH, "next.toml")
    assert dropped.ok
    service.grace_ns = service.timer_grace_ns = 0
    service.step()
    assert service.session.engine.match.phase is Phase.BETWEEN_GAMES   # nothing started
    assert service.waiting() == 0


@pytest.mark.parametrize("left, right, table, name", [
    ("Анна", "Boris", "T12", "-T12-Анна-Boris.jsonl"),
    ("Mary Ann", "O'Neil", "hall-B_3", "-hall-B_3-Mary_Ann-O_Neil.jsonl"),
    ("../..", "a/b", "T1", "-T1-_-a_b.jsonl"),
    ("Абвгдеёжзийклмнопрст", "B", "T1", "-T1-Абвгдеёжзийклмно-B.jsonl"),
])
def test_a_journal_is_named_from_its_start_table_and_players(tmp_path, left, right, table, name):
    config = parse_match_config(f'[match]\nlength = 3\n[players]\nleft = "{left}"\n'
                                f'right = "{right}"\n', "m.toml")
    path = journal_path(tmp_path, 1_764_547_200 * S, table, config)
    assert path.name == "match-20251201-000000" + name
    assert path.parent == tmp_path / JOURNALS_DIR
    path.parent.mkdir()
    path.write_text("")
    assert journal_path(tmp_path, 1_764_547_200 * S, table, config).name == \
        "match-20251201-000000" + name.replace(".jsonl", "-2.jsonl")


def test_match_words():
    config = parse_match_config("[match]\nlength = 1\n", "m.toml")
    assert match_words(config) == "Left-Right, 1 point"


# --- the arbiter's socket ---------------------------------------------------------------------

@pytest.fixture
def running_device(tmp_path):
    device = build_device(device_file(tmp_path), tmp_path / "state")
    worker = threading.Thread(target=device.service.run, daemon=True)
    worker.start()
    yield device, tmp_path / "state"
    device.service.stop()
    worker.join(timeout=5)
    device.close()


def arbiter(state: Path, *words: str) -> int:
    return main(["arbiter", "--state-dir", str(state), *words])


def test_new_match_over_the_socket(running_device, tmp_path, capsys):
    device, state = running_device
    (tmp_path / "match.toml").write_text(MATCH_TEXT, encoding="utf-8")
    (tmp_path / "other.toml").write_text(OTHER_MATCH, encoding="utf-8")
    assert arbiter(state, "new-match", str(tmp_path / "match.toml")) == 0
    assert "next match loaded: Анна-Boris, 5 points" in capsys.readouterr().out
    device.service.submit(ButtonEdge(device.service.clock_ns(), Button.LEFT, True))
    device.service.submit(ButtonEdge(device.service.clock_ns() + S // 10, Button.LEFT, False))
    deadline = time.monotonic() + 5
    while device.service.status().get("running") is None and time.monotonic() < deadline:
        time.sleep(0.01)
    assert arbiter(state, "new-match", str(tmp_path / "other.toml")) == 1
    assert "a match is in progress" in capsys.readouterr().err
    # --force on either side of the file.
    assert arbiter(state, "new-match", "--force", str(tmp_path / "other.toml")) == 0
    assert "match abandoned by the arbiter" in capsys.readouterr().out
    assert arbiter(state, "new-match", str(tmp_path / "match.toml"), "--force") == 0
    assert arbiter(state, "new-match", str(tmp_path / "missing.toml")) == 2
    assert "missing.toml: cannot read the file" in capsys.readouterr().err


def test_a_raw_new_match_request_needs_the_text_and_only_it_carries_text(running_device):
    from gammonclock.runtime.arbiter_client import ask
    from gammonclock.runtime.arbiter_socket import socket_path

    device, state = running_device
    answer = ask(socket_path(state), ["new-match"])
    assert not answer["ok"] and "needs the match file's text" in answer["error"]
    answer = ask(socket_path(state), ["pause"], text="[match]\nlength = 3\n")
    assert not answer["ok"] and "only new-match carries" in answer["error"]
    assert device.session is None


# --- a USB stick (SPEC §13.3) -----------------------------------------------------------------

def test_a_stick_gets_the_exports_and_gives_the_next_match(build, tmp_path):
    device = build()
    load_next_match(device.service, device.table, MATCH_TEXT, "match.toml")
    command(device, "abandon")
    finished = Path(device.session.journal.path)
    stick = tmp_path / "stick"
    (stick / "gammonclock").mkdir(parents=True)
    (stick / "gammonclock" / "T12.toml").write_text(OTHER_MATCH, encoding="utf-8")
    handler = StickHandler(device.service, device.table)
    answer = on_loop(device, lambda: handler(stick))
    assert answer["ok"] and answer["said"] == ["1 match exported",
                                               "next match loaded: Анна-Carla, 3 points"]
    exported = stick / "gammonclock" / "exports" / "T12"
    assert (exported / finished.name).read_bytes() == finished.read_bytes()
    assert (exported / finished.with_suffix(".csv").name).exists()
    # The panels say it in their language (the texts' table): here English.
    assert shows(device, message_view("USB STICK", ["matches exported: 1",
                                                    "next match loaded: Анна-Carla"]))
    # The same stick again: nothing copied twice, the match waiting to start is kept.
    again = on_loop(device, lambda: handler(stick))
    assert again["said"] == ["1 match exported, 1 in progress",
                             "next match already loaded: Анна-Carla, 3 points"]
    # Once more: nothing is new, and the panels say so (issue 19: not "1 match exported").
    third = on_loop(device, lambda: handler(stick))
    assert third["said"][0] == "nothing new to copy; 1 already on the stick"
    assert shows(device, message_view("USB STICK", ["nothing new to copy; 1 already on the "
                                                    "stick",
                                                    "next match already loaded: Анна-Carla"]))


def test_a_stick_in_a_game_exports_and_leaves_the_match_alone(build, tmp_path):
    device = build()
    load_next_match(device.service, device.table, MATCH_TEXT, "match.toml")
    tap(device, Button.LEFT)
    stick = tmp_path / "stick"
    (stick / "gammonclock").mkdir(parents=True)
    (stick / "gammonclock" / "match.toml").write_text(OTHER_MATCH, encoding="utf-8")
    answer = on_loop(device, lambda: StickHandler(device.service, device.table)(stick))
    assert not answer["ok"]
    assert answer["said"][0] == "0 matches exported, 1 in progress"
    assert answer["said"][1].startswith("next match NOT loaded: a match is in progress")
    assert device.session.engine.rules.names.right == "Boris"
    assert device.service.session.engine.match.phase is Phase.RUNNING


# --- the engine's abandon ---------------------------------------------------------------------

def test_abandon_ends_the_match_with_no_winner_and_undo_cannot_reach_past_it(build):
    device = build()
    load_next_match(device.service, device.table, MATCH_TEXT, "match.toml")
    tap(device, Button.LEFT)
    effects = command(device, "abandon")
    ended = [e for e in effects if isinstance(e, MatchEnded)]
    assert len(ended) == 1 and ended[0].reason is EndReason.ABANDONED and ended[0].winner is None
    match = device.session.engine.match
    assert match.phase is Phase.MATCH_OVER and match.turn is None
    undo = command(device, "undo")
    assert any(isinstance(e, Refused) and e.reason is Reason.UNDO_MATCH_LOST for e in undo)
    again = command(device, "abandon")
    assert any(isinstance(e, Refused) and e.reason is Reason.MATCH_OVER for e in again)


# --- the address on the idle panels -----------------------------------------------------------

FIB_TRIE = """\
Main:
  +-- 0.0.0.0/0 3 0 5
     |-- 0.0.0.0
        /0 universe UNICAST
     +-- 127.0.0.0/8 2 0 2
        |-- 127.0.0.1
           /32 host LOCAL
     |-- 169.254.3.4
        /32 host LOCAL
     +-- 192.168.1.0/24 2 0 2
        |-- 192.168.1.0
           /32 link BROADCAST
        |-- 192.168.1.23
           /32 host LOCAL
Local:
  +-- 10.0.0.0/8
        |-- 10.0.0.7
           /32 host LOCAL
        |-- 192.168.1.23
           /32 host LOCAL
"""


def test_the_idle_panels_find_the_address_in_the_routing_table(tmp_path):
    (tmp_path / "fib_trie").write_text(FIB_TRIE)
    assert local_addresses(tmp_path / "fib_trie") == ["10.0.0.7", "192.168.1.23"]
    assert local_addresses(tmp_path / "missing") == []


def test_a_task_runs_on_the_loop_in_order_with_the_inputs(build):
    device = build()
    load_next_match(device.service, device.table, MATCH_TEXT, "match.toml")
    tap(device, Button.LEFT)                                   # right's clock runs
    service = device.service
    seen: list[str] = []
    mono = service.clock_ns()
    # Submitted first, stamped later: it runs after the pause stamped before it.
    service.submit(Task(mono + 2, lambda: seen.append(service.session.engine.match.phase.value)))
    service.submit(ArbiterAction(mono + 1, parse_command(["pause"])))
    service.grace_ns = service.timer_grace_ns = 0
    service.step()
    assert seen == ["paused"] and service.waiting() == 0


def test_a_task_that_fails_costs_its_reply_not_the_loop(build):
    from gammonclock.runtime.inbox import Reply

    device = build()
    service, reply = device.service, Reply()
    service.submit(Task(service.clock_ns(), lambda: 1 // 0), reply)
    service.grace_ns = service.timer_grace_ns = 0
    service.step()                                             # does not raise
    assert isinstance(reply.value, ZeroDivisionError) and reply.done.is_set()


def test_run_on_loop_waits_for_the_work_or_withdraws_it(build):
    device = build()
    service, ran = device.service, []
    # Nobody runs the loop: the work is withdrawn, and a loop that steps later never runs it.
    assert run_on_loop(service, lambda: ran.append("late"), wait_s=0.05) == (False, None)
    service.grace_ns = service.timer_grace_ns = 0
    service.step()
    assert ran == [] and service.waiting() == 0
    # A loop that runs: its value comes back.
    assert on_loop(device, lambda: run_on_loop(service, lambda: "done")) == [True, "done"]


def test_a_next_match_waits_while_the_current_journal_is_not_written(build, monkeypatch):
    from gammonclock.journal.records import JournalError
    from gammonclock.journal.writer import JournalWriter

    device = build()
    load_next_match(device.service, device.table, MATCH_TEXT, "match.toml")
    first = Path(device.session.journal.path)

    def full(*_args, **_kwargs):
        raise JournalError("no space left on the card")
    monkeypatch.setattr(JournalWriter, "append", full)
    tap(device, Button.LEFT)
    assert device.session.backlog
    outcome = load_next_match(device.service, device.table, OTHER_MATCH, "next.toml",
                              force=True)
    assert not outcome.ok and outcome.reason is Reason.JOURNAL_NOT_WRITTEN
    assert device.session.journal.path == first and device.session.backlog
    monkeypatch.undo()
    assert load_next_match(device.service, device.table, OTHER_MATCH, "next.toml",
                           force=True).ok                      # the backlog went first
    old = replay(read_journal(first)).engine.match
    assert old.end_reason is EndReason.ABANDONED


def test_the_next_match_screen_gives_way_to_the_clocks_when_play_starts(build):
    device = build()
    load_next_match(device.service, device.table, MATCH_TEXT, "match.toml")
    shown = message_view("NEXT MATCH", ["Анна-Boris, 5 points", "10:00 each"])
    assert shows(device, shown)
    tap(device, Button.LEFT)                                   # 10 s have not passed
    assert not shows(device, shown)


def test_a_corrected_file_of_the_waiting_match_replaces_it(build):
    device = build()
    load_next_match(device.service, device.table, MATCH_TEXT, "match.toml")
    first = device.session.journal.path
    corrected = MATCH_TEXT + '[event]\nround = "Final"\n'
    outcome = load_next_match(device.service, device.table, corrected, "match.toml")
    assert outcome.ok and "next match loaded: Анна-Boris, 5 points" in outcome.said
    assert device.session.journal.path != first


# --- gammonclock run --device -----------------------------------------------------------------

def test_run_on_a_device_file_starts_idle_and_takes_a_match(tmp_path, processes):
    import signal
    import subprocess

    from device_helpers import gammonclock, wait_until_running
    from gammonclock.runtime.arbiter_client import ask
    from gammonclock.runtime.arbiter_socket import socket_path

    state = tmp_path / "state"
    (tmp_path / "device.toml").write_text(DEVICE_TEXT, encoding="utf-8")
    proc = subprocess.Popen(gammonclock("run", "--device", str(tmp_path / "device.toml"),
                                        "--state-dir", str(state)),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    processes.append(proc)
    wait_until_running(proc, lambda: socket_path(state).exists())
    assert ask(socket_path(state), ["status"])["state"]["phase"] == "idle"
    answer = ask(socket_path(state), ["new-match"], text=MATCH_TEXT, file="m.toml")
    assert answer["ok"] and answer["state"]["phase"] == "between_games"
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=15)
    assert proc.returncode == 0, err
    assert "no match file: idle" in err and "new match in" not in err
    assert len(journals(state)) == 1


@pytest.mark.parametrize("args, status, fragment", [
    ([], 2, "give --device FILE"),
    (["--device", "{bad}"], 2, "bad.toml: match: a match section"),
])
def test_run_refuses_a_bad_start(tmp_path, capsys, args, status, fragment):
    bad = tmp_path / "bad.toml"
    bad.write_text(DEVICE_TEXT + MATCH_TEXT, encoding="utf-8")
    args = [a.format(bad=bad) for a in args]
    assert main(["run", *args, "--state-dir", str(tmp_path / "state")]) == status
    assert fragment in capsys.readouterr().err


def test_a_one_file_config_keeps_its_own_device_whatever_its_text_says(tmp_path):
    # The interactive simulator runs a config whose text says lgpio on mock pins.
    from dataclasses import replace

    from device_helpers import REFERENCE_CONFIG
    config = parse_config(REFERENCE_CONFIG.read_text(encoding="utf-8"), "backgammon.toml")
    assert config.device.pin_factory == "lgpio"
    mock = replace(config, device=replace(config.device, pin_factory="mock"))
    device = build_device(mock, tmp_path / "state")
    try:
        assert device.config.pin_factory == "mock"
        outcome = load_next_match(device.service, device.table, MATCH_TEXT, "m.toml")
        assert outcome.ok and device.session.engine.rules.names.left == "Анна"
    finally:
        device.close()


def test_the_journal_header_says_whether_the_wall_clock_was_synchronised(build, tmp_path,
                                                                         monkeypatch):
    from gammonclock.runtime import lifecycle
    from gammonclock.runtime.wallclock import wall_clock_synchronized

    timesync = tmp_path / "timesync"
    assert wall_clock_synchronized(timesync) is None          # no time service says
    timesync.mkdir()
    assert wall_clock_synchronized(timesync) is False         # timesyncd, not synced yet
    (timesync / "synchronized").touch()
    assert wall_clock_synchronized(timesync) is True
    monkeypatch.setattr(lifecycle, "wall_clock_synchronized", lambda: False)
    device = build()
    load_next_match(device.service, device.table, MATCH_TEXT, "match.toml")
    assert read_header(device.session.journal.path).data["wall_clock_synchronized"] is False


def test_the_panels_speak_the_devices_language_idle_and_the_matchs_in_play(tmp_path):
    from gammonclock.hardware.screens import next_match_view

    text = DEVICE_TEXT + '[display]\nlanguage = "ru"\n'
    device = build_device(parse_device_config(text, "device.toml"), tmp_path / "state",
                          clock_ns=uptime_clock)
    try:
        device.service.present_all([])
        assert shows(device, idle_view("T12", "Moscow Open", local_addresses(), "ru"))
        load_next_match(device.service, device.table, MATCH_TEXT, "match.toml")
        assert device.session.language == "ru"
        assert shows(device, next_match_view(("Анна", "Boris"), 5, "10:00", "ru"))
        english = MATCH_TEXT.replace("length = 5", "length = 3") + '[display]\nlanguage = "en"\n'
        load_next_match(device.service, device.table, english, "en.toml")
        assert device.session.language == "en"
        assert shows(device, next_match_view(("Анна", "Boris"), 3, "6:00", "en"))
    finally:
        device.close()


def test_a_sticks_message_on_russian_panels(tmp_path):
    text = DEVICE_TEXT + '[display]\nlanguage = "ru"\n'
    device = build_device(parse_device_config(text, "device.toml"), tmp_path / "state",
                          clock_ns=uptime_clock)
    try:
        stick = tmp_path / "stick"
        (stick / "gammonclock").mkdir(parents=True)
        (stick / "gammonclock" / "match.toml").write_text(MATCH_TEXT, encoding="utf-8")
        answer = on_loop(device, lambda: StickHandler(device.service, device.table)(stick))
        assert answer["ok"]
        assert shows(device, message_view("USB-НАКОПИТЕЛЬ", ["записано матчей: 0",
                                                             "следующий матч: Анна-Boris"]))
    finally:
        device.close()


def test_a_forced_load_journals_its_abandon_with_who_asked(running_device, tmp_path):
    import pwd

    from gammonclock.runtime.arbiter_client import ask
    from gammonclock.runtime.arbiter_socket import socket_path

    device, state = running_device
    assert ask(socket_path(state), ["new-match"], text=MATCH_TEXT, file="m.toml")["ok"]
    device.service.submit(ButtonEdge(device.service.clock_ns(), Button.LEFT, True))
    device.service.submit(ButtonEdge(device.service.clock_ns() + S // 10, Button.LEFT, False))
    deadline = time.monotonic() + 5
    while device.service.status().get("running") is None and time.monotonic() < deadline:
        time.sleep(0.01)
    first = Path(device.session.journal.path)
    answer = ask(socket_path(state), ["new-match", "--force"], text=OTHER_MATCH, file="o.toml")
    assert answer["ok"], answer
    inputs = [r.data["input"] for r in read_journal(first).records if r.kind == "input"]
    assert inputs[-1] == {"type": "arbiter", "command": "abandon", "source": "socket",
                          "by": pwd.getpwuid(os.getuid()).pw_name}


def test_the_menus_next_match_is_the_file_the_clock_booted_with(tmp_path):
    from gammonclock.runtime.lifecycle import PanelRequests

    match_file = tmp_path / "m.toml"
    match_file.write_text(MATCH_TEXT, encoding="utf-8")
    device = build_device(device_file(tmp_path), tmp_path / "state", clock_ns=uptime_clock,
                          match_path=str(match_file))
    try:
        [requests] = [p for p in device.service.presenters if isinstance(p, PanelRequests)]
        assert requests.match_file == str(match_file)     # `run --device D --config M`
    finally:
        device.close()


def test_a_notice_in_a_game_stands_its_time_though_the_last_input_lies_back(tmp_path):
    # The engine's instant is the last input's; a notice must be stamped from now, or one given
    # seconds after a press (a stick's report mid-game) is gone at the next redraw.
    mono = [10 * 3600 * S]
    device = build_device(device_file(tmp_path), tmp_path / "state", clock_ns=lambda: mono[0])
    try:
        load_next_match(device.service, device.table, MATCH_TEXT, "match.toml")
        tap(device, Button.LEFT)                       # right's clock runs
        mono[0] += 4 * S                               # no input since: the engine lags 4 s
        device.service.notify(Text("stick.exported", n=2))
        mono[0] += 2 * S                               # a redraw 2 s into the notice's 3 s
        device.service.step()
        image = device.panels.left.device.image
        with_notice = render(panel_view(device.session.engine.advance(now(device))[0].match,
                                        Side.LEFT, now(device), "matches exported: 2"))
        assert ImageChops.difference(image.convert("1"), with_notice).getbbox() is None
    finally:
        device.close()


def test_the_state_names_where_the_match_stands_for_people(build):
    """SPEC §13.2: the device's state JSON keeps §9's `phase` and adds `lifecycle`; a loaded match
    before game 1 is `ready` (its phase stays between_games), then `in_progress`."""
    device = build()
    assert device.service.status()["lifecycle"] == "idle"
    load_next_match(device.service, device.table, MATCH_TEXT, "match.toml")
    state = device.service.status()
    assert (state["phase"], state["lifecycle"]) == ("between_games", "ready")
    tap(device, Button.LEFT)
    assert device.service.status()["lifecycle"] == "in_progress"

# --- "in progress": a game started or counted as played (SPEC §13.2, fine point 11) -------------

# What the arbiter did before game 1 was ever started; whether the match is then in progress.
BEFORE_GAME_1 = [
    (("forfeit", "left", "1"), True, "game 2 next, score 0-1"),   # counts as played
    (("forfeit", "right"), True, "game 2 next, score 1-0"),       # the cube's value: 1
    (("score", "1", "2"), False, None),    # a correction plays no game: still ready
    (("point", "left"), False, None),      # a penalty point plays no game either
    (("forfeit", "left", "5"), False, None),   # a forfeit that ends the match: over
]


def _route_loop(device: Device, tmp_path: Path):
    """The loader every route shares (the hall's `match` and `cmd new-match`, the socket)."""
    outcome = load_next_match(device.service, device.table, OTHER_MATCH, "next.toml")
    return outcome.ok, outcome.error or ""


def _route_stick(device: Device, tmp_path: Path):
    stick = tmp_path / "stick"
    (stick / "gammonclock").mkdir(parents=True)
    (stick / "gammonclock" / "T12.toml").write_text(OTHER_MATCH, encoding="utf-8")
    answer = on_loop(device, lambda: StickHandler(device.service, device.table)(stick))
    return answer["ok"], "\n".join(answer["said"])


def _route_hall(device: Device, tmp_path: Path):
    """The hall's retained match waits while a match is in progress, else it loads."""
    from gammonclock.link.outbox import HallMemory
    from gammonclock.link.requests import HallRequests

    hall = HallRequests(device.service, device.table, HallMemory(tmp_path / "hall"),
                        lambda *_: None, match_topic="gammonclock/T12/match")
    hall.pending_match = OTHER_MATCH.encode("utf-8")
    if not hall.pending_can_load():
        return False, "waits: a match is in progress"
    return _route_loop(device, tmp_path)


ROUTES = {"loop": _route_loop, "stick": _route_stick, "hall": _route_hall}


@pytest.mark.parametrize("route", sorted(ROUTES))
@pytest.mark.parametrize(("words", "in_game", "score"), BEFORE_GAME_1)
def test_a_game_counted_as_played_makes_the_match_in_progress_on_every_route(
        build, tmp_path, route, words, in_game, score):
    from gammonclock.core.arbiter_mode import abandons_match

    device = build()
    load_next_match(device.service, device.table, MATCH_TEXT, "match.toml")
    command(device, *words)
    assert device.session.engine.match.match_started_at is None      # no game was started
    first = Path(device.session.journal.path)
    # The arbiter's menu says whether its next match abandons this one.
    assert abandons_match(device.session.engine.match) is in_game
    ok, said = ROUTES[route](device, tmp_path)
    assert ok is not in_game, said
    if in_game:
        assert "in progress" in said
        if route != "hall":
            assert score in said and "--force" in said
        assert device.session.journal.path == first             # nothing changed
        assert device.session.engine.rules.names.right == "Boris"
    else:
        assert device.session.engine.rules.names.right == "Carla"


def test_a_forfeited_game_1_is_in_progress_after_a_reboot_too(build, tmp_path):
    device = build_device(device_file(tmp_path), tmp_path / "state", clock_ns=uptime_clock)
    try:
        load_next_match(device.service, device.table, MATCH_TEXT, "match.toml")
        command(device, "forfeit", "left", "1")
    finally:
        device.close()
    again = build()                                      # boots on the same state folder
    assert tuple(again.session.engine.match.score) == (0, 1)
    refused = load_next_match(again.service, again.table, OTHER_MATCH, "next.toml")
    assert not refused.ok and refused.reason is Reason.MATCH_IN_PROGRESS
    assert "score 0-1" in refused.error


@pytest.mark.parametrize(("words", "in_game", "score"), BEFORE_GAME_1)
def test_new_match_over_the_socket_after_an_arbiter_action_before_game_1(
        running_device, tmp_path, capsys, words, in_game, score):
    device, state = running_device
    (tmp_path / "match.toml").write_text(MATCH_TEXT, encoding="utf-8")
    (tmp_path / "other.toml").write_text(OTHER_MATCH, encoding="utf-8")
    assert arbiter(state, "new-match", str(tmp_path / "match.toml")) == 0
    assert arbiter(state, *words) == 0
    capsys.readouterr()
    status = arbiter(state, "new-match", str(tmp_path / "other.toml"))
    out, err = capsys.readouterr()
    if in_game:
        assert status == 1, out
        assert "a match is in progress" in err and score in err and "--force" in err
        assert device.session.engine.rules.names.right == "Boris"
        assert arbiter(state, "new-match", "--force", str(tmp_path / "other.toml")) == 0
        assert f"match abandoned by the arbiter at {score[-3:]}" in capsys.readouterr().out
    else:
        assert status == 0, err
        assert device.session.engine.rules.names.right == "Carla"


def test_a_forfeited_game_1_reads_as_in_progress(build):
    """The state's lifecycle follows the same rule as the loads (SPEC §13.2, fine point 11)."""
    device = build()
    load_next_match(device.service, device.table, MATCH_TEXT, "match.toml")
    command(device, "forfeit", "left", "1")
    assert device.service.status()["lifecycle"] == "in_progress"
