"""The arbiter's menu at the panels (SPEC §13.4), driven by the three buttons through scripts:
every item, each change confirmed before it applies and journaled as an arbiter action with
`source = "panel"`, the way back, the idle timeout, and undo across it; on the device, the next
match from the table's match file."""

from __future__ import annotations

from pathlib import Path

import pytest

from arbiter_helpers import OPENING, RIGHT_PIN_TAPS, chord, entry, reserve_ns, run, taps
from gammonclock.config.loading import parse_device_config
from gammonclock.core.effects import ArbiterCommand, Shown, TurnEnded, TurnEndReason
from gammonclock.core.engine import ButtonEdge
from gammonclock.core.match import Recover
from gammonclock.core.match_state import MenuItem, PanelStage
from gammonclock.core.reasons import Reason
from gammonclock.core.rules import EndReason
from gammonclock.device.build import build_device
from gammonclock.hardware.screens import panel_view
from gammonclock.hardware.views import TableInfo
from gammonclock.journal.reader import read_journal
from gammonclock.sides import Button, Side
from play_helpers import Played

S = 1_000_000_000
MENU_AT = 45.0          # the menu is open from 44.5 s (the release of the cube held after the PIN)


def menu(before: str = OPENING, presses: tuple[str, ...] = (), end: float | None = None,
         **overrides: object) -> Played:
    """The menu opened at 41.5 s after `before`, then `presses` (button names) one a second
    from 42 s."""
    script = before + chord(30) + entry(40, RIGHT_PIN_TAPS) + taps(MENU_AT, presses, every=1.0)
    last = MENU_AT + len(presses)
    return run(script + f"{end if end is not None else last + 1} end\n", **overrides)


def said(played: Played) -> list[tuple[str, str | None]]:
    return [(e.text, e.source) for e in played.surviving(ArbiterCommand)]


def stage(played: Played) -> tuple[PanelStage, MenuItem] | None:
    panel = played.match.panel
    return None if panel is None else (panel.stage, panel.item)


R, L, C = "right", "left", "cube"

# (name, presses from the list's first item "resume", the command journaled, what it did)
CHANGES = [
    ("left clock +30 s", (R, C, R, R, R, C, C), "adjust left +30s",
     lambda p: reserve_ns(p, Side.LEFT) == 14 * 60 * S + 30 * S),
    ("right clock -20 s", (R, R, C, L, L, C, C), "adjust right -20s",
     lambda p: reserve_ns(p, Side.RIGHT) == reserve_ns(menu(), Side.RIGHT) - 20 * S),
    ("score 1-2", (R, R, R, R, C, R, C, R, R, C, C), "score 1 2",
     lambda p: p.state["score"] == {"left": 1, "right": 2}),
    ("cube 2 owned by right", (R, R, R, R, R, C, R, R, C, C), "cube 2 right",
     lambda p: p.state["cube"] == {"value": 2, "owner": "right", "enabled": True}),
    ("cube back where it was", (R, R, R, R, R, C, R, R, L, L, C), None,
     lambda p: p.state["cube"]["value"] == 1),
]


@pytest.mark.parametrize(("name", "presses", "command", "done"), CHANGES,
                         ids=[row[0] for row in CHANGES])
def test_each_change_is_set_confirmed_and_journaled_from_the_panel(name, presses, command,
                                                                   done):
    played = menu(presses=presses)
    if command is not None:
        assert said(played) == [(command, "panel")]
    else:                                                     # unchanged: nothing to confirm
        assert said(played) == []
    assert done(played)
    assert stage(played) is not None and stage(played)[0] is PanelStage.MENU
    assert played.state["phase"] == "arbiter" and played.state["running"] is None
    # Before the last tap (the "yes"), nothing has changed.
    asked = menu(presses=presses[:-1])
    assert said(asked) == [] and asked.state == menu().state
    if command is not None:
        assert stage(asked)[0] is PanelStage.CONFIRM


@pytest.mark.parametrize("no", [L, R])
def test_a_no_on_the_confirmation_goes_back_to_the_value_and_changes_nothing(no):
    played = menu(presses=(R, C, R, C, no))
    assert stage(played) == (PanelStage.EDIT, MenuItem.ADJUST_LEFT)
    assert said(played) == [] and played.state == menu().state


def test_resume_is_the_first_item_and_a_cube_hold_resumes_from_anywhere():
    first = menu(presses=(C,))
    assert said(first) == [("resume", "panel")] and first.state["running"] == "right"
    # From the middle of setting a clock: a cube hold, no confirmation needed.
    script = (OPENING + chord(30) + entry(40, RIGHT_PIN_TAPS) + taps(MENU_AT, (R, C, R))
              + "47 hold cube\n52 end\n")
    held = run(script)
    assert said(held) == [("resume", "panel")] and held.state["running"] == "right"
    # Nobody was charged for the arbiter's time, 30 s to 47 s.
    assert reserve_ns(held, Side.RIGHT) == reserve_ns(run(OPENING + "35 end\n"), Side.RIGHT)


def test_undo_from_the_menu_takes_back_the_last_player_action():
    before = OPENING + "10 tap right\n"                       # left's clock runs from 10 s
    played = menu(before, presses=(R, R, R, C, C))
    assert said(played) == [("undo", "panel")]
    assert stage(played) == (PanelStage.MENU, MenuItem.UNDO)
    assert played.match.turn is not None and played.match.turn.side is Side.RIGHT
    # Right's clock ran from 1 s to the chord at 30 s, charged to right (the illegal-move
    # rule), and again from the resume at 53 s.
    resumed = run(before + chord(30) + entry(40, RIGHT_PIN_TAPS)
                  + taps(MENU_AT, (R, R, R, C, C, L, L, L, C), every=1.0) + "60 end\n")
    assert resumed.state == run(OPENING + "37 end\n").state


def test_undo_after_a_change_from_the_menu_keeps_the_change():
    before = OPENING + "10 tap right\n"
    script = (before + chord(30) + entry(40, RIGHT_PIN_TAPS)
              + taps(MENU_AT, (R, C, R, C, C, L, C)) + "60 arbiter undo\n70 end\n")
    played = run(script)
    # The +10 s on left's clock was made after the switch that the undo takes back.
    assert reserve_ns(played, Side.LEFT) == 14 * 60 * S + 10 * S
    assert played.state["running"] == "right"


def test_end_the_break_from_the_menu():
    game_then_break = "0 tap left\n5 hold left\n8 tap right\n10 hold left\n"  # left's break
    played = menu(game_then_break, presses=(R, R, R, R, R, R, C, C))
    assert said(played) == [("end-break", "panel")]
    assert played.match.panel is not None
    assert played.match.panel.back_to.value == "between_games" and played.match.brk is None
    resumed = menu(game_then_break, presses=(R, R, R, R, R, R, C, C, L, L, L, L, L, L, C))
    assert resumed.state["phase"] == "between_games"


def test_a_refused_change_is_said_on_the_panels_until_the_next_press():
    played = menu(presses=(R, R, R, R, R, R, C, C))            # end a break: there is none
    panel = played.match.panel
    assert panel is not None and panel.refused is Reason.NO_BREAK
    view = panel_view(played.match, Side.LEFT, played.match.now)
    assert view.lines == (("REFUSED:", ""), ("no break now", ""))
    later = menu(presses=(R, R, R, R, R, R, C, C, R))
    assert later.match.panel is not None and later.match.panel.refused is None


def test_a_refused_undo_is_said_on_the_panels():
    played = menu("", presses=(R, R, R, C, C))                # nothing played: nothing to undo
    assert said(played) == [("undo", "panel")]
    view = panel_view(played.match, Side.LEFT, played.match.now)
    assert view.lines == (("REFUSED:", ""), ("nothing to undo", ""))


def test_the_next_match_is_asked_of_the_device():
    played = menu(presses=(L, L, C, C))                       # the list wraps: next match
    asked = [e for e in played.surviving(Shown) if e.reason is Reason.NEXT_MATCH_REQUESTED]
    assert len(asked) == 1
    assert stage(played) == (PanelStage.MENU, MenuItem.NEXT_MATCH)
    view = panel_view(menu(presses=(L, L)).match, Side.LEFT, 44 * S)
    assert view.lines == (("this match ends", ""), ("ABANDONED", ""))


def test_the_info_page_shows_what_the_presenter_gives():
    played = menu(presses=(L, C))
    assert stage(played) == (PanelStage.INFO, MenuItem.INFO)
    info = TableInfo("T12", ("10.0.0.5",), "1.2.3", "match-20261201-T12.jsonl")
    view = panel_view(played.match, Side.RIGHT, played.match.now, info=info)
    assert [line for line, _ in view.lines] == ["table T12", "IP 10.0.0.5", "version 1.2.3",
                                                "match-20261201-T12.jsonl"]
    back = menu(presses=(L, C, R))
    assert stage(back) == (PanelStage.MENU, MenuItem.INFO)


def test_two_minutes_without_a_press_close_the_menu_and_the_match_stays_paused():
    played = menu(presses=(R,), end=MENU_AT + 120)
    assert played.state["phase"] == "paused" and played.match.panel is None
    assert Reason.MENU_TIMEOUT in [e.reason for e in played.surviving(Shown)]
    just_before = menu(presses=(R,), end=MENU_AT + 119.9)
    assert just_before.state["phase"] == "arbiter"
    # A cube hold resumes, as any pause; the whole stop was nobody's.
    script = (OPENING + chord(30) + entry(40, RIGHT_PIN_TAPS) + taps(MENU_AT, (R,))
              + "200 hold cube\n210 end\n")
    resumed = run(script)
    assert resumed.state["running"] == "right"
    assert reserve_ns(resumed, Side.RIGHT) == reserve_ns(run(OPENING + "40 end\n"), Side.RIGHT)


def test_the_menu_over_a_finished_match():
    over = "0 tap left\n5 hold left\n8 tap right\n"           # length 1: right won
    played = menu(over, presses=(L, L, C, C), length=1)
    assert played.match.panel is not None
    assert played.match.panel.back_to.value == "match_over"
    assert played.match.end_reason is EndReason.SCORE
    # Over is over under the menu too: no game in progress (a next match needs no --force, and
    # a message may be shown over the panels).
    assert not played.match.in_progress
    resumed = menu(over, presses=(C,), length=1)
    assert resumed.state["phase"] == "match_over"


# --- on the device: the next match from the table's match file --------------------------------

DEVICE_TEXT = """\
[hardware]
pin_factory = "mock"

[table]
id = "T12"
match_file = "{match_file}"

[arbiter]
pin = "LRCL"
"""

MATCH_TEXT = '[match]\nlength = 5\n\n[players]\nleft = "Anna"\nright = "Boris"\n'
NEXT_TEXT = MATCH_TEXT.replace("Boris", "Carla")


def test_the_menu_loads_the_next_match_on_the_device(tmp_path: Path):
    match_file = tmp_path / "match.toml"
    match_file.write_text(MATCH_TEXT, encoding="utf-8")
    device_file = parse_device_config(DEVICE_TEXT.format(match_file=match_file),
                                      str(tmp_path / "device.toml"))
    device = build_device(device_file, tmp_path / "state")
    try:
        service = device.service
        service.grace_ns = service.timer_grace_ns = 0
        first_journal = Path(device.session.journal.path)
        match_file.write_text(NEXT_TEXT, encoding="utf-8")     # the arbiter's next match
        start = device.session.engine.now

        def press(at: float, button: Button, length: float = 0.1) -> None:
            service.apply(ButtonEdge(start + round(at * S), button, True))
            service.apply(ButtonEdge(start + round((at + length) * S), button, False))

        press(1, Button.LEFT)                                  # game 1: right's clock runs
        for at, button in ((30.0, Button.CUBE), (30.1, Button.LEFT), (30.2, Button.RIGHT)):
            service.apply(ButtonEdge(start + round(at * S), button, True))
        for button in Button:
            service.apply(ButtonEdge(start + round(33.7 * S), button, False))
        for i, button in enumerate((Button.LEFT, Button.RIGHT, Button.CUBE, Button.LEFT)):
            press(40 + i, button)                              # the PIN
        press(44, Button.CUBE, 2.5)                            # the cube held: the end
        for i, button in enumerate((Button.LEFT, Button.LEFT, Button.CUBE, Button.CUBE)):
            press(50 + i, button)                              # next match, yes
        service.step()                                         # the load, on the loop
        assert device.session.engine.rules.names.right == "Carla"
        assert device.session.engine.state_json()["phase"] == "between_games"
        assert Path(device.session.journal.path) != first_journal
        records = read_journal(first_journal).records
        ended = [e for r in records if r.kind in ("input", "tick")
                 for e in r.data["effects"] if e["kind"] == "match_ended"]
        assert ended and ended[-1]["reason"] == "abandoned"
    finally:
        device.close()


# --- a break under the menu: its overrun is always the late player's --------------------------

# Left's break from 10 s to 310 s; the chord at 300 s and the menu open from 309.5 s.
GAME_THEN_BREAK = "0 tap left\n5 hold left\n8 tap right\n10 hold left\n"
BREAK_ENDS = 310
IN_THE_BREAK = GAME_THEN_BREAK + chord(300) + entry(305, RIGHT_PIN_TAPS)


def late_reserve_ns(until: float) -> int:
    """Left's 14:00 less its overrun from the break's end to `until`."""
    return int((14 * 60 - (until - BREAK_ENDS)) * S)


# (name, the menu's presses, the end, the phase then, charged until, a cube hold resumes)
BREAK_MENUS = [
    ("resume after the break's end", taps(330, (C,)), 400.0, "break", 400.0),
    ("end the break at 337 s", taps(330, (R,) * 6 + (C, C), every=1.0), 400.0, "arbiter", 337.0),
    ("left +30 s, then resume", taps(330, (R, C, R, R, R, C, C, L, C)), 400.0, "break", 370.0),
    ("the menu's timeout at 429.5 s", "", 500.0, "paused", 429.5),
    ("resume before the break's end", "", 400.0, "break", 400.0),
]


@pytest.mark.parametrize(("name", "presses", "end", "phase", "until"), BREAK_MENUS)
def test_a_break_overrun_under_the_menu_is_the_late_players(name, presses, end, phase, until):
    before = IN_THE_BREAK
    if name == "resume before the break's end":
        before = GAME_THEN_BREAK + chord(200) + entry(205, RIGHT_PIN_TAPS) + taps(220, (C,))
    played = run(before + presses + f"{end} end\n")
    assert played.state["phase"] == phase
    assert reserve_ns(played, Side.LEFT) == late_reserve_ns(until)


def test_ending_the_break_from_the_menu_charges_what_the_late_players_tap_would():
    by_arbiter = run(IN_THE_BREAK + taps(330, (R,) * 6 + (C, C), every=1.0) + "340 end\n")
    late_tap = run(GAME_THEN_BREAK + "337 tap left\n340 end\n")
    assert reserve_ns(by_arbiter, Side.LEFT) == reserve_ns(late_tap, Side.LEFT) \
        == late_reserve_ns(337)
    ended = [e.describe() for e in by_arbiter.surviving() if "break ends" in e.describe()]
    assert ended == ["left's break ends (27 s late)"]


@pytest.mark.parametrize("resume", [taps(400, (C,)), "400 arbiter resume\n"])
def test_a_break_overrun_run_out_under_the_menu_drops_the_flag_at_its_instant(resume):
    # Left has 60 s: late from 310 s, its flag is due at 370 s, under the menu (306.5-400 s).
    played = run(IN_THE_BREAK + taps(330, (R, L)) + resume + "401 end\n", reserve_ns=60 * S)
    state = played.state
    assert (state["phase"], state["end_reason"], state["flag"]) == ("match_over", "flag", "left")
    ended = [e for e in played.surviving(TurnEnded) if e.side is Side.LEFT][-1]
    assert (ended.reason, ended.span, ended.charged) == (TurnEndReason.FLAG, 60 * S, 60 * S)


# An outage with the menu open: the menu closes with a stopped clock paused; a break's overrun
# up to the outage is the late player's.
MENU_OUTAGES = [
    ("a running clock", OPENING + chord(30) + entry(40, RIGHT_PIN_TAPS), 45.0, "paused",
     "running"),
    ("before game 1", chord(30) + entry(40, RIGHT_PIN_TAPS), 45.0, "between_games", None),
    ("a break overrun", IN_THE_BREAK, 330.0, "paused", "break"),
    ("a break not over", GAME_THEN_BREAK + chord(200) + entry(205, RIGHT_PIN_TAPS), 250.0,
     "break", None),
]


@pytest.mark.parametrize(("name", "before", "outage", "phase", "resume_phase"), MENU_OUTAGES)
def test_an_outage_in_the_menu_closes_it(name, before, outage, phase, resume_phase):
    played = run(before + f"{outage} end\n")
    engine, effects = played.engine.feed(Recover(int(outage * S)))
    match = engine.match
    assert match.panel is None and match.pin_failures == 0
    assert (match.phase.value, match.resume_phase and match.resume_phase.value) == \
        (phase, resume_phase)
    assert Reason.MENU_TIMEOUT in [e.reason for e in effects if isinstance(e, Shown)]
    later = engine.advance(1000 * S)[0]
    if name == "a running clock":       # nobody's time from the chord on
        assert later.match.reserve_at(Side.RIGHT) == reserve_ns(run(OPENING + "30 end\n"),
                                                                Side.RIGHT)
    elif name == "a break overrun":     # the late player's up to the outage, then paused
        assert later.match.reserve_at(Side.LEFT) == late_reserve_ns(outage)
    elif name == "a break not over":    # the break's own end still comes at 310 s
        assert later.match.reserve_at(Side.LEFT) == late_reserve_ns(1000)
