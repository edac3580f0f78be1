"""A journal that does not verify, exported with the real command (SPEC §14.1, issue 31): in
every format its verdict comes first (on stderr, in the match's language, in `verify`'s words),
nothing is written and the exit status is 1; `--allow-tampered` writes it, marked at its top
(the CSV's first column, the JSON's first key, the report's first lines), and still exits 1.
A journal whose chain holds but whose seals could not be checked is exported as before, its
verdict said first in every format, the CSV's too.

The attack of the issue: a tampered journal exported to CSV printed no verdict, exited 0 and
wrote 5 of 88 turns (JSON and HTML said TAMPERED inside)."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from export_helpers import CONFIG_11, KEY, eleven_point_script, play_journal
from gammonclock.journal.records import encode
from journal_helpers import bodies_of

RU = '\n[display]\nlanguage = "ru"\n'
FORMATS = ("csv", "json", "html")
OTHER_KEY = bytes(range(1, 33))                 # another device's


@dataclass(frozen=True)
class Said:
    code: int
    out: str
    err: str


def gammonclock_export(journal: Path, fmt: str, out: Path, state: Path, *more: str) -> Said:
    """`gammonclock export` as the arbiter types it, in a process of its own."""
    done = subprocess.run([sys.executable, "-m", "gammonclock", "export", str(journal),
                           "--format", fmt, "--out", str(out), "--state-dir", str(state),
                           *more], capture_output=True, text=True, timeout=120)
    return Said(done.returncode, done.stdout, done.stderr)


@pytest.fixture(scope="module")
def journals(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The 11-point match (88 turns) journaled in English and in Russian, a state folder with
    the key that sealed them, one with another device's key, and one with none."""
    folder = tmp_path_factory.mktemp("journals")
    script = eleven_point_script().text()
    made = {"en": play_journal(folder, CONFIG_11, script, "match-en.jsonl").path,
            "ru": play_journal(folder, CONFIG_11 + RU, script, "match-ru.jsonl").path}
    for name, key in (("state", KEY), ("other", OTHER_KEY)):
        (folder / name).mkdir()
        (folder / name / "device.key").write_text(key.hex() + "\n")
    (folder / "nokey").mkdir()
    return {**made, "folder": folder}


def tampered(journal: Path, how: str, into: Path) -> Path:
    """A copy of `journal` with record 5 tampered with: its wall stamp changed and it and every
    record after it sealed and chained anew with another key (only the device key shows it),
    or removed (the chain shows it, key or none)."""
    lines = journal.read_bytes().splitlines(keepends=True)
    if how == "seal forged":
        bodies = bodies_of(journal)
        bodies[5]["wall"] += 1
        prev = json.loads(lines[4])["mac"]
        for index in range(5, len(lines)):
            lines[index] = encode(OTHER_KEY, {**bodies[index], "prev": prev})
            prev = json.loads(lines[index])["mac"]
    else:
        del lines[5]
    path = into / f"tampered-{journal.name}"
    path.write_bytes(b"".join(lines))
    return path


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


# (tamper, language, the verdict's words on stderr, the refusal's words)
REFUSALS = [
    ("seal forged", "en", "TAMPERED: line 6: record 5 was altered (its seal does not match)",
     "not exported: the journal does not verify"),
    ("removed", "en", "TAMPERED: line 6: record 5 was removed",
     "not exported: the journal does not verify"),
    ("removed", "ru", "ЖУРНАЛ ИЗМЕНЁН: строка 6: запись 5 удалена",
     "не выгружено: журнал не прошёл проверку"),
]


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize(("how", "lang", "verdict", "refusal"), REFUSALS,
                         ids=[f"{row[0]}-{row[1]}" for row in REFUSALS])
def test_a_tampered_journal_is_refused_in_every_format_verdict_first(
        journals, tmp_path, fmt, how, lang, verdict, refusal):
    journal = tampered(journals[lang], how, tmp_path)
    out = tmp_path / "out" / f"match.{fmt}"
    said = gammonclock_export(journal, fmt, out, journals["folder"] / "state")
    assert said.code == 1, said
    first = said.err.splitlines()[0]
    assert first.startswith(f"gammonclock: {journal}: {verdict}"), said.err
    assert refusal in said.err and said.out == ""
    assert not out.exists()
    assert not out.parent.exists() or leftovers(out.parent) == []


def test_a_removed_record_is_refused_without_any_key(journals, tmp_path):
    journal = tampered(journals["en"], "removed", tmp_path)
    out = tmp_path / "match.csv"
    said = gammonclock_export(journal, "csv", out, journals["folder"] / "nokey")
    assert said.code == 1 and not out.exists()
    assert said.err.splitlines()[0] == (f"gammonclock: {journal}: TAMPERED: line 6: record 5 "
                                        f"was removed"), said.err


def csv_of(path: Path, lang: str) -> list[list[str]]:
    text = path.read_text(encoding="utf-8-sig")
    return list(csv.reader(io.StringIO(text), delimiter=";" if lang == "ru" else ","))


@pytest.mark.parametrize(("lang", "column", "mark", "written"), [
    ("en", "verdict", "TAMPERED: line 6: record 5 was removed", "written anyway"),
    ("ru", "проверка_журнала", "ЖУРНАЛ ИЗМЕНЁН: строка 6: запись 5 удалена", "всё равно"),
])
def test_allowed_a_tampered_csv_says_so_in_every_row(journals, tmp_path, lang, column, mark,
                                                     written):
    journal = tampered(journals[lang], "removed", tmp_path)
    out = tmp_path / "match.csv"
    said = gammonclock_export(journal, "csv", out, journals["folder"] / "state",
                              "--allow-tampered")
    assert said.code == 1, said
    assert said.err.splitlines()[0].startswith(f"gammonclock: {journal}: {mark}")
    assert written in said.err and said.out == ""
    rows = csv_of(out, lang)
    assert rows[0][0] == column and len(rows) > 1
    assert all(r[0] == mark for r in rows[1:]), rows[:3]
    assert all(len(r) == len(rows[0]) for r in rows)
    # A reader by name still reads it, the verdict in every record.
    if lang == "en":
        records = list(csv.DictReader(io.StringIO(out.read_text(encoding="utf-8"))))
        assert {r["verdict"] for r in records} == {mark} and records[0]["game"] == "1"


def test_allowed_a_tampered_json_says_so_first(journals, tmp_path):
    journal = tampered(journals["en"], "seal forged", tmp_path)
    out = tmp_path / "match.json"
    said = gammonclock_export(journal, "json", out, journals["folder"] / "state",
                              "--allow-tampered")
    assert said.code == 1
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert next(iter(doc)) == "verdict"
    assert doc["verdict"]["tampered"] is True and doc["verdict"]["standing"] == "TAMPERED"
    assert doc["verdict"]["check"].startswith("TAMPERED: line 6: record 5 was altered")


@pytest.mark.parametrize(("lang", "mark", "banner", "title"), [
    ("en", "TAMPERED: line 6: record 5 was removed", "it is not a valid record of the match",
     "<title>TAMPERED — "),
    ("ru", "ЖУРНАЛ ИЗМЕНЁН: строка 6: запись 5 удалена", "это не достоверная запись матча",
     "<title>ЖУРНАЛ ИЗМЕНЁН — "),
])
def test_allowed_a_tampered_report_says_so_first(journals, tmp_path, lang, mark, banner, title):
    journal = tampered(journals[lang], "removed", tmp_path)
    out = tmp_path / "match.html"
    said = gammonclock_export(journal, "html", out, journals["folder"] / "state",
                              "--allow-tampered")
    assert said.code == 1
    page = out.read_text(encoding="utf-8")
    body = page.split("<body>", 1)[1]
    assert body.lstrip().startswith('<div class="verdict tampered" role="alert">'), body[:200]
    assert body.index(mark) < body.index("<h1>")
    assert banner in body[:body.index("<h1>")]
    assert title in page


# (state folder, the verdict said first on stdout)
UNCHECKED = [
    ("state", "intact: {n} records"),
    ("nokey", "seal not checked: no device key given ("),
    ("other", "sealed by another device (key id "),
]


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize(("state", "verdict"), UNCHECKED, ids=[row[0] for row in UNCHECKED])
def test_a_journal_that_holds_is_exported_its_verdict_said_first(journals, tmp_path, fmt, state,
                                                                   verdict):
    journal = journals["en"]
    records = len(journal.read_bytes().splitlines())
    out = tmp_path / f"match.{fmt}"
    said = gammonclock_export(journal, fmt, out, journals["folder"] / state)
    assert said.code == 0, said
    lines = said.out.splitlines()
    assert lines[0].startswith(f"{journal}: {verdict.format(n=records)}"), said.out
    assert lines[1] == f"{out}: {fmt} export of {journal}"
    assert "TAMPERED" not in said.out + said.err
    text = out.read_text(encoding="utf-8")
    if fmt == "csv":                       # as it always was: no verdict column
        assert text.startswith("game,turn,side,")
        assert len(text.splitlines()) == 89          # the header and 88 turns
    elif fmt == "json":
        doc = json.loads(text)
        assert next(iter(doc)) == "verdict" and doc["verdict"]["tampered"] is False
        assert doc["verdict"]["check"].startswith(verdict.format(n=records))
    else:
        body = text.split("<body>", 1)[1].lstrip()
        assert body.startswith('<p class="verdict')
        assert verdict.format(n=records) in body[:body.index("<h1>")]


def test_export_and_verify_give_one_verdict_on_a_snapshot_that_does_not_hold(journals,
                                                                           tmp_path):
    """A snapshot record sealed by the device's own key (chain and seals whole) that is not the
    replay's match there: `verify` says TAMPERED, and so does every export, first, exit 1 (the
    export checked the chain and seals only, and wrote it as intact)."""
    journal = journals["en"]
    lines = journal.read_bytes().splitlines(keepends=True)
    bodies = bodies_of(journal)
    [first] = [i for i, b in enumerate(bodies) if b["kind"] == "state"][:1]
    bodies[first]["data"]["serials"] += 1        # not the engine the replay has there
    prev = json.loads(lines[first - 1])["mac"]
    for index in range(first, len(lines)):
        lines[index] = encode(KEY, {**bodies[index], "prev": prev})
        prev = json.loads(lines[index])["mac"]
    path = tmp_path / "snapshot-altered.jsonl"
    path.write_bytes(b"".join(lines))
    state = journals["folder"] / "state"
    verified = subprocess.run([sys.executable, "-m", "gammonclock", "verify", str(path),
                               "--state-dir", str(state)], capture_output=True, text=True,
                              timeout=120)
    assert verified.returncode == 1 and "snapshot is not the replay's match" in verified.stdout
    for fmt in FORMATS:
        out = tmp_path / f"out.{fmt}"
        said = gammonclock_export(path, fmt, out, state)
        assert said.code == 1, (fmt, said)
        first_line = said.err.splitlines()[0]
        assert "TAMPERED" in first_line and "snapshot is not the replay's match" in first_line, (
            fmt, said.err)
        assert not out.exists()
