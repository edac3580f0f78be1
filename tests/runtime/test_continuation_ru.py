"""A dead clock's match continued on a Russian table (issue 25, SPEC §13.5, §15): what the
arbiter's socket, a stick and the hall's move are answered is Russian, in the words of the
Russian rules (матч, партия, судья, журнал, запись), with no English word left but file names,
the players' Latin names and the command language. What is said of the match continued is in its
own language, what is said of the match here (refused, abandoned) in this one's."""

from __future__ import annotations

import json
import re
import shutil
import threading
from dataclasses import dataclass
from pathlib import Path

import pytest

from gammonclock.cli.main import main
from gammonclock.config.loading import parse_device_config
from gammonclock.config.problems import message_of, said
from gammonclock.core.reasons import Reason
from gammonclock.device.build import build_device
from gammonclock.journal.records import encode
from gammonclock.runtime.continuation import (
    ContinuationRefused,
    check_source,
    checked_then,
    find_journal,
)
from gammonclock.runtime.lifecycle import load_next_match
from gammonclock.runtime.stick_handler import StickHandler
from gammonclock.sides import Button
from lifecycle_helpers import on_loop as _on_loop
from venue_helpers import (
    DEVICE_TEXT,
    MATCH_TEXT,
    Venue,
    command,
    first_part,
    journal_of,
    on_loop,
    tap,
)

RU = '\n[display]\nlanguage = "ru"\n'
# file names, the players' Latin names, the command language and the journals' folder
KEPT = {"Boris", "Carla", "continue", "force", "unverified", "FROM", "file", "jsonl", "match",
        "journals", "T7", "SPARE"}


def latin_words(text: str) -> set[str]:
    text = re.sub(r"(/[\w.-]+)+|match-[\w.-]+\.jsonl", " ", text)
    return set(re.findall(r"[A-Za-z][A-Za-z0-9]*", text)) - KEPT


@dataclass
class RussianVenue(Venue):
    """The continuation's venue, its tables' device configs Russian."""

    device_text: str = DEVICE_TEXT + RU


@pytest.fixture
def venue_ru():
    made = RussianVenue()
    yield made
    for device in made.clocks:
        device.close()


@pytest.fixture
def dead_ru(venue_ru, tmp_path) -> tuple[Path, Path]:
    """Table T7, Russian, plays to game 4 and dies: its journal as it stood, on a card."""
    dead = venue_ru.build(tmp_path, "T7", tmp_path / "t7", 3 * 3600, "boot-t7")
    assert load_next_match(dead.service, dead.table, MATCH_TEXT, "match.toml").ok
    first_part(venue_ru, dead)
    card = tmp_path / "card"
    card.mkdir()
    shutil.copy(journal_of(dead), card / journal_of(dead).name)
    return card / journal_of(dead).name, card


def test_a_continued_match_is_announced_in_russian(venue_ru, tmp_path, dead_ru) -> None:
    source, card = dead_ru
    spare = venue_ru.build(tmp_path, "SPARE", tmp_path / "spare", 50 * 3600, "boot-spare")
    done = on_loop(checked_then(spare.service, spare.table, card, via="journal"))
    assert done.ok and done.lang == "ru"
    seq = done.said[0].rsplit("запись ", 1)[1].rstrip(")")
    assert done.said[:2] == [f"матч продолжен: Анна-Boris, 5 очков, из {source.name} (запись "
                             f"{seq})",
                             "счёт 2-2, пауза: игра продолжится, если удержать кнопку куба"]
    assert re.fullmatch(r"журнал: match-.*\.jsonl", done.said[2])
    again = on_loop(checked_then(spare.service, spare.table, card, via="journal"))
    assert again.ok and again.said == ["матч уже продолжен здесь: Анна-Boris, 5 очков"]
    for line in [*done.said, *again.said]:
        assert not latin_words(line), line


def test_a_tampered_journal_is_refused_in_russian_and_forced_on_the_arbiters_word(
        venue_ru, tmp_path, dead_ru) -> None:
    source, _ = dead_ru
    lines = source.read_bytes().splitlines(keepends=True)
    record = json.loads(lines[30])
    record["data"]["effects"].append({"kind": "warned", "t": record["t"], "side": "left",
                                      "text": "forged"})
    lines[30] = encode(b"\x01" * 32, {k: v for k, v in record.items() if k not in ("sum", "mac")})
    source.write_bytes(b"".join(lines))
    spare = venue_ru.build(tmp_path, "SPARE", tmp_path / "spare", 50 * 3600, "boot-spare")
    refused = on_loop(checked_then(spare.service, spare.table, source, via="journal"))
    assert not refused.ok and refused.lang == "ru"
    assert refused.error == (
        f"{source}: ЖУРНАЛ ИЗМЕНЁН: строка 32: запись 31 не следует за предыдущей (вставлена "
        "лишняя или удалена одна). Матч из этого журнала не продолжен; ничего не изменено "
        "(`continue --unverified` всё равно возьмёт его, и заголовок нового журнала это "
        "запишет)")
    assert not latin_words(refused.error), refused.error
    forced = on_loop(checked_then(spare.service, spare.table, source, via="journal",
                                  unverified=True))
    assert forced.ok
    assert "НЕ ПРОВЕРЕН, продолжен под ответственность судьи: ЖУРНАЛ ИЗМЕНЁН: строка 32: " \
           "запись 31 не следует за предыдущей (вставлена лишняя или удалена одна)" in forced.said


def test_a_match_in_progress_here_is_said_in_russian(venue_ru, tmp_path, dead_ru) -> None:
    _, card = dead_ru
    spare = venue_ru.build(tmp_path, "SPARE", tmp_path / "spare", 50 * 3600, "boot-spare")
    assert load_next_match(spare.service, spare.table, MATCH_TEXT.replace("Boris", "Carla"),
                           "other.toml").ok
    tap(venue_ru, spare, Button.LEFT)
    refused = on_loop(checked_then(spare.service, spare.table, card, via="journal"))
    assert not refused.ok and refused.reason is Reason.MATCH_IN_PROGRESS
    assert refused.error == ("идёт матч (партия 1, счёт 0-0): другой матч продолжится здесь, "
                             "когда этот закончится; `continue --force` прерывает его сейчас, "
                             "с записью в протоколе")
    forced = on_loop(checked_then(spare.service, spare.table, card, via="journal", force=True))
    assert forced.ok and forced.said[0] == "arbiter: abandon"      # the command as given
    assert "матч прерван судьёй при счёте 0-0" in forced.said
    for line in [refused.error, *forced.said[1:]]:
        assert not latin_words(line), line


def test_a_folder_without_a_journal_and_a_finished_match_in_russian(tmp_path, venue_ru) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(ContinuationRefused) as caught:
        find_journal(empty)
    assert str(caught.value) == (f"{empty}: holds no journal (match-*.jsonl, in it or in its "
                                 "journals/); nothing changed")
    assert said(message_of(caught.value), "ru") == (
        f"{empty}: журнала нет (match-*.jsonl ни в папке, ни в её journals/); ничего не изменено")
    clock = venue_ru.build(tmp_path, "T1", tmp_path / "t1", 3600, "b")
    assert load_next_match(clock.service, clock.table, MATCH_TEXT, "m.toml").ok
    command(clock, "abandon")
    with pytest.raises(ContinuationRefused) as over:
        check_source(journal_of(clock), None)
    assert said(message_of(over.value), "ru") == (
        f"{journal_of(clock)}: матч окончен (прерван судьёй): продолжать нечего; ничего не "
        "изменено")


def test_a_sticks_continuation_refused_in_russian(venue_ru, tmp_path, dead_ru) -> None:
    source, _ = dead_ru
    spare = venue_ru.build(tmp_path, "SPARE", tmp_path / "spare", 50 * 3600, "boot-spare")
    stick = tmp_path / "stick"
    folder = stick / "gammonclock" / "continue"
    folder.mkdir(parents=True)
    (folder / "SPARE.continue").write_text("", encoding="utf-8")      # a marker, no journal
    answer = _on_loop(spare, lambda: StickHandler(spare.service, spare.table)(stick))
    assert not answer["ok"]
    assert answer["said"][-1] == (f"матч НЕ продолжен: {folder}: есть метка продолжения матча, "
                                  "но рядом нет журнала (match-*.jsonl)")
    shutil.copy(source, folder / source.name)
    done = _on_loop(spare, lambda: StickHandler(spare.service, spare.table)(stick))
    assert done["ok"], done
    assert spare.session is None                       # only offered: nothing loaded
    copy = tmp_path / "spare" / "continue-from-stick" / source.name
    assert done["said"][-2:] == [
        f"на флешке предложен матч стола T7: Анна-Boris, 5 очков, счёт 2-2, из {source.name} "
        f"(запись {done['said'][-2].rsplit('запись ', 1)[1].split(')')[0]}); он НЕ загружен, "
        "здесь ничего не прервано",
        "здесь не загружен матч, меню судьи на панелях нет: судья берёт его через сокет: "
        f"gammonclock arbiter continue {copy}"]
    for line in done["said"][-2:]:
        assert not latin_words(line.replace("gammonclock arbiter continue", "")), line


def test_the_socket_answers_continue_in_russian(dead_ru, tmp_path, capsys) -> None:
    _, card = dead_ru
    device_file = parse_device_config(DEVICE_TEXT.format(table="SPARE") + RU,
                                      str(tmp_path / "spare.toml"))
    state = tmp_path / "spare-socket"
    spare = build_device(device_file, state)
    assert load_next_match(spare.service, spare.table, MATCH_TEXT.replace("Boris", "Carla"),
                           "other.toml").ok                  # a Russian match is ready here
    worker = threading.Thread(target=spare.service.run, daemon=True)
    worker.start()
    try:
        assert main(["arbiter", "--state-dir", str(state), "continue", str(card),
                     "--bogus"]) == 2
        assert "как писать: continue FROM [--force] [--unverified]" in capsys.readouterr().err
        assert main(["arbiter", "--state-dir", str(state), "continue",
                     str(tmp_path / "missing")]) == 1
        assert f"{tmp_path / 'missing'}: нет такого журнала или папки; ничего не изменено" in \
            capsys.readouterr().err
        assert main(["arbiter", "--state-dir", str(state), "continue", str(card)]) == 0
        out = capsys.readouterr().out
        assert "матч продолжен: Анна-Boris, 5 очков" in out
        assert "счёт 2-2, пауза: игра продолжится, если удержать кнопку куба" in out
    finally:
        spare.service.stop()
        worker.join(timeout=5)
        spare.close()
