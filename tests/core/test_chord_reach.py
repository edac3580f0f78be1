"""The chord's reach (issue 20): a chord undoes only the down edges made within the last
`CHORD_REACH` history entries. A button held through a pause while the others are tapped many
times is still one of the chord (SPEC §13.4: all three down together, held `chord_s`), but its
tap stands, and the arbiter's mode opens as of the earliest edge within reach. A snapshot then
never keeps more than that many entries for a chord to come (tests/journal/test_chord_snapshot)."""

from __future__ import annotations

from arbiter_helpers import OPENING, S, reserve_ns, run
from gammonclock.core.engine import CHORD_REACH
from gammonclock.core.match_state import PanelStage
from gammonclock.sides import Side


def held_through_a_pause(taps: int) -> str:
    """Right's clock runs; the cube held from 10 s (a pause by 12 s) and kept down while left
    and right tap `taps` times, then left and right go down and stay: a chord."""
    t = 13.0
    lines = ["10 down cube"]
    for n in range(taps):
        lines.append(f"{t:.1f} tap {('left', 'right')[n % 2]}")
        t += 0.3
    lines += [f"{t:.1f} down left", f"{t + 0.1:.1f} down right"]
    end = t + 0.1 + 3.5
    lines += [f"{end:.1f} up cube", f"{end:.1f} up left", f"{end:.1f} up right",
              f"{end + 1:.1f} end"]
    return OPENING + "\n".join(lines) + "\n"


def test_a_chord_within_reach_undoes_the_held_buttons_pause_as_before():
    played = run(held_through_a_pause(4))
    panel = played.match.panel
    assert played.state["phase"] == "arbiter" and panel is not None
    assert panel.stage is PanelStage.PIN
    # The cube's hold (the pause) is undone: the mode stands as of its down edge, right's
    # clock having run until then.
    assert (panel.back_to.value, panel.since) == ("running", 10 * S)
    assert reserve_ns(played, Side.RIGHT) == reserve_ns(run(OPENING + "10 end\n"), Side.RIGHT)


def test_a_chord_whose_first_edge_is_out_of_reach_is_recognised_and_its_tap_stands():
    taps = CHORD_REACH + 10
    played = run(held_through_a_pause(taps))
    panel = played.match.panel
    assert played.state["phase"] == "arbiter" and panel is not None    # still the chord
    assert panel.stage is PanelStage.PIN
    left_down = round((13.0 + 0.3 * taps) * 10) * S // 10
    # The cube's hold stands (the pause from 12 s); the mode opens as of left's down edge.
    assert (panel.back_to.value, panel.since) == ("paused", left_down)
    # Right's clock stopped at the cube's down edge either way (a hold pauses as of its tap).
    assert reserve_ns(played, Side.RIGHT) == reserve_ns(run(OPENING + "10 end\n"), Side.RIGHT)


def test_thousands_of_taps_while_the_cube_is_held_still_end_in_the_chord():
    played = run(held_through_a_pause(2_000))
    assert played.state["phase"] == "arbiter"
    assert played.match.panel is not None and played.match.panel.back_to.value == "paused"
