"""Every text the panels show, in each language they speak (SPEC §15): one table keyed by a stable
id, so that no language can miss a text and a test can check that each fits where it is drawn.

The Russian words are those of the Russian tournament rules this project starts from (partiya for
a game, match, cube, break, flag, Crawford, the arbiter as sudya). A text with a name or a number
has `{placeholders}`, filled by `say`.

Texts that are not the panels' own come said already: a config error is the config checker's
words (`config.problems`: its Problems said in the panel's language, the file, key and value as
written), a USB stick's summary and the next match's description as the lifecycle words them in
the table's language; an arbiter's warning stays as typed after its translated "warning:", and a
refusal the engine words without a reason code stays English.

Pure: no PIL, no device.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import Enum
from fractions import Fraction

LANGUAGES = ("en", "ru")
DEFAULT = "en"


class Room(Enum):
    """Where a text is drawn, and so how long it may be (the test maps each to characters)."""

    HEADER = "header"      # the top row's right end, 5x8, beside the name
    STATUS = "status"      # a line under the clock, 5x8, one line
    TITLE = "title"        # the inverted band, 6x12, one line
    FOOTER = "footer"      # under a message, 6x12, one line
    LINE = "line"          # a message line, 6x12, the left and right parts together
    LINES = "lines"        # two message lines ("\n"), each "left|right"
    RIGHT = "right"        # the right part of a message line (its left part gets the rest)
    TEXT = "text"          # small print under a title, 5x8, wrapped to at most four lines
    NOTICE = "notice"      # the notice box, 5x8, wrapped to two lines
    WORD = "word"          # a part of another text (which is checked whole)


@dataclass(frozen=True)
class Entry:
    room: Room
    en: str
    ru: str


E = Entry
TEXTS: dict[str, Entry] = {
    # the top row: the score and the match length
    "header.score": E(Room.HEADER, "{own}-{opp} to {length}", "{own}-{opp} до {length}"),
    "header.crawford": E(Room.HEADER, "CRAWFORD {own}-{opp} to {length}",
                         "КРОУФОРД {own}-{opp} до {length}"),

    # between games, and ready before game 1 with the time control
    # (at most 24 characters with the longest time control: "12s Bronst: you're white")
    "ready.white": E(Room.STATUS, "{first}: you're white", "{first}: вы белые"),
    "ready.tap": E(Room.STATUS, "{first}: tap to start", "{first}: нажмите"),
    "ready.game": E(Room.WORD, "game {n}", "партия {n}"),
    "tc.none": E(Room.WORD, "no delay", "без задержки"),
    "tc.delay": E(Room.WORD, "{s}s delay", "задержка {s}с"),
    "tc.bronstein": E(Room.WORD, "{s}s Bronst", "Бронштейн {s}с"),
    "tc.fischer": E(Room.WORD, "+{s}s/move", "+{s}с за ход"),

    # a double
    "cube.you_double": E(Room.STATUS, "you double to {value}", "вы удваиваете до {value}"),
    "cube.doubles": E(Room.STATUS, "{name} doubles to {value}", "{name} удваивает до {value}"),
    "cube.how": E(Room.STATUS, "tap=take  hold=pass", "нажать=беру  держать=пас"),

    # the opening dice between games, whose each is where the clock does not know the names
    # (SPEC §8: a reader's first opening die is white's, the second black's)
    "dice.white": E(Room.WORD, "white", "белые"),
    "dice.black": E(Room.WORD, "black", "чёрные"),

    # a pause
    "pause.title": E(Room.TITLE, "PAUSED", "ПАУЗА"),
    "pause.how": E(Room.FOOTER, "hold cube to resume", "дальше: держите куб"),

    # a break
    "break.yours": E(Room.TITLE, "BREAK: tap to end", "ПЕРЕРЫВ: нажать=стоп"),
    "break.theirs": E(Room.TITLE, "BREAK: {name}", "ПЕРЕРЫВ: {name}"),
    "break.over": E(Room.STATUS, "break over: press clock", "перерыв: нажмите часы"),
    "break.late": E(Room.STATUS, "{name} is late", "{name} опаздывает"),

    # the info page between games
    "info.title": E(Room.TITLE, "GAME {n} NEXT", "ДАЛЕЕ ПАРТИЯ {n}"),
    "info.breaks": E(Room.FOOTER, "breaks left {a}-{b}", "ещё перерывов {a}-{b}"),

    # result entry
    "result.title": E(Room.TITLE, "RESULT?", "РЕЗУЛЬТАТ?"),
    "result.how_holder": E(Room.FOOTER, "cube=next tap=cancel", "куб=далее нажать=нет"),
    "result.how_other": E(Room.FOOTER, "cube=next tap=OK", "куб=далее нажать=да"),
    # the proposal: two message lines, "\n" between them, "|" between a line's left and right
    # part (Russian puts the winner's name alone on the first: there is room for it there)
    "result.win": E(Room.LINES, "{name} wins|{kind}\n|{points}",
                    "победа: {name}|\n{kind}|{points}"),
    "result.draw": E(Room.LINES, "draw|\n|{points} each", "ничья|\n|{points} каждому"),
    "result.wins": E(Room.LINE, "{name} wins", "победа: {name}"),
    "kind.single": E(Room.RIGHT, "single", "простая"),
    "kind.gammon": E(Room.RIGHT, "gammon", "гаммон"),
    "kind.backgammon": E(Room.RIGHT, "backgammon", "бэкгаммон"),
    "kind.oin": E(Room.RIGHT, "oin", "ойн"),
    "kind.mars": E(Room.RIGHT, "mars", "марс"),
    "kind.draw": E(Room.RIGHT, "draw", "ничья"),
    "kind.pass": E(Room.RIGHT, "pass", "пас"),
    "kind.forfeit": E(Room.RIGHT, "forfeit", "штраф"),
    # points: en has one and other; ru has one (1, 21), few (2-4, 22-24, a half) and many
    "points.one": E(Room.WORD, "{p} point", "{p} очко"),
    "points.few": E(Room.WORD, "{p} points", "{p} очка"),
    "points.many": E(Room.WORD, "{p} points", "{p} очков"),
    # a match's length: "7 points"; "до 7 очков" (after "до", ru has one (1, 21) and many)
    "length.one": E(Room.WORD, "{n} point", "до {n} очка"),
    "length.many": E(Room.WORD, "{n} points", "до {n} очков"),

    # the match is over
    "over.title": E(Room.TITLE, "MATCH OVER", "МАТЧ ОКОНЧЕН"),
    "over.abandoned": E(Room.TITLE, "ABANDONED", "МАТЧ ПРЕРВАН"),
    # continued on another clock (SPEC §13.5): where it went (or, said at the panels, only
    # that it went), and that it is not played here any more
    "over.moved": E(Room.TITLE, "MATCH MOVED", "МАТЧ ПЕРЕНЕСЁН"),
    "over.moved_to": E(Room.LINE, "moved to {table}", "на стол {table}"),
    "over.moved_away": E(Room.LINE, "to another clock", "на другие часы"),
    "over.moved_how": E(Room.FOOTER, "play goes on there", "игра идёт там"),
    "over.score": E(Room.LINE, "score", "счёт"),
    "over.by_arbiter": E(Room.LINE, "by the arbiter", "решением судьи"),
    "over.tie": E(Room.LINE, "tie", "ничья"),
    "over.flag": E(Room.TITLE, "FLAG", "ФЛАЖОК УПАЛ"),
    "over.time_up": E(Room.LINE, "{name}: time up", "{name}: время"),
    "over.disqualified": E(Room.LINE, "{name} disqualified", "дисквалиф.: {name}"),
    "over.challenges": E(Room.LINE, "{name}: 3 challenges lost", "{name}: 3 апелляции"),
    "over.by_score": E(Room.LINE, "by score", "по счёту"),

    # screens without a match, and over a match for a while (their titles are given by the
    # callers in English: `title` finds them here)
    "idle.title": E(Room.TITLE, "TABLE {table}", "СТОЛ {table}"),
    "idle.ip": E(Room.TEXT, "IP {addresses}", "IP {addresses}"),
    "idle.no_network": E(Room.TEXT, "no network", "нет сети"),
    "idle.waiting": E(Room.TEXT, "waiting for the next match", "ждём следующий матч"),
    "title.next_match": E(Room.TITLE, "NEXT MATCH", "СЛЕДУЮЩИЙ МАТЧ"),
    "title.match_refused": E(Room.TITLE, "MATCH REFUSED", "МАТЧ НЕ ПРИНЯТ"),
    "title.usb_stick": E(Room.TITLE, "USB STICK", "USB-НАКОПИТЕЛЬ"),
    # what a USB stick did (SPEC §13.3); a stick's own problem and a refusal's reason stay
    # English (they name files)
    "stick.exported": E(Room.TEXT, "matches exported: {n}", "записано матчей: {n}"),
    "stick.exported_running": E(Room.TEXT, "matches exported: {n}, 1 in progress",
                                "записано матчей: {n}, и идущий"),
    "stick.nothing_new": E(Room.TEXT, "nothing new to copy; {n} already on the stick",
                           "нового нет: {n} уже на флешке"),
    "stick.problem": E(Room.TEXT, "{problem}", "флешка: {problem}"),
    "stick.next_loaded": E(Room.TEXT, "next match loaded: {match}",
                           "следующий матч: {match}"),
    "stick.next_kept": E(Room.TEXT, "next match already loaded: {match}",
                         "матч уже загружен: {match}"),
    "stick.next_refused": E(Room.TEXT, "next match NOT loaded: {why}",
                            "матч НЕ загружен: {why}"),
    "stick.no_match": E(Room.TEXT, "no next match on the stick", "на флешке нет матча"),
    # a dead clock's match continued from a stick (SPEC §13.5, continuation.py)
    "stick.continued": E(Room.TEXT, "match continued: {match}", "матч продолжен: {match}"),
    "stick.continue_refused": E(Room.TEXT, "match NOT continued: {why}",
                                "матч НЕ продолжен: {why}"),
    # … only offered (SPEC §13.5, §14.1): nothing loaded, nothing ended; the arbiter takes it
    # at the menu after the PIN (a stick carries files, never authority)
    "title.stick_offer": E(Room.TITLE, "MATCH ON THE STICK", "МАТЧ НА ФЛЕШКЕ"),
    "stick.offer": E(Room.TEXT, "{table}: {left}-{right} {score}",
                     "{table}: {left}-{right} {score}"),
    "stick.offer_how": E(Room.TEXT, "arbiter: chord, PIN, menu: MATCH FROM STICK",
                         "судья: 3 кнопки, ПИН, меню: МАТЧ С ФЛЕШКИ"),
    "stick.offer_no_pin": E(Room.TEXT, "needs the arbiter's PIN or socket: continue FROM",
                            "нужен ПИН-код судьи или сокет: continue FROM"),
    "stick.offer_idle": E(Room.TEXT, "no match here: socket: arbiter continue FROM",
                          "матча нет: через сокет: arbiter continue FROM"),
    # a provisioning stick (issue 32): the table and hall it brings, taken or offered
    "title.provisioned": E(Room.TITLE, "PROVISIONED {table}", "НАСТРОЕН: {table}"),
    "title.provision_offer": E(Room.TITLE, "PROVISIONING STICK", "ФЛЕШКА НАСТРОЙКИ"),
    "title.provision_refused": E(Room.TITLE, "STICK REFUSED", "ФЛЕШКА НЕ ПРИНЯТА"),
    "stick.provisioned": E(Room.TEXT, "hall {host}; the device key is the stick's",
                           "зал {host}; ключ устройства с флешки"),
    "stick.provisioned_kept": E(Room.TEXT, "hall {host}; this clock's key given back on the "
                                "stick", "зал {host}; ключ часов записан на флешку"),
    "stick.provisioned_later": E(Room.TEXT, "hall {host}; plug the stick in again to give the "
                                 "hall this clock's key",
                                 "зал {host}; вставьте флешку ещё раз: ключ часов для зала"),
    "stick.provision_already": E(Room.TEXT, "already provisioned as {table}: nothing changed",
                                 "уже настроен как {table}: без изменений"),
    "stick.key_returned": E(Room.TEXT, "this clock's key given back on the stick",
                            "ключ часов записан на флешку"),
    "stick.provision_offer": E(Room.TEXT, "{table}: {host}", "{table}: {host}"),
    "stick.provision_how": E(Room.TEXT, "arbiter: chord, PIN, menu: TABLE FROM STICK",
                             "судья: три кнопки, ПИН, меню: СТОЛ С ФЛЕШКИ"),
    "stick.provision_idle": E(Room.TEXT, "arbiter: socket: arbiter provision",
                              "судья: сокет: arbiter provision"),
    "stick.provision_refused": E(Room.TEXT, "NOT provisioned: {why}", "НЕ настроен: {why}"),
    "stick.provision_in_progress": E(Room.TEXT, "a match is in progress: plug the stick in "
                                     "again after the match",
                                     "идёт матч: вставьте флешку после матча"),
    "title.journal_error": E(Room.TITLE, "JOURNAL ERROR", "ОШИБКА ЖУРНАЛА"),
    # why the clock starts nothing (lifecycle.StartRefused): the whole story is in the log
    "start.journal": E(Room.TEXT, "a journal cannot be read (see the log): move it out of "
                         "journals/, then restart",
                         "журнал матча не читается (причина в логе): уберите его из journals/ "
                         "и перезапустите"),
    "start.key": E(Room.TEXT, "the device key is bad (see the log): move device.key away, "
                     "then restart",
                     "ключ устройства испорчен (причина в логе): уберите device.key и "
                     "перезапустите"),
    # the loop failed (runtime/service.py): the error is the program's, as it is
    "fault.restarting": E(Room.TEXT, "clock failed, restarting: {error}",
                          "сбой часов, перезапуск: {error}"),
    "title.config_error": E(Room.TITLE, "CONFIG ERROR", "ОШИБКА НАСТРОЕК"),
    "title.clock_failed": E(Room.TITLE, "CLOCK FAILED", "СБОЙ ЧАСОВ"),
    "next.match": E(Room.TEXT, "{left}-{right}, {length}", "{left}-{right}, {length}"),
    "next.time": E(Room.TEXT, "{time} each", "{time} каждому"),
    "error.no_details": E(Room.TEXT, "(no details)", "(без подробностей)"),
    "error.more_one": E(Room.TEXT, "(+1 more problem)", "(и ещё ошибок: 1)"),
    "error.more": E(Room.TEXT, "(+{n} more problems)", "(и ещё ошибок: {n})"),

    # the arbiter at the panels (SPEC §13.4): the chord, the PIN, the menu. The top row says
    # the one gesture that always resumes play; the footer (5x8) what each button does here.
    "arbiter.header": E(Room.WORD, "ARBITER", "СУДЬЯ"),
    "arbiter.hold": E(Room.HEADER, "hold C: resume", "держать К: игра"),
    "arbiter.title": E(Room.TITLE, "ARBITER", "СУДЬЯ"),
    "arbiter.title.pin": E(Room.TITLE, "ARBITER: PIN", "СУДЬЯ: ПИН-КОД"),
    "arbiter.title.confirm": E(Room.TITLE, "CONFIRM?", "ПОДТВЕРДИТЬ?"),
    "arbiter.held": E(Room.LINES, "release the buttons|\nthen enter the PIN|",
                      "отпустите кнопки,|\nзатем ПИН-код|"),
    "arbiter.pin": E(Room.LINES, "PIN|{text}\n30 s to enter it|", "ПИН-код|{text}\nна ввод 30 с|"),
    "arbiter.how.pin": E(Room.STATUS, "PIN, then hold C", "ПИН, затем держать К"),
    "arbiter.how.menu": E(Room.STATUS, "L:prev C:choose R:next", "Л:назад К:выбор П:далее"),
    "arbiter.how.adjust": E(Room.STATUS, "L:-10s C:set R:+10s", "Л:-10с К:ввод П:+10с"),
    "arbiter.how.score_left": E(Room.STATUS, "L:-1 C:next R:+1", "Л:-1 К:далее П:+1"),
    "arbiter.how.score_right": E(Room.STATUS, "L:-1 C:set R:+1", "Л:-1 К:ввод П:+1"),
    "arbiter.how.cube": E(Room.STATUS, "L:< C:set R:>", "Л:< К:ввод П:>"),
    "arbiter.how.confirm": E(Room.STATUS, "C:yes  L or R:no", "К:да  Л или П:нет"),
    "arbiter.how.info": E(Room.STATUS, "any button: back", "любая кнопка: назад"),
    "arbiter.item.resume": E(Room.TITLE, "RESUME PLAY", "ПРОДОЛЖИТЬ ИГРУ"),
    "arbiter.item.adjust_left": E(Room.TITLE, "LEFT CLOCK", "ЧАСЫ СЛЕВА"),
    "arbiter.item.adjust_right": E(Room.TITLE, "RIGHT CLOCK", "ЧАСЫ СПРАВА"),
    "arbiter.item.undo": E(Room.TITLE, "UNDO LAST ACTION", "ОТМЕНА ДЕЙСТВИЯ"),
    "arbiter.item.score": E(Room.TITLE, "SCORE", "СЧЁТ"),
    "arbiter.item.cube": E(Room.TITLE, "CUBE", "КУБ"),
    "arbiter.item.end_break": E(Room.TITLE, "END THE BREAK", "КОНЕЦ ПЕРЕРЫВА"),
    "arbiter.item.next_match": E(Room.TITLE, "NEXT MATCH FROM FILE", "МАТЧ ИЗ ФАЙЛА"),
    "arbiter.item.continue_stick": E(Room.TITLE, "MATCH FROM STICK", "МАТЧ С ФЛЕШКИ"),
    "arbiter.item.provision_stick": E(Room.TITLE, "TABLE FROM STICK", "СТОЛ С ФЛЕШКИ"),
    "arbiter.about.provision": E(Room.LINES, "{table}|\nhall {host}|", "{table}|\nзал {host}|"),
    "arbiter.ask.provision": E(Room.LINES, "become {table}?|\nhall and account|",
                               "стать {table}?|\nзал и уч. запись|"),
    "arbiter.item.moved": E(Room.TITLE, "MATCH MOVED", "МАТЧ ПЕРЕНЕСЁН"),
    "arbiter.item.info": E(Room.TITLE, "TABLE INFO", "О СТОЛЕ"),
    "arbiter.about.resume": E(Room.LINES, "play goes on|\nfrom here|",
                              "игра продолжится|\nс этого места|"),
    "arbiter.about.undo": E(Room.LINES, "the last turn,|\ndouble or result|",
                            "последний ход,|\nудвоение, результат|"),
    "arbiter.about.break": E(Room.LINES, "the break ends|\nnow|", "перерыв|\nзакончится сейчас|"),
    "arbiter.about.no_break": E(Room.LINES, "no break is|\nbeing taken|",
                                "перерыва|\nсейчас нет|"),
    "arbiter.about.next": E(Room.LINES, "load the match|\nfile of the table|",
                            "загрузить матч|\nиз файла стола|"),
    "arbiter.about.abandon": E(Room.LINES, "this match ends|\nABANDONED|",
                               "текущий матч|\nбудет ПРЕРВАН|"),
    "arbiter.about.stick": E(Room.LINES, "{table}|{score}\n{left}-{right}|",
                             "{table}|{score}\n{left}-{right}|"),
    "arbiter.ask.stick": E(Room.LINES, "continue {table}?|\nthis match ENDS|",
                           "продолжить|{table}?\nэтот будет ПРЕРВАН|"),
    "arbiter.ask.stick_over": E(Room.LINES, "continue {table}|\nhere?|",
                                "продолжить здесь|\nматч {table}?|"),
    "arbiter.about.moved": E(Room.LINES, "it goes on at|\nanother clock|",
                             "он продолжен|\nна других часах|"),
    "arbiter.about.info": E(Room.LINES, "table, address,|\nversion, journal|",
                            "стол, адрес,|\nверсия, журнал|"),
    "arbiter.ask.undo": E(Room.LINES, "undo the last|\nplayer action?|",
                          "отменить последнее|\nдействие игрока?|"),
    "arbiter.ask.break": E(Room.LINES, "end the break|\nnow?|", "закончить перерыв|\nсейчас?|"),
    "arbiter.ask.moved": E(Room.LINES, "end it here as|\nMOVED, for good?|",
                           "закончить здесь|\nкак ПЕРЕНЕСЁННЫЙ?|"),
    "arbiter.change": E(Room.LINE, "change", "изменение"),
    "arbiter.cube": E(Room.LINE, "cube", "куб"),
    "arbiter.middle": E(Room.RIGHT, "middle", "в центре"),
    "arbiter.refused": E(Room.LINE, "REFUSED:", "ОТКАЗАНО:"),
    "arbiter.refused.no_break": E(Room.LINE, "no break now", "перерыва нет"),
    "arbiter.refused.cube_not_in_game": E(Room.LINE, "no cube in this game", "в партии нет куба"),
    "arbiter.refused.cube_double_offered": E(Room.LINE, "a double is offered",
                                             "предложено удвоение"),
    "arbiter.refused.cube_in_break": E(Room.LINE, "not in a break", "не в перерыве"),
    "arbiter.refused.match_over": E(Room.LINE, "the match is over", "матч окончен"),
    "arbiter.refused.undo_nothing": E(Room.LINE, "nothing to undo", "нечего отменять"),
    "arbiter.refused.undo_match_moved": E(Room.LINE, "match moved: no undo", "матч перенесён"),
    "arbiter.refused.undo_match_lost": E(Room.LINE, "match lost: no undo", "матч проигран"),
    "arbiter.refused.undo_past_arbiter": E(Room.LINE, "ended by the arbiter",
                                           "окончен судьёй"),
    "arbiter.refused.other": E(Room.LINE, "not now", "не сейчас"),
    "arbiter.info.table": E(Room.TEXT, "table {table}", "стол {table}"),
    "arbiter.info.version": E(Room.TEXT, "version {text}", "версия {text}"),
    "arbiter.info.journal": E(Room.TEXT, "journal:", "журнал:"),
    "arbiter.info.none": E(Room.WORD, "(unknown)", "(неизвестно)"),

    # notices: the journal alert
    "alert.journal": E(Room.NOTICE, "journal not written: call the arbiter",
                       "журнал не пишется: позовите судью"),
    # notices: a refused double or break, and the hints
    "refused.no_cube": E(Room.NOTICE, "no doubling cube in this match", "в этом матче нет куба"),
    "refused.crawford": E(Room.NOTICE, "Crawford game: no doubling",
                          "партия Кроуфорда: без удвоений"),
    "refused.not_owner": E(Room.NOTICE, "the cube belongs to the opponent", "куб у соперника"),
    "refused.first_turn": E(Room.NOTICE, "no double on the first turn",
                            "в первый ход удваивать нельзя"),
    "refused.after_roll": E(Room.NOTICE, "the dice are already rolled this turn",
                            "удвоение только до броска костей"),
    "refused.blitz": E(Room.NOTICE, "no breaks in blitz", "в блице перерывов нет"),
    "refused.first_game": E(Room.NOTICE, "breaks only after the first game",
                            "перерыв только после первой партии"),
    "refused.shared_taken": E(Room.NOTICE, "the match's break is taken",
                              "перерыв матча уже взят"),
    "refused.none_left": E(Room.NOTICE, "no breaks left", "перерывов больше нет"),
    "refused.too_early": E(Room.NOTICE, "break allowed from 45:00 of match time",
                           "перерыв не ранее 45:00 матча"),
    "hint.take": E(Room.NOTICE, "take: press your clock", "беру: нажмите свои часы"),
    # notices: ignored taps the player is told about
    "ignored.out_of_turn": E(Room.NOTICE, "out of turn: not your clock",
                             "не ваш ход: часы соперника"),
    "ignored.white_starts": E(Room.NOTICE, "white starts: black presses",
                              "начинают белые: нажимают чёрные"),
    "ignored.doubler_waits": E(Room.NOTICE, "waiting for take or pass", "ждём: беру или пас"),
    "ignored.paused": E(Room.NOTICE, "paused: hold cube to resume",
                        "пауза: для продолжения держите куб"),
    "ignored.not_break_taker": E(Room.NOTICE, "break: its taker ends it",
                                 "перерыв заканчивает взявший"),
    # notices: other effects
    "notice.recovered_paused": E(Room.NOTICE, "recovered: paused, hold cube to resume",
                                 "восстановлено: пауза, держите куб"),
    "notice.recovered": E(Room.NOTICE, "recovered after an outage", "восстановлено после сбоя"),
    "notice.overtime": E(Room.NOTICE, "flag: overtime +{time}", "флажок: добавлено +{time}"),
    "notice.early_roll": E(Room.NOTICE, "early roll: logged", "ранний бросок: записан"),
    "notice.warning": E(Room.NOTICE, "warning: {text}", "предупреждение: {text}"),
    "notice.challenge_upheld": E(Room.NOTICE, "challenge upheld", "апелляция принята"),
    "notice.challenge_rejected": E(Room.NOTICE, "challenge rejected ({n})",
                                   "апелляция отклонена ({n})"),
    "notice.undo": E(Room.NOTICE, "arbiter: undo", "судья: отмена хода"),
    "notice.time_changed": E(Room.NOTICE, "arbiter: time changed", "судья: время изменено"),
    "notice.score_changed": E(Room.NOTICE, "arbiter: score changed", "судья: счёт изменён"),
    "notice.cube_set": E(Room.NOTICE, "arbiter: cube set", "судья: куб установлен"),
    "notice.pin_wrong": E(Room.NOTICE, "wrong PIN: play goes on", "неверный ПИН-код: игра идёт"),
    "notice.pin_timeout": E(Room.NOTICE, "no PIN in 30 s: play goes on",
                            "нет ПИН-кода за 30 с: игра идёт"),
    "notice.chord_locked": E(Room.NOTICE, "arbiter mode locked: try later",
                             "режим судьи закрыт: позже"),
    # a chord during a lockout (undone): how long the lockout still lasts, M:SS
    "notice.chord_locked_for": E(Room.NOTICE, "arbiter mode locked for {time} more",
                                 "режим судьи закрыт ещё {time}"),
    "notice.menu_closed": E(Room.NOTICE, "arbiter's menu closed", "меню судьи закрыто"),
    "notice.next_match": E(Room.NOTICE, "loading the next match", "загрузка следующего матча"),
    "notice.no_match_file": E(Room.NOTICE, "no match file on this table",
                              "у стола нет файла матча"),
    "notice.next_match_refused": E(Room.NOTICE, "next match refused: see the log",
                                   "матч не принят: см. журнал"),
    "notice.continue_stick": E(Room.NOTICE, "continuing the stick's match",
                               "продолжаем матч с флешки"),
    "notice.stick_offer_gone": E(Room.NOTICE, "stick's offer gone: plug it in again",
                                 "предложения нет: вставьте флешку"),
    "notice.stick_in_progress": E(Room.NOTICE, "match on: stick refused; arbiter: socket "
                                  "--force",
                                  "идёт матч: отказ; судья: сокет, --force"),
    "notice.provision_stick": E(Room.NOTICE, "taking the provisioning stick",
                                "принимаем настройку с флешки"),
    "notice.provisioned": E(Room.NOTICE, "provisioned: {table}", "настроен: {table}"),
    "notice.provision_refused": E(Room.NOTICE, "provisioning refused: see the log",
                                  "настройка не принята: см. журнал"),
    "notice.stick_refused": E(Room.NOTICE, "stick's match refused: see the log",
                              "матч с флешки не принят: см. журнал"),
}
del E


def language(lang: str) -> str:
    """`lang` if the panels speak it, else English (a config checker lets no other through)."""
    return lang if lang in LANGUAGES else DEFAULT


def say(key: str, lang: str = DEFAULT, **args: object) -> str:
    """The text `key` in `lang`, its placeholders filled from `args`."""
    entry = TEXTS[key]
    return (entry.ru if language(lang) == "ru" else entry.en).format(**args)


def say_lines(key: str, lang: str = DEFAULT, **args: object) -> tuple[tuple[str, str], ...]:
    """The lines of a `Room.LINES` text, each as (left, right), placeholders filled (split
    before they are, so that a name with a "|" stays whole)."""
    entry = TEXTS[key]
    template = entry.ru if language(lang) == "ru" else entry.en
    return tuple((left.format(**args), right.format(**args))
                 for left, _, right in (line.partition("|") for line in template.split("\n")))


def points(amount: Fraction, lang: str = DEFAULT) -> str:
    """A number of points with its noun: "1 point", "2 points"; "1 очко", "3 очка", "5 очков"."""
    from gammonclock.core.rules import format_score

    return say(_points_form(amount, language(lang)), lang, p=format_score(amount))


def _points_form(amount: Fraction, lang: str) -> str:
    if lang == "en":
        return "points.one" if amount == 1 else "points.many"
    if amount.denominator != 1:
        return "points.few"                 # "0.5 очка", "1.5 очка"
    n = amount.numerator
    if n % 10 == 1 and n % 100 != 11:
        return "points.one"
    if 2 <= n % 10 <= 4 and not 12 <= n % 100 <= 14:
        return "points.few"
    return "points.many"


def length(points: int, lang: str = DEFAULT) -> str:
    """A match's length: "7 points", "до 7 очков"."""
    one = points % 10 == 1 and points % 100 != 11 if language(lang) == "ru" else points == 1
    return say("length.one" if one else "length.many", lang, n=points)


class Text(str):
    """A panel text in English that can be said in another language: a `str` (every caller that
    shows or compares the English keeps working) that remembers its id and arguments. What one
    module words for another to show (a notice, the journal alert) is a `Text`; `localized` says
    it in the panel's language."""

    key: str
    args: Mapping[str, object]
    fit: Callable[[str], str] | None

    def __new__(cls, key: str, fit: Callable[[str], str] | None = None, **args: object) -> Text:
        english = say(key, DEFAULT, **args)
        text = super().__new__(cls, fit(english) if fit else english)
        text.key, text.args, text.fit = key, args, fit
        return text

    def said_in(self, lang: str) -> str:
        said = say(self.key, lang, **self.args)
        return self.fit(said) if self.fit else said


# The titles other modules give in English (lifecycle, device): found by their English words.
_TITLES = {entry.en: key for key, entry in TEXTS.items()
           if entry.room is Room.TITLE and "{" not in entry.en}


def localized(text: str, lang: str) -> str:
    """`text` in `lang`: a `Text` in that language, a title of this table's by its English
    words, anything else (a name, a config error) as it is."""
    if isinstance(text, Text):
        return text.said_in(lang)
    key = _TITLES.get(text)
    return say(key, lang) if key is not None else text
