"""The report's head and tail (issue 12): the seal check said plainly both ways, time given apart
from time taken, the match's particulars, every arbiter action with its author, the signatures,
and the device key `gammonclock export` finds by itself.

Journals are played through a real `Session` and `JournalWriter` (as on the device); the arbiter
inputs of a script get the `source`/`by` a socket, the panels or the hall would give them.
"""

from __future__ import annotations

import json
import os
import pwd
import shutil
from dataclasses import replace
from html import escape
from pathlib import Path
from typing import Any

import pytest

from gammonclock.cli.main import main
from gammonclock.config.loading import parse_config
from gammonclock.core.engine import Engine
from gammonclock.core.match import ArbiterAction
from gammonclock.export import export_journal, load_match
from gammonclock.export import keys as export_keys
from gammonclock.export.json_out import document
from gammonclock.journal.files import journal_header
from gammonclock.journal.records import JOURNALS_DIR, Stamp
from gammonclock.journal.verify import verify
from gammonclock.journal.writer import JournalWriter
from gammonclock.runtime.arbiter_client import ask
from gammonclock.runtime.arbiter_socket import socket_path
from gammonclock.runtime.session import Session
from gammonclock.sim.script import parse_script
from gammonclock.sim.simulate import run_script

KEY = bytes(range(32))
WALL0 = 1_714_557_600_000_000_000          # 2024-05-01T10:00:00Z
OLD = Path(__file__).parents[1] / "data" / "before-issue8"

CONFIG_7 = """\
[match]
discipline = "backgammon"
length = 7

[players]
left = "Anna Lind"
right = "Boris <Petrov>"

[time]
per_point = "2m"
delay = "12s"

[event]
name = "Nordic Open"
round = "Quarter-final"
"""

# Who gave each arbiter line of a script, in order (None: an older journal's input).
Authors = list[tuple[str | None, str | None]]


def play(directory: Path, script_text: str, authors: Authors | None = None, *,
         config_text: str = CONFIG_7, header_extra: dict[str, Any] | None = None,
         name: str = "match.jsonl") -> Path:
    """Play `script_text` into a journal; the n-th arbiter line is given by `authors[n]`."""
    config = parse_config(config_text, "match.toml")
    script = parse_script(script_text, config.rules.hold_ns)
    given = iter(authors or [])
    inputs = []
    for event in script.inputs:
        if isinstance(event, ArbiterAction):
            source, by = next(given, (None, None))
            event = replace(event, source=source, by=by)
        inputs.append(event)
    session = Session(Engine.start(config.rules, at=0))
    session.stamps = lambda: Stamp(session.engine.now, "test-boot", WALL0 + session.engine.now)
    header = {**journal_header(config_text, "match.toml"), **(header_extra or {})}
    path = directory / name
    session.journal = JournalWriter.create(path, KEY, header, 0, Stamp(0, "test-boot", WALL0),
                                           fsync=False)
    run_script(session, inputs, script.end)
    session.close()
    return path


def html_of(path: Path, out_dir: Path, key: bytes | None = None, **kw: Any) -> str:
    out = out_dir / (path.stem + ".html")
    export_journal(path, "html", out, key=key, **kw)
    return out.read_text(encoding="utf-8")


def json_of(path: Path, key: bytes | None = None) -> dict[str, Any]:
    """The JSON export's document (without a key: the chain checked, not the seals)."""
    if key is None:
        return document(load_match(path), verify(path, None))
    return _json_with_key(path, key)


def _json_with_key(path: Path, key: bytes) -> dict[str, Any]:
    out = path.with_suffix(".export.json")
    export_journal(path, "json", out, key=key)
    return json.loads(out.read_text(encoding="utf-8"))


def row(label: str, value: str) -> str:
    return f"<tr><td><b>{label}</b></td><td>{value}</td></tr>"


SHORT = "1 tap left\n15 tap right\n20 end\n"


# --- integrity --------------------------------------------------------------------------------

def test_without_a_key_the_report_says_plainly_the_seal_was_not_checked(tmp_path):
    path = play(tmp_path, SHORT)
    page = html_of(path, tmp_path)
    records = len(path.read_bytes().splitlines())
    said = f"seal not checked: no device key given; chain intact: {records} records"
    assert row("Seal check", f'<span class="unchecked">{said}</span>') in page
    assert "TAMPERED" not in page
    assert json_of(path)["seal"]["check"] == said


def test_with_the_key_the_report_gives_the_verdict(tmp_path):
    path = play(tmp_path, SHORT)
    page = html_of(path, tmp_path, key=KEY)
    records = len(path.read_bytes().splitlines())
    assert row("Seal check", f"intact: {records} records") in page
    assert "seal not checked" not in page
    assert json_of(path, KEY)["seal"]["check"] == f"intact: {records} records"


# --- time given is not a penalty ------------------------------------------------------------

CATEGORY_SCRIPT = """\
1 tap left
2 arbiter add left 15s
3 arbiter adjust right +20s
4 arbiter adjust left -10s
5 arbiter deduct right 30s
6 arbiter point right
7 arbiter warn left slow play
8 arbiter deduct left 20m
9 arbiter pause
10 arbiter resume
11 arbiter forfeit left
12 end
"""

CATEGORIES = [   # command as journaled, category, penalty, refused
    ("add left 15s", "time given", False, False),
    ("adjust right +20s", "time given", False, False),
    ("adjust left -10s", "time taken", False, False),
    ("deduct right 30s", "time taken", True, False),
    ("point right", "point penalty", True, False),
    ("warn left slow play", "warning", True, False),
    ("deduct left 1200s", "time taken", False, True),
    ("pause", "clock paused", False, False),
    ("resume", "clock resumed", False, False),
    ("forfeit left", "game forfeited", True, False),
]


@pytest.fixture(scope="module")
def categories(tmp_path_factory) -> tuple[dict[str, Any], str]:
    directory = tmp_path_factory.mktemp("categories")
    path = play(directory, CATEGORY_SCRIPT)
    return json_of(path), html_of(path, directory)


@pytest.mark.parametrize("command, category, penalty, refused", CATEGORIES)
def test_each_arbiter_action_is_shown_as_what_it_is(categories, command, category, penalty,
                                                    refused):
    doc, page = categories
    act = next(a for a in doc["arbiter_actions"] if a["command"] == command)
    assert (act["category"], act["penalty"], act["refused"] is not None) \
        == (category, penalty, refused)
    kind = category + (" (refused)" if refused else "")
    assert f"<code>{escape(command)}</code></td><td>" in page
    cell = page.split(f"<code>{escape(command)}</code></td><td>", 1)[1].split("</td>", 1)[0]
    assert cell.endswith(f">{kind}</span>") or cell == kind


def test_the_totals_set_time_given_apart_from_time_taken(categories):
    _, page = categories
    assert "Penalties and arbiter actions" not in page and "<h2>Arbiter actions</h2>" in page
    left = page.split("<ul><li>", 1)[1].split("</li>", 1)[0]
    right = page.split("</li><li>", 1)[1].split("</li>", 1)[0]
    assert "Anna Lind" in left and "time given +15.0 s" in left
    assert "time taken −10.0 s" in left and "warning ×1" in left and "game forfeited ×1" in left
    assert "Boris &lt;Petrov&gt;" in right and "time given +20.0 s" in right
    assert "time taken −30.0 s" in right and "point penalty ×1" in right


# --- the particulars ---------------------------------------------------------------------------

@pytest.mark.parametrize("synchronized, words", [
    (True, "yes"),
    (False, "NO — times may be wrong (no time source at the venue)"),
    (None, "not known"),
])
def test_the_particulars_from_a_header_with_the_new_keys(tmp_path, synchronized, words):
    path = play(tmp_path, SHORT, header_extra={"table": "T07",
                                               "wall_clock_synchronized": synchronized})
    page = html_of(path, tmp_path)
    for label, value in [
        ("Event", "Nordic Open"), ("Round", "Quarter-final"), ("Table", "T07"),
        ("Discipline", "backgammon, Crawford rule"), ("Length", "7 points"),
        ("Time control", "14:00 each + 12 s delay (simple); a flag loses the match"),
        ("Started", "2024-05-01 10:00:00 UTC"),
        ("Journal ends", '2024-05-01 10:00:20 UTC <span class="muted">(not finished)</span>'),
        ("Wall clock synchronised", escape(words)),
    ]:
        assert row(label, value) in page, label
    assert 'Anna Lind <span class="muted side">(left)</span> v Boris &lt;Petrov&gt;' in page
    assert "Nordic Open, Quarter-final — table T07" in page
    p = json_of(path)["particulars"]
    assert (p["event"], p["round"], p["table"], p["wall_clock_synchronized"],
            p["wall_clock_synchronized_text"]) \
        == ("Nordic Open", "Quarter-final", "T07", synchronized, words)
    assert p["players"] == {"left": "Anna Lind", "right": "Boris <Petrov>"}
    assert p["started_utc"] == "2024-05-01T10:00:00.000Z"


def test_the_particulars_of_a_header_without_the_new_keys(tmp_path):
    path = play(tmp_path, SHORT, config_text=CONFIG_7.split("[event]")[0])
    page = html_of(path, tmp_path)
    assert row("Table", "not recorded") in page
    assert row("Wall clock synchronised", "not known") in page
    assert row("Event", '<span class="muted">none given</span>') in page
    p = json_of(path)["particulars"]
    assert (p["event"], p["round"], p["table"], p["wall_clock_synchronized"]) \
        == (None, None, None, None)


def test_an_old_journal_still_exports_with_unknown_authors_and_unknown_clock(tmp_path):
    page = html_of(OLD / "match11.jsonl", tmp_path)
    assert row("Wall clock synchronised", "not known") in page
    assert row("Table", "not recorded") in page
    assert row("Started", "2026-11-30 23:43:03 UTC") in page
    assert row("Ended", "2026-12-01 00:16:16 UTC") in page       # its MatchEnded's instant
    doc = json_of(OLD / "match11.jsonl")
    assert {a["author"] for a in doc["arbiter_actions"]} == {"unknown"}
    assert [(a["source"], a["by"]) for a in doc["arbiter_actions"]] == [(None, None)] * 6
    assert page.count("<td>unknown</td>") == 6
    assert doc["particulars"]["finished"] is True


# --- arbiter actions and who made them ---------------------------------------------------------

AUTHORED = """\
1 tap left
2 arbiter deduct right 30s
3 arbiter add left 15s
4 arbiter warn right slow play
5 arbiter adjust left -5s
6 end
"""


def test_actions_from_a_journal_with_source_and_by(tmp_path):
    path = play(tmp_path, AUTHORED, [("socket", "anna"), ("panel", None),
                                     ("hall", "director"), (None, None)])
    doc = json_of(path)
    assert [(a["command"], a["author"]) for a in doc["arbiter_actions"]] == [
        ("deduct right 30s", "socket: anna"), ("add left 15s", "panel"),
        ("warn right slow play", "hall: director"), ("adjust left -5s", "unknown")]
    assert [(a["source"], a["by"]) for a in doc["arbiter_actions"]][:2] \
        == [("socket", "anna"), ("panel", None)]
    page = html_of(path, tmp_path)
    table = page.split("<h2>Arbiter actions</h2>", 1)[1].split("</table>", 1)[0]
    cells = [line.rsplit("<td>", 1)[1].removesuffix("</td></tr>")
             for line in table.splitlines() if line.startswith("<tr><td>")]
    assert cells == ["socket: anna", "panel", "hall: director", "unknown"]
    assert "right&#x27;s reserve -30 s -&gt; 13:30.0" in table      # what it did, in words


def test_actions_an_undo_replays_keep_their_authors(tmp_path):
    # Left's switch at 10 is undone at 14: the deduct (12) and the warning (13) after it are
    # replayed by the undo's record, yet still by whom they were given.
    script = ("1 tap left\n5 tap right\n10 tap left\n12 arbiter deduct right 30s\n"
              "13 arbiter warn left slow\n14 arbiter undo\n20 end\n")
    path = play(tmp_path, script, [("socket", "anna"), ("hall", "director"),
                                   ("panel", None)])
    acts = json_of(path)["arbiter_actions"]
    assert [(a["command"], a["author"]) for a in acts] == [
        ("deduct right 30s", "socket: anna"), ("warn left slow", "hall: director"),
        ("undo", "panel")]
    assert acts[-1]["outcome"][0]["kind"] == "undone"


def test_actions_through_the_real_socket_name_the_login(running, tmp_path):
    device, state_dir = running
    for words in (["add", "left", "15s"], ["deduct", "right", "30s"]):
        assert ask(socket_path(state_dir), words)["ok"] is True
    me = pwd.getpwuid(os.getuid()).pw_name
    journal = device.session.journal.path
    acts = json_of(Path(journal))["arbiter_actions"]
    assert [(a["command"], a["category"], a["author"]) for a in acts] == [
        ("add left 15s", "time given", f"socket: {me}"),
        ("deduct right 30s", "time taken", f"socket: {me}")]
    page = html_of(Path(journal), tmp_path)
    assert f"<td>socket: {escape(me)}</td>" in page
    # The device's header names its table (the host name by default).
    assert row("Table", escape(device.config.table_id)) in page


# --- signatures ---------------------------------------------------------------------------------

def test_the_report_has_a_line_for_each_signature_with_the_names(tmp_path):
    page = html_of(play(tmp_path, SHORT), tmp_path)
    block = page.split('<div class="sign-block">', 1)[1].split("</div></div>", 1)[0]
    assert "<b>Arbiter</b>" in block
    assert "<b>Anna Lind</b>left player" in block
    assert "<b>Boris &lt;Petrov&gt;</b>right player" in block
    assert "@media print" in page and "size: A4" in page


# --- the key `gammonclock export` finds ---------------------------------------------------------

@pytest.fixture
def places(tmp_path, monkeypatch) -> dict[str, Path]:
    """Three state folders holding a key each, a device.toml naming one, and the journal."""
    folders = {name: tmp_path / name for name in ("given", "env", "device", "default")}
    for folder in folders.values():
        (folder / JOURNALS_DIR).mkdir(parents=True)
        (folder / "device.key").write_text(KEY.hex() + "\n")
    device_toml = tmp_path / "device.toml"
    device_toml.write_text(f'[journal]\nstate_dir = "{folders["device"]}"\n')
    monkeypatch.setattr(export_keys, "DEVICE_CONFIG", device_toml)
    monkeypatch.setattr(export_keys, "DEFAULT_STATE_DIR", str(folders["default"]))
    monkeypatch.delenv("GAMMONCLOCK_STATE_DIR", raising=False)
    journal = play(tmp_path, SHORT)
    return {**folders, "device.toml": device_toml, "journal": journal}


def test_the_key_is_looked_for_in_order(places, monkeypatch):
    def chosen(given: Path | None = None) -> str:
        return export_keys.choose_key(given).state_dir

    assert chosen(places["given"]) == str(places["given"])
    monkeypatch.setenv("GAMMONCLOCK_STATE_DIR", str(places["env"]))
    assert chosen(places["given"]) == str(places["given"])
    assert chosen() == str(places["env"])
    monkeypatch.delenv("GAMMONCLOCK_STATE_DIR")
    assert chosen() == str(places["device"])
    places["device.toml"].chmod(0)
    if not os.access(places["device.toml"], os.R_OK):      # (root reads it all the same)
        assert chosen() == str(places["default"])
    places["device.toml"].unlink()
    assert chosen() == str(places["default"])
    (places["default"] / "device.key").unlink()
    choice = export_keys.choose_key(None)
    assert choice.key is None
    assert choice.no_check.startswith("no device key given (")
    assert "no device key found" in choice.said and "not there" in choice.said


def test_export_says_which_key_it_used_and_the_report_shows_it(places, capsys):
    out = places["journal"].parent / "r.html"
    assert main(["export", str(places["journal"]), "--format", "html", "--out", str(out)]) == 0
    err = capsys.readouterr().err
    key = places["device"] / "device.key"
    assert f"the device key {key} (from the journal.state_dir of {places['device.toml']}; " \
           f"key id " in err
    records = len(places["journal"].read_bytes().splitlines())
    assert row("Seal check", f"intact: {records} records") in out.read_text(encoding="utf-8")


def test_export_without_any_key_says_so_and_the_report_too(places, capsys):
    places["device.toml"].unlink()
    (places["default"] / "device.key").unlink()
    out = places["journal"].parent / "r.html"
    assert main(["export", str(places["journal"]), "--format", "html", "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert "seals not checked: no device key found" in err
    page = out.read_text(encoding="utf-8")
    assert "seal not checked: no device key given (" in page


def test_export_latest_uses_the_device_configs_state_folder(places, capsys):
    shutil.copy(places["journal"], places["device"] / JOURNALS_DIR / "match-1.jsonl")
    out = places["journal"].parent / "latest.json"
    assert main(["export", "--latest", "--format", "json", "--out", str(out)]) == 0
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert doc["journal"]["file"] == "match-1.jsonl"
    assert doc["seal"]["verified"]["intact"] is True


def test_a_key_that_did_not_seal_the_journal_says_another_device_found_or_named(places,
                                                                                 capsys):
    other = bytes(range(1, 33)).hex() + "\n"          # another table's key
    (places["device"] / "device.key").write_text(other)
    out = places["journal"].parent / "r.html"
    for named in ([], ["--state-dir", str(places["device"])]):
        assert main(["export", str(places["journal"]), "--format", "html", "--out", str(out),
                     *named]) == 0
        said = capsys.readouterr().out
        page = out.read_text(encoding="utf-8")
        assert "TAMPERED" not in page and "TAMPERED" not in said
        assert f"{places['journal']}: sealed by another device (key id " in said
        assert "sealed by another device (key id " in page and "chain intact" in page


def test_the_json_export_hides_the_arbiters_pin(tmp_path):
    import json as json_module

    from gammonclock.export import export_journal
    from gammonclock.journal.files import journal_header
    from gammonclock.journal.key import load_or_create_key
    from gammonclock.journal.records import Stamp
    from gammonclock.journal.writer import JournalWriter

    device = '[hardware]\npin_factory = "mock"\n[arbiter]\npin = "LRCLR"\n'
    match = '[match]\nlength = 3\n'
    key = load_or_create_key(tmp_path)
    writer = JournalWriter.create(tmp_path / "j.jsonl", key,
                                  journal_header(match, "m.toml", device_text=device), 0,
                                  Stamp(0, "boot", 0))
    writer.close()
    export_journal(tmp_path / "j.jsonl", "json", tmp_path / "j.json", key=key)
    text = (tmp_path / "j.json").read_text()
    assert "LRCLR" not in text
    assert 'pin_hash = "scrypt$14$8$1$' in json_module.loads(text)["header"]["device"]
