"""Every text a person reads outside the panels, in each language the clock speaks (SPEC §15):
the arbiter's report, the CSV's header, the `check-config` read-back and the arbiter's replies.
The panels have their own table (`hardware.texts`); this one follows its design: one table keyed
by a stable id, each entry in English and Russian, `{placeholders}` filled by `say`, and a test
that fails when a text exists in one language and not the other.

What belongs to a match (its report, its read-back, its replies) is said in the match's
`[display] language` (the match file's, else its device config's: `config.device.language`);
`gammonclock export --language` overrides it.

Russian follows the Russian tournament rules' words (партия, матч, куб, перерыв, флажок, правило
Кроуфорда, судья, резерв, задержка) and Russian conventions: plural forms by the number (1 очко,
2 очка, 5 очков), a decimal comma (9:41,3; 14,2 с), dates as "2 декабря 2026 г.".

Pure: no I/O.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from fractions import Fraction
from string import Formatter
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable

    from gammonclock.core.effects import Effect, Undone
    from gammonclock.sides import Pair

LANGUAGES = ("en", "ru")
DEFAULT = "en"


@dataclass(frozen=True)
class Entry:
    en: str
    ru: str


E = Entry
WORDS: dict[str, Entry] = {
    # --- common: sides, plurals, months ---------------------------------------------------------
    "side.left": E("left", "слева"),
    "side.right": E("right", "справа"),
    # a side as the subject of a sentence, and whose ("left's clock", "часы левого")
    "who.left": E("left", "левый"),
    "who.right": E("right", "правый"),
    "whose.left": E("left's", "левого"),
    "whose.right": E("right's", "правого"),
    # plurals: en has one and many; ru one (1, 21), few (2-4, 22-24, fractions) and many
    "points.one": E("{n} point", "{n} очко"),
    "points.few": E("{n} points", "{n} очка"),
    "points.many": E("{n} points", "{n} очков"),
    "games.one": E("{n} game", "{n} партия"),
    "games.few": E("{n} games", "{n} партии"),
    "games.many": E("{n} games", "{n} партий"),
    "turns.one": E("{n} turn", "{n} ход"),
    "turns.few": E("{n} turns", "{n} хода"),
    "turns.many": E("{n} turns", "{n} ходов"),
    "records.one": E("{n} record", "{n} запись"),
    "records.few": E("{n} records", "{n} записи"),
    "records.many": E("{n} records", "{n} записей"),
    "breaks.one": E("{n} break", "{n} перерыв"),
    "breaks.few": E("{n} breaks", "{n} перерыва"),
    "breaks.many": E("{n} breaks", "{n} перерывов"),
    "presses.one": E("{n} press", "{n} нажатие"),
    "presses.few": E("{n} presses", "{n} нажатия"),
    "presses.many": E("{n} presses", "{n} нажатий"),
    "appends.one": E("{n} append", "{n} дозапись"),
    "appends.few": E("{n} appends", "{n} дозаписи"),
    "appends.many": E("{n} appends", "{n} дозаписей"),
    # a match's length: "a match to 7 points" (after "до" ru has the genitive: one (1, 21), many)
    "length.one": E("a match to {n} point", "матч до {n} очка"),
    "length.few": E("a match to {n} points", "матч до {n} очков"),
    "length.many": E("a match to {n} points", "матч до {n} очков"),
    # "to 7", "до 7 очков" (a report's subtitle)
    "upto.one": E("{n}", "до {n} очка"),
    "upto.many": E("{n}", "до {n} очков"),
    "unit.s": E("{n} s", "{n} с"),
    "date": E("{day} {month_name} {year}", "{day} {month_name} {year} г."),
    "month.1": E("January", "января"), "month.2": E("February", "февраля"),
    "month.3": E("March", "марта"), "month.4": E("April", "апреля"),
    "month.5": E("May", "мая"), "month.6": E("June", "июня"),
    "month.7": E("July", "июля"), "month.8": E("August", "августа"),
    "month.9": E("September", "сентября"), "month.10": E("October", "октября"),
    "month.11": E("November", "ноября"), "month.12": E("December", "декабря"),

    # --- disciplines (rules.DISCIPLINES) --------------------------------------------------------
    "discipline.backgammon": E("backgammon", "бэкгаммон"),
    "discipline.backgammon_blitz": E("backgammon_blitz", "бэкгаммон-блиц"),
    "discipline.backgammon_doubles": E("backgammon_doubles", "парный бэкгаммон"),
    "discipline.sprintgammon": E("sprintgammon", "спринтгаммон"),
    "discipline.longgammon": E("longgammon", "лонггаммон"),
    "discipline.longgammon_blitz": E("longgammon_blitz", "лонггаммон-блиц"),

    # --- the read-back (SPEC §13.1): labels, then words -----------------------------------------
    "rb.discipline": E("discipline", "дисциплина"),
    "rb.start": E("start", "начало"),
    "rb.time": E("time", "время"),
    "rb.breaks": E("breaks", "перерывы"),
    "rb.draws": E("draws", "ничья"),
    "rb.players": E("players", "игроки"),
    "rb.event": E("event", "турнир"),
    "rb.no_cube": E("no cube", "без куба"),
    "rb.crawford": E("Crawford rule", "правило Кроуфорда"),
    "rb.no_crawford": E("no Crawford rule", "без правила Кроуфорда"),
    "rb.discipline_line": E("{discipline}, {length}, {cube}", "{discipline}, {length}, {cube}"),
    "rb.crawford_first": E(", game 1 is the Crawford game", ", партия 1 — партия Кроуфорда"),
    "rb.crawford_done": E(", Crawford game already played", ", партия Кроуфорда уже сыграна"),
    "rb.each": E("{time} each{extra}; {flag}", "{time} каждому{extra}; {flag}"),
    "rb.delay": E(" + {delay} delay (simple)", " + задержка {delay} (простая)"),
    "rb.bronstein": E(" + {delay} delay (Bronstein)", " + задержка {delay} (Бронштейн)"),
    "rb.fischer": E(" + {delay} a move (Fischer)", " + {delay} за ход (Фишер)"),
    "rb.no_delay": E(", no delay", ", без задержки"),
    "rb.flag_loses": E("a flag loses the match", "падение флажка — поражение в матче"),
    "rb.flag_overtime": E("a first flag gives {time} once, a second loses",
                          "первое падение флажка даёт {time} один раз, второе — поражение"),
    "rb.breaks_none": E("none", "нет"),
    "rb.breaks_shared": E("{n} in the whole match, shared, {length}, from {after}",
                          "{n} на весь матч, общий, {length}, не ранее {after}"),
    "rb.breaks_each": E("{n} per player, {length} each", "{n} каждому, по {length}"),
    "rb.draws_each": E("{points} each", "по {points} каждому"),
    "rb.players_line": E("left: {left}, right: {right}", "слева: {left}, справа: {right}"),

    # the device config's read-back (check-config on a device config)
    "dev.table": E("table", "стол"),
    "dev.match_file": E("match file", "файл матча"),
    "dev.no_match_file": E("none: the clock waits for a match (idle)",
                           "нет: часы ждут матча (ожидание)"),
    "dev.buttons": E("buttons", "кнопки"),
    "dev.button": E("{button} GPIO {pin}", "{button} GPIO {pin}"),
    "button.left": E("left", "левая"),
    "button.right": E("right", "правая"),
    "button.cube": E("cube", "куб"),
    "dev.panels": E("panels", "панели"),
    "dev.panel": E("{side} {driver} on bus {port} at {address}",
                   "{side} {driver} на шине {port}, адрес {address}"),
    "dev.dice_reader": E("dice reader", "считыватель костей"),
    "dev.none": E("none", "нет"),
    "dev.journals": E("journals", "журналы"),
    "dev.arbiter": E("arbiter", "судья"),
    "dev.socket_group": E("socket group {group}", "сокет: группа {group}"),
    "dev.socket_service": E("socket: the service's group", "сокет: группа службы"),
    "dev.pin_set": E(", panel PIN set", ", ПИН-код для панелей задан"),
    "dev.no_pin": E(", no panel PIN", ", ПИН-кода для панелей нет"),
    "dev.hall": E("hall", "зал"),

    # --- `gammonclock check-hardware` (device/check.py): the device's language, `--language`
    # overrides; commands, paths, config keys, GPIO numbers and the system's calls as written
    "hw.start": E("gammonclock hardware check: table {table}, pin factory {factory}. Stop the "
                  "clock first ({command}): it uses the same pins and panels.",
                  "Проверка оборудования gammonclock: стол {table}, выводы GPIO через {factory}. "
                  "Сначала остановите часы ({command}): они используют те же выводы и панели."),
    "hw.card": E("State card (the state folder {folder}):",
                 "Карта памяти (папка состояния {folder}):"),
    "hw.card.unchecked": E("  not checked: {why}", "  не проверена: {why}"),
    "hw.card.same_fs": E("{folder}, on the same file system as {state}",
                         "{folder}, на той же файловой системе, что и {state}"),
    "hw.card.missing": E("{state} does not exist and no writable folder on its file system was "
                         "found: run the check with sudo",
                         "{state} не существует, и на её файловой системе нет папки, доступной "
                         "для записи: запустите проверку через sudo"),
    "hw.card.unwritable": E("{state} is not writable for this user and no writable folder on "
                            "its file system was found: run the check with sudo",
                            "в {state} этот пользователь не может писать, и на её файловой "
                            "системе нет папки, доступной для записи: запустите проверку через "
                            "sudo"),
    "hw.card.measured": E("  {appends} + fdatasync into zeros filled ahead (as the journal) in "
                          "{where}, {gap} ms apart: {figures}",
                          "  {appends} с fdatasync в заранее записанные нули (как пишет журнал) "
                          "в {where}, через каждые {gap} мс: {figures}"),
    "hw.card.figures": E("fdatasync p50 {p50} ms, p99 {p99} ms, max {max} ms",
                         "fdatasync: медиана {p50} мс, 99-й процентиль {p99} мс, максимум {max} "
                         "мс"),
    "hw.card.fit": E("fit (p99 within {fit} ms)",
                     "годна (99-й процентиль не больше {fit} мс)"),
    "hw.card.slow": E("slow (p99 over {fit} ms, within {slow} ms): presses will now and then "
                      "show late; a faster card is better ({hint})",
                      "медленная (99-й процентиль больше {fit} мс, но не больше {slow} мс): "
                      "нажатия иногда будут показаны с опозданием; лучше поставить более быструю "
                      "карту ({hint})"),
    "hw.card.replace": E("REPLACE THE CARD (p99 over {slow} ms): presses will show late; put "
                         "the image on a new card before the event ({hint})",
                         "ЗАМЕНИТЕ КАРТУ ПАМЯТИ (99-й процентиль больше {slow} мс): нажатия "
                         "будут показаны с опозданием; запишите образ на новую карту до начала "
                         "турнира ({hint})"),
    "hw.card.hint": E("an A1 or A2 card of a known brand",
                      "карту класса A1 или A2 известного производителя"),
    "hw.verdict.fit": E("FIT", "ГОДНА"),
    "hw.verdict.slow": E("SLOW", "МЕДЛЕННАЯ"),
    "hw.verdict.replace": E("REPLACE", "ЗАМЕНИТЬ"),
    "hw.sum.card": E("  state card: {verdict} ({figures})",
                     "  карта памяти: {verdict} ({figures})"),
    "hw.sum.card_unchecked": E("  state card: not checked ({why})",
                               "  карта памяти: не проверена ({why})"),
    "hw.panels": E("Panels:", "Панели:"),
    "hw.panel.left": E("left panel", "левая панель"),
    "hw.panel.right": E("right panel", "правая панель"),
    "hw.panel_at": E("{driver} on bus {port} at {address}",
                     "{driver} на шине {port}, адрес {address}"),
    "hw.panel.in_memory": E("in memory", "в памяти"),
    "hw.panel.not_config": E("not from the config", "не из конфигурации"),
    "hw.ok": E("OK", "в порядке"),
    "hw.failed": E("FAILED", "НЕ РАБОТАЕТ"),
    "hw.failed.nothing": E("FAILED: nothing drawn (the log above says why)",
                           "НЕ РАБОТАЕТ: ничего не нарисовано (причина — в сообщениях выше)"),
    "hw.failed.error": E("FAILED: {error}", "НЕ РАБОТАЕТ: {error}"),
    "hw.panel.answers_now": E("answers now", "теперь отвечает"),
    "hw.panels.look": E("  Each panel must say LEFT or RIGHT as it faces that player (swapped: "
                        "swap `address` in [displays.left] and [displays.right]) inside a frame "
                        "on all four edges (an edge missing or the picture shifted: check "
                        "`driver`).",
                        "  Каждая панель должна показывать ЛЕВАЯ или ПРАВАЯ — ту сторону, где "
                        "сидит игрок, к которому она обращена (перепутаны: поменяйте местами "
                        "`address` в [displays.left] и [displays.right]), в рамке по всем "
                        "четырём краям (края нет или изображение сдвинуто: проверьте `driver`)."),
    "hw.hint.no_answer": E("nothing answers at {address} on bus {port}: check its VCC, GND, SDA "
                           "and SCL and its address jumper, then `i2cdetect -y {port}` ({doc})",
                           "по адресу {address} на шине {port} никто не отвечает: проверьте "
                           "провода VCC, GND, SDA и SCL панели и её перемычку адреса, затем "
                           "`i2cdetect -y {port}` ({doc})"),
    "hw.hint.no_bus": E("{bus} does not exist: I²C is off (sudo raspi-config nonint do_i2c 0, "
                        "then reboot) or `port` is wrong ({doc})",
                        "{bus} не существует: I²C выключен (sudo raspi-config nonint do_i2c 0, "
                        "затем перезагрузка) или неверен `port` ({doc})"),
    "hw.hint.no_access": E("no permission to open {bus}: add the user to the i2c group (sudo "
                           "usermod -aG i2c $USER, then log in again), or I²C is off ({doc})",
                           "нет прав на открытие {bus}: добавьте пользователя в группу i2c "
                           "(sudo usermod -aG i2c $USER, затем войдите заново) или I²C выключен "
                           "({doc})"),
    "hw.hint.see": E("see {doc}", "см. {doc}"),
    "hw.buttons": E("Buttons:", "Кнопки:"),
    "hw.button.left": E("LEFT button (GPIO {gpio})", "левая кнопка (GPIO {gpio})"),
    "hw.button.right": E("RIGHT button (GPIO {gpio})", "правая кнопка (GPIO {gpio})"),
    "hw.button.cube": E("CUBE button (GPIO {gpio})", "кнопка куба (GPIO {gpio})"),
    "hw.bare.left": E("LEFT button", "левая кнопка"),
    "hw.bare.right": E("RIGHT button", "правая кнопка"),
    "hw.bare.cube": E("CUBE button", "кнопка куба"),
    "hw.button.pressed_already": E("{button}: reads pressed already: held, or its pin is "
                                   "shorted to ground",
                                   "{button}: уже нажата: её держат, или её вывод замкнут на "
                                   "землю"),
    "hw.still_running": E("{error} (is the clock still running? {command})",
                          "{error} (часы ещё работают? {command})"),
    "hw.buzzer.on": E("  buzzer (GPIO {gpio}): a beep per press",
                      "  зуммер (GPIO {gpio}): сигнал при каждом нажатии"),
    "hw.buzzer.failed": E("  buzzer (GPIO {gpio}): cannot be set up (the log says why); the "
                          "check goes on without it",
                          "  зуммер (GPIO {gpio}): не удалось настроить (причина — в сообщениях "
                          "выше); проверка продолжается без него"),
    "hw.buzzer.off": E("  buzzer: off ([buzzer] enabled = false)",
                       "  зуммер: выключен ([buzzer] enabled = false)"),
    "hw.header_pin": E(" (header pin {pin})", " (контакт {pin} разъёма)"),
    "hw.down": E("  {button}: down", "  {button}: нажата"),
    "hw.up": E("  {button}: up", "  {button}: отпущена"),
    "hw.up_after": E("  {button}: up after {held}", "  {button}: отпущена через {held}"),
    "hw.prompt": E("Press and release each button ({ends} ends the check):",
                   "Нажмите и отпустите каждую кнопку (проверку завершает {ends}):"),
    "hw.ends_or": E("Ctrl-C, or {seconds}", "Ctrl-C или {seconds}"),
    "hw.summary": E("Summary:", "Итог:"),
    "hw.sum.never": E("  {button}: never pressed — check its wiring: GPIO {gpio}{header} to "
                      "ground ({doc})",
                      "  {button}: ни разу не нажата — проверьте её подключение: GPIO "
                      "{gpio}{header} на землю ({doc})"),
    "hw.failed.panel.left": E("the left panel", "левая панель"),
    "hw.failed.panel.right": E("the right panel", "правая панель"),
    "hw.failed.button.left": E("the LEFT button", "левая кнопка"),
    "hw.failed.button.right": E("the RIGHT button", "правая кнопка"),
    "hw.failed.button.cube": E("the CUBE button", "кнопка куба"),
    "hw.failed.card": E("the state card (replace it)", "карта памяти (замените её)"),
    "hw.not_all_good": E("Not all good: {failed} (exit status 1).",
                         "Не всё в порядке: {failed} (код выхода 1)."),
    "hw.not_all_good_pins": E("Not all good (exit status 1).", "Не всё в порядке (код выхода 1)."),
    "hw.all_good": E("All good: both panels answered and every button was pressed (exit status "
                     "0).",
                     "Всё в порядке: обе панели ответили, каждая кнопка нажата (код выхода 0)."),
    # the pins (hardware/buttons.py's HardwareError; the English hints are config.schema's
    # PIN_FACTORIES', a test keeps them equal)
    "hw.pins.unknown": E("unknown pin factory {name}; use one of: {names}",
                         "неизвестный способ доступа к выводам {name}; возможны: {names}"),
    "hw.pins.failed": E("pin factory {name} cannot be created: {error}; {hint}",
                        "не удалось открыть выводы через {name}: {error}; {hint}"),
    "hw.pins.hint.lgpio": E(
        "install lgpio (Raspberry Pi OS: sudo apt install python3-lgpio; pip: gammonclock[pi]) "
        "and run on a Raspberry Pi with /dev/gpiochip* readable",
        "установите lgpio (Raspberry Pi OS: sudo apt install python3-lgpio; pip: "
        "gammonclock[pi]) и запускайте на Raspberry Pi с доступными для чтения /dev/gpiochip*"),
    "hw.pins.running_hint.lgpio": E(
        "lgpio makes its notification pipe in the working directory (or in $LG_WD): start the "
        "clock from a folder its user can write, as the unit does (WorkingDirectory= and LG_WD= "
        "/run/gammonclock); its user must be in the gpio group to open /dev/gpiochip*",
        "lgpio создаёт свой канал уведомлений в рабочей папке (или в $LG_WD): запускайте часы "
        "из папки, в которую их пользователь может писать, как это делает служба "
        "(WorkingDirectory= и LG_WD= /run/gammonclock); чтобы открыть /dev/gpiochip*, "
        "пользователь должен входить в группу gpio"),
    "hw.pins.hint.rpigpio": E(
        "install RPi.GPIO (or rpi-lgpio on a Pi 5, where RPi.GPIO does not work) and run on a "
        "Raspberry Pi; lgpio is the recommended backend",
        "установите RPi.GPIO (или rpi-lgpio на Pi 5, где RPi.GPIO не работает) и запускайте на "
        "Raspberry Pi; рекомендуется lgpio"),
    "hw.pins.hint.mock": E(
        "gpiozero's MockFactory should always load; check the gpiozero installation",
        "MockFactory из gpiozero должен загружаться всегда; проверьте установку gpiozero"),
    "hw.pins.shared": E("button {button} and button {other} are both on GPIO {gpio}; give each "
                        "button its own pin ([pins])",
                        "кнопки {button} и {other} обе на GPIO {gpio}; дайте каждой кнопке свой "
                        "вывод ([pins])"),
    "hw.pins.button_failed": E("button {button} on GPIO {gpio} cannot be set up: {error}",
                               "не удалось настроить кнопку {button} на GPIO {gpio}: {error}"),
    # the panels' test screen (its words in capitals are what the terminal's words name)
    "hw.screen.table": E("table {table}", "стол {table}"),
    "hw.screen.panel.left": E("LEFT panel", "панель ЛЕВАЯ"),
    "hw.screen.panel.right": E("RIGHT panel", "панель ПРАВАЯ"),
    "hw.screen.big.left": E("LEFT", "ЛЕВАЯ"),
    "hw.screen.big.right": E("RIGHT", "ПРАВАЯ"),
    "hw.screen.press": E("press each button", "нажмите все кнопки"),
    "hw.screen.down.left": E("LEFT button down", "ЛЕВАЯ нажата"),
    "hw.screen.down.right": E("RIGHT button down", "ПРАВАЯ нажата"),
    "hw.screen.down.cube": E("CUBE button down", "КУБ нажат"),
    "hw.screen.up.left": E("LEFT button up", "ЛЕВАЯ отпущена"),
    "hw.screen.up.right": E("RIGHT button up", "ПРАВАЯ отпущена"),
    "hw.screen.up.cube": E("CUBE button up", "КУБ отпущен"),

    # --- `gammonclock arbiter`, the client (cli/arbiter.py, runtime/arbiter_client.py): its own
    # words in `--language`, else the device config's [display] language, else English; what
    # follows a reply (its labels) in the reply's language (the match's). Commands, paths and
    # the OS's words (an errno the catalogue does not know) as written.
    "cl.no_command": E("give a command, e.g. `gammonclock arbiter status`",
                       "укажите команду, например `gammonclock arbiter status`"),
    "cl.state_dir_needs": E("--state-dir needs a folder", "после --state-dir нужна папка"),
    "cl.language_choice": E("--language {value}: use one of: {languages}",
                            "--language {value}: возможны: {languages}"),
    "cl.one_source": E("give one journal or folder: continue FROM [--force] [--unverified]",
                       "укажите один журнал или одну папку: continue FROM [--force] "
                       "[--unverified]"),
    "cl.one_match_file": E("give one match file: new-match FILE [--force]",
                           "укажите один файл матча: new-match FILE [--force]"),
    "cl.not_allowed": E("{path}: permission denied: this login may not use the clock's socket; "
                        "an administrator adds it to the arbiters' groups (sudo scripts/install "
                        "--arbiter $USER), then log in again",
                        "{path}: доступ запрещён: этой учётной записи нельзя обращаться к сокету "
                        "часов; администратор добавляет её в группы судей (sudo scripts/install "
                        "--arbiter $USER), после чего войдите в систему заново"),
    "cl.no_clock": E("no clock answers at {path} ({why})",
                     "часы не отвечают по адресу {path} ({why})"),
    # the OS's words for why no clock answers, in Russian (English: the OS's strerror as is)
    "cl.errno.ENOENT": E("No such file or directory", "сокета нет: часы не запущены"),
    "cl.errno.ECONNREFUSED": E("Connection refused",
                               "в соединении отказано: часы не слушают сокет"),
    "cl.errno.EAGAIN": E("Resource temporarily unavailable",
                         "очередь подключений переполнена"),
    "cl.errno.ENOTSOCK": E("Socket operation on non-socket", "это не сокет"),
    "cl.timed_out": E("timed out", "время ожидания истекло"),
    "cl.not_utf8_word": E("word {number} ({word}) is not UTF-8 text; nothing was sent",
                          "слово {number} ({word}) — не текст в UTF-8; ничего не отправлено"),
    "cl.file_not_utf8": E("the file is not UTF-8 text; nothing was sent",
                          "файл — не текст в UTF-8; ничего не отправлено"),
    "cl.too_long": E("the request is longer than the socket takes ({max} bytes as JSON); "
                     "nothing was sent",
                     "запрос длиннее, чем принимает сокет ({max} байт в JSON); ничего не "
                     "отправлено"),
    "cl.unknown": E("whether `{what}` was applied is unknown: check with `gammonclock arbiter "
                    "status` before repeating it",
                    "неизвестно, применена ли команда `{what}`: проверьте через `gammonclock "
                    "arbiter status`, прежде чем повторять её"),
    "cl.closed_twice": E("the clock closed the connection without a reply, twice; {unknown}",
                         "часы дважды закрыли соединение, не ответив; {unknown}"),
    "cl.no_reply_twice": E("the clock took the request but no reply came ({why}), twice; "
                           "{unknown}",
                           "часы приняли запрос, но ответ не пришёл ({why}), и так дважды; "
                           "{unknown}"),
    "cl.closed_before": E("the connection closed before a reply",
                          "соединение закрылось до ответа"),
    "cl.closed_midway": E("the connection closed in the middle of the reply",
                          "соединение закрылось посреди ответа"),
    "cl.not_json": E("the reply is not JSON: {data}", "ответ — не JSON: {data}"),
    "cl.not_answer": E("the reply is not an answer of the clock: {data}",
                       "ответ не похож на ответ часов: {data}"),
    "cl.other_request": E("the reply is for another request", "ответ относится к другому запросу"),
    "cl.reapplied": E("applied again", "применено снова"),
    "cl.no_longer_applied": E("no longer applies", "больше не применяется"),
    "cl.refused": E("refused", "отказано"),

    # --- the journal format's own diagnostics (journal/records.py, inputs.py, replay.py): what a
    # record holds that this firmware cannot read; the format's fields, kinds, types and values
    # as written (for whoever reads a journal by hand), the rest said
    "jf.not_json": E("line {line}: the record is not JSON text",
                     "строка {line}: запись — не текст JSON"),
    "jf.not_object": E("line {line}: the record is not a JSON object",
                       "строка {line}: запись — не объект JSON"),
    "jf.no_seq": E("line {line}: the record has no sequence number (seq is {value}; a whole "
                   "number from 0 is due)",
                   "строка {line}: у записи нет порядкового номера (seq равен {value}; нужно "
                   "целое число от 0)"),
    "jf.record": E("record {seq} (line {line}): {problem}",
                   "запись {seq} (строка {line}): {problem}"),
    "jf.record_at": E("{path}: record {seq} (line {line}): {problem}",
                      "{path}: запись {seq} (строка {line}): {problem}"),
    "jf.field_missing": E("the field {name} is missing", "нет поля {name}"),
    "jf.field_bad": E("the field {name} is {value}; it must be {allowed}",
                      "поле {name} равно {value}; нужно: {allowed}"),
    "jf.allowed.text": E("text", "текст"),
    "jf.allowed.ns": E("a whole number of ns from 0 to {max}", "целое число нс от 0 до {max}"),
    "jf.allowed.boot": E("text of up to 200 characters", "текст длиной до 200 символов"),
    "jf.allowed.object": E("an object", "объект"),
    "jf.allowed.hex": E("64 hex digits", "64 шестнадцатеричные цифры"),
    "jf.kind_newer": E("kind {kind} is unknown to this firmware (version {version}); the "
                       "journal may come from a newer version",
                       "вид записи {kind} неизвестен этой прошивке (версия {version}); журнал, "
                       "возможно, записан более новой версией"),
    "jf.header_late": E("a header record after the first record",
                        "запись заголовка после первой записи"),
    "jf.header_format": E("the header's format is {value}; a whole number from 1 is due",
                          "format заголовка равен {value}; нужно целое число от 1"),
    "jf.format_newer": E("journal format {fmt} is newer than this firmware's ({format}, version "
                         "{version}); the journal comes from a newer version",
                         "формат журнала {fmt} новее, чем у этой прошивки ({format}, версия "
                         "{version}); журнал записан более новой версией"),
    "jf.header_config": E("the header's config is {value}; the config text is due",
                          "config заголовка равен {value}; нужен текст конфигурации"),
    "jf.header_match_no": E("the header's match_no is {value}; a whole number is due",
                            "match_no заголовка равен {value}; нужно целое число"),
    "jf.header_continues": E("the header's continues is {value}; an object naming a file is due",
                             "continues заголовка равен {value}; нужен объект с именем файла"),
    "jf.effects": E("the effects are {value}; a list of objects is due",
                    "effects равны {value}; нужен список объектов"),
    "jf.input": E("the input is {value}; an object with a type is due",
                  "input равен {value}; нужен объект с полем type"),
    "jf.torn": E("the torn record's {name} is {value}; a byte count is due",
                 "{name} оборванной записи равен {value}; нужно число байтов"),
    "jf.snapshot_format": E("the snapshot's format is {value}; a whole number from 1 is due",
                            "format снимка равен {value}; нужно целое число от 1"),
    "jf.snapshot_newer": E("snapshot format {fmt} is newer than this firmware's ({format}, "
                           "version {version}); the journal comes from a newer version",
                           "формат снимка {fmt} новее, чем у этой прошивки ({format}, версия "
                           "{version}); журнал записан более новой версией"),
    "jf.snapshot_part": E("the snapshot's {name} is {value}; {kind} is due",
                          "{name} снимка равен {value}; нужно: {kind}"),
    "jf.type.int": E("an int", "целое число"),
    "jf.type.dict": E("a dict", "объект"),
    "jf.type.list": E("a list", "список"),
    "jf.type.bool": E("a bool", "логическое значение"),
    "jf.pin_key": E("PIN key {pin_key} is unknown; one of {keys} is due",
                    "клавиша ПИН-кода {pin_key} неизвестна; нужна одна из: {keys}"),
    "jf.pin_digest": E("a PIN input has a digest exactly when its key is end",
                       "у ввода ПИН-кода digest есть тогда и только тогда, когда клавиша — end"),
    "jf.arbiter_input": E("the arbiter input {command} cannot be read: {error}",
                          "команду судьи {command} нельзя прочитать: {error}"),
    "jf.dice_input": E("the dice input {line} cannot be read: {error}",
                       "строку считывателя костей {line} нельзя прочитать: {error}"),
    "jf.dice_dropped": E("a count of {count} dropped dice lines is out of range",
                         "число пропущенных строк считывателя костей ({count}) вне допустимых "
                         "пределов"),
    "jf.provision_offer": E("a provisioning stick's offer has either all of {fields} or none",
                            "предложение флешки настройки содержит все поля {fields} или ни "
                            "одного"),
    "jf.stick_offer": E("a USB stick's offer has either all of {fields} or none, its length and "
                        "record within bounds",
                        "предложение с флешки содержит либо все поля {fields}, либо ни одного, "
                        "а длина матча и номер записи — в допустимых пределах"),
    "jf.handover_chord": E("a hand-over's chord of {chord_ns} ns is out of range "
                           "({low}..{high} ns)",
                           "аккорд передачи матча ({chord_ns} нс) вне допустимых пределов "
                           "({low}..{high} нс)"),
    "jf.handover_pin": E("a hand-over's PIN hash cannot be used: {error}",
                         "хеш ПИН-кода при передаче матча нельзя использовать: {error}"),
    "jf.no_input_type": E("the input has no type", "у ввода нет типа (type)"),
    "jf.input_type": E("input type {kind} is unknown to this firmware (version {version}); the "
                       "journal may come from a newer version",
                       "тип ввода {kind} неизвестен этой прошивке (версия {version}); журнал, "
                       "возможно, записан более новой версией"),
    "jf.input_field_missing": E("the {kind} input's {name} is missing; {type} is due",
                                "у ввода {kind} нет поля {name}; нужен тип {type}"),
    "jf.input_field_type": E("the {kind} input's {name} is {got}; {type} is due",
                             "поле {name} ввода {kind} имеет тип {got}; нужен тип {type}"),
    "jf.input_long": E("the {kind} input's {name} is longer than {max} characters",
                       "поле {name} ввода {kind} длиннее {max} символов"),
    "jf.button": E("button {name} is unknown; one of {buttons} is due",
                   "кнопка {name} неизвестна; нужна одна из: {buttons}"),
    "jf.before": E("its instant ({t} ns) is before the match's ({now} ns): instants never go "
                   "back",
                   "её момент ({t} нс) раньше момента матча ({now} нс): время не идёт назад"),

    # --- the report: page and sections ----------------------------------------------------------
    "r.title": E("{title} — match report", "{title} — протокол матча"),
    "r.vs": E("{left} v {right}", "{left} — {right}"),
    "r.subtitle": E("gammonclock match report — {discipline} to {length}",
                    "протокол матча gammonclock — {discipline}, {length}"),
    "r.subtitle_table": E(" — table {table}", " — стол {table}"),
    "r.h.match": E("The match", "Матч"),
    "r.h.result": E("Result", "Результат"),
    "r.h.games": E("Games", "Партии"),
    "r.h.arbiter": E("Arbiter actions", "Действия судьи"),
    "r.h.time": E("Time", "Время"),
    "r.h.breaks": E("Breaks", "Перерывы"),
    "r.h.pauses": E("Pauses", "Паузы"),
    "r.h.incidents": E("Flags, outages and the end", "Флажки, сбои и окончание"),
    "r.h.dice": E("Dice", "Кости"),
    "r.h.signatures": E("Signatures", "Подписи"),
    "r.h.turns": E("Turns", "Ходы"),
    # the particulars
    "r.event": E("Event", "Турнир"),
    "r.round": E("Round", "Тур"),
    "r.table": E("Table", "Стол"),
    "r.players": E("Players", "Игроки"),
    "r.discipline": E("Discipline", "Дисциплина"),
    "r.length": E("Length", "Длина матча"),
    "r.time_control": E("Time control", "Контроль времени"),
    "r.breaks": E("Breaks", "Перерывы"),
    "r.started": E("Started", "Начало"),
    "r.ended": E("Ended", "Окончание"),
    "r.journal_ends": E("Journal ends", "Журнал обрывается"),
    "r.not_finished": E("(not finished)", "(не окончен)"),
    "r.synchronised": E("Wall clock synchronised", "Часы синхронизированы"),
    "r.none_given": E("none given", "не указан"),
    "r.not_recorded": E("not recorded", "не записан"),
    "r.not_known": E("not known", "неизвестно"),
    "r.sync_yes": E("yes", "да"),
    "r.sync_no": E("NO — times may be wrong (no time source at the venue)",
                   "НЕТ — время может быть неверным (в зале нет источника времени)"),
    "r.points_from": E("{length} from {left}-{right}", "{length}, со счёта {left}-{right}"),
    "r.utc": E("{date} {time} UTC", "{date}, {time} UTC"),
    # the result
    "r.result": E("Result", "Результат"),
    "r.wins": E("{who} wins", "победа: {who}"),
    "r.tie": E("no winner (tie)", "без победителя (ничья)"),
    "r.result_line": E("{who} {score} ({reason})", "{who}, {score} ({reason})"),
    "r.moved_line": E("{how} at {score}: no result here (the journal there has it)",
                      "{how} при счёте {score}: результата здесь нет (он в журнале тех часов)"),
    "r.unfinished": E("not finished: {phase}, game {game}, score {score}",
                      "не окончен: {phase}, партия {game}, счёт {score}"),
    "r.games_played": E("Games played", "Сыграно партий"),
    "r.match_time": E("Match time", "Время матча"),
    "r.journal": E("Journal", "Журнал"),
    "r.journal_line": E("{path}: {records}, last seal {mac}",
                        "{path}: {records}, последняя печать {mac}"),
    "r.seal_check": E("Seal check", "Проверка печатей"),
    "r.failed_check": E("The journal failed its check: {message}",
                        "Журнал не прошёл проверку: {message}"),
    "r.about_journal": E("About this journal", "О журнале"),
    # the verdict, first on the page (SPEC §14.1)
    "r.verdict": E("Journal check: {check}", "Проверка журнала: {check}"),
    "r.tampered_banner": E("This journal does not verify. It was exported anyway "
                           "(--allow-tampered): it is not a valid record of the match.",
                           "Журнал не прошёл проверку. Он выгружен всё равно "
                           "(--allow-tampered): это не достоверная запись матча."),
    "r.title_tampered": E("TAMPERED — {title}", "ЖУРНАЛ ИЗМЕНЁН — {title}"),
    "end.score": E("score", "по счёту"),
    "end.flag": E("flag", "падение флажка"),
    "end.disqualified": E("disqualified", "дисквалификация"),
    "end.challenges": E("challenges", "проиграны апелляции"),
    "end.abandoned": E("abandoned", "прерван судьёй"),
    "end.moved": E("moved to another clock", "перенесён на другие часы"),
    "end.moved_to": E("moved to {table}", "перенесён на стол {table}"),
    "phase.between_games": E("between_games", "между партиями"),
    "phase.running": E("running", "идёт партия"),
    "phase.cube_offered": E("cube_offered", "предложено удвоение"),
    "phase.result_entry": E("result_entry", "ввод результата"),
    "phase.paused": E("paused", "пауза"),
    "phase.break": E("break", "перерыв"),
    "phase.match_over": E("match_over", "матч окончен"),
    "phase.arbiter": E("arbiter", "режим судьи"),
    # the games
    "r.no_game": E("No game was played.", "Ни одной партии не сыграно."),
    "r.in_progress": E("in progress", "идёт"),
    "r.match_over_in": E("match over ({why})", "матч окончен ({why})"),
    "r.draw": E("draw", "ничья"),
    "r.arbiter_entered": E("arbiter", "судья"),
    "r.entered_by": E("entered by {name}", "ввёл {name}"),
    "r.yes": E("yes", "да"),
    "r.game": E("Game", "Партия"),
    "r.started_at": E("Started (UTC, match time)", "Начало (UTC, время матча)"),
    "r.first_to_play": E("First to play", "Первый ход"),
    "r.crawford": E("Crawford", "Кроуфорд"),
    "r.points": E("Points", "Очки"),
    "r.score_after": E("Score after", "Счёт после"),
    "r.turns": E("Turns", "Ходы"),
    "r.cube": E("Cube", "Куб"),
    "r.entered": E("Entered", "Ввёл"),
    "kind.single": E("single", "простая"),
    "kind.gammon": E("gammon", "гаммон"),
    "kind.backgammon": E("backgammon", "бэкгаммон"),
    "kind.oin": E("oin", "ойн"),
    "kind.mars": E("mars", "марс"),
    "kind.draw": E("draw", "ничья"),
    "kind.pass": E("pass", "пас"),
    "kind.forfeit": E("forfeit", "присуждена судьёй"),
    "cube.doubled": E("doubled to {n}", "удвоил до {n}"),
    "cube.took": E("took {n}", "взял {n}"),
    "cube.passed": E("passed", "пас"),
    # the time
    "t.turns": E("Turns (moves and cube decisions)", "Ходы (ходы и решения по кубу)"),
    "t.total": E("Total think time", "Всего на обдумывание"),
    "t.charged": E("Charged to the reserve", "Списано с резерва"),
    "t.delay_used": E("Delay used", "Использовано задержки"),
    "t.median": E("Median think", "Медиана обдумывания"),
    "t.longest": E("Longest think", "Самое долгое обдумывание"),
    "t.longest_at": E("{span} (game {game}, turn {turn})", "{span} (партия {game}, ход {turn})"),
    "t.late": E("Late from breaks", "Опоздания с перерывов"),
    "t.reserve_left": E("Reserve left", "Остаток резерва"),
    # the arbiter
    "a.none": E("No arbiter action.", "Судья не вмешивался."),
    "a.refused": E("refused: {why}", "отказано: {why}"),
    "a.refused_mark": E(" (refused)", " (отказано)"),
    "a.when": E("When (UTC, match time)", "Когда (UTC, время матча)"),
    "a.command": E("Command", "Команда"),
    "a.kind": E("Kind", "Вид"),
    "a.did": E("What it did", "Что сделано"),
    "a.by": E("By", "Кто"),
    "a.given": E("time given +{time}", "добавлено времени +{time}"),
    "a.taken": E("time taken −{time}", "снято времени −{time}"),
    "cat.time given": E("time given", "добавлено время"),
    "cat.time taken": E("time taken", "снято время"),
    "cat.point penalty": E("point penalty", "штрафное очко"),
    "cat.game forfeited": E("game forfeited", "партия присуждена"),
    "cat.disqualification": E("disqualification", "дисквалификация"),
    "cat.warning": E("warning", "предупреждение"),
    "cat.challenge": E("challenge", "апелляция"),
    "cat.correction": E("correction", "исправление"),
    "cat.undo": E("undo", "отмена"),
    "cat.clock paused": E("clock paused", "часы остановлены"),
    "cat.clock resumed": E("clock resumed", "часы запущены"),
    "cat.match abandoned": E("match abandoned", "матч прерван"),
    "cat.match moved": E("match moved", "матч перенесён"),
    "cat.other": E("other", "прочее"),
    "author.unknown": E("unknown", "неизвестно"),
    "author.socket": E("socket", "сокет"),
    "author.panel": E("panel", "панель"),
    "author.hall": E("hall", "зал"),
    "author.script": E("script", "сценарий"),
    # breaks and pauses
    "b.player": E("Player", "Игрок"),
    "b.started": E("Started", "Начало"),
    "b.length": E("Length", "Длительность"),
    "b.late": E("Late by", "Опоздание"),
    "b.not_ended": E("not ended", "не окончен"),
    "b.none": E("No break was taken.", "Перерывов не было."),
    "b.by": E("By", "Кто"),
    "b.resumed_by": E("Resumed by", "Кто продолжил"),
    "b.not_resumed": E("not resumed", "не продолжена"),
    "b.when": E("When", "Когда"),
    "b.what": E("What", "Что"),
    "by.cube": E("cube", "куб"),
    "by.arbiter": E("arbiter", "судья"),
    "by.recovery": E("recovery", "восстановление"),
    "by.match over": E("match over", "матч окончен"),
    # the dice
    "d.all": E("All dice", "Все кости"),
    "d.dice": E("Dice", "Костей"),
    "d.doubles": E("Doubles", "Дубли"),
    "d.fair": E("Are the dice fair?", "Честные ли кости?"),
    "d.method": E("Pearson's chi-square test of the face counts against fair dice (5 degrees of "
                  "freedom, scipy.stats.chisquare); fair dice roll doubles 1 time in 6",
                  "критерий хи-квадрат Пирсона для числа выпадений граней против честных костей "
                  "(5 степеней свободы, scipy.stats.chisquare); честные кости дают дубль 1 раз "
                  "из 6"),
    "d.binomial": E(" (exact binomial test of this match's doubles: p = {p})",
                    " (точный биномиальный критерий для дублей этого матча: p = {p})"),
    "d.throws": E(". {throws} throws; {voided} void throws struck from the record",
                  ". Бросков: {throws}; недействительных бросков исключено: {voided}"),
    "d.unknown": E("; {n} opening dice whose roller the reader did not name count only in "
                   "“All dice”",
                   "; стартовые кости без указания бросившего ({n}) учтены только во "
                   "«Все кости»"),
    "d.faces_alt": E("dice faces per player", "грани костей по игрокам"),
    "d.none": E("No dice were recorded.", "Броски костей не записаны."),
    "d.few": E("Only {dice} dice: too few for the test to say anything either way (it needs at "
               "least {need}, {per} per face).",
               "Всего костей: {dice} — слишком мало, чтобы критерий что-то показал (нужно не "
               "меньше {need}, по {per} на грань)."),
    "d.fine": E("Nothing unusual: fair dice give counts at least this uneven in {pct} of cases "
                "(p = {p}). No reason to doubt the dice.",
                "Ничего необычного: у честных костей такой или больший разброс бывает в {pct} "
                "случаев (p = {p}). Повода сомневаться в костях нет."),
    "d.uneven": E("Somewhat uneven: fair dice give counts this uneven in only {pct} of cases "
                  "(p = {p}). Worth keeping an eye on, but not proof: over many matches such "
                  "counts turn up by chance.",
                  "Заметный разброс: у честных костей такой бывает лишь в {pct} случаев "
                  "(p = {p}). Стоит присмотреться, но это не доказательство: за много матчей "
                  "такое выпадает случайно."),
    "d.very": E("Very uneven: fair dice give counts this uneven in fewer than 1 case in 100 "
                "(p = {p}). Check the dice and the reader.",
                "Очень большой разброс: у честных костей такой бывает реже 1 раза из 100 "
                "(p = {p}). Проверьте кости и считыватель."),
    # the turns (on screen only)
    "tn.all": E("All {n} turns", "Все ходы ({n})"),
    "tn.turn": E("Turn", "Ход"),
    "tn.player": E("Player", "Игрок"),
    "tn.started": E("Started", "Начало"),
    "tn.think": E("Think", "Обдумывание"),
    "tn.charged": E("Charged", "Списано"),
    "tn.reserve_after": E("Reserve after", "Резерв после"),
    "tn.ended_by": E("Ended by", "Чем окончен"),
    "tn.dice": E("Dice", "Кости"),
    "tn.open": E("open", "идёт"),
    "tn.opening": E("opening {dice}", "стартовый {dice}"),
    "tn.early": E(" (early)", " (ранний)"),
    "reason.switch": E("switch", "нажатие часов"),
    "reason.double": E("double", "удвоение"),
    "reason.take": E("take", "взял куб"),
    "reason.result": E("result", "результат"),
    "reason.arbiter": E("arbiter", "судья"),
    "reason.break_over": E("break_over", "конец перерыва"),
    "reason.flag": E("flag", "флажок"),
    # signatures
    "s.arbiter": E("Arbiter", "Судья"),
    "s.name": E("name: ______________________", "Ф. И. О.: ______________________"),
    "s.player": E("{side} player", "игрок {side}"),
    "s.confirm": E("The result and the arbiter actions above are confirmed by:",
                   "Результат и действия судьи, указанные выше, подтверждают:"),
    "s.place": E("Place and date: ______________________", "Место и дата: ______________________"),
    # the charts (matplotlib)
    "c.reserves_title": E("Both reserves over the match", "Резервы обоих игроков по ходу матча"),
    "c.reserves_alt": E("both reserves over the match", "резервы обоих игроков по ходу матча"),
    "c.match_time": E("match time (minutes; grey: breaks, yellow: pauses)",
                      "время матча (минуты; серым — перерывы, жёлтым — паузы)"),
    "c.reserve": E("reserve (minutes)", "резерв (минуты)"),
    "c.game": E("G{n}", "П{n}"),
    "c.legend": E("{side}: {name}", "{side}: {name}"),
    "c.dice_title": E("Dice faces per player", "Грани костей по игрокам"),
    "c.face": E("face", "грань"),
    "c.count": E("count", "выпадений"),
    # the seal check (journal.Verdict's words for an intact journal; others stay as they are)
    "v.unchecked": E("seal not checked: {why}", "печати не проверены: {why}"),
    "v.no_key": E("no device key given", "не дан ключ устройства"),
    # why there is no key (export/keys.py: `KeyChoice.no_check`), the key file as it is named
    "v.no_key_at": E("no device key given ({path} is {why})",
                     "не дан ключ устройства ({path}: {why})"),
    "v.key.absent": E("not there", "файла нет"),
    "v.key.not_for_user": E("not readable by this user", "нет прав на чтение"),
    "v.key.unreadable": E("not readable", "не читается"),
    "v.key_unusable": E("the device key {path} is not usable",
                        "ключ устройства {path} не годится"),

    # why an input was refused or ignored (`reasons.Reason`): the English is the engine's own
    # words, made from the effect's facts (a test keeps them equal); a key's ".CASE" is for an
    # effect whose facts say `case`, its ".locked" for one whose facts say `locked`
    "why.match_over": E("the match is over", "матч окончен"),
    "why.no_clock_running": E("no clock is running", "часы не идут"),
    "why.no_clock_running.panel": E("the arbiter's mode has stopped the clocks",
                                    "часы остановлены: открыт режим судьи"),
    "why.not_paused": E("the clock is not paused", "часы не на паузе"),
    "why.deduct_over_half": E("more than half of the remaining {reserve}",
                              "больше половины оставшегося резерва ({reserve})"),
    "why.forfeit_in_break": E("no forfeit during a break",
                              "во время перерыва партию не присуждают"),
    "why.score_at_length": E("a score must stay below the match length {length}",
                             "счёт должен быть меньше длины матча ({length})"),
    "why.score_half_point": E("half points exist only in longgammon",
                              "половина очка бывает только в лонггаммоне"),
    "why.cube_not_in_game": E("no doubling cube in this game", "в этой партии нет куба"),
    "why.cube_double_offered": E("not while a double is offered: undo it, or let it be taken "
                                 "or passed",
                                 "не во время предложенного удвоения: отмените его или "
                                 "дождитесь ответа"),
    "why.cube_in_break": E("not during a break", "не во время перерыва"),
    "why.cube_no_owner": E("name the owner: cube {value} left|right",
                           "укажите владельца: cube {value} left|right"),
    "why.undo_match_lost": E("the match was lost on {end}",
                             "матч проигран ({end}): отмена невозможна"),
    "why.undo_nothing": E("nothing to undo", "нечего отменять"),
    "why.undo_match_moved": E("the match went on on another clock",
                              "матч продолжен на других часах: отмена невозможна"),
    "why.undo_past_arbiter": E("the match was ended by the arbiter; undo cannot reach past that",
                               "матч окончен судьёй: отменить то, что было до этого, нельзя"),
    "why.no_break": E("no break is being taken", "перерыва сейчас нет"),
    "why.no_match": E("no match is loaded", "матч не загружен"),
    "why.no_match.load_one": E("no match is loaded: load one with `gammonclock arbiter "
                               "new-match FILE` (or a USB stick)",
                               "матч не загружен: загрузите его командой `gammonclock arbiter "
                               "new-match FILE` (или с USB-флешки)"),
    "why.no_match.swapped": E("a next match was loaded before it applied",
                              "до её выполнения был загружен следующий матч"),
    "why.match_in_progress": E("a match is in progress", "идёт матч"),
    "why.nothing_offered": E("no USB stick's offer is held here", "предложения с флешки здесь нет"),
    "why.match_file_bad": E("the match file has problems", "в файле матча есть ошибки"),
    "why.journal_not_written": E("the journal is not being written", "журнал не записывается"),
    # a player's double and break (the panels have their own words for these)
    "why.double_no_cube": E("no doubling cube in this match", "в этом матче нет куба"),
    "why.double_crawford": E("Crawford game: no doubling", "партия Кроуфорда: удваивать нельзя"),
    "why.double_not_owner": E("the cube belongs to the opponent", "куб у соперника"),
    "why.double_first_turn": E("no double on the first turn: the opening roll is already played",
                               "на первом ходу удваивать нельзя: стартовый бросок уже сыгран"),
    "why.double_after_roll": E("the dice are already rolled this turn",
                               "кости на этом ходу уже брошены"),
    "why.break_blitz": E("no breaks in blitz", "в блице перерывов нет"),
    "why.break_first_game": E("breaks only after the first game",
                              "перерыв можно взять только после первой партии"),
    "why.break_none_left": E("no breaks left", "перерывов не осталось"),
    "why.break_shared_taken": E("the match's break is taken", "перерыв матча уже взят"),
    "why.break_too_early": E("break allowed from 45:00 of match time (now {now})",
                             "перерыв можно взять с 45:00 времени матча (сейчас {now})"),
    # the arbiter's PIN at the panels
    "why.pin_wrong": E("wrong PIN ({failures} of {of} before a lockout)",
                       "неверный ПИН-код ({failures} из {of} до блокировки)"),
    "why.pin_wrong.locked": E("wrong PIN; the chord is locked for {locked}",
                              "неверный ПИН-код; вход судьи заблокирован на {locked}"),
    "why.pin_timeout": E("no PIN within 30 s ({failures} of {of} before a lockout)",
                         "ПИН-код не введён за 30 с ({failures} из {of} до блокировки)"),
    "why.pin_timeout.locked": E("no PIN within 30 s; the chord is locked for {locked}",
                                "ПИН-код не введён за 30 с; вход судьи заблокирован на "
                                "{locked}"),
    "why.pin_timeout.outage": E("the power went before the PIN ({failures} of {of} before a "
                                "lockout)",
                                "питание пропало до ввода ПИН-кода ({failures} из {of} до "
                                "блокировки)"),
    "why.pin_timeout.outage.locked": E("the power went before the PIN; the chord is locked for "
                                       "{locked}",
                                       "питание пропало до ввода ПИН-кода; вход судьи "
                                       "заблокирован на {locked}"),
    # an input that did nothing (Ignored)
    "why.out_of_turn": E("out of turn: {whose} clock runs",
                         "не в свою очередь: идут часы {whose}"),
    "why.white_starts": E("{who} plays white and starts: {other} presses",
                          "{who} играет белыми и начинает: нажимает {other}"),
    "why.doubler_waits": E("the doubler waits for the answer", "удвоивший ждёт ответа"),
    "why.paused": E("paused", "пауза"),
    "why.not_break_taker": E("{whose} break", "перерыв {whose}"),
    "why.chord_held": E("release all three buttons first", "сначала отпустите все три кнопки"),
    "why.void_no_roll": E("no roll to void", "нет броска, который можно отменить"),
    "why.dice_dropped": E("more than dice are rolled; dropped unread",
                          "строк больше, чем бросков; отброшены непрочитанными"),
    # what was refused or ignored, when it is a player's press (an arbiter's command is said as
    # it was given)
    "what.double": E("{whose} double", "удвоение {whose}"),
    "what.break": E("{whose} break", "перерыв {whose}"),
    "what.pin": E("the arbiter's PIN", "ПИН-код судьи"),
    "what.tap.left": E("tap left", "нажатие левой кнопки"),
    "what.tap.right": E("tap right", "нажатие правой кнопки"),
    "what.tap.cube": E("tap cube", "нажатие кнопки куба"),
    "what.dice_dropped": E("{count} dice reader lines", "строк считывателя костей: {count}"),
    "what.void": E("void", "отмена броска"),

    # which key `export` and `verify` check the seals with (export/keys.py: `KeyChoice.said`,
    # its notes), and what the export did; the flags and files as they are
    "keys.used": E("the device key {path} (from {origin}; key id {key_id}) checks the seals it "
                   "made",
                   "печати проверяются ключом устройства {path} (взят из {origin}; ключ "
                   "{key_id})"),
    "keys.refused": E("seals not checked: {error}", "печати не проверяются: {error}"),
    "keys.none": E("seals not checked: no device key found ({path} from {origin}: {why})",
                   "печати не проверяются: ключ устройства не найден ({path} из {origin}: "
                   "{why})"),
    "keys.origin.default": E("the default", "папки по умолчанию"),
    "keys.origin.device": E("the journal.state_dir of {path}", "journal.state_dir в {path}"),
    "keys.not_read": E("{path} was not read for its state folder ({error})",
                       "{path} не прочитан, папка состояния не взята из него ({error})"),
    "exp.done": E("{out}: {format} export of {journal}", "{out}: {journal} выгружен в {format}"),
    # a journal that does not verify (SPEC §14.1): refused, or written with --allow-tampered
    "exp.refused_tampered": E("not exported: the journal does not verify ({out} not written); "
                              "--allow-tampered writes it anyway, marked TAMPERED",
                              "не выгружено: журнал не прошёл проверку ({out} не записан); "
                              "с --allow-tampered он выгружается всё равно, с пометкой "
                              "«ЖУРНАЛ ИЗМЕНЁН»"),
    "exp.done_tampered": E("{out}: {format} export of {journal} written anyway "
                           "(--allow-tampered), marked TAMPERED: not a valid record of the match",
                           "{out}: {journal} выгружен в {format} всё равно (--allow-tampered), "
                           "с пометкой «ЖУРНАЛ ИЗМЕНЁН»: это не достоверная запись матча"),
    # `gammonclock verify`'s line on the match it replayed (cli/records.py)
    "vf.match": E("match: {discipline} to {length}, {left} v {right}, {score}, {phase}",
                  "матч: {discipline}, {length}, {left} — {right}, счёт {score}, {phase}"),
    "vf.cannot_replay": E("(cannot replay: {problem})", "(не воспроизводится: {problem})"),
    # the journal's verdict (journal.Verdict.words), for an intact journal
    "v.sealed": E("intact: {records}", "цел: {records}, печати проверены"),
    "v.other_device": E("sealed by another device (key id {sealed_by}; this device's key id "
                        "{this_key}): seal not checked; chain intact: {records}",
                        "запечатан другим устройством (ключ {sealed_by}; ключ этого устройства "
                        "{this_key}): печати не проверены; цепочка цела: {records}"),
    "v.not_checked": E("seal not checked: {why}; chain intact: {records}",
                       "печати не проверены: {why}; цепочка цела: {records}"),
    "v.tampered": E("TAMPERED: {message}", "ЖУРНАЛ ИЗМЕНЁН: {message}"),
    # what verify found (journal.verify: a Verdict's message), and why a line is damaged
    "jv.intact": E("intact: {n} records{torn}", "цел: записей {n}{torn}"),
    "jv.torn": E("; a torn last line of {n} bytes was dropped",
                 "; оборванная последняя строка ({n} байт) отброшена"),
    "jv.no_records": E("no records", "записей нет"),
    "jv.altered": E("line {line}: record {record} was altered ({why})",
                    "строка {line}: запись {record} изменена ({why})"),
    "jv.seal": E("line {line}: record {record} was altered (its seal does not match)",
                 "строка {line}: запись {record} изменена (её печать не совпадает)"),
    "jv.header_other_key": E("line {line}: record 0 was altered (it names another device's key; "
                             "the records after it are sealed with this one)",
                             "строка {line}: запись 0 изменена (в ней указан ключ другого "
                             "устройства, а записи после неё запечатаны ключом этого)"),
    "jv.removed": E("line {line}: record {record} was removed",
                    "строка {line}: запись {record} удалена"),
    "jv.removed_many": E("line {line}: records {first}-{last} were removed",
                         "строка {line}: записи {first}-{last} удалены"),
    "jv.inserted": E("line {line}: record {record} was inserted or moved here (record {due} was "
                     "due)",
                     "строка {line}: запись {record} вставлена или перемещена сюда (ожидалась "
                     "запись {due})"),
    "jv.not_following": E("line {line}: record {record} does not follow the record before it "
                          "(inserted, or one removed)",
                          "строка {line}: запись {record} не следует за предыдущей (вставлена "
                          "лишняя или удалена одна)"),
    "jv.snapshot": E("record {record}: its snapshot is not the replay's match at that record",
                     "запись {record}: её снимок не совпадает с матчем, воспроизведённым до "
                     "этой записи"),
    "jd.no_eol": E("no end of line", "нет конца строки"),
    "jd.cut_short": E("no end of line: the write was cut short",
                      "нет конца строки: запись прервалась"),
    "jd.no_tail": E("no checksum and seal at its end", "в конце нет контрольной суммы и печати"),
    "jd.checksum": E("checksum does not match", "контрольная сумма не совпадает"),
    "jd.seq": E("sequence number {seq} where {due} was due",
                "порядковый номер {seq} вместо {due}"),
    # what the journal's reader says (JournalRead.problems): the report, the panels, the hall
    "jr.torn": E("{path}: a torn last record ({length} bytes at byte {offset}) was dropped",
                 "{path}: оборванная последняя запись ({length} байт с байта {offset}) "
                 "отброшена"),
    "jr.stopped": E("{path}: {stopped}; replay stops before it",
                    "{path}: {stopped}; воспроизведение останавливается перед ней"),
    "jr.damaged": E("record at line {line} (byte {byte}) is damaged: {why}",
                    "запись в строке {line} (байт {byte}) повреждена: {why}"),
    # records whose effects this firmware computes otherwise than the journal holds them
    # ({records}: "5 records", "5 записей": the verb agrees with no number)
    "jr.diverged": E("{path}: this version replays {records} differently",
                     "{path}: эта версия прошивки воспроизводит иначе {records}"),
    "jr.diverged_first": E("this version replays {records} differently (first: record "
                           "{first})",
                           "эта версия прошивки воспроизводит иначе {records} (первая — "
                           "запись {first})"),
    "r.diverged": E("this version replays {records} differently (first: record {first}); the "
                    "export shows the replay",
                    "эта версия прошивки воспроизводит иначе {records} (первая — запись "
                    "{first}); в протоколе — то, что воспроизведено"),

    # --- a config's problems (config_words.Problem) and `check-config`'s verdicts -------------
    # (values, key paths and file names are put in as written)
    "cfg.not_bool": E("{value} is not true or false", "{value}: нужно true или false"),
    "cfg.not_whole": E("{value} is not a whole number; use {low}..{high}",
                       "{value} — не целое число; допустимо {low}..{high}"),
    "cfg.out_of_range": E("{value} is out of range; use {low}..{high}",
                          "{value} — вне допустимых пределов; допустимо {low}..{high}"),
    "cfg.not_one_of": E("{value} is not one of: {options}",
                        "{value} — недопустимое значение; допустимо: {options}"),
    "cfg.too_long_text": E("{value} is longer than {n} characters",
                           "{value} — длиннее {n} символов"),
    "cfg.control": E("{value} holds a control character (NUL, newline, tab, escape, …); {advice}",
                     "{value} содержит управляющий символ (нулевой байт, перевод строки, "
                     "табуляцию и т. п.); {advice}"),
    "cfg.printable_name": E("a name is printable characters only",
                            "в имени допустимы только печатные символы"),
    "cfg.printable": E("use printable characters only", "используйте только печатные символы"),
    "cfg.not_name": E("{value} is not a name (a non-empty string)",
                      "{value} — не имя (нужна непустая строка)"),
    "cfg.not_duration": E('{value} is not a duration; use e.g. "12s", "2m30s", "2.5m", "1500ms"',
                          '{value} — не длительность; пишите, например, "12s", "2m30s", "2.5m", '
                          '"1500ms"'),
    "cfg.duration_above_0": E("{value} is out of range; use a duration above 0",
                              "{value} — вне допустимых пределов; нужна длительность больше 0"),
    "cfg.duration_0_or_more": E("{value} is out of range; use a duration of 0 or more",
                                "{value} — вне допустимых пределов; нужна длительность 0 или "
                                "больше"),
    "cfg.duration_too_long": E("{value} is too long; at most {max} s",
                               "{value} — слишком долго; не больше {max} с"),
    "cfg.not_number": E("{value} is not a number; use {low}..{high} ({unit})",
                        "{value} — не число; допустимо {low}..{high} ({unit})"),
    "cfg.number_range": E("{value} is out of range; use {low}..{high} ({unit})",
                          "{value} — вне допустимых пределов; допустимо {low}..{high} ({unit})"),
    "cfg.unit.seconds": E("seconds", "в секундах"),
    "cfg.unit.milliseconds": E("milliseconds", "в миллисекундах"),
    "cfg.not_score": E("{value} is not a score; use [left, right], e.g. [0, 0]",
                       "{value} — не счёт; пишите [left, right], например [0, 0]"),
    "cfg.score_below_length": E("{value}: each score must be 0 or more and below the match "
                                "length {length}",
                                "{value}: каждый счёт должен быть не меньше 0 и меньше длины "
                                "матча ({length})"),
    "cfg.score_below_longest": E("{value}: each score must be 0 or more and below the longest "
                                 "match length, {longest}",
                                 "{value}: каждый счёт должен быть не меньше 0 и меньше "
                                 "наибольшей длины матча ({longest})"),
    "cfg.score_halves": E("{value}: scores are whole or half points",
                          "{value}: счёт — целые очки или половины очка"),
    "cfg.score_half_longgammon": E("{value}: half points exist only in longgammon",
                                   "{value}: половина очка бывает только в лонггаммоне"),
    "cfg.not_string": E("{value} is not a string", "{value} — не строка"),
    "cfg.not_file_path": E("{value} is not a file path", "{value} — не путь к файлу"),
    "cfg.not_directory_path": E("{value} is not a directory path", "{value} — не путь к каталогу"),
    "cfg.not_text": E("{value} is not text (a string)", "{value} — не текст (нужна строка)"),
    "cfg.not_table": E("must be a table ([{path}])", "должно быть таблицей ([{path}])"),
    "cfg.unknown_key": E("unknown key; allowed in [{path}]: {keys}",
                         "неизвестный ключ; в [{path}] допустимы: {keys}"),
    "cfg.unknown_table": E("unknown table; allowed: {names}",
                           "неизвестная таблица; допустимы: {names}"),
    "cfg.unknown_section": E("unknown section; allowed: {names}",
                             "неизвестный раздел; допустимы: {names}"),
    "cfg.length_required": E("required: the match length in points, 1..{max}",
                             "обязательно: длина матча в очках, 1..{max}"),
    "cfg.device_section": E("a device section: a match file holds only {sections}; the device's "
                            "settings live in its device config (/etc/gammonclock/device.toml)",
                            "раздел устройства: файл матча содержит только {sections}; "
                            "настройки устройства задаются в его конфигурации "
                            "(/etc/gammonclock/device.toml)"),
    "cfg.match_section": E("a match section: it belongs in a match file (the device config's "
                           "table.match_file, or `gammonclock arbiter new-match FILE`), not in "
                           "the device config",
                           "раздел матча: ему место в файле матча (table.match_file в "
                           "конфигурации устройства или `gammonclock arbiter new-match FILE`), "
                           "а не в конфигурации устройства"),
    # the config a journal's header holds, named in its problems (config_of_header)
    "cfg.in_header": E("{name} (header)", "{name} (заголовок журнала)"),
    "cfg.in_header_device": E("{name} (header: device config)",
                              "{name} (заголовок журнала: конфигурация устройства)"),
    "cfg.match_too_large": E("longer than {kib} KiB: not a match file",
                             "больше {kib} КиБ: это не файл матча"),
    "cfg.not_toml": E("not valid TOML: {error}", "это не правильный TOML: {error}"),
    # tomllib's own words ({error}) stay as it says them; the place is ours
    "cfg.not_toml_at": E("not valid TOML: {error} (at line {line}, column {column})",
                         "это не правильный TOML: строка {line}, столбец {column}: {error}"),
    "cfg.not_toml_end": E("not valid TOML: {error} (at end of document)",
                          "это не правильный TOML: в конце файла: {error}"),
    "cfg.toml_digits": E("not valid TOML: a number with too many digits",
                         "это не правильный TOML: в числе слишком много цифр"),
    "cfg.toml_nested": E("not valid TOML: arrays or tables nested too deeply",
                         "это не правильный TOML: массивы или таблицы вложены слишком глубоко"),
    # a duration that is not one, or beyond durations.py's bounds (DurationError.code)
    "dur.too_long": E("{value} is too long; at most {max}",
                      '{value} — слишком долго; не больше "{max}"'),
    "dur.too_many_digits": E("{value} has too many digits; at most {digits}",
                             "{value} — слишком много цифр; не больше {digits}"),
    "dur.not_duration": E('{value} is not a duration; use e.g. "12s", "2m30s", "2.5m", "1500ms"',
                          '{value} — не длительность; пишите, например, "12s", "2m30s", "2.5m", '
                          '"1500ms"'),
    "dur.not_seconds": E("{value} is not a number of seconds", "{value} — не число секунд"),
    "dur.not_finite": E("{value} is not a finite number", "{value} — не конечное число"),
    "dur.finer_than_ns": E("{value} is finer than a nanosecond",
                           "{value} — точнее наносекунды"),
    "cfg.reserve_too_long": E("{per_point} × {points} is a reserve of {reserve}; a reserve is "
                              "at most {max}: lower per_point or set time.reserve",
                              '"{per_point}" × {points} — это резерв "{reserve}"; резерв не '
                              'больше "{max}": уменьшите time.per_point или задайте '
                              'time.reserve'),
    # a pin_hash that is not one (core.pin.PinHashError's code and fields)
    "cfg.pin_hash": E("{value} is not a PIN hash: {why}", "{value} — не хеш ПИН-кода: {why}"),
    "cfg.pin_hash.form": E('it is not a hash as `python -m gammonclock.pin PIN [--key FILE]` '
                           'prints it: "scrypt-k$14$8$1$<salt base64>$<digest base64>" (or '
                           '"scrypt$…", unkeyed)',
                           'это не хеш в том виде, как его печатает `python -m gammonclock.pin '
                           'PIN [--key FILE]`: "scrypt-k$14$8$1$<salt base64>$<digest base64>" '
                           '(или "scrypt$…", без ключа)'),
    "cfg.pin_hash.part.salt": E("salt", "соль"),
    "cfg.pin_hash.part.digest": E("digest", "дайджест"),
    "cfg.pin_hash.not_base64": E("its {what} is not base64", "{what}: не base64"),
    "cfg.pin_hash.not_our_base64": E("its {what} is not base64 as written by this firmware",
                                     "{what}: не base64 в том виде, как его пишут эти часы"),
    "cfg.pin_hash.range": E("its {param} is {value}; {low}..{high} is allowed",
                            "{param} равен {value}; допустимо {low}..{high}"),
    # scrypt's parameters (core.pin.SCRYPT_PARAMETERS): their names as written in the hash
    "cfg.pin_hash.param.log2 N": E("scrypt cost (log2 N, the 2nd field)",
                                   "показатель стоимости scrypt (log2 N, второе поле)"),
    "cfg.pin_hash.param.r": E("scrypt block size (r, the 3rd field)",
                              "размер блока scrypt (r, третье поле)"),
    "cfg.pin_hash.param.p": E("scrypt parallelism (p, the 4th field)",
                              "параллелизм scrypt (p, четвёртое поле)"),
    "cfg.pin_hash.memory": E("its parameters ask scrypt for more than {mib} MiB of memory "
                             "(128 × r × 2^log2 N bytes)",
                             "его параметры требуют от scrypt больше {mib} МиБ памяти "
                             "(128 × r × 2^log2 N байт)"),
    "cfg.pin_hash.salt_size": E("its salt must be 8..64 bytes", "соль должна быть 8..64 байт"),
    "cfg.pin_hash.digest_size": E("its digest must be {n} bytes", "дайджест должен быть {n} байт"),
    "cfg.no_breaks": E("{discipline} has no breaks, ever; remove the key",
                       "{discipline}: перерывов в этой дисциплине нет; уберите этот ключ"),
    "cfg.pin_and_hash": E("give either pin or pin_hash, not both",
                          "укажите pin или pin_hash, но не оба"),
    "cfg.gpio_taken": E("GPIO {pin} is already pins.{other}", "GPIO {pin} уже занят: pins.{other}"),
    "cfg.broker_required": E('required in [hall]: the broker\'s URL, e.g. '
                             '"mqtt://10.0.0.2:1883"; without a hall, remove the section',
                             'обязательно в [hall]: адрес брокера, например '
                             '"mqtt://10.0.0.2:1883"; без зала уберите этот раздел'),
    "cfg.ca_only_mqtts": E("only with an mqtts:// broker; use mqtts:// or remove the key",
                           "только для брокера mqtts://; укажите mqtts:// или уберите ключ"),
    "cfg.pattern.table_id": E("{value} is not a table id; use 1–32 characters of A-Z a-z 0-9 _ -",
                              "{value} — не номер стола; допустимо 1–32 знака из A-Z a-z "
                              "0-9 _ -"),
    "cfg.pattern.pin": E('{value} is not a PIN; use 4–8 button names of L, R, C, e.g. "LRCLR"',
                         '{value} — не ПИН-код; нужно 4–8 кнопок из L, R, C, например "LRCLR"'),
    "cfg.pattern.group": E("{value} is not a group name; use 1–32 characters of A-Z a-z 0-9 _ . -, "
                           "a letter or _ first",
                           "{value} — не имя группы; допустимо 1–32 знака из A-Z a-z 0-9 _ . -, "
                           "первый — буква или _"),
    "cfg.pattern.user": E("{value} is not a user name; use 1–64 printable ASCII characters, no "
                          "space or :",
                          "{value} — не имя пользователя; допустимо 1–64 печатных знака ASCII, "
                          "без пробела и :"),
    "cfg.pattern.prefix": E("{value} is not a topic prefix; use A-Z a-z 0-9 _ -, levels "
                            "separated by /",
                            "{value} — не префикс топиков; допустимо A-Z a-z 0-9 _ -, уровни "
                            "через /"),
    "cfg.not_broker": E('{value} is not a broker URL; use mqtt://HOST[:PORT] or '
                        'mqtts://HOST[:PORT], e.g. "mqtt://10.0.0.2:1883"',
                        '{value} — не адрес брокера; пишите mqtt://HOST[:PORT] или '
                        'mqtts://HOST[:PORT], например "mqtt://10.0.0.2:1883"'),
    "cfg.panels_same_address": E("both panels are at address {address} on bus {port}; give them "
                                 "different addresses (hardware_docs/displays.md)",
                                 "обе панели на адресе {address} шины {port}; задайте им разные "
                                 "адреса (hardware_docs/displays.md)"),
    "cc.good_device": E("good as a device config{why}", "годится как конфигурация устройства{why}"),
    "cc.good_match": E("good as a match file{why}: a running clock takes it (new-match, a USB "
                       "stick, the hall, the match file at boot)",
                       "годится как файл матча{why}: работающие часы его примут (new-match, "
                       "USB-флешка, зал, файл матча при включении)"),
    "cc.good_combined": E("good as a combined file, device and match in one{why}: for "
                          "`simulate --config` and `run --config`",
                          "годится как общий файл устройства и матча{why}: для "
                          "`simulate --config` и `run --config`"),
    "cc.judged": E(" (judged by its sections)", " (вид определён по разделам)"),
    "cc.refused_as_match": E("as a next match it would be refused: {sections} {are} (a match "
                             "file holds only {allowed}); `check-config --as match {path}` "
                             "checks it as the clock would",
                             "как следующий матч он был бы отклонён: {sections} — {are} (файл "
                             "матча содержит только {allowed}); `check-config --as match {path}` "
                             "проверит его так, как проверят часы"),
    "cc.is_device_section": E("is a device section", "раздел устройства"),
    "cc.are_device_sections": E("are device sections", "разделы устройства"),

    # --- the next match (SPEC §13.2): what new-match, a stick, the hall and the menu say -------
    "load.loaded": E("next match loaded: {match}", "следующий матч загружен: {match}"),
    "load.kept": E("next match already loaded: {match}", "следующий матч уже загружен: {match}"),
    "load.journal": E("journal: {name}", "журнал: {name}"),
    "load.in_progress": E("a match is in progress ({game}, score {score}): the next match loads "
                          "once it is over; `new-match --force` ends it now as abandoned, on the "
                          "record",
                          "идёт матч ({game}, счёт {score}): следующий матч загрузится, когда "
                          "он закончится; `new-match --force` прерывает его сейчас, с записью "
                          "в протоколе"),
    "load.game": E("game {game}", "партия {game}"),
    "load.game_next": E("game {game} next", "впереди партия {game}"),
    "load.journal_not_written": E("the journal of the current match is not being written "
                                  "({error}): the next match waits until it is",
                                  "журнал текущего матча не записывается ({error}): следующий "
                                  "матч ждёт, пока запись не восстановится"),
    "load.cannot_start": E("the next match cannot start: {error}",
                           "следующий матч не может начаться: {error}"),
    "load.no_match_file": E("no match file: the device config names none (table.match_file)",
                            "нет файла матча: в конфигурации устройства он не указан "
                            "(table.match_file)"),
    "load.unreadable": E("{file}: cannot read the match file: {error}",
                         "{file}: файл матча не читается: {error}"),
    "load.stick_next": E("next match: {error}", "следующий матч: {error}"),
    "load.stick_none": E("no next match on the stick (gammonclock/{table}.toml or "
                         "gammonclock/match.toml)",
                         "на флешке нет следующего матча (gammonclock/{table}.toml или "
                         "gammonclock/match.toml)"),
    "load.not_loaded": E("next match NOT loaded: {why}", "следующий матч НЕ загружен: {why}"),
    "load.waits": E("; it loads by itself when this match is over",
                    "; он загрузится сам, когда этот матч закончится"),
    # what a USB stick's export did (runtime/usb_stick.py: the reply, the panels' problem, the
    # log's notes); file names and the system's own reason ({why}, {error}) as they are
    "usb.exported.one": E("{n} match exported", "записано матчей: {n}"),
    "usb.exported.many": E("{n} matches exported", "записано матчей: {n}"),
    "usb.in_progress": E(", 1 in progress", ", и текущий матч"),
    "usb.without_html": E(" ({n} without HTML report)", " (без HTML-протокола: {n})"),
    "usb.tampered": E("; TAMPERED: {n} (exports marked)",
                      "; ЖУРНАЛ ИЗМЕНЁН: {n} (выгрузки помечены)"),
    "usb.note_tampered": E("{path}: {verdict}; copied as it is, its CSV and HTML marked TAMPERED",
                           "{path}: {verdict}; скопирован как есть, CSV и HTML помечены "
                           "«ЖУРНАЛ ИЗМЕНЁН»"),
    "usb.nothing_new": E("nothing new to copy; {n} already on the stick",
                         "нового нет; матчей уже на флешке: {n}"),
    "usb.no_stick": E("no stick: {stick} is not there (not mounted, or already removed)",
                      "флешки нет: {stick} не найдена (не подключена или уже извлечена)"),
    "usb.bad_table_id": E("table id {id} cannot name a folder on the stick: letters, digits, '-' "
                          "and '_' only",
                          "номер стола {id} не годится как имя папки на флешке: допустимы "
                          "только латинские буквы, цифры, '-' и '_'"),
    "usb.bad_table_file": E("table id {id} cannot name a file on the stick: letters, digits, '-' "
                            "and '_' only",
                            "номер стола {id} не годится как имя файла на флешке: допустимы "
                            "только латинские буквы, цифры, '-' и '_'"),
    "usb.untouched": E("{problem}; the clock's files are untouched",
                       "{problem}; файлы часов не тронуты"),
    "usb.how_far": E("{done} of {planned} files copied", "скопировано файлов: {done} из {planned}"),
    "usb.gone": E("the stick was removed during the copy: {done}",
                  "флешку вынули во время копирования: {done}"),
    "usb.full": E("the stick is full: {done}; free some space on it and insert it again",
                  "флешка заполнена: {done}; освободите на ней место и вставьте её снова"),
    "usb.read_only": E("the stick is read-only (write-protected, or the clock may not write on "
                       "it): {done}",
                       "флешка только для чтения (защищена от записи, или часам нельзя на неё "
                       "писать): {done}"),
    "usb.cannot_write": E("the stick cannot be written ({why}): {done}",
                          "на флешку не удаётся записать ({why}): {done}"),
    "usb.link": E("the stick's {path} is a link, not a folder: nothing is written or read through "
                  "it",
                  "{path} на флешке — ссылка, а не папка: через неё ничего не пишется и не "
                  "читается"),
    "usb.not_folder": E("the stick's {path} is not a folder (a file): nothing was written there",
                        "{path} на флешке — не папка (а файл): туда ничего не записано"),
    "usb.note_unreadable": E("{path}: the clock cannot read this journal, so it was not copied: "
                             "{why}",
                             "{path}: часы не могут прочитать этот журнал, он не скопирован: "
                             "{why}"),
    "usb.note_no_exports": E("{path}: copied without CSV and HTML: {error}",
                             "{path}: скопирован без CSV и HTML: {error}"),
    "usb.note_no_html": E("{path}: copied without the HTML report: {error}",
                          "{path}: скопирован без HTML-протокола: {error}"),
    "usb.note_no_seals": E("{path}: seals not checked for the HTML report: {error}",
                           "{path}: печати для HTML-протокола не проверены: {error}"),
    # a stick's next match that cannot be read (StickError)
    "usb.cannot_read_stick": E("{path}: cannot read the stick: {why}",
                               "{path}: флешка не читается: {why}"),
    "usb.cannot_read": E("{path}: cannot read the match file: {why}",
                         "{path}: файл матча не читается: {why}"),
    "usb.folder_link": E("the stick's {dir} folder is a link: put the folder itself on the stick",
                         "папка {dir} на флешке — ссылка: положите на флешку саму папку"),
    "usb.folder_elsewhere": E("the stick's {dir} folder is not on the stick (another file system "
                              "is mounted there)",
                              "папка {dir} не на самой флешке (там смонтирована другая файловая "
                              "система)"),
    "usb.file_link": E("it is a link: put the file itself on the stick",
                       "это ссылка: положите на флешку сам файл"),
    "usb.file_elsewhere": E("it is not on the stick (another file system is mounted there)",
                            "он не на самой флешке (там смонтирована другая файловая система)"),
    "usb.not_plain": E("{path}: not a plain file; a match file is a TOML text file",
                       "{path}: не обычный файл; файл матча — текстовый файл TOML"),
    "usb.too_large": E("{path}: larger than {kib} KiB; a match file is a few lines of TOML",
                       "{path}: больше {kib} КиБ; файл матча — несколько строк TOML"),
    # a provisioning stick (issue 32, runtime/provision.py, provisioning.py): the reply and the
    # log; file names, keys and the system's own reason ({why}) as they are
    "prov.section": E("a provisioning stick sets only {sections}",
                      "флешка настройки задаёт только {sections}"),
    "prov.key": E("a provisioning stick sets only {keys} of [{section}]",
                  "флешка настройки задаёт в [{section}] только {keys}"),
    "prov.file_name": E("{value}: must be the name of a file next to device.toml (no folder, "
                        "no '..', no link)",
                        "{value}: нужно имя файла рядом с device.toml (без папок, '..' и "
                        "ссылок)"),
    "prov.config": E("{error}; nothing was taken", "{error}; ничего не принято"),
    "prov.required": E("required on a provisioning stick",
                       "обязателен на флешке настройки"),
    "prov.unreadable": E("{path}: cannot read it: {why}; nothing was taken",
                         "{path}: не читается: {why}; ничего не принято"),
    "prov.missing": E("{path}: not on the stick; nothing was taken",
                      "{path}: нет на флешке; ничего не принято"),
    "prov.not_plain": E("{path}: not a plain file; nothing was taken",
                        "{path}: не обычный файл; ничего не принято"),
    "prov.too_large": E("{path}: larger than {bytes} bytes; nothing was taken",
                        "{path}: больше {bytes} байт; ничего не принято"),
    "prov.bad_key": E("{path}: the device key {why}",
                      "{path}: ключ устройства не годится ({why}); с флешки ничего не принято"),
    "prov.taken": E("provisioned from the USB stick: table {table}, hall {broker} as {user}; the "
                    "hall link starts with it",
                    "настроено с флешки: стол {table}, зал {broker}, учётная запись {user}; "
                    "связь с залом запущена с ними"),
    "prov.key_adopted": E("the device key is the stick's (this clock had sealed no journal)",
                          "ключ устройства взят с флешки (эти часы ещё не запечатали ни одного "
                          "журнала)"),
    "prov.key_kept": E("this clock keeps its own key (it has sealed journals); a copy is on the "
                       "stick as gammonclock/provision/returned.key for gammonclock hall "
                       "provision --collect",
                       "часы оставляют свой ключ (ими запечатаны журналы); его копия записана на "
                       "флешку: gammonclock/provision/returned.key, для gammonclock hall "
                       "provision --collect"),
    "prov.key_later": E("this clock keeps its own key (it has sealed journals); plug the stick "
                        "in again to give the hall a copy",
                        "часы оставляют свой ключ (ими запечатаны журналы); вставьте флешку ещё "
                        "раз, чтобы записать его копию для зала"),
    "prov.key_not_returned": E("the key could not be written on the stick: {problem}",
                               "ключ не записан на флешку: {problem}"),
    "prov.already": E("already provisioned from this stick (table {table}): nothing changed",
                      "уже настроено с этой флешки (стол {table}): ничего не изменено"),
    "prov.returned": E("this clock's key is on the stick now (gammonclock/provision/returned.key) "
                       "for the hall",
                       "ключ часов записан на флешку (gammonclock/provision/returned.key) для "
                       "зала"),
    "prov.in_progress": E("NOT provisioned: a match is in progress here (game {game}, {score}); "
                          "plug the stick in again when the match is over",
                          "НЕ настроено: здесь идёт матч (партия {game}, {score}); вставьте "
                          "флешку снова, когда матч закончится"),
    "prov.offered": E("offered from the USB stick, NOT taken: table {table}, hall {broker} as "
                      "{user}",
                      "флешка предлагает настройку, она НЕ принята: стол {table}, зал {broker}, "
                      "учётная запись {user}"),
    "prov.offer_how": E("the arbiter takes it at these panels: the three buttons held, the PIN, "
                        "then the menu's TABLE FROM STICK; or on the socket: gammonclock "
                        "arbiter provision",
                        "судья принимает её на панелях: удержать три кнопки, ПИН-код, затем в "
                        "меню СТОЛ С ФЛЕШКИ; или через сокет: gammonclock arbiter provision"),
    "prov.offer_idle": E("this clock is past its first boot (an arbiter's PIN, journals or a "
                         "hall already) and no match is loaded: the arbiter takes it on the "
                         "socket: gammonclock arbiter provision",
                         "часы уже не новые (есть ПИН-код судьи, журналы или зал), а матч не "
                         "загружен: судья принимает настройку через сокет: gammonclock arbiter "
                         "provision"),
    "prov.refused": E("NOT provisioned: {why}", "НЕ настроено: {why}"),
    "prov.not_offered": E("no provisioning stick is offered here: plug it in again",
                          "флешка настройки здесь не предложена: вставьте её снова"),
    "prov.cannot": E("NOT provisioned: {error}", "НЕ настроено: {error}"),
    "prov.broken": E("{error}; the clock runs with device.toml's [table] and [hall]",
                     "{error}; часы работают с [table] и [hall] из device.toml"),
    "usb.not_utf8": E("{path}: not UTF-8 text (byte {byte}); save it as UTF-8",
                      "{path}: не текст в UTF-8 (байт {byte}); сохраните его в UTF-8"),
    # what a table answers the hall when a command or a match did not get through the loop
    "hr.not_waiting": E("that match no longer waits here (loaded, replaced or cleared since); "
                        "nothing was done",
                        "этот матч здесь больше не ждёт (его загрузили, заменили или убрали); "
                        "ничего не сделано"),
    "hr.bad": E("{reason}; nothing was done", "{reason}; ничего не сделано"),
    "hr.busy": E("the clock is busy (too many inputs waiting)",
                 "часы заняты (в очереди слишком много нажатий и команд)"),
    "hr.late": E("the clock did not take {what} in time", "часы не приняли {what} вовремя"),
    "hr.not_applied": E("{why}: the command was NOT applied; send it again",
                        "{why}: команда НЕ применена; отправьте её ещё раз"),
    "hr.unknown": E("the clock took {what} but did not say what it did in time; look at its "
                    "state before sending it again",
                    "часы приняли {what}, но не сообщили вовремя, что сделали; посмотрите "
                    "состояние стола, прежде чем отправлять ещё раз"),
    "hr.new_match_usage": E("usage: new-match [--force], with the match file's TOML in 'text'; "
                            "or new-match --force --waiting SHA256, the match that waits",
                            "как писать: new-match [--force], TOML файла матча в 'text'; или "
                            "new-match --force --waiting SHA256 — матч, который ждёт"),
    "hr.text_not_new_match": E("only new-match carries a match file ('text')",
                               "файл матча ('text') передаёт только new-match"),
    "hr.not_utf8": E("{topic}: not UTF-8 text (byte {byte}); nothing changed",
                     "{topic}: не текст в UTF-8 (байт {byte}); ничего не изменено"),
    "hr.tried_again": E("the clock did not take the match in time (busy): not loaded yet; it is "
                        "tried again by itself",
                        "часы не приняли матч вовремя (заняты): он ещё не загружен; часы сами "
                        "попробуют снова"),
    "hr.moved_over": E("the match here was already over ({end}) when the move came: not "
                       "ended as moved; both clocks may have played it",
                       "матч здесь уже окончен ({end}), когда пришёл перенос: он не закончен "
                       "как перенесённый; его могли играть на обоих часах"),
    "hr.what.it": E("it", "её"),            # the command
    "hr.what.the match": E("the match", "матч"),
    "load.not_in_time": E("the clock did not take it in time", "часы не приняли его вовремя"),

    # --- the arbiter's socket's own answers (runtime/arbiter_socket.py): the command language
    # (`new-match`, `--force`, `usb-stick DIR`, 'text') as typed
    "sock.busy": E("the clock is busy (too many inputs waiting); {not_done}: try again",
                   "часы заняты (в очереди слишком много нажатий и команд); {not_done}: "
                   "попробуйте ещё раз"),
    "sock.late": E("the clock did not answer in time; {not_done}",
                   "часы не ответили вовремя; {not_done}"),
    "sock.not_done.command": E("the command was NOT applied", "команда НЕ применена"),
    "sock.not_done.match": E("the match was NOT loaded", "матч НЕ загружен"),
    "sock.unknown": E("queued, outcome unknown: the clock took `{what}` but did not say what it "
                      "did in time; check with `gammonclock arbiter status` before repeating it",
                      "в очереди, результат неизвестен: часы приняли `{what}`, но не сообщили "
                      "вовремя, что сделали; проверьте `gammonclock arbiter status`, прежде чем "
                      "повторять"),
    "sock.text_not_new_match": E("only new-match carries a match file ('text'); nothing was "
                                 "done",
                                 "файл матча ('text') передаёт только new-match; ничего не "
                                 "сделано"),
    "sock.no_table": E("this clock takes no next match", "эти часы не принимают следующий матч"),
    "sock.new_match_usage": E("usage: new-match [--force] (the match file's text in the "
                              "request's 'text')",
                              "как писать: new-match [--force] (текст файла матча в поле 'text' "
                              "запроса)"),
    "sock.new_match_text": E("new-match needs the match file's text: `gammonclock arbiter "
                             "new-match FILE` sends it",
                             "для new-match нужен текст файла матча: его отправляет "
                             "`gammonclock arbiter new-match FILE`"),
    "sock.load_failed": E("the clock failed loading the match ({error}); check with "
                          "`gammonclock arbiter status` before repeating it",
                          "часы не смогли загрузить матч ({error}); проверьте `gammonclock "
                          "arbiter status`, прежде чем повторять"),
    "sock.no_stick": E("this clock takes no USB stick", "эти часы не принимают USB-флешку"),
    "sock.stick_usage": E("usage: usb-stick DIR (the folder the stick is mounted at)",
                          "как писать: usb-stick DIR (папка, куда смонтирована флешка)"),
    "sock.turned_away": E("the clock is busy serving {n} clients; nothing was done: try again",
                          "часы заняты: одновременно подключено клиентов — {n}; ничего не "
                          "сделано: попробуйте ещё раз"),
    "sock.no_line": E("the request line did not arrive within {time} of connecting; nothing was "
                      "done",
                      "строка запроса не пришла за {time} после подключения; ничего не сделано"),
    "sock.failed": E("the clock failed to answer ({error}); check with `gammonclock arbiter "
                     "status` before repeating it",
                     "часы не смогли ответить ({error}); проверьте `gammonclock arbiter "
                     "status`, прежде чем повторять"),
    "sock.id_reused": E("request id {id} was already used for another command; nothing was "
                        "done: use a fresh id",
                        "номер запроса {id} уже занят другой командой; ничего не сделано: "
                        "возьмите новый номер"),
    "sock.first_waits": E("queued, outcome unknown: the first request with this id is still "
                          "waiting for the clock; check with `gammonclock arbiter status` before "
                          "repeating it",
                          "в очереди, результат неизвестен: первый запрос с этим номером ещё "
                          "ждёт часы; проверьте `gammonclock arbiter status`, прежде чем "
                          "повторять"),

    # --- a dead clock's match continued here (runtime/continuation.py, SPEC §13.5): what the
    # arbiter's socket, a stick and the hall's move are answered; file names, the command
    # language and the system's own reason ({why}) as they are
    "cont.no_such": E("{path}: no such journal or folder; nothing changed",
                      "{path}: нет такого журнала или папки; ничего не изменено"),
    "cont.no_journal": E("{path}: holds no journal (match-*.jsonl, in it or in its {dir}/); "
                         "nothing changed",
                         "{path}: журнала нет (match-*.jsonl ни в папке, ни в её {dir}/); "
                         "ничего не изменено"),
    "cont.cannot_read": E("{path}: cannot read the journal: {why}; nothing changed",
                          "{path}: журнал не читается: {why}; ничего не изменено"),
    "cont.too_large": E("{path}: {size} bytes, more than {mib} MiB: not a match's journal; "
                        "nothing changed",
                        "{path}: {size} байт, больше {mib} МиБ: это не журнал матча; ничего не "
                        "изменено"),
    "cont.tampered": E("{path}: {verdict}. The journal was not continued; nothing changed "
                       "(`continue --unverified` takes it all the same, and its header says so)",
                       "{path}: {verdict}. Матч из этого журнала не продолжен; ничего не "
                       "изменено (`continue --unverified` всё равно возьмёт его, и заголовок "
                       "нового журнала это запишет)"),
    "cont.no_records": E("{path}: no records; nothing changed",
                         "{path}: записей нет; ничего не изменено"),
    "cont.unreadable": E("{error}\nThe journal was not continued; nothing changed",
                         "{error}\nМатч из этого журнала не продолжен; ничего не изменено"),
    "cont.over": E("{path}: the match is over ({end}): nothing to continue; nothing changed",
                   "{path}: матч окончен ({end}): продолжать нечего; ничего не изменено"),
    "cont.own_journal": E("{path}: a journal of this clock: it resumes by itself after a power "
                          "cut; nothing changed",
                          "{path}: это журнал этих же часов: после сбоя питания матч "
                          "продолжается сам; ничего не изменено"),
    "cont.already": E("match already continued here: {match}",
                      "матч уже продолжен здесь: {match}"),
    "cont.in_progress": E("a match is in progress (game {game}, score {score}): a match is "
                          "continued here once it is over; `continue --force` ends it now as "
                          "abandoned, on the record",
                          "идёт матч (партия {game}, счёт {score}): другой матч продолжится "
                          "здесь, когда этот закончится; `continue --force` прерывает его "
                          "сейчас, с записью в протоколе"),
    "cont.journal_not_written": E("the journal of the current match is not being written "
                                  "({error}): the continuation waits until it is",
                                  "журнал текущего матча не записывается ({error}): "
                                  "продолжение ждёт, пока запись не восстановится"),
    "cont.cannot": E("the match cannot be continued here: {error}",
                     "матч нельзя продолжить здесь: {error}"),
    "cont.continued": E("match continued: {match}, from {file} (record {seq})",
                        "матч продолжен: {match}, из {file} (запись {seq})"),
    "cont.paused": E("score {score}, paused: a hold of the cube button resumes",
                     "счёт {score}, пауза: игра продолжится, если удержать кнопку куба"),
    "cont.not_verified": E("NOT VERIFIED, continued on the arbiter's word: {verdict}",
                           "НЕ ПРОВЕРЕН, продолжен под ответственность судьи: {verdict}"),
    "cont.not_continued": E("match NOT continued: {why}", "матч НЕ продолжен: {why}"),
    # a stick's continuation is only offered (SPEC §13.5, §14.1): the stick carries a file, the
    # arbiter's PIN at the panels (or the socket) is the authority that takes it
    "cont.offered": E("offered from the USB stick, NOT loaded (nothing here ended): {table}'s "
                      "match {match}, score {score}, from {file} (record {seq})",
                      "на флешке предложен матч стола {table}: {match}, счёт {score}, из {file} "
                      "(запись {seq}); он НЕ загружен, здесь ничего не прервано"),
    "cont.offer_how": E("the arbiter takes it at these panels: the three buttons held, the PIN, "
                        "then the menu's MATCH FROM STICK; or on the socket: gammonclock "
                        "arbiter continue {path}",
                        "судья берёт его на панелях этих часов: удержать три кнопки, ПИН-код, "
                        "в меню — МАТЧ С ФЛЕШКИ; или через сокет: gammonclock arbiter "
                        "continue {path}"),
    "cont.offer_no_pin": E("this table has no arbiter's PIN ([arbiter] pin), so the panels "
                           "cannot take it: the arbiter takes it on the socket: gammonclock "
                           "arbiter continue {path}",
                           "у этого стола нет ПИН-кода судьи ([arbiter] pin), на панелях его "
                           "не взять: судья берёт его через сокет: gammonclock arbiter "
                           "continue {path}"),
    "cont.offer_idle": E("no match is loaded here, so there is no arbiter's menu at the panels: "
                         "the arbiter takes it on the socket: gammonclock arbiter continue "
                         "{path}",
                         "здесь не загружен матч, меню судьи на панелях нет: судья берёт его "
                         "через сокет: gammonclock arbiter continue {path}"),
    "cont.stick_in_progress": E("a match is in progress here (game {game}, score {score}): a "
                                "stick never ends it; the arbiter continues the stick's match "
                                "with the socket and --force (gammonclock arbiter continue "
                                "FROM --force)",
                                "здесь идёт матч (партия {game}, счёт {score}): флешка его не "
                                "прерывает; матч с флешки судья продолжает через сокет с "
                                "--force (gammonclock arbiter continue FROM --force)"),
    "cont.offer_gone": E("the USB stick's offer is no longer held here (the clock restarted, "
                         "or the match here changed): plug the stick in again",
                         "предложения с флешки здесь больше нет (часы перезапускались или "
                         "матч сменился): вставьте флешку снова"),
    "cont.no_table": E("this clock takes no next match", "эти часы не принимают следующий матч"),
    "cont.usage": E("usage: continue FROM [--force] [--unverified] (FROM: a journal, or a "
                    "folder holding it, in the request's 'file')",
                    "как писать: continue FROM [--force] [--unverified] (FROM — журнал или "
                    "папка с ним, в поле 'file' запроса)"),
    "cont.folder_unreadable": E("{path}: cannot read the folder ({why}; a link is not followed)",
                                "{path}: папка не читается ({why}; по ссылкам часы не "
                                "переходят)"),
    "cont.elsewhere": E("{path}: not on the stick (another file system is mounted there)",
                        "{path}: не на самой флешке (там смонтирована другая файловая "
                        "система)"),
    "cont.marker_alone": E("{path}: a marker to continue a match, but no journal "
                           "(match-*.jsonl) beside it",
                           "{path}: есть метка продолжения матча, но рядом нет журнала "
                           "(match-*.jsonl)"),
    "cont.journal_unreadable": E("{path}: cannot read the journal ({why}; a link is not "
                                 "followed)",
                                 "{path}: журнал не читается ({why}; по ссылкам часы не "
                                 "переходят)"),
    "cont.not_plain": E("{path}: not a plain file on the stick",
                        "{path}: не обычный файл на флешке"),
    "cont.stick_too_large": E("{path}: more than {mib} MiB: not a match's journal",
                              "{path}: больше {mib} МиБ: это не журнал матча"),
    "cont.read_failed": E("{path}: cannot read the journal: {why}",
                          "{path}: журнал не читается: {why}"),
    # the hall's copy sent to a table (link/requests.py: `continue FROM-TABLE JOURNAL`)
    "cont.hall_usage": E("usage: continue FROM-TABLE JOURNAL [--force], the journal's text in "
                         "'text'",
                         "как писать: continue FROM-TABLE JOURNAL [--force], текст журнала в "
                         "'text'"),
    "cont.hall_name": E("{name} of {table} is not a table's journal name",
                        "{name} стола {table} — не имя журнала стола"),
    "cont.hall_too_long": E("the journal is longer than {mib} MiB",
                            "журнал длиннее {mib} МиБ"),
    "cont.hall_not_kept": E("cannot keep the journal the hall sent: {error}",
                            "журнал, присланный залом, не удаётся сохранить: {error}"),

    # --- the arbiter's command that is not one (core.arbiter.ArbiterSyntaxError's code) -------
    # (the commands, sides and outcomes are said as the arbiter types them)
    "arb.not_side": E("{word} is not a side (left or right)",
                      "{word} — не сторона (left или right)"),
    "arb.not_score": E("{word} is not a score", "{word} — не счёт"),
    "arb.score_over": E("{word} is not a score (at most {max}, the longest match)",
                        "{word} — не счёт (не больше {max}, как в самом длинном матче)"),
    "arb.score_halves": E("{word} is not a score (whole or half points, not negative)",
                          "{word} — не счёт (целые очки или половины очка, не меньше 0)"),
    "arb.text_long": E("the text is {n} characters long; at most {max}",
                       "текст слишком длинный ({n}); допустимо не больше {max} знаков"),
    "arb.text_control": E("the text holds a control character (NUL, newline, escape, …); use "
                          "printable characters only",
                          "в тексте есть управляющий символ (нулевой байт, перевод строки "
                          "и т. п.); используйте только печатные символы"),
    "arb.no_command": E("no command; expected one of: {commands}",
                        "нет команды; ожидается одна из: {commands}"),
    "arb.unknown": E("unknown arbiter command {word}; expected one of: {commands}",
                     "неизвестная команда судьи {word}; ожидается одна из: {commands}"),
    "arb.usage": E("usage: {usage}", "как писать: {usage}"),
    "arb.usage_after": E("{detail}; usage: {usage}", "{detail}; как писать: {usage}"),
    "arb.takes.none": E("{name} takes 0 arguments", "{name}: аргументы не нужны"),
    "arb.takes.one": E("{name} takes {n} argument", "{name}: нужен {n} аргумент"),
    "arb.takes.many": E("{name} takes {n} arguments", "{name}: нужно аргументов: {n}"),
    "arb.warn_args": E("warn needs a side and a text", "warn: нужны сторона и текст"),
    "arb.forfeit_args": E("forfeit takes a side and optionally the points",
                          "forfeit: нужна сторона и, если надо, число очков"),
    "arb.forfeit_points": E("{word} is not a number of points (1 to {max})",
                            "{word} — не число очков (от 1 до {max})"),
    "arb.cube_args": E("cube takes a value and optionally the owner",
                       "cube: нужно значение и, если надо, владелец"),
    "arb.cube_value": E("{word} is not a cube value (a power of two from 1 to {max})",
                        "{word} — не значение куба (степень двойки от 1 до {max})"),
    "arb.cube_middle": E("a cube at 1 is in the middle and has no owner",
                         "куб на 1 стоит в середине, владельца у него нет"),
    "arb.outcome": E("{word} is not an outcome (upheld or rejected)",
                     "{word} — не решение по апелляции (upheld или rejected)"),
    "arb.above_zero": E("{name} needs a duration above zero",
                        "{name}: нужна длительность больше нуля"),
    "arb.moved_args": E("moved takes at most the table the match went to",
                        "moved: нужен только стол, на который перенесён матч"),
    "arb.not_table": E("{word} is not a table id (1 to 32 letters, digits, '-' or '_')",
                       "{word} — не номер стола (от 1 до 32 латинских букв, цифр, '-' или '_')"),
    # how each command is written (core.arbiter.USAGE; a command of one word is said as it is):
    # the words typed as they are
    "arb.how.adjust": E("adjust SIDE ±DURATION", "adjust СТОРОНА ±ВРЕМЯ"),
    "arb.how.deduct": E("deduct SIDE DURATION", "deduct СТОРОНА ВРЕМЯ"),
    "arb.how.add": E("add SIDE DURATION", "add СТОРОНА ВРЕМЯ"),
    "arb.how.point": E("point SIDE", "point СТОРОНА"),
    "arb.how.forfeit": E("forfeit SIDE [POINTS]", "forfeit СТОРОНА [ОЧКИ]"),
    "arb.how.disqualify": E("disqualify SIDE", "disqualify СТОРОНА"),
    "arb.how.warn": E("warn SIDE TEXT", "warn СТОРОНА ТЕКСТ"),
    "arb.how.challenge": E("challenge SIDE upheld|rejected", "challenge СТОРОНА upheld|rejected"),
    "arb.how.score": E("score LEFT RIGHT", "score СЧЁТ_ЛЕВОГО СЧЁТ_ПРАВОГО"),
    "arb.how.cube": E("cube VALUE [SIDE]", "cube ЗНАЧЕНИЕ [СТОРОНА]"),
    "arb.how.moved": E("moved [TABLE]", "moved [СТОЛ]"),

    # --- the CSV of turns: its header (the columns' order never changes) ------------------------
    "csv.game": E("game", "партия"),
    "csv.turn": E("turn", "ход"),
    "csv.side": E("side", "сторона"),
    "csv.player": E("player", "игрок"),
    "csv.start_utc": E("start_utc", "начало_utc"),
    "csv.match_time_s": E("match_time_s", "время_матча_с"),
    "csv.think_s": E("think_s", "обдумывание_с"),
    "csv.delay_used_s": E("delay_used_s", "задержка_с"),
    "csv.charged_s": E("charged_s", "списано_с"),
    "csv.reserve_after_s": E("reserve_after_s", "резерв_после_с"),
    "csv.end": E("end", "окончание"),
    "csv.cube": E("cube", "куб"),
    "csv.dice": E("dice", "кости"),
    # a TAMPERED journal's CSV (written only with --allow-tampered): its first column
    "csv.verdict": E("verdict", "проверка_журнала"),

    # --- the arbiter's replies: what each effect did (`Effect.describe` in English) -------------
    "e.game_started": E("game {game} starts: {starter} to play{colour}{crawford}",
                        "партия {game} началась: ходит {starter}{colour}{crawford}"),
    "e.plays_white": E(", {side} plays white", ", белыми играет {side}"),
    "e.crawford_game": E(" (Crawford game)", " (партия Кроуфорда)"),
    "e.turn_started": E("{whose} clock runs from {reserve}{delay}",
                        "часы {whose} идут с {reserve}{delay}"),
    "e.turn_delay": E(" + {delay} delay", " + задержка {delay}"),
    "e.turn_ended": E("{whose} turn ends ({reason}) after {span}, charged {charged}",
                      "ход {whose} окончен ({reason}) через {span}, списано {charged}"),
    "e.delay_used": E(", delay used {delay}", ", задержка {delay}"),
    "e.added_back": E(", added back {refund}", ", возвращено {refund}"),
    "e.double_offered": E("{who} doubles to {value}", "{who} удваивает до {value}"),
    "e.double_taken": E("{who} takes: cube at {value}, owned by {who}",
                        "{who} берёт: куб на {value}, владеет {who}"),
    "e.entry_started": E("{who} enters the game's result; proposed: {proposal}",
                         "{who} вводит результат партии; предложено: {proposal}"),
    "e.entry_passed": E("{who} passes; proposed: {proposal}",
                        "{who} отказывается от удвоения (пас); предложено: {proposal}"),
    "e.proposed": E("proposed: {proposal}", "предложено: {proposal}"),
    "e.entry_cancelled": E("{who} cancels the result entry; play goes on",
                           "{who} отменяет ввод результата; игра продолжается"),
    "e.game_ended": E("game {game}: {how}{result}; score {score}{crawford}",
                      "партия {game}: {how}{result}; счёт {score}{crawford}"),
    "e.forfeit": E("forfeit: ", "присуждена судьёй: "),
    "e.next_crawford": E("; next game is the Crawford game",
                         "; следующая партия — партия Кроуфорда"),
    "e.abandoned": E("match abandoned by the arbiter at {score}",
                     "матч прерван судьёй при счёте {score}"),
    "e.moved": E("match moved to another clock at {score}",
                 "матч перенесён на другие часы при счёте {score}"),
    "e.match_ended": E("match over ({reason}): {who}, {score}",
                       "матч окончен ({reason}): {who}, {score}"),
    "e.wins": E("{who} wins", "победил {who}"),
    "e.tie": E("no winner (tie)", "без победителя (ничья)"),
    "e.flag_fell": E("{whose} flag falls", "флажок {whose} упал"),
    "e.overtime": E("{whose} flag falls: overtime, {amount} added",
                    "флажок {whose} упал: добавлено {amount}"),
    "e.paused": E("paused ({by})", "пауза ({by})"),
    "e.resumed": E("resumed ({by})", "игра продолжена ({by})"),
    "e.recovered": E("recovered after an outage{paused}", "восстановлено после сбоя{paused}"),
    "e.recovered_paused": E("; paused", "; пауза"),
    "e.break_started": E("{who} takes a break until {at} s", "{who} берёт перерыв до {at} с"),
    "e.break_overrun": E("break over: {who} is late, their reserve runs",
                         "перерыв окончен: {who} опаздывает, идёт его резерв"),
    "e.break_ended": E("{whose} break ends{late}", "перерыв {whose} окончен{late}"),
    "e.break_late": E(" ({late} late)", " (опоздание {late})"),
    "e.arbiter": E("arbiter: {text}", "arbiter: {text}"),
    "e.reserve_changed": E("{whose} reserve {sign}{change} -> {reserve}",
                           "резерв {whose} {sign}{change} -> {reserve}"),
    "e.score_changed": E("score set to {score}{crawford}", "счёт изменён на {score}{crawford}"),
    "e.point_penalty": E("penalty point: one point taken from {who}; score {score}{crawford}",
                         "штрафное очко: снято одно очко ({who}); счёт {score}{crawford}"),
    "e.crawford_next": E(" (Crawford game next)", " (далее партия Кроуфорда)"),
    "e.cube_set": E("cube set to {value}{owner}", "куб установлен на {value}{owner}"),
    "e.cube_owner": E(", owned by {who}", ", владеет {who}"),
    "e.warned": E("warning to {side}: {text}", "предупреждение игроку {side}: {text}"),
    "e.challenge_upheld": E("{whose} challenge upheld", "апелляция {whose} принята"),
    "e.challenge_rejected": E("{whose} challenge rejected ({n} rejected so far)",
                              "апелляция {whose} отклонена (отклонено всего: {n})"),
    "e.opening": E("{whose} opening {what} {dice}", "стартовый {what} {whose}: {dice}"),
    "e.opening_die": E("die", "бросок кости"),
    "e.opening_roll": E("roll", "бросок"),
    "e.the": E("the", "без стороны"),
    "e.rolls": E("{who} rolls {dice}{early}", "{who} бросает {dice}{early}"),
    "e.running_player": E("the running player", "игрок, чьи часы идут"),
    "e.early_roll": E(" (early roll)", " (ранний бросок)"),
    "e.voided": E("roll {dice} void", "бросок {dice} недействителен"),
    "e.rewound": E("{why}: rewound to {to} s", "{why}: возврат к {to} с"),
    # why the history was replayed (`Rewound.why`)
    "rewound.undo": E("undo", "отмена"),
    "rewound.arbiter chord": E("arbiter chord", "вход судьи (три кнопки)"),
    "rewound.left held": E("left held", "левая кнопка удержана"),
    "rewound.right held": E("right held", "правая кнопка удержана"),
    "rewound.cube held": E("cube held", "кнопка куба удержана"),
    "e.undone": E("undone: {what}", "отменено: {what}"),
    "e.undone_at": E("undone: {what} (at {at} match time)",
                     "отменено: {what} (в {at} по времени матча)"),
    # what an undo took back (`Undone`'s fields; an older journal's English is matched)
    "undo.start": E("the start of game {game}", "начало партии {game}"),
    "undo.double": E("{whose} double to {value}", "удвоение {whose} до {value}"),
    "undo.take": E("{whose} take", "взятие куба {whose}"),
    "undo.result": E("the result of game {game} ({result})", "результат партии {game} ({result})"),
    "undo.switch": E("{whose} turn switch", "нажатие часов {whose}"),
    # --- a table's event on the director's page (hall/events.py): its effects said in turn --------
    "ev.arbiter": E("arbiter: {what}", "судья: {what}"),
    "ev.other": E("other event ({kind})", "другое событие ({kind})"),
    "ev.more": E("… and {n} more", "… и ещё {n}"),
    "e.ignored": E("ignored {what}: {why}", "не принято {what}: {why}"),
    "e.refused": E("refused {what}: {why}", "отказано {what}: {why}"),
    "e.shown": E("shown: {text}", "показано: {text}"),
    "e.draw_result": E("draw ({points} each)", "ничья (по {points})"),
    "e.win_result": E("{who} wins {kind} ({points})", "победил {who}: {kind} ({points})"),
    # --- a provisioning stick's README.txt (`gammonclock hall provision`, hall/provision.py) ----
    "provision.readme": E(
        "gammonclock: the provisioning stick of table {table}\n"
        "\n"
        "It joins the clock of table {table} to the hall's broker at {broker}:\n"
        "the clock's table id, its account on the broker and the table's device key, which\n"
        "seals its journals.\n"
        "\n"
        "1. Copy the folder \"gammonclock\" and this file as they are to the top of a USB\n"
        "   stick (FAT or exFAT).\n"
        "2. Between matches, plug the stick into the clock of table {table}. Never during a\n"
        "   match: a clock in the middle of a match does not take it.\n"
        "3. A new clock (no arbiter PIN set yet) takes it at once. A clock with a PIN offers\n"
        "   it on the panels: the arbiter takes it in the arbiter's menu, after the PIN.\n"
        "4. The panels say when it is taken; then pull the stick out. The clock connects to\n"
        "   the hall by itself.\n"
        "5. A clock that has played matches before keeps its own key (its journals are sealed\n"
        "   with it) and writes it to the stick (gammonclock/provision/returned.key). Bring\n"
        "   the stick back to the director, who runs:\n"
        "   gammonclock hall provision --collect STICK\n"
        "\n"
        "The stick holds the table's password and key: keep it with you and wipe it when\n"
        "done. It carries files, never authority: only the arbiter's PIN does.\n",
        "gammonclock: флешка подключения стола {table}\n"
        "\n"
        "Она подключает часы стола {table} к брокеру зала по адресу {broker}:\n"
        "номер стола, учётную запись часов на брокере и ключ стола, которым часы\n"
        "подписывают свои журналы.\n"
        "\n"
        "1. Скопируйте папку \"gammonclock\" и этот файл как есть в корень USB-флешки\n"
        "   (FAT или exFAT).\n"
        "2. Между матчами вставьте флешку в часы стола {table}. Не во время матча: часы\n"
        "   посреди матча её не принимают.\n"
        "3. Новые часы (PIN судьи ещё не задан) принимают её сразу. Часы с PIN предлагают\n"
        "   её на экранах: судья принимает её в меню судьи, после ввода PIN.\n"
        "4. Экраны скажут, когда она принята; тогда выньте флешку. Часы сами подключатся\n"
        "   к залу.\n"
        "5. Часы, на которых уже играли матчи, оставляют свой ключ (им подписаны их журналы)\n"
        "   и записывают его на флешку (gammonclock/provision/returned.key). Верните флешку\n"
        "   главному судье турнира, он выполнит:\n"
        "   gammonclock hall provision --collect ФЛЕШКА\n"
        "\n"
        "На флешке пароль и ключ стола: держите её при себе и сотрите после работы. Она\n"
        "переносит файлы, но не даёт полномочий: их даёт только PIN судьи.\n"),
    "provision.readme_time": E(
        "The hall serves the time at {host}: a clock installed with\n"
        "scripts/install --time-server {host} takes its time from it.\n",
        "Зал раздаёт время с адреса {host}: часы, установленные с\n"
        "scripts/install --time-server {host}, берут время оттуда.\n"),
}
del E


def language(lang: str | None) -> str:
    """`lang` if the clock speaks it, else English."""
    return lang if lang in LANGUAGES else DEFAULT


def say(key: str, lang: str = DEFAULT, **args: object) -> str:
    """The text `key` in `lang`, its placeholders filled from `args`."""
    entry = WORDS[key]
    return (entry.ru if language(lang) == "ru" else entry.en).format(**args)


def fields(text: str) -> set[str]:
    """The placeholders of a text: "{n} очков" → {"n"}."""
    return {name for _, name, _, _ in Formatter().parse(text) if name}


def form(n: int | Fraction, lang: str = DEFAULT) -> str:
    """The plural form a number takes: "one", "few" or "many" (English: "one" or "many")."""
    amount = Fraction(n)
    if language(lang) == "en":
        return "one" if amount == 1 else "many"
    if amount.denominator != 1:
        return "few"                        # "0,5 очка", "1,5 очка"
    whole = abs(amount.numerator)
    if whole % 10 == 1 and whole % 100 != 11:
        return "one"
    if 2 <= whole % 10 <= 4 and not 12 <= whole % 100 <= 14:
        return "few"
    return "many"


def counted(noun: str, n: int | Fraction, lang: str = DEFAULT) -> str:
    """A number with its noun in the right form: counted("points", 5, "ru") → "5 очков"."""
    return say(f"{noun}.{form(n, lang)}", lang, n=number(n, lang))


def match_length(n: int, lang: str = DEFAULT) -> str:
    """"a match to 7 points", "матч до 7 очков" (after "до" Russian has one (1, 21) or many)."""
    kind = form(n, lang)
    return say(f"length.{'many' if kind == 'few' else kind}", lang, n=n)


def up_to(n: int, lang: str = DEFAULT) -> str:
    """A match's length after "to": "7"; "до 7 очков"."""
    return say(f"upto.{'one' if form(n, lang) == 'one' else 'many'}", lang, n=n)


def number(value: object, lang: str = DEFAULT) -> str:
    """A number, a score or a clock's time as text, with a decimal comma in Russian
    ("1,5", "9:41,3"); `value` may already be text."""
    if isinstance(value, Fraction):
        from gammonclock.core.rules import format_score
        value = format_score(value)
    text = str(value)
    return text.replace(".", ",") if language(lang) == "ru" else text


def seconds(value: object, lang: str = DEFAULT) -> str:
    """"12 s", "12,5 с"."""
    return say("unit.s", lang, n=number(value, lang))


def side(value: object, lang: str = DEFAULT) -> str:
    """A side's word: "left", "слева"."""
    return say(f"side.{value}", lang)


def date(wall_ns: int, lang: str = DEFAULT) -> str:
    """A UTC date: "2 December 2026"; "2 декабря 2026 г."."""
    tm = time.gmtime(wall_ns // 1_000_000_000)
    return say("date", lang, year=tm.tm_year, day=tm.tm_mday,
               month_name=say(f"month.{tm.tm_mon}", lang))


def percent(fraction: float, digits: int, lang: str = DEFAULT) -> str:
    """"12.5%", "12,5 %" (Russian puts a space before the sign)."""
    text = f"{fraction * 100:.{digits}f}"
    return f"{number(text, lang)} %" if language(lang) == "ru" else f"{text}%"


def word_or_self(prefix: str, value: str, lang: str = DEFAULT) -> str:
    """The catalogue's word for `prefix.value` when it has one, else `value` as it is (a code
    from a newer journal, a free text)."""
    key = f"{prefix}.{value}"
    return say(key, lang) if key in WORDS else value


def ended_words(reason: str, moved_to: str | None = None, lang: str = DEFAULT) -> str:
    """How a match ended, in a few words: the end reason's word (`end.*`), and for a match
    continued on another clock where it went ("moved to table-9"; SPEC §13.5)."""
    if reason == "moved" and moved_to is not None:
        return say("end.moved_to", lang, table=moved_to)
    return word_or_self("end", reason, lang)


def describe(effect: Effect, lang: str = DEFAULT, rounded: bool = False) -> str:
    """What an effect did, in `lang`: the arbiter's replies' "said" lines and the report's
    "What it did". English is `Effect.describe` itself; the catalogue's English (`said`) is
    kept equal to it by a test. `rounded`: spans and instants in seconds to the tenth, as
    people read them (the replies), not to the nanosecond."""
    if language(lang) == "en" and not rounded:
        return effect.describe()
    return said(effect, lang, rounded)


def rounded_seconds(ns: int) -> str:
    """Seconds to the nearest tenth, as people read them: "1.2", "30", "-0.5"."""
    tenths = (abs(ns) + NS_PER_TENTH // 2) // NS_PER_TENTH
    sign = "-" if ns < 0 and tenths else ""
    whole, tenth = divmod(tenths, 10)
    return f"{sign}{whole}.{tenth}" if tenth else f"{sign}{whole}"


NS_PER_TENTH = 100_000_000


def said(effect: Effect, lang: str, rounded: bool = False) -> str:
    """`effect` in the catalogue's words (both languages); `rounded` as `describe` says."""
    from gammonclock.core import effects as fx
    from gammonclock.durations import format_clock
    from gammonclock.durations import format_seconds as exact

    format_seconds = rounded_seconds if rounded else exact

    def secs(ns: int) -> str:
        return seconds(format_seconds(ns), lang)

    def clock(ns: int) -> str:
        return number(format_clock(ns), lang)

    def who(s: object) -> str:
        return say(f"who.{s}", lang)

    def whose(s: object) -> str:
        return say(f"whose.{s}", lang)

    def score(pair: Pair[Fraction]) -> str:
        return f"{number(pair.left, lang)}-{number(pair.right, lang)}"

    e = effect
    if isinstance(e, fx.GameStarted):
        colour = say("e.plays_white", lang, side=who(e.white)) if e.white else ""
        crawford = say("e.crawford_game", lang) if e.crawford else ""
        return say("e.game_started", lang, game=e.game, starter=who(e.starter), colour=colour,
                   crawford=crawford)
    if isinstance(e, fx.TurnStarted):
        delay = say("e.turn_delay", lang, delay=secs(e.delay)) if e.delay else ""
        return say("e.turn_started", lang, whose=whose(e.side), reserve=clock(e.reserve),
                   delay=delay)
    if isinstance(e, fx.TurnEnded):
        text = say("e.turn_ended", lang, whose=whose(e.side),
                   reason=word_or_self("reason", e.reason.value, lang), span=secs(e.span),
                   charged=secs(e.charged))
        if e.delay_used:
            text += say("e.delay_used", lang, delay=secs(e.delay_used))
        if e.refund:
            text += say("e.added_back", lang, refund=secs(e.refund))
        return text
    if isinstance(e, fx.DoubleOffered):
        return say("e.double_offered", lang, who=who(e.doubler), value=e.value)
    if isinstance(e, fx.DoubleTaken):
        return say("e.double_taken", lang, who=who(e.taker), value=e.value)
    if isinstance(e, fx.ResultEntryStarted):
        return say("e.entry_passed" if e.passed else "e.entry_started", lang,
                   who=who(e.holder), proposal=result(e.proposal, lang))
    if isinstance(e, fx.ResultProposed):
        return say("e.proposed", lang, proposal=result(e.proposal, lang))
    if isinstance(e, fx.ResultEntryCancelled):
        return say("e.entry_cancelled", lang, who=who(e.holder))
    if isinstance(e, fx.GameEnded):
        return say("e.game_ended", lang, game=e.game,
                   how=say("e.forfeit", lang) if e.by_arbiter else "",
                   result=result(e.result, lang), score=score(e.score),
                   crawford=say("e.next_crawford", lang) if e.next_crawford else "")
    if isinstance(e, fx.MatchEnded):
        if e.reason.value == "abandoned":
            return say("e.abandoned", lang, score=score(e.score))
        if e.reason.value == "moved":
            return say("e.moved", lang, score=score(e.score))
        winner = say("e.wins", lang, who=who(e.winner)) if e.winner else say("e.tie", lang)
        return say("e.match_ended", lang, reason=word_or_self("end", e.reason.value, lang),
                   who=winner, score=score(e.score))
    if isinstance(e, fx.FlagFell):
        return say("e.flag_fell", lang, whose=whose(e.side))
    if isinstance(e, fx.OvertimeGiven):
        return say("e.overtime", lang, whose=whose(e.side), amount=secs(e.amount))
    if isinstance(e, fx.Paused):
        return say("e.paused", lang, by=_by(e.by, lang))
    if isinstance(e, fx.Resumed):
        return say("e.resumed", lang, by=_by(e.by, lang))
    if isinstance(e, fx.Recovered):
        return say("e.recovered", lang,
                   paused=say("e.recovered_paused", lang) if e.paused else "")
    if isinstance(e, fx.BreakStarted):
        return say("e.break_started", lang, who=who(e.side),
                   at=number(format_seconds(e.ends_at), lang))
    if isinstance(e, fx.BreakOverrun):
        return say("e.break_overrun", lang, who=who(e.side))
    if isinstance(e, fx.BreakEnded):
        late = say("e.break_late", lang, late=secs(e.overrun)) if e.overrun else ""
        return say("e.break_ended", lang, whose=whose(e.side), late=late)
    if isinstance(e, fx.ArbiterCommand):
        # the command as given, in the command language (the hall picks this line out by it)
        return say("e.arbiter", lang, text=e.text)
    if isinstance(e, fx.ReserveChanged):
        return say("e.reserve_changed", lang, whose=whose(e.side),
                   sign="+" if e.change >= 0 else "-", change=secs(abs(e.change)),
                   reserve=clock(e.reserve))
    if isinstance(e, fx.ScoreChanged):
        crawford = say("e.crawford_next", lang) if e.crawford_next else ""
        if e.penalty is not None:
            return say("e.point_penalty", lang, who=who(e.penalty), score=score(e.score),
                       crawford=crawford)
        return say("e.score_changed", lang, score=score(e.score), crawford=crawford)
    if isinstance(e, fx.CubeSet):
        owner = say("e.cube_owner", lang, who=who(e.owner)) if e.owner else ""
        return say("e.cube_set", lang, value=e.value, owner=owner)
    if isinstance(e, fx.Warned):
        return say("e.warned", lang, side=side(e.side, lang), text=e.text)
    if isinstance(e, fx.ChallengeDecided):
        if e.upheld:
            return say("e.challenge_upheld", lang, whose=whose(e.side))
        return say("e.challenge_rejected", lang, whose=whose(e.side), n=e.rejected)
    if isinstance(e, fx.DiceRolled):
        dice = "-".join(map(str, e.dice))
        if e.turn == 0:
            what = say("e.opening_die" if len(e.dice) == 1 else "e.opening_roll", lang)
            owner = whose(e.side) if e.side else say("e.the", lang)
            return say("e.opening", lang, whose=owner, what=what, dice=dice)
        roller = who(e.side) if e.side else say("e.running_player", lang)
        return say("e.rolls", lang, who=roller, dice=dice,
                   early=say("e.early_roll", lang) if e.early else "")
    if isinstance(e, fx.RollVoided):
        return say("e.voided", lang, dice="-".join(map(str, e.dice)))
    if isinstance(e, fx.Rewound):
        return say("e.rewound", lang, why=word_or_self("rewound", e.why, lang),
                   to=number(format_seconds(e.to), lang))
    if isinstance(e, fx.Undone):
        if e.made_at is None:
            return say("e.undone", lang, what=undone_what(e, lang))
        return say("e.undone_at", lang, what=undone_what(e, lang), at=clock(e.made_at))
    if isinstance(e, fx.Ignored):
        return say("e.ignored", lang, what=what_words(e.reason, e.what, lang, e.facts),
                   why=why(e.reason, e.why, lang, e.facts))
    if isinstance(e, fx.Refused):
        return say("e.refused", lang, what=what_words(e.reason, e.what, lang, e.facts),
                   why=why(e.reason, e.why, lang, e.facts))
    if isinstance(e, fx.Shown):
        return say("e.shown", lang, text=e.text)
    return e.describe()


def why(reason: object, text: str, lang: str = DEFAULT,
        facts: Iterable[tuple[str, object]] = ()) -> str:
    """Why something was refused or ignored: the engine's `text` in English, in another language
    the catalogue's words for its `reason` code and its `facts` (a side, a reserve, a length);
    the text as it is for a code it has no words for."""
    code = getattr(reason, "value", None)
    key = None if code is None else why_key(code, facts)
    args = fact_args(facts, lang)
    if language(lang) == "en" or key is None or not fields(WORDS[key].ru) <= set(args):
        return text          # (a refusal recorded without the facts its words need)
    return say(key, lang, **args)


def why_key(code: str, facts: Iterable[tuple[str, object]]) -> str | None:
    """The catalogue's key for a refusal's code and facts ("why.pin_wrong.locked"), or None."""
    known = dict(facts)
    key = f"why.{code}"
    if "case" in known:
        key += f".{known['case']}"
    if "locked" in known:
        key += ".locked"
    return key if key in WORDS else None


def fact_args(facts: Iterable[tuple[str, object]], lang: str) -> dict[str, str]:
    """A refusal's facts as the catalogue's placeholders: a side as `who`, `whose` and `other`,
    an end as its word, figures with Russian's decimal comma."""
    args: dict[str, str] = {}
    for name, value in facts:
        if name == "side" and value in ("left", "right"):
            other = "right" if value == "left" else "left"
            args.update(who=say(f"who.{value}", lang), whose=say(f"whose.{value}", lang),
                        other=say(f"who.{other}", lang), side=str(value))
        elif name == "end":
            args[name] = word_or_self("end", str(value), lang) if language(lang) != "en" \
                else str(value)
        else:
            args[name] = number(value, lang)
    return args


def what_words(reason: object, text: str, lang: str = DEFAULT,
         facts: Iterable[tuple[str, object]] = ()) -> str:
    """What was refused or ignored: a player's press in the catalogue's words (its code and
    facts say which), an arbiter's command as it was given (`text`)."""
    code = getattr(reason, "value", None)
    if language(lang) == "en" or code is None:
        return text
    known, args = dict(facts), fact_args(facts, lang)
    if "pressed" in known and f"what.tap.{known['pressed']}" in WORDS:
        return say(f"what.tap.{known['pressed']}", lang)
    if code.startswith("double_") and "whose" in args:
        return say("what.double", lang, **args)
    if code.startswith("break_") and "whose" in args:
        return say("what.break", lang, **args)
    if code.startswith("pin_"):
        return say("what.pin", lang)
    if code == "dice_dropped" and "count" in args:
        return say("what.dice_dropped", lang, **args)
    if code == "void_no_roll":
        return say("what.void", lang)
    return text


_UNDONE = (("undo.start", re.compile(r"the start of game (?P<game>\d+)")),
           ("undo.double", re.compile(r"(?P<side>left|right)'s double to (?P<value>\d+)")),
           ("undo.take", re.compile(r"(?P<side>left|right)'s take")),
           ("undo.result", re.compile(r"the result of game (?P<game>\d+) \((?P<result>.*)\)")),
           ("undo.switch", re.compile(r"(?P<side>left|right)'s turn switch")))


def undone_what(effect: Undone, lang: str = DEFAULT) -> str:
    """What an undo took back, in `lang`, from the effect's fields (`Undone.what`, the engine's
    English, for one built with no fields)."""
    e = effect
    if e.action is None or language(lang) == "en":
        return undone(e.what, lang)
    whose = say(f"whose.{e.side}", lang) if e.side is not None else ""
    if e.action == "start":
        return say("undo.start", lang, game=e.game)
    if e.action == "double":
        return say("undo.double", lang, whose=whose, value=e.value)
    if e.action == "take":
        return say("undo.take", lang, whose=whose)
    if e.action == "result" and e.result is not None:
        return say("undo.result", lang, game=e.game, result=result(e.result, lang))
    if e.action == "switch":
        return say("undo.switch", lang, whose=whose)
    return e.what


def undone(what: str, lang: str = DEFAULT) -> str:
    """What an undo took back, in `lang`, from the engine's English (an `Undone` built with
    `what` only)."""
    if language(lang) == "en":
        return what
    for key, pattern in _UNDONE:
        found = pattern.fullmatch(what)
        if found:
            args = found.groupdict()
            if "side" in args:
                args["whose"] = say(f"whose.{args.pop('side')}", lang)
            return say(key, lang, **args)
    return what


def _by(by: str, lang: str) -> str:
    return word_or_self("by", by, lang)


def result(res: object, lang: str) -> str:
    """A game's result as the effects word it: "left wins gammon (2 points)"."""
    from gammonclock.core.rules import GameResult

    assert isinstance(res, GameResult)
    points = counted("points", res.points, lang)
    if res.winner is None:
        return say("e.draw_result", lang, points=points)
    kind = word_or_self("kind", res.kind.value, lang)
    return say("e.win_result", lang, who=say(f"who.{res.winner}", lang), kind=kind,
               points=points)
