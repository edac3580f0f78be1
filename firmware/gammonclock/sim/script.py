"""The simulation script (SPEC §9): one timed input per line, expanded into engine inputs.

`TIME ACTION [ARGS…]`; TIME is seconds since the start (`12.5`) or `+SECONDS` after the previous
line's TIME, parsed exactly. `tap` and `hold` schedule their release; inputs at the same instant
keep their order, and a release scheduled by an earlier line comes before a later line's input.
`end` stops the run at its TIME: edges scheduled after it (a final tap's release) are dropped,
and lines after it are not run (docs/decisions.md).

Given the config's debounce, a release the engine will ignore as a bounce (SPEC fine point 3) is
run as the device would run it (the button stays down, and may become a hold nobody made), and
named in `Script.bounces`, one note per such line, for the simulator to say on stderr: a script
may model contact bounce on purpose, and the simulator exists to show what the device does.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from gammonclock.core.arbiter import ArbiterSyntaxError, parse_command
from gammonclock.core.dice import DiceSyntaxError, Void, parse_words
from gammonclock.core.engine import ButtonEdge, Input, edge_taken
from gammonclock.core.match import ArbiterAction, DiceEvent
from gammonclock.durations import (
    MAX_DURATION_NS,
    MAX_DURATION_TEXT,
    NS_PER_MS,
    NS_PER_S,
    DurationError,
    format_seconds,
    parse_duration,
    quoted,
    seconds_to_ns,
)
from gammonclock.errors import GammonclockError
from gammonclock.sides import Button

TAP_NS = NS_PER_S // 10          # a scripted tap is released 0.1 s after its down edge
HOLD_EXTRA_NS = NS_PER_S // 2    # a scripted hold lasts hold_s + 0.5 s unless told

ACTIONS = ("down", "up", "tap", "hold", "roll", "void", "arbiter", "end")


class ScriptError(GammonclockError, ValueError):
    """A script that cannot be run; `problems` lists every bad line found (line 0: the whole
    file), one per line of the message, each naming the file and the line."""

    def __init__(self, path: str, line: int, message: str,
                 more: list[tuple[int, str]] | None = None) -> None:
        self.path = path
        self.problems = [(line, message)] + (more or [])
        self.line = line
        super().__init__("\n".join(f"{path}:{n}: {text}" if n else f"{path}: {text}"
                                   for n, text in self.problems))


@dataclass(frozen=True)
class Script:
    inputs: tuple[Input, ...]   # in the order the engine takes them
    end: int                    # the instant the run stops
    bounces: tuple[str, ...] = ()   # "FILE:LINE: …" for each release the engine ignores


def _button(word: str) -> Button:
    try:
        return Button(word.lower())
    except ValueError:
        raise ValueError(f"{quoted(word)} is not a button (left, right or cube)") from None


def parse_script(text: str, hold_ns: int, path: str = "<script>", *,
                 debounce_ns: int = 0) -> Script:
    """Parse a script; `hold_ns` is the config's hold time (the default length of `hold`).

    With the config's `debounce_ns`, each release the engine will ignore as a bounce is named
    in `Script.bounces` (0, the default, checks nothing)."""
    keyed: list[tuple[int, int, int, Input]] = []   # (instant, line, order in line, input)
    problems: list[tuple[int, str]] = []            # every bad line, reported together
    previous, end = 0, None
    # Lines end at "\n" only (a "\r" before it is whitespace): `str.splitlines` would also split
    # at form feeds and other separators, and the line numbers in errors would not match editors'.
    for lineno, raw in enumerate(text.split("\n"), start=1):
        words = raw.split("#", 1)[0].split()
        if not words:
            continue
        try:
            t, inputs = _line(words, previous, hold_ns)
        except _LineError as exc:
            problems.append((lineno, str(exc)))
            previous = exc.t if exc.t is not None else previous
            if len(problems) >= MAX_PROBLEMS:
                break
            continue
        previous = t
        if inputs is None:
            end = t
            break               # the run stops here: later lines are not run
        keyed += [(i.t, lineno, n, i) for n, i in enumerate(inputs)]
    if problems:
        raise ScriptError(path, *problems[0], more=problems[1:])
    stop = previous if end is None else end
    keyed.sort(key=lambda k: k[:3])
    kept = [k for k in keyed if k[0] <= stop]
    bounces = _bounced_releases(kept, debounce_ns, path) if debounce_ns else []
    return Script(tuple(i for _, _, _, i in kept), stop, tuple(bounces))


def _time(word: str, previous: int) -> int:
    if word.startswith("+"):
        if word.startswith(("++", "+-")):
            raise DurationError(f"{quoted(word)}: one + before the seconds, e.g. +2.5")
        t = previous + seconds_to_ns(word[1:])
    elif word.startswith("-"):
        raise DurationError(f"{quoted(word)}: a time is not negative")
    else:
        t = seconds_to_ns(word)
    if t > MAX_DURATION_NS:
        raise DurationError(f"{quoted(word)} is more than {MAX_DURATION_TEXT} after the "
                            "start")
    return t


def _ms(ns: int) -> str:
    return f"{format_seconds(ns * (NS_PER_S // NS_PER_MS))} ms"   # nanoseconds shown as ms


def _bounced_releases(keyed: list[tuple[int, int, int, Input]], debounce_ns: int,
                      path: str) -> list[str]:
    """Follow each button through the script as the engine will (SPEC fine point 3: an edge that
    does not change the button's state, or comes less than debounce after the last accepted
    edge, is ignored) and name each release ignored as a bounce that leaves the button down:
    one not followed by a down of that button within the same window (a scripted chatter,
    released later, is no surprise)."""
    # button: (down, instant, line) of its last accepted edge; before any, one long ago
    accepted: dict[Button, tuple[bool, int, int]] = {}
    lost: dict[Button, tuple[int, int]] = {}             # button: (line, instant) of a lost up
    notes: list[tuple[int, str]] = []
    for t, line, _, item in keyed:
        if not isinstance(item, ButtonEdge):
            continue
        down, since, press_line = accepted.get(item.button, (False, -debounce_ns, 0))
        taken = edge_taken(down, since, item.pressed, t, debounce_ns)
        if item.button in lost:
            lost_line, lost_t = lost.pop(item.button)
            # The button is down: only a down edge within the lost up's window is chatter.
            in_window = not edge_taken(down, since, not down, t, debounce_ns)
            if not (item.pressed and in_window):
                notes.append(_bounce_note(path, lost_line, lost_t, since, press_line,
                                          item.button, debounce_ns))
        if taken:
            accepted[item.button] = (item.pressed, t, line)
        elif down and not item.pressed:   # a release ignored as a bounce: the button stays down
            lost[item.button] = (line, t)
    for button, (lost_line, lost_t) in lost.items():
        _, since, press_line = accepted[button]
        notes.append(_bounce_note(path, lost_line, lost_t, since, press_line, button,
                                  debounce_ns))
    return [text for _, text in sorted(notes)]


def _bounce_note(path: str, line: int, t: int, press_t: int, press_line: int, button: Button,
                 debounce_ns: int) -> tuple[int, str]:
    return line, (f"{path}:{line}: bounce: the release of {button} at {format_seconds(t)} s comes "
                  f"{_ms(t - press_t)} after its press (line {press_line}), less than "
                  f"debounce_ms ({_ms(debounce_ns)}): ignored as a bounce (SPEC fine point 3), "
                  "the button stays down" + (" (a press of no length: no button makes one)"
                                             if t == press_t else ""))


MAX_PROBLEMS = 50      # a file that is not a script at all stops being read here


class _LineError(GammonclockError, ValueError):
    """What is wrong with one line of a script; `t`, its instant when that was good (the next
    line's time is checked against it)."""

    def __init__(self, message: str, t: int | None = None) -> None:
        super().__init__(message)
        self.t = t


def _line(words: list[str], previous: int, hold_ns: int) -> tuple[int, list[Input] | None]:
    """One line's instant and inputs (None: `end`); _LineError says what is wrong with it."""
    try:
        t = _time(words[0], previous)
    except DurationError as exc:
        raise _LineError(f"bad TIME: {exc}") from None
    if t < previous:
        raise _LineError(f"time goes backwards ({words[0]} is before the previous line)")
    if len(words) < 2:
        raise _LineError(f"no action after the time; expected one of: {', '.join(ACTIONS)}", t)
    try:
        return t, _expand(t, words[1].lower(), words[2:], hold_ns)
    except (ValueError, ArbiterSyntaxError, DiceSyntaxError, DurationError) as exc:
        raise _LineError(str(exc), t) from None


def _expand(t: int, action: str, args: list[str], hold_ns: int) -> list[Input] | None:
    """The inputs of one line; None for `end`."""
    if action in ("down", "up", "tap", "hold"):
        if not args:
            raise ValueError(f"{action} needs a button (left, right or cube)")
        button = _button(args[0])
        if action in ("down", "up"):
            if len(args) != 1:
                raise ValueError(f"{action} takes one button")
            return [ButtonEdge(t, button, action == "down")]
        if action == "tap":
            if len(args) != 1:
                raise ValueError("tap takes one button")
            length = TAP_NS
        else:
            if len(args) > 2:
                raise ValueError("hold takes a button and optionally the seconds")
            length = (parse_duration(args[1], bare_seconds=True) if len(args) == 2
                      else hold_ns + HOLD_EXTRA_NS)
            if length <= 0:
                raise ValueError("a hold lasts more than 0 seconds")
        # A press shorter than the debounce is `_bounced_releases`'s to name, once it is known
        # whether `end` cuts it first.
        return [ButtonEdge(t, button, True), ButtonEdge(t + length, button, False)]
    if action == "roll":
        side_words = {"left": "L", "right": "R"}
        return [DiceEvent(t, parse_words(["ROLL", *(side_words.get(a.lower(), a) for a in args)]))]
    if action == "void":
        if args:
            raise ValueError("void takes nothing after it")
        return [DiceEvent(t, Void())]
    if action == "arbiter":
        return [ArbiterAction(t, parse_command(args), "script")]   # the report: "By: script"
    if action == "end":
        if args:
            raise ValueError("end takes nothing after it")
        return None
    raise ValueError(f"unknown action {quoted(action)}; "
                     f"expected one of: {', '.join(ACTIONS)}")


def load_script(path: str | Path, hold_ns: int, *, debounce_ns: int = 0) -> Script:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise ScriptError(str(path), 0, f"cannot read the file: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise ScriptError(str(path), 0, "not a UTF-8 text file") from None
    return parse_script(text, hold_ns, str(path), debounce_ns=debounce_ns)
