"""The venue of a match continued on another clock (SPEC §13.5, issue 24): whole devices on mock
hardware driven by real presses (`ButtonEdge`s through the service, the test being the loop's
thread), on one shared fake real time (`Venue`): each clock has its own monotonic clock (its
own uptime) and boot id, and all their wall clocks read the same time, so that a match played
across two clocks and the same match played on one can be compared (`one_clock_reference`,
`assert_same_export`). The runtime's and the hall's continuation tests use it."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from gammonclock.config.loading import parse_device_config
from gammonclock.core.arbiter import parse_command
from gammonclock.core.engine import ButtonEdge
from gammonclock.core.match import ArbiterAction, Phase
from gammonclock.device.build import Device, build_device
from gammonclock.export import read_match, render
from gammonclock.journal.records import Stamp
from gammonclock.runtime.lifecycle import LoadOutcome, load_next_match
from gammonclock.sides import Button, Side

S = 1_000_000_000
WALL0 = 1_780_000_000 * S          # the venue's real time when the test starts

DEVICE_TEXT = """\
[hardware]
pin_factory = "mock"

[buttons]
hold_s = 1.5

[table]
id = "{table}"
event = "Moscow Open"
"""

MATCH_TEXT = """\
[match]
length = 5

[players]
left = "Анна"
right = "Boris"
"""


@dataclass
class Venue:
    """The real time every clock of the test lives in."""

    real: int = 0
    clocks: list[Device] = field(default_factory=list)
    device_text: str = DEVICE_TEXT      # each clock's device config: .format(table=…)

    def build(self, tmp_path: Path, table: str, state: Path, uptime_s: int, boot: str
              ) -> Device:
        device_file = parse_device_config(self.device_text.format(table=table),
                                          str(tmp_path / f"{table}.toml"))

        def clock_ns() -> int:
            return self.real + uptime_s * S

        def stamps() -> Stamp:
            return Stamp(clock_ns(), boot, WALL0 + self.real)
        device = build_device(device_file, state, stamps=stamps, clock_ns=clock_ns)
        self.clocks.append(device)
        device.service.present_all([])
        return device

    def wait(self, device: Device | None, seconds: float) -> None:
        """Real time goes on; the clock (if any runs) does what is due meanwhile."""
        self.real += int(seconds * S)
        if device is not None:
            device.service.step()


def edge(venue: Venue, device: Device, button: Button, pressed: bool) -> None:
    t = device.service.engine_time(device.service.clock_ns())
    device.service.apply(ButtonEdge(t, button, pressed))
    device.service.step()


def tap(venue: Venue, device: Device, button: Button, think_s: float = 3.0) -> None:
    """`think_s` of thought, then a tap."""
    venue.wait(device, think_s)
    edge(venue, device, button, True)
    venue.wait(device, 0.1)
    edge(venue, device, button, False)


def hold(venue: Venue, device: Device, button: Button, think_s: float = 2.0) -> None:
    venue.wait(device, think_s)
    edge(venue, device, button, True)
    venue.wait(device, 1.6)
    venue.wait(device, 0.4)
    edge(venue, device, button, False)


def game(venue: Venue, device: Device, opener: Button, turns: int, winner: Button,
         double_at: int | None = None) -> None:
    """A game: `opener` taps to start (the other side's turn starts), `turns` turns, a double
    taken on turn `double_at`, then `winner` holds (single) and the loser confirms."""
    tap(venue, device, opener)
    running = Button.RIGHT if opener is Button.LEFT else Button.LEFT
    for number in range(turns):
        if number == double_at:
            tap(venue, device, Button.CUBE, 1.5)                  # running doubles
            taker = Button.RIGHT if running is Button.LEFT else Button.LEFT
            tap(venue, device, taker, 4.0)                       # … the other takes
            continue
        tap(venue, device, running, 2.0 + number % 5)
        running = Button.RIGHT if running is Button.LEFT else Button.LEFT
    hold(venue, device, winner)
    loser = Button.RIGHT if winner is Button.LEFT else Button.LEFT
    tap(venue, device, loser, 1.0)


def first_part(venue: Venue, device: Device) -> None:
    """Games 1 to 3 and game 4 under way, its right clock running when the clock dies."""
    game(venue, device, Button.LEFT, 9, Button.LEFT)
    game(venue, device, Button.RIGHT, 8, Button.RIGHT, double_at=3)   # right +2 (cube 2)
    venue.wait(device, 30)                                          # between games
    game(venue, device, Button.LEFT, 11, Button.LEFT)
    command(device, "warn", "left", "slow play")
    command(device, "deduct", "right", "20s")
    tap(venue, device, Button.LEFT)                                 # game 4: right runs
    tap(venue, device, Button.RIGHT, 6.0)
    tap(venue, device, Button.LEFT, 4.5)                            # right's clock runs
    venue.wait(device, 1.0)
    command(device, "warn", "right", "phone out")                   # the last record
    venue.wait(device, 2.0)


def second_part(venue: Venue, device: Device) -> None:
    """Resume (a hold of the cube) and play the match out: left wins game 4 and 5."""
    hold(venue, device, Button.CUBE, 5.0)
    for think in (3.0, 2.0, 4.0):
        tap(venue, device, device_running(device), think)
    hold(venue, device, Button.LEFT)
    tap(venue, device, Button.RIGHT, 1.0)
    game(venue, device, Button.RIGHT, 6, Button.LEFT)
    game(venue, device, Button.RIGHT, 4, Button.LEFT)


def device_running(device: Device) -> Button:
    side = device.session.engine.match.running_side
    assert side is not None
    return Button.LEFT if side is Side.LEFT else Button.RIGHT


def command(device: Device, *words: str) -> None:
    t = device.service.engine_time(device.service.clock_ns())
    device.service.apply(ArbiterAction(t, parse_command(list(words)), "socket", "arbiter"))
    device.service.step()


def journal_of(device: Device) -> Path:
    return Path(device.session.journal.path)


def exports(path: Path) -> tuple[list[list[str]], dict]:
    match = read_match(path)
    rows = list(csv.reader(io.StringIO(render(match, "csv"))))
    return rows, json.loads(render(match, "json"))


GAP_S = 75          # the dead clock's last record to the spare taking the match over


def one_clock_reference(venue: Venue, tmp_path: Path) -> Path:
    state = tmp_path / "reference"
    one = venue.build(tmp_path, "T7", state, 3 * 3600, "boot-t7")
    assert load_next_match(one.service, one.table, MATCH_TEXT, "match.toml").ok
    first_part(venue, one)
    path = journal_of(one)
    one.service.stop()        # the power cut: nothing more is written
    venue.clocks.remove(one)
    one.table.state_dir = tmp_path / "nowhere"     # its close writes nowhere on the card
    power_cut(one)
    venue.wait(None, GAP_S)
    again = venue.build(tmp_path, "T7", state, 0, "boot-t7-again")
    assert journal_of(again) == path
    second_part(venue, again)
    assert again.session.engine.match.phase is Phase.MATCH_OVER
    return path


def power_cut(device: Device) -> None:
    """The clock stops dead: its journal is left as it stands, its lock on the state folder
    released (the process is gone)."""
    device.service.session = None
    device.close()


def assert_same_export(continued: Path, reference: Path, expected: dict, source: Path,
                        via: str = "journal") -> None:
    rows, doc = exports(continued)
    ref_rows, ref_doc = exports(reference)
    assert rows == ref_rows                                     # every turn, to the ms
    for key in ("games", "turns", "result", "time_stats", "arbiter_actions", "breaks",
                "pauses", "final_state", "players", "rules"):
        assert doc[key] == ref_doc[key], key
    # Apart from the hand-over: marked where the reference says it recovered from an outage.
    handover = [i for i in doc["incidents"] if i["kind"] == "handover"]
    assert len(handover) == 1
    assert handover[0]["text"] == (f"hand-over: continued on SPARE from T7 ({source.name}, "
                                   f"record {expected['last'].seq}, via {via}); on no clock "
                                   f"for 1:17 (min:s)")
    assert [i for i in doc["incidents"] if i["kind"] != "handover"] == \
        [i for i in ref_doc["incidents"] if i["kind"] != "recovered"]
    # From the last record (2 s before the clock died: no checkpoint yet) to the spare's first.
    assert doc["handover"]["off_clock_ns"] == (GAP_S + 2) * S
    assert doc["handover"]["table"] == "T7" and doc["handover"]["seq"] == expected["last"].seq
    assert ref_doc["handover"] is None
    # The report says it among the incidents, in its language.
    html = render(read_match(continued), "html")
    assert _html_escaped(handover[0]["text"]) in html


def _html_escaped(text: str) -> str:
    import html
    return html.escape(text)


# --- refusals ---------------------------------------------------------------------------------


def on_loop(work: Callable[[], LoadOutcome] | LoadOutcome) -> LoadOutcome:
    """The continuation's loop work (the test is the loop's thread), or its refusal."""
    return work if isinstance(work, LoadOutcome) else work()
