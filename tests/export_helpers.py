"""Matches played into journals for the export's tests (SPEC §11) and the hall's results: a
scripted match run through a real `Session` with a `JournalWriter`, as the device and
`gammonclock simulate --journal` do, wall-clock stamps the engine's instant plus a fixed epoch
(`play_journal`); the 11-point match written move by move (`eleven_point_script`); and other
disciplines, time controls and endings (`EDGE_CASES`)."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from pathlib import Path

from gammonclock.config.loading import parse_config
from gammonclock.core.effects import Effect, surviving
from gammonclock.core.engine import Engine
from gammonclock.journal.files import journal_header
from gammonclock.journal.records import Stamp
from gammonclock.journal.writer import JournalWriter
from gammonclock.runtime.session import Session
from gammonclock.sides import Side
from gammonclock.sim.script import parse_script
from gammonclock.sim.simulate import run_script

KEY = bytes(range(32))
WALL0 = 1_714_557_600_000_000_000          # 2024-05-01T10:00:00Z
LEFT_NAME = '<Anna & "Co">'
RIGHT_NAME = "Boris <b>O'Neil</b>"

CONFIG_11 = f"""\
[match]
discipline = "backgammon"
length = 11

[players]
left = '{LEFT_NAME}'
right = "{RIGHT_NAME}"

[time]
per_point = "2m"
delay = "12s"
"""


# --- playing a match into a journal ----------------------------------------------------------

@dataclass
class Played:
    path: Path
    session: Session
    effects: list[Effect]                       # every effect the live session reported
    script: MatchScript | None = None

    @property
    def kept(self) -> list[Effect]:
        return surviving(self.effects)

    def kept_of(self, kind: type) -> list:
        return [e for e in self.kept if isinstance(e, kind)]


def play_journal(directory: Path, config_text: str, script_text: str,
                 name: str = "match.jsonl", *, key: bytes = KEY,
                 table: str | None = None) -> Played:
    """Run a script through a Session that journals every record, as the device does: sealed
    with KEY (a device's key), the header naming TABLE when given (as a clock's does)."""
    config = parse_config(config_text, "table.toml")
    script = parse_script(script_text, config.rules.hold_ns)
    session = Session(Engine.start(config.rules, at=0))
    session.stamps = lambda: Stamp(session.engine.now, "test-boot", WALL0 + session.engine.now)
    path = directory / name
    session.journal = JournalWriter.create(path, key, journal_header(config_text, "table.toml",
                                                                     table=table),
                                           0, Stamp(0, "test-boot", WALL0), fsync=False)
    effects: list[Effect] = []
    session.observers.append(lambda _, new: effects.extend(new))
    run_script(session, script.inputs, script.end)
    session.close()
    return Played(path, session, effects)


@dataclass
class MatchScript:
    """Writes a SPEC §9 script move by move and remembers what the export must show."""

    rng: random.Random = field(default_factory=lambda: random.Random(11))
    t_ms: int = 0
    lines: list[str] = field(default_factory=list)
    running: Side | None = None
    first_move: bool = False
    cube_actions: list[tuple[int, Side, str]] = field(default_factory=list)
    game: int = 0
    retracted_starts: list[tuple[Side, int]] = field(default_factory=list)  # (side, t ns)
    voided: list[tuple[int, int]] = field(default_factory=list)

    def at(self, dt_ms: int, action: str) -> int:
        self.t_ms += dt_ms
        self.lines.append(f"{self.t_ms // 1000}.{self.t_ms % 1000:03d} {action}")
        return self.t_ms * 1_000_000

    def text(self) -> str:
        return "\n".join(self.lines) + "\n"

    def think(self) -> int:
        return self.rng.choice((4000, 6500, 9000, 11000, 14000, 17500, 23000, 31000))

    def dice(self) -> str:
        return f"{self.rng.randint(1, 6)} {self.rng.randint(1, 6)}"

    def opening(self, tapper: Side, low: int = 2, high: int = 5, gap_ms: int = 30_000) -> None:
        self.game += 1
        self.at(gap_ms, f"roll {low}")
        self.at(500, f"roll {high}")
        self.at(1000, f"tap {tapper.value}")
        self.running, self.first_move = tapper.other, True

    def move(self, think: int | None = None, roll: bool = True) -> None:
        side = self.running
        assert side is not None
        think = think or self.think()
        if roll and not self.first_move:
            self.at(400, f"roll {self.dice()}")
            think -= 400
        self.at(think, f"tap {side.value}")
        self.running, self.first_move = side.other, False

    def moves(self, n: int) -> None:
        for _ in range(n):
            self.move()

    def double(self, value: int, think: int = 5000) -> None:
        doubler = self.running
        assert doubler is not None
        self.at(think, "tap cube")
        self.cube_actions.append((self.game, doubler, f"doubled to {value}"))
        self.running = doubler.other

    def take(self, value: int, think: int = 15000) -> None:
        taker = self.running
        assert taker is not None
        self.at(think, f"tap {taker.value}")
        self.cube_actions.append((self.game, taker, f"took {value}"))
        self.running = taker.other

    def pass_(self, think: int = 20000) -> None:
        taker = self.running
        assert taker is not None
        self.at(think, f"hold {taker.value}")
        self.cube_actions.append((self.game, taker, "passed"))
        self.at(4000, f"tap {taker.other.value}")      # the doubler confirms the pass
        self.running = None

    def win(self, holder: Side, cube_taps: int = 0, think: int = 8000) -> None:
        """`holder` holds their button during the running turn: the tap its down edge made
        (a switch, when it is the holder's turn) is retracted by the hold."""
        mover = self.running
        assert mover is not None
        if not self.first_move:
            self.at(400, f"roll {self.dice()}")
            think -= 400
        t = self.at(think, f"hold {holder.value}")
        if holder is mover:
            self.retracted_starts.append((mover.other, t))
        for n in range(cube_taps):
            self.at(3000 if n == 0 else 800, "tap cube")
        self.at(3000 if not cube_taps else 1000, f"tap {holder.other.value}")
        self.running = None


def eleven_point_script() -> MatchScript:
    """A whole 11-point match, left wins 12-6 after the Crawford game."""
    L, R = Side.LEFT, Side.RIGHT
    s = MatchScript()
    # Game 1: right doubles, left takes; a void roll, an early roll, penalties; right wins
    # single at 2 by a hold that retracts its own switch.                           0-2
    s.opening(L, 3, 5, gap_ms=2000)
    s.moves(3)
    s.at(400, "roll 6 5")
    s.voided.append((1, s.t_ms))
    s.at(300, "void")
    s.at(700, "roll 4 2")
    s.move(9000, roll=False)
    s.at(3000, "arbiter warn right slow play")
    s.at(200, "arbiter deduct right 30s")
    s.at(200, "arbiter deduct left 20m")                # refused: more than half the reserve
    s.move(6000)
    s.double(2)
    s.take(2)
    s.moves(3)
    s.at(2000, "roll left 4 2")                         # left rolls early, during right's turn
    s.move(7000, roll=False)                            # right moves (no roll of his own here)
    s.move(5000, roll=False)                            # left plays the early roll
    s.moves(3)
    s.win(R)
    # Game 2: left doubles, right passes; a penalty point for right.                1-2 -> 1-1
    s.opening(R, 2, 6)
    s.moves(4)
    s.double(2)
    s.pass_()
    s.at(5000, "arbiter point right")
    # A break for left, ended early.
    s.at(20_000, "hold left")
    s.at(120_000, "tap left")
    # Game 3: a pause by cube hold, an undone switch, time added; left doubles, right takes,
    # left wins a gammon at 2.                                                         5-1
    s.opening(L, 1, 4)
    s.moves(4)
    s.at(3000, "hold cube")                             # right's turn: pause ...
    s.at(60_000, "hold cube")                           # ... and resume
    s.move(5000)
    s.at(400, "roll 3 3")
    t_switch = s.at(8000, "tap left")                   # left's switch ...
    s.retracted_starts.append((R, t_switch))
    s.at(2000, "arbiter undo")                          # ... undone: left's clock runs on
    s.at(3000, "tap left")
    s.running = R
    s.at(1000, "arbiter add left 15s")
    s.moves(3)
    s.double(2)
    s.take(2)
    s.moves(4)
    s.win(L, cube_taps=1)
    # A break for right, who comes back 20 s late.
    s.at(20_000, "hold right")
    s.at(320_000, "tap right")
    # Game 4: right doubles, left takes, left redoubles, right takes; right wins single at 4.
    s.opening(R, 5, 6)                                                                  # 5-5
    s.moves(3)
    s.double(2)
    s.take(2)
    s.moves(3)
    s.double(4)
    s.take(4)
    s.moves(4)
    s.win(R)
    # Game 5: left doubles, right takes, left wins a gammon at 2.                        9-5
    s.opening(L, 2, 3)
    s.moves(3)
    s.double(2)
    s.take(2)
    s.moves(5)
    s.win(L, cube_taps=1)
    # Game 6: left wins single: 10-5, the next game is the Crawford game.
    s.opening(R, 1, 6)
    s.moves(6)
    s.win(L)
    # Game 7, Crawford: a double is refused; right wins single.                          10-6
    s.opening(L, 4, 6)
    s.moves(3)
    s.at(2000, "tap cube")                              # refused: Crawford game
    s.moves(3)
    s.win(R)
    # Game 8, post-Crawford: left doubles, right takes, left wins single at 2.           12-6
    s.opening(R, 3, 4)
    s.moves(2)
    s.double(2)
    s.take(2)
    s.moves(4)
    s.win(L)
    s.at(10_000, "end")
    return s


EDGE_CASES = {
    "longgammon draw, forfeit between games": ("""\
[match]
discipline = "longgammon"
length = 3
""", """\
1 roll 6
1.5 roll 2
2 tap right
10 roll 3 4
12 tap left
20 tap right
30 hold left
35 tap cube
36 tap cube
37 tap cube
38 tap cube
40 tap right
60 arbiter forfeit left
70 end
"""),
    "bronstein, overtime, second flag": ("""\
[match]
length = 3
[time]
mode = "bronstein"
delay = "5s"
reserve = "30s"
flag_rule = "overtime"
overtime = "20s"
""", """\
1 tap left
46 tap right
50 tap left
200 end
"""),
    "fischer, disqualified while paused": ("""\
[match]
length = 5
[time]
mode = "fischer"
delay = "2s"
""", """\
1 tap left
10 tap right
12 arbiter pause
30 arbiter disqualify left
40 end
"""),
    "three rejected challenges": ("""\
[match]
length = 5
""", """\
1 tap right
5 arbiter challenge left rejected
9 tap left
12 arbiter challenge left rejected
14 arbiter challenge left upheld
20 arbiter challenge left rejected
30 end
"""),
    "undo after the match was won": ("""\
[match]
length = 1
""", """\
1 tap left
10 tap right
20 hold left
25 tap right
30 arbiter undo
40 tap right
45 end
"""),
}
