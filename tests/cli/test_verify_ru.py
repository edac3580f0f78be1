"""`gammonclock verify` and `replay` on a Russian match (issue 25, SPEC §15): the verdict and
the match's line in the match's language without a flag (`--language` overrides), in the words
of the export's report; why there is no key to check the seals with (the key file's path as it
is) said in Russian in the report too. An English match stays as it was."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gammonclock.cli.main import main
from gammonclock.export import read_match, render
from gammonclock.export.keys import choose_key
from gammonclock.journal.verify import verify
from journal_helpers import CONFIG, journaled_run

RU = '\n[display]\nlanguage = "ru"\n'
# the players' names, the key file's path
KEPT = {"Anna", "Boris"}


def latin(text: str) -> set[str]:
    return set(re.findall(r"[A-Za-z]+", re.sub(r"(/[\w.-]+)+", " ", text))) - KEPT


@pytest.fixture
def ru_journal(tmp_path: Path) -> Path:
    path, _, _ = journaled_run(tmp_path, config_text=CONFIG + RU)
    return path


def test_verify_says_a_russian_match_in_russian(ru_journal: Path, tmp_path: Path,
                                                capsys) -> None:
    state = tmp_path / "state"
    assert main(["verify", str(ru_journal), "--state-dir", str(state)]) == 0
    out = capsys.readouterr().out.strip()
    assert re.fullmatch(re.escape(f"{ru_journal}: цел: ") + r"\d+ запис(ь|и|ей)"
                        r", печати проверены; матч: бэкгаммон, до 7 очков, Anna — Boris, "
                        r"счёт 0-4, идёт партия", out), out
    assert not latin(out.split(": ", 1)[1]), out
    assert main(["verify", str(ru_journal), "--state-dir", str(state), "--language", "en"]) == 0
    assert re.search(r": intact: \d+ records; match: backgammon to 7, Anna v Boris, 0-4, "
                     r"running$", capsys.readouterr().out.strip())


def test_verify_without_the_key_says_why_in_russian(ru_journal: Path, tmp_path: Path,
                                                    capsys) -> None:
    elsewhere = tmp_path / "elsewhere"
    assert main(["verify", str(ru_journal), "--state-dir", str(elsewhere)]) == 0
    out = capsys.readouterr().out.strip()
    assert (f"печати не проверены: не дан ключ устройства ({elsewhere / 'device.key'}: файла "
            "нет); цепочка цела: ") in out, out
    assert not latin(out.split(": ", 1)[1]), out


def test_a_tampered_russian_journal_is_said_in_russian(ru_journal: Path, tmp_path: Path,
                                                       capsys) -> None:
    lines = ru_journal.read_bytes().splitlines(keepends=True)
    ru_journal.write_bytes(b"".join(lines[:3] + lines[4:]))          # a record removed
    assert main(["verify", str(ru_journal), "--state-dir", str(tmp_path / "state")]) == 1
    assert capsys.readouterr().out.strip() == f"{ru_journal}: ЖУРНАЛ ИЗМЕНЁН: строка 4: " \
                                              "запись 3 удалена"


def test_the_russian_report_says_why_its_seals_were_not_checked(ru_journal: Path,
                                                                tmp_path: Path) -> None:
    chosen = choose_key(tmp_path / "elsewhere")
    verdict = verify(ru_journal, None, no_key=chosen.no_check)
    html = render(read_match(ru_journal), "html", verdict=verdict)
    assert (f"не дан ключ устройства ({tmp_path / 'elsewhere' / 'device.key'}: файла нет)"
            in html)
    assert "is not there" not in html
    english = render(read_match(ru_journal), "html", verdict=verdict, language="en")
    assert f"no device key given ({tmp_path / 'elsewhere' / 'device.key'} is not there)" in \
        english


def test_replay_says_a_torn_journal_in_the_matchs_language(ru_journal: Path, capsys) -> None:
    with ru_journal.open("ab") as f:
        f.write(b'{"seq": 99, "kind": "tick"')                     # a write cut short
    assert main(["replay", str(ru_journal)]) == 0
    err = capsys.readouterr().err
    assert re.search(r"gammonclock: .*: оборванная последняя запись \(\d+ байт с байта \d+\) "
                     r"отброшена", err), err


def test_an_english_match_stays_english(tmp_path: Path, capsys) -> None:
    path, _, _ = journaled_run(tmp_path)
    assert main(["verify", str(path), "--state-dir", str(tmp_path / "state")]) == 0
    assert re.search(r": intact: \d+ records; match: backgammon to 7, Anna v Boris, 0-4, "
                     r"running$", capsys.readouterr().out.strip())


def test_export_says_its_key_and_what_it_did_in_the_matchs_language(ru_journal: Path,
                                                                    tmp_path: Path,
                                                                    capsys) -> None:
    out = tmp_path / "r.html"
    state = tmp_path / "state"
    assert main(["export", str(ru_journal), "--format", "html", "--out", str(out),
                 "--state-dir", str(state)]) == 0
    captured = capsys.readouterr()
    assert (f"gammonclock: печати проверяются ключом устройства {state / 'device.key'} (взят "
            "из --state-dir; ключ ") in captured.err, captured.err
    lines = captured.out.splitlines()
    assert re.fullmatch(re.escape(f"{ru_journal}: цел: ") + r"\d+ запис(ь|и|ей), печати "
                        r"проверены", lines[0]), lines
    assert lines[1] == f"{out}: {ru_journal} выгружен в html"
    assert main(["export", str(ru_journal), "--format", "html", "--out", str(out),
                 "--state-dir", str(state), "--language", "en"]) == 0
    assert capsys.readouterr().out.splitlines()[1] == f"{out}: html export of {ru_journal}"


def test_verify_without_a_key_says_where_it_looked_in_russian(ru_journal: Path, tmp_path: Path,
                                                              capsys) -> None:
    elsewhere = tmp_path / "elsewhere"
    assert main(["verify", str(ru_journal), "--state-dir", str(elsewhere)]) == 0
    err = capsys.readouterr().err.strip()
    assert err == (f"gammonclock: печати не проверяются: ключ устройства не найден "
                   f"({elsewhere / 'device.key'} из --state-dir: файла нет)")
