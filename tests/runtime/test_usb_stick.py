"""The USB stick's file work (SPEC §13.3): a tmp folder stands in for the mounted stick.

The clock's journals are made by playing scripted matches through a journaled session
(`journal_helpers.journaled_run`); each test copies them into its own clock folder and checks at
the end that they are byte for byte the same, with the same mtimes, whatever the stick did.
"""

from __future__ import annotations

import errno
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from gammonclock.cli.main import main
from gammonclock.export import ExportError
from gammonclock.runtime import usb_stick
from gammonclock.runtime.usb_stick import (
    MAX_MATCH_FILE,
    StickError,
    StickReport,
    export_to_stick,
    next_match_on_stick,
)
from usb_stick_helpers import (
    CURRENT,
    FOLDER,
    NAMES,
    TABLE,
    Clock,
    creating,
    export,
    fail,
)


@pytest.fixture
def clock(usb_clock: Clock) -> Clock:
    """The clock's side (conftest's `usb_clock`), by its short name in these tests."""
    return usb_clock


def partials(stick: Path) -> list[Path]:
    return [p for p in stick.rglob("*") if p.name.endswith(".partial")]


def every_file(stick: Path) -> list[str]:
    return sorted(p.relative_to(stick).as_posix() for p in stick.rglob("*") if p.is_file())


def expected_files(names: list[str], current: bool = True) -> list[str]:
    files = [f"{FOLDER}/{n.removesuffix('.jsonl')}{ext}" for n in names
             for ext in (".csv", ".html", ".jsonl")]
    return sorted(files + ([f"{FOLDER}/{CURRENT}"] if current else []))


# --- exports out --------------------------------------------------------------------------------

def test_export_copies_each_journal_with_its_csv_and_html(clock: Clock, stick: Path) -> None:
    report = export(clock, stick)
    assert report.problem is None and report.notes == []
    assert (report.exported, report.in_progress) == (3, CURRENT)
    assert report.summary() == "3 matches exported, 1 in progress"
    assert sorted(report.copied) == every_file(stick) == expected_files(NAMES)
    assert partials(stick) == []
    for journal in [*clock.finished, clock.current]:
        copy = stick / FOLDER / journal.name
        assert copy.read_bytes() == journal.read_bytes()
        assert main(["verify", str(copy), "--state-dir", str(clock.state_dir)]) == 0
    stem = stick / FOLDER / NAMES[0].removesuffix(".jsonl")
    assert stem.with_suffix(".csv").read_text(encoding="utf-8").count("\n") > 3
    html = stem.with_suffix(".html").read_text(encoding="utf-8")
    assert html.lstrip().lower().startswith("<!doctype html") and "Anna" in html


def test_the_finished_journal_goes_last_after_its_exports(clock: Clock, stick: Path) -> None:
    """A journal on the stick means its exports are there too (a copy cut short is redone)."""
    copied = export(clock, stick, with_current=False).copied
    assert [Path(name).suffix for name in copied] == [".csv", ".html", ".jsonl"] * 3


def test_a_second_export_writes_nothing(clock: Clock, stick: Path) -> None:
    export(clock, stick)
    before = {p: p.stat().st_mtime_ns for p in stick.rglob("*")}
    again = export(clock, stick)
    assert (again.copied, again.exported, again.in_progress, again.problem) == \
        ([], 3, CURRENT, None)
    # Issue 19: it said "3 matches exported" when it copied nothing new.
    assert again.summary() == "nothing new to copy; 3 already on the stick"
    assert {p: p.stat().st_mtime_ns for p in stick.rglob("*")} == before


def test_the_match_in_progress_is_copied_again_as_it_now_stands(clock: Clock, stick: Path,
                                                                 tmp_path: Path) -> None:
    live = tmp_path / "live" / CURRENT          # a journal the clock goes on writing
    live.parent.mkdir()
    shutil.copy2(clock.current, live)
    export_to_stick(stick, TABLE, clock.finished, live, clock.key)
    live.write_bytes(clock.longer_current)     # the clock played on
    again = export_to_stick(stick, TABLE, clock.finished, live, clock.key)
    assert (again.copied, again.in_progress) == ([f"{FOLDER}/{CURRENT}"], CURRENT)
    assert (stick / FOLDER / CURRENT).read_bytes() == clock.longer_current
    assert partials(stick) == []


def test_a_journal_that_differs_on_the_stick_is_written_again_with_its_exports(
        clock: Clock, stick: Path) -> None:
    export(clock, stick, with_current=False)
    first = stick / FOLDER / NAMES[0]
    first.write_bytes(first.read_bytes()[:100])                 # an older or cut copy
    (stick / FOLDER / NAMES[0]).with_suffix(".csv").unlink()
    again = export(clock, stick, with_current=False)
    stem = f"{FOLDER}/{NAMES[0].removesuffix('.jsonl')}"
    assert again.copied == [f"{stem}.csv", f"{stem}.html", f"{FOLDER}/{NAMES[0]}"]
    assert first.read_bytes() == clock.finished[0].read_bytes()
    assert again.exported == 3


def test_temporary_files_left_by_a_stick_pulled_out_earlier_are_removed(clock: Clock,
                                                                       stick: Path) -> None:
    folder = stick / FOLDER
    folder.mkdir(parents=True)
    (folder / f".{NAMES[1]}.partial").write_bytes(b'{"seq": 0, "half')
    (folder / ".gone-long-ago.jsonl.partial").write_bytes(b"x")
    (folder / "notes.txt").write_text("the arbiter's own file")
    report = export(clock, stick)
    assert report.problem is None and partials(stick) == []
    assert (folder / "notes.txt").read_text() == "the arbiter's own file"


def test_without_matplotlib_the_journal_and_csv_still_go(clock: Clock, stick: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    real_render = usb_stick.render  # type: ignore[attr-defined]

    def render(match: Any, fmt: str, verdict: Any = None) -> str:
        if fmt == "html":
            raise ExportError("the html export needs matplotlib and scipy (matplotlib is "
                              "missing): pip install 'gammonclock[report]'")
        return real_render(match, fmt, verdict)

    monkeypatch.setattr(usb_stick, "render", render)
    report = export(clock, stick)
    assert report.problem is None
    assert report.without_html == NAMES and len(report.notes) == 3
    assert "matplotlib" in report.notes[0] and NAMES[0] in report.notes[0]
    assert report.summary() == "3 matches exported, 1 in progress (3 without HTML report)"
    assert every_file(stick) == [f for f in expected_files(NAMES) if not f.endswith(".html")]


def test_a_journal_that_cannot_be_exported_is_still_copied(clock: Clock, stick: Path,
                                                         tmp_path: Path) -> None:
    odd = tmp_path / f"match-20240501-170000-{TABLE}-X-Y.jsonl"
    odd.write_bytes(b"not a journal\n")
    report = export_to_stick(stick, TABLE, [odd], None, clock.key)
    assert (report.exported, report.copied, report.problem) == (1, [f"{FOLDER}/{odd.name}"],
                                                                 None)
    assert "without CSV and HTML" in report.notes[0] and odd.name in report.notes[0]
    assert (stick / FOLDER / odd.name).read_bytes() == b"not a journal\n"


# --- the stick's faults -------------------------------------------------------------------------

UNTOUCHED = "the clock's files are untouched"
FAULTS = [
    # (what, os call, fails from its nth call, errno, the problem's text)
    ("pulled out at a rename", "replace", 3, errno.EIO,
     f"the stick was removed during the copy: 2 of 10 files copied; {UNTOUCHED}"),
    ("pulled out at an fsync", "fsync", 6, errno.ENODEV,
     f"the stick was removed during the copy: 2 of 10 files copied; {UNTOUCHED}"),
    ("gone at a new file", "open", 5, errno.ENXIO,
     f"the stick was removed during the copy: 4 of 10 files copied; {UNTOUCHED}"),
    ("full at the first fsync", "fsync", 2, errno.ENOSPC,
     f"the stick is full: 0 of 10 files copied; {UNTOUCHED}; free some space on it and "
     f"insert it again"),
    ("quota", "fsync", 4, errno.EDQUOT,
     f"the stick is full: 1 of 10 files copied; {UNTOUCHED}; free some space on it and insert "
     f"it again"),
    ("write-protected", "open", 1, errno.EROFS,
     f"the stick is read-only (write-protected, or the clock may not write on it): 0 of 10 "
     f"files copied; {UNTOUCHED}"),
    ("not the clock's to write", "mkdir", 1, errno.EACCES,
     f"the stick is read-only (write-protected, or the clock may not write on it): 0 of 10 "
     f"files copied; {UNTOUCHED}"),
    ("something else", "replace", 1, errno.EMLINK,
     f"the stick cannot be written (Too many links): 0 of 10 files copied; {UNTOUCHED}"),
]


@pytest.mark.parametrize(("call", "nth", "code", "problem"), [f[1:] for f in FAULTS],
                         ids=[f[0] for f in FAULTS])
def test_a_stick_fault_stops_the_copy_and_says_so(clock: Clock, stick: Path,
                                                  monkeypatch: pytest.MonkeyPatch, call: str,
                                                  nth: int, code: int, problem: str) -> None:
    when = creating if call == "open" else (lambda *args, **kw: True)
    fail(monkeypatch, stick, call, nth, code, when)
    report = export(clock, stick)
    monkeypatch.undo()
    assert report.problem == problem
    assert report.summary() == problem
    assert len(report.copied) == int(problem.split(" of 10")[0].rsplit(" ", 1)[1])
    assert partials(stick) == []
    for name in report.copied:                          # what was copied is whole
        if name.endswith(".jsonl"):
            assert (stick / name).read_bytes() == (clock.folder / Path(name).name).read_bytes()


def test_a_stick_pulled_out_mid_copy_leaves_no_half_file(clock: Clock, stick: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """The stick's folder vanishes between two files (as an unmounted stick's would)."""
    fail(monkeypatch, stick, "replace", 3, 0, then=lambda: shutil.rmtree(stick / "gammonclock"))
    report = export(clock, stick)
    monkeypatch.undo()
    assert report.problem == (f"the stick was removed during the copy: 2 of 10 files copied; "
                              f"{UNTOUCHED}")
    assert not (stick / "gammonclock").exists()


def test_a_stick_pulled_out_then_inserted_again_gets_the_rest(clock: Clock, stick: Path,
                                                             monkeypatch: pytest.MonkeyPatch
                                                             ) -> None:
    fail(monkeypatch, stick, "fsync", 8, errno.EIO)       # the 4th file's
    first = export(clock, stick)
    monkeypatch.undo()
    assert first.problem is not None and first.exported == 1
    again = export(clock, stick)
    assert again.problem is None and (again.exported, again.in_progress) == (3, CURRENT)
    assert every_file(stick) == expected_files(NAMES)
    assert sorted(first.copied + again.copied) == expected_files(NAMES)


def test_no_stick_at_all_is_a_problem(clock: Clock, tmp_path: Path) -> None:
    report = export(clock, tmp_path / "not-mounted")
    assert report.problem == (f"no stick: {tmp_path / 'not-mounted'} is not there (not mounted, "
                              f"or already removed)")
    assert not (tmp_path / "not-mounted").exists()


@pytest.mark.parametrize("part", ["gammonclock", "gammonclock/exports", FOLDER])
def test_a_link_on_the_stick_does_not_lead_the_copy_into_the_clock(clock: Clock, stick: Path,
                                                                  part: str) -> None:
    (stick / part).parent.mkdir(parents=True, exist_ok=True)
    (stick / part).symlink_to(clock.folder, target_is_directory=True)
    report = export(clock, stick)
    assert report.problem == (f"the stick's {part} is a link, not a folder: nothing is written "
                              f"or read through it; {UNTOUCHED}")
    assert report.copied == []
    # The journals where the link leads (the clock's own) were not taken as already exported.
    assert report.exported == 0 and report.in_progress is None


def test_a_file_where_a_folder_goes_is_a_problem(clock: Clock, stick: Path) -> None:
    (stick / "gammonclock").write_text("a file")
    report = export(clock, stick)
    assert report.problem == (f"the stick's gammonclock is not a folder (a file): nothing was "
                              f"written there; {UNTOUCHED}")


def test_a_planted_temporary_link_is_not_followed(clock: Clock, stick: Path) -> None:
    folder = stick / FOLDER
    folder.mkdir(parents=True)
    (folder / f".{CURRENT}.partial").symlink_to(clock.current)
    (folder / CURRENT).symlink_to(clock.finished[0])           # and the file itself a link
    report = export(clock, stick)
    assert report.problem is None
    assert not (folder / CURRENT).is_symlink()
    assert (folder / CURRENT).read_bytes() == clock.current.read_bytes()


def test_a_table_id_that_is_no_folder_name_is_refused(clock: Clock, stick: Path) -> None:
    report = export_to_stick(stick, "../T7", clock.finished, None, clock.key)
    assert report.problem is not None and "'../T7'" in report.problem
    assert list(stick.iterdir()) == []


def test_a_journal_the_clock_cannot_read_is_a_note(clock: Clock, stick: Path,
                                                   tmp_path: Path) -> None:
    missing = tmp_path / "match-gone.jsonl"
    report = export_to_stick(stick, TABLE, [missing, clock.finished[0]], None, None)
    assert report.problem is None and report.exported == 1
    assert report.notes == [f"{missing}: the clock cannot read this journal, so it was not "
                            f"copied: No such file or directory"]


@pytest.mark.parametrize(("report", "text"), [
    (StickReport(), "0 matches exported"),
    (StickReport(exported=1, copied=["x.jsonl"]), "1 match exported"),
    (StickReport(exported=3, in_progress="m.jsonl", copied=["m.jsonl"]),
     "3 matches exported, 1 in progress"),
    (StickReport(exported=2, without_html=["a", "b"], copied=["a.jsonl", "b.jsonl"]),
     "2 matches exported (2 without HTML report)"),
    (StickReport(exported=3, in_progress="m.jsonl"), "nothing new to copy; 3 already on the "
                                                     "stick"),
    (StickReport(exported=2, problem="the stick is full: …"), "the stick is full: …"),
])
def test_summary(report: StickReport, text: str) -> None:
    assert report.summary() == text


# --- the next match in ------------------------------------------------------------------------

MATCH = '[match]\ndiscipline = "backgammon"\nlength = 11\n'


@pytest.mark.parametrize(("files", "found"), [
    ({}, None),
    ({"match.toml": MATCH}, "match.toml"),
    ({f"{TABLE}.toml": MATCH}, f"{TABLE}.toml"),
    ({f"{TABLE}.toml": MATCH, "match.toml": "[match]\nlength = 3\n"}, f"{TABLE}.toml"),
    ({"T8.toml": MATCH}, None),                                 # another table's
    ({"match.toml": "\ufeff" + MATCH}, "match.toml"),            # a Windows editor's BOM
    ({"match.toml": "é" * (MAX_MATCH_FILE // 2)}, "match.toml"),  # 64 KiB exactly
])
def test_next_match_on_stick(stick: Path, files: dict[str, str], found: str | None) -> None:
    folder = stick / "gammonclock"
    folder.mkdir()
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    got = next_match_on_stick(stick, TABLE)
    if found is None:
        assert got is None
    else:
        assert got == (folder / found, files[found].removeprefix("\ufeff"))


def test_no_gammonclock_folder_is_no_next_match(stick: Path) -> None:
    assert next_match_on_stick(stick, TABLE) is None
    (stick / "gammonclock").write_text("a file, not a folder")
    assert next_match_on_stick(stick, TABLE) is None


def bad_file(kind: str) -> Callable[[Path], None]:
    def make(path: Path) -> None:
        if kind == "latin-1":
            path.write_bytes(MATCH.encode() + "# Zürich\n".encode("latin-1"))
        elif kind == "big":
            path.write_bytes(b"#" * (MAX_MATCH_FILE + 1))
        elif kind == "link":
            path.symlink_to("/etc/hostname")
        elif kind == "folder":
            path.mkdir()
        elif kind == "pipe":
            os.mkfifo(path)
    return make


@pytest.mark.parametrize(("kind", "message"), [
    ("latin-1", f"not UTF-8 text (byte {len(MATCH) + 3}); save it as UTF-8"),
    ("big", "larger than 64 KiB; a match file is a few lines of TOML"),
    ("link", "cannot read the match file: it is a link: put the file itself on the stick"),
    ("folder", "not a plain file; a match file is a TOML text file"),
    ("pipe", "not a plain file; a match file is a TOML text file"),
])
def test_a_match_file_that_cannot_be_taken_is_named(stick: Path, kind: str,
                                                    message: str) -> None:
    path = stick / "gammonclock" / f"{TABLE}.toml"
    path.parent.mkdir()
    bad_file(kind)(path)
    with pytest.raises(StickError) as caught:
        next_match_on_stick(stick, TABLE)
    assert str(caught.value) == f"{path}: {message}"


def test_next_match_with_a_bad_table_id(stick: Path) -> None:
    with pytest.raises(StickError, match="table id '../x' cannot name a file"):
        next_match_on_stick(stick, "../x")


# --- a stick's `gammonclock/` folder that is a link: nothing is read through it ----------------

LINKED = "cannot read the match file: the stick's gammonclock folder is a link: put the folder " \
         "itself on the stick"


def elsewhere(tmp_path: Path) -> Path:
    """A folder off the stick standing in for /etc/gammonclock, with match files in it."""
    folder = tmp_path / "etc-gammonclock"
    folder.mkdir(exist_ok=True)
    for name in (f"{TABLE}.toml", "match.toml"):
        (folder / name).write_text(MATCH, encoding="utf-8")
    return folder


@pytest.mark.parametrize("target", ["off the stick", "on the stick", "nowhere"])
def test_a_linked_gammonclock_folder_is_not_read(stick: Path, tmp_path: Path,
                                                 target: str) -> None:
    if target == "off the stick":
        where = elsewhere(tmp_path)
    elif target == "on the stick":          # a link is refused wherever it points
        where = stick / "real"
        where.mkdir()
        (where / "match.toml").write_text(MATCH, encoding="utf-8")
    else:
        where = tmp_path / "gone"
    (stick / "gammonclock").symlink_to(where, target_is_directory=True)
    with pytest.raises(StickError) as caught:
        next_match_on_stick(stick, TABLE)
    assert str(caught.value) == f"{stick / 'gammonclock'}: {LINKED}"


def test_a_match_file_linked_off_the_stick_is_not_read(stick: Path, tmp_path: Path) -> None:
    (stick / "gammonclock").mkdir()
    (stick / "gammonclock" / "match.toml").symlink_to(elsewhere(tmp_path) / "match.toml")
    with pytest.raises(StickError, match="it is a link: put the file itself on the stick"):
        next_match_on_stick(stick, TABLE)


NEXT = {"en": "next match", "ru": "следующий матч"}
NONE = {"en": "no next match on the stick (gammonclock/{table}.toml or gammonclock/match.toml)",
        "ru": "на флешке нет следующего матча (gammonclock/{table}.toml или "
              "gammonclock/match.toml)"}


EXPORT_LINKED = {
    "en": "the stick's gammonclock is a link, not a folder: nothing is written or read through "
          f"it; {UNTOUCHED}",
    "ru": "gammonclock на флешке — ссылка, а не папка: через неё ничего не пишется и не "
          "читается; файлы часов не тронуты"}
LOAD_LINKED = {
    "en": LINKED,
    "ru": "файл матча не читается: папка gammonclock на флешке — ссылка: положите на флешку "
          "саму папку"}


@pytest.mark.parametrize(("language", "title", "first_lines"), [
    ("en", "USB STICK", [EXPORT_LINKED["en"]]),
    ("ru", "USB-НАКОПИТЕЛЬ", [f"флешка: {EXPORT_LINKED['ru']}"]),       # issue 25: all Russian
])
def test_a_clock_loads_nothing_through_a_linked_folder(tmp_path: Path, language: str,
                                                       title: str, first_lines: list[str]
                                                       ) -> None:
    """The whole way, on a clock on mock pins: the stick's `gammonclock/` is a link to a folder
    holding a match file; nothing is exported, nothing loaded, and the panels say why."""
    import json
    import threading
    import time

    from PIL import ImageChops

    from gammonclock.config.loading import parse_device_config
    from gammonclock.device.build import build_device
    from gammonclock.hardware.screens import message_view, render
    from gammonclock.runtime.stick_handler import StickHandler

    text = (f'[hardware]\npin_factory = "mock"\n[table]\nid = "{TABLE}"\n'
            f'[display]\nlanguage = "{language}"\n')
    device = build_device(parse_device_config(text, "device.toml"), tmp_path / "state")
    try:
        stick = tmp_path / "stick"
        stick.mkdir()
        (stick / "gammonclock").symlink_to(elsewhere(tmp_path), target_is_directory=True)
        result: dict[str, Any] = {}
        work = threading.Thread(target=lambda: result.setdefault(
            "answer", StickHandler(device.service, device.table)(stick)))
        work.start()
        deadline = time.monotonic() + 30
        while work.is_alive() and time.monotonic() < deadline:    # this thread is the loop
            device.service.step()
            time.sleep(0.005)
        work.join(timeout=1)
        answer = json.loads(json.dumps(result["answer"]))
        assert not answer["ok"]
        assert answer["said"] == [
            EXPORT_LINKED[language],
            f"{NEXT[language]}: {stick / 'gammonclock'}: {LOAD_LINKED[language]}",
            # (lifecycle.StickHandler says this after any refusal too; in the table's language)
            NONE[language].format(table=TABLE)]
        assert device.session is None                   # no match loaded
        assert sorted(p.name for p in (tmp_path / "etc-gammonclock").iterdir()) == \
            sorted([f"{TABLE}.toml", "match.toml"])     # nothing written there either
        shown = render(message_view(title, first_lines))
        assert all(ImageChops.difference(panel.device.image.convert("1"), shown).getbbox()
                   is None for panel in device.panels)
    finally:
        device.close()


@pytest.mark.parametrize("mounted", ["gammonclock", f"gammonclock/{TABLE}.toml"])
def test_a_folder_or_file_of_another_file_system_is_not_read(stick: Path,
                                                             monkeypatch: pytest.MonkeyPatch,
                                                             mounted: str) -> None:
    """Something mounted over the stick's folder or file (as a bind mount would) is not the
    stick's: its device differs from the stick's own folder's."""
    (stick / "gammonclock").mkdir()
    (stick / "gammonclock" / f"{TABLE}.toml").write_text(MATCH, encoding="utf-8")
    other = os.lstat(stick / mounted).st_ino
    real_fstat = os.fstat

    def fstat(fd: int) -> os.stat_result:
        info = real_fstat(fd)
        if info.st_ino != other:
            return info
        fields = list(info[:10])
        fields[2] = info.st_dev + 1                     # st_dev: another file system
        return os.stat_result(fields)
    monkeypatch.setattr(usb_stick.os, "fstat", fstat)
    with pytest.raises(StickError) as caught:
        next_match_on_stick(stick, TABLE)
    monkeypatch.undo()
    where = "the stick's gammonclock folder is" if mounted == "gammonclock" else "it is"
    assert str(caught.value) == (f"{stick / mounted}: cannot read the match file: {where} not "
                                 f"on the stick (another file system is mounted there)")
