"""A match continued on another clock ends here as moved (SPEC §13.5, issue 31): `arbiter moved
[TABLE]` in every phase ends the match with no winner, the score as it stood, the running turn
ended by the normal end-of-turn rule (fine point 9, as every arbiter's end); refused once the
match is over; no undo after it; its journal replays to the same state. The arbiter at the
panels says it from the menu (no table: the panels cannot type one)."""

from __future__ import annotations

from pathlib import Path

import pytest

from arbiter_helpers import OPENING, RIGHT_PIN_TAPS, WRONG_PIN_TAPS, chord, entry, run, taps
from export_helpers import play_journal
from gammonclock.core.arbiter import ArbiterSyntaxError, Moved, parse_command
from gammonclock.core.effects import ArbiterCommand, MatchEnded, Refused, TurnEnded, TurnEndReason
from gammonclock.core.match_state import Phase
from gammonclock.core.reasons import Reason
from gammonclock.core.rules import EndReason
from gammonclock.core.timecontrol import FlagRule, TimeControl, TimeMode
from gammonclock.journal.reader import read_journal
from gammonclock.journal.replay import replay
from gammonclock.sides import Side
from play_helpers import Played, play

S = 1_000_000_000
BRONSTEIN = TimeControl(TimeMode.BRONSTEIN, 12 * S, FlagRule.MATCH_LOSS, 60 * S)
MOVE_AT = 30          # the notice comes at 30 s in every case below (400 s for an overrun)

GAME_1_WON = "0 tap left\n5 hold left\n8 tap right\n"        # left wins game 1 (single)

# (case, the script before the move, the phase it stands in, the turn it ends: side, span (s),
# charged (s), and the MatchRules.defaults overrides)
PHASES = [
    ("ready before game 1", "", Phase.BETWEEN_GAMES, None, {}),
    ("between games", GAME_1_WON, Phase.BETWEEN_GAMES, None, {}),
    # right's clock runs from 0: 30 s, 12 s of them the delay
    ("running", "0 tap left\n", Phase.RUNNING, (Side.RIGHT, 30, 18), {}),
    # Bronstein: the end of the turn adds back min(span, delay) (no refund lost, §2)
    ("running, bronstein", "0 tap left\n", Phase.RUNNING, (Side.RIGHT, 30, 30),
     {"time": BRONSTEIN}),
    # paused by the cube held at 20 s: its span stops there
    ("paused", "0 tap left\n20 hold cube\n", Phase.PAUSED, (Side.RIGHT, 20, 8), {}),
    # left doubles at 10 s: right decides, its clock runs from 10 s
    ("cube offered", "0 tap left\n5 tap right\n10 tap cube\n", Phase.CUBE_OFFERED,
     (Side.RIGHT, 20, 8), {}),
    # left holds at 20 s: the result entry stops right's clock at the down edge
    ("result entry", "0 tap left\n20 hold left\n", Phase.RESULT_ENTRY, (Side.RIGHT, 20, 8),
     {}),
    ("break", GAME_1_WON + "10 hold left\n", Phase.BREAK, None, {}),
]


def played(before: str, command: str, at: float = MOVE_AT, **overrides: object) -> Played:
    return play(before + f"{at} arbiter {command}\n{at + 1} end\n", **overrides)


@pytest.mark.parametrize(("case", "before", "phase", "turn", "overrides"), PHASES,
                         ids=[row[0] for row in PHASES])
def test_moved_in_every_phase_ends_the_match_as_the_arbiter_ends_it(case, before, phase, turn,
                                                                    overrides) -> None:
    standing = play(before + f"{MOVE_AT - 0.5} end\n", **overrides)
    assert standing.match.phase is phase, case
    moved = played(before, "moved table-9", **overrides)
    m = moved.match
    assert (m.phase, m.end_reason, m.winner, m.moved_to) == (Phase.MATCH_OVER, EndReason.MOVED,
                                                             None, "table-9")
    assert m.score == standing.match.score                      # the score as it stood
    state = moved.state
    assert (state["end_reason"], state["winner"], state["moved_to"], state["running"]) == (
        "moved", None, "table-9", None)
    [said] = moved.surviving(ArbiterCommand)
    assert said.text == "moved table-9"
    [ended] = moved.surviving(MatchEnded)
    assert (ended.reason, ended.winner, ended.score) == (EndReason.MOVED, None,
                                                         standing.match.score)
    # The running (or paused, interrupted) turn ends by the normal end-of-turn rule, at the
    # move: exactly as the arbiter's abandon ends it (fine point 9).
    ends = [e for e in moved.surviving(TurnEnded) if e.reason is TurnEndReason.ARBITER]
    if turn is None:
        assert ends == []
    else:
        side, span, charged = turn
        [end] = ends
        assert (end.side, end.span, end.charged) == (side, span * S, charged * S)
        refund = min(span, 12) * S if overrides.get("time") is BRONSTEIN else 0
        assert end.refund == refund
        assert end.reserve_after == 840 * S - charged * S + refund
    abandoned = played(before, "abandon", **overrides)
    assert {**state, "end_reason": "abandoned"} == {**abandoned.state, "moved_to": "table-9"}


def test_a_break_overrun_is_its_late_takers_up_to_the_move() -> None:
    # Left's break from 10 s ends at 310 s; left is not back: its reserve runs, no delay.
    moved = played(GAME_1_WON + "10 hold left\n", "moved table-9", at=400)
    [end] = [e for e in moved.surviving(TurnEnded) if e.reason is TurnEndReason.ARBITER]
    assert (end.side, end.charged) == (Side.LEFT, 90 * S)
    assert moved.state["end_reason"] == "moved"


def test_moved_without_a_table_says_only_that_it_moved() -> None:
    moved = played(OPENING, "moved")
    assert (moved.match.end_reason, moved.match.moved_to) == (EndReason.MOVED, None)
    assert moved.state["moved_to"] is None and moved.state["end_reason"] == "moved"


@pytest.mark.parametrize("ended", ["1 arbiter disqualify left\n", "1 arbiter abandon\n",
                                   "1 arbiter moved table-3\n"])
def test_a_match_already_over_is_not_moved(ended: str) -> None:
    over = play(OPENING + ended + "20 end\n")
    again = played(OPENING + ended, "moved table-9")
    [refused] = again.surviving(Refused)
    assert refused.reason is Reason.MATCH_OVER
    assert again.state == {**over.state}                       # nothing changed
    assert again.match.moved_to == over.match.moved_to


def test_no_undo_after_a_move() -> None:
    script = "0 tap left\n5 tap right\n10 tap left\n20 arbiter moved table-9\n"
    before = play(script + "21 end\n")
    undone = play(script + "21 arbiter undo\n22 arbiter undo\n23 end\n")
    refusals = undone.surviving(Refused)
    assert [r.reason for r in refusals] == [Reason.UNDO_MATCH_MOVED] * 2
    assert undone.state == before.state
    assert undone.match.phase is Phase.MATCH_OVER


def test_a_moved_journal_replays_to_the_same_match(tmp_path: Path) -> None:
    config = "[match]\nlength = 7\n\n[players]\nleft = \"Anna\"\nright = \"Boris\"\n"
    live = play_journal(tmp_path, config, "0 tap left\n5 tap right\n10 tap cube\n12 tap left\n"
                                          "40 arbiter moved table-9\n41 end\n")
    read = read_journal(live.path)
    [last] = [r for r in read.records if r.kind == "input"][-1:]
    assert last.data["input"] == {"type": "arbiter", "command": "moved table-9",
                                  "source": "script"}
    kinds = [e["kind"] for e in last.data["effects"]]
    assert kinds[0] == "arbiter_command" and kinds[-1] == "match_ended"
    assert last.data["effects"][-1]["reason"] == "moved"
    again = replay(read).engine
    assert again.state_json() == live.session.engine.state_json()
    assert again.match.moved_to == "table-9"
    assert again.state_json()["end_reason"] == "moved"


@pytest.mark.parametrize(("words", "code"), [
    (["moved", "table 9"], "not_table"),            # one word: a table id (`[table] id`)
    (["moved", "a" * 33], "not_table"),
    (["moved", "стол-9"], "not_table"),
    (["moved", "t;rm"], "not_table"),
    (["moved", "table-9", "now"], "moved_args"),
])
def test_moved_names_one_table_id_or_none(words: list[str], code: str) -> None:
    with pytest.raises(ArbiterSyntaxError) as raised:
        parse_command(words)
    assert raised.value.code == "usage" and raised.value.fields["detail"].code == code
    assert parse_command(["moved", "T-12_b"]) == Moved("T-12_b")
    assert parse_command(["MOVED"]) == Moved(None)
    assert parse_command(Moved("table-9").describe().split()) == Moved("table-9")


# --- the arbiter at the panels: "match moved" in the menu -------------------------------------

R, C = "right", "cube"
MENU_AT = 45.0
TO_MOVED = (R,) * 7                 # resume, two clocks, undo, score, cube, end the break, moved


def at_the_panels(presses: tuple[str, ...], before: str = OPENING,
                  pin: tuple[str, ...] = RIGHT_PIN_TAPS) -> Played:
    script = before + chord(30) + entry(40, pin) + taps(MENU_AT, presses, every=1.0)
    return run(script + f"{MENU_AT + len(presses) + 1} end\n")


def test_the_menu_ends_the_match_as_moved_once_confirmed() -> None:
    from gammonclock.core.match_state import MenuItem, PanelStage
    from gammonclock.hardware.screens import panel_view

    asked = at_the_panels(TO_MOVED + (C,))
    panel = asked.match.panel
    assert panel is not None and (panel.stage, panel.item) == (PanelStage.CONFIRM,
                                                               MenuItem.MOVED)
    view = panel_view(asked.match, Side.LEFT, asked.match.now)
    assert view.lines == (("end it here as", ""), ("MOVED, for good?", ""))
    assert panel_view(asked.match, Side.LEFT, asked.match.now, lang="ru").lines == (
        ("закончить здесь", ""), ("как ПЕРЕНЕСЁННЫЙ?", ""))
    no = at_the_panels(TO_MOVED + (C, R))                    # no: back to the menu, nothing done
    assert no.match.end_reason is None and no.match.phase is Phase.ARBITER
    done = at_the_panels(TO_MOVED + (C, C))
    m = done.match
    assert (m.phase, m.end_reason, m.moved_to, m.panel) == (Phase.MATCH_OVER, EndReason.MOVED,
                                                            None, None)
    assert [(e.text, e.source) for e in done.surviving(ArbiterCommand)] == [("moved", "panel")]
    shown = panel_view(m, Side.RIGHT, m.now)
    assert (shown.title, shown.lines[0]) == ("MATCH MOVED", ("to another clock", ""))
    # The chord stopped right's clock at 30 s: its turn ends there, 30 s less the 12 s delay
    # charged after left's tap at 1 s; the arbiter's time is nobody's.
    [end] = [e for e in done.surviving(TurnEnded) if e.reason is TurnEndReason.ARBITER]
    assert (end.side, end.span, end.charged) == (Side.RIGHT, 29 * S, 17 * S)


def test_without_the_pin_the_same_presses_move_nothing() -> None:
    """A player who knows the menu's way but not the PIN: the attempt fails, play resumes, and
    the presses are the players' taps."""
    tried = at_the_panels(TO_MOVED + (C, C), pin=WRONG_PIN_TAPS)
    assert tried.match.end_reason is None and tried.match.phase is not Phase.MATCH_OVER
    assert [e.text for e in tried.surviving(ArbiterCommand)] == []
    assert Reason.PIN_WRONG in [e.reason for e in tried.surviving(Refused)]
