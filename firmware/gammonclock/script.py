"""The simulation script (SPEC §9): one timed input per line, expanded into engine inputs.

`TIME ACTION [ARGS…]`; TIME is seconds since the start (`12.5`) or `+SECONDS` after the previous
line's TIME, parsed exactly. `tap` and `hold` schedule their release; inputs at the same instant
keep their order, and a release scheduled by an earlier line comes before a later line's input.
`end` stops the run at its TIME: edges scheduled after it (a final tap's release) are dropped,
and lines after it are not run (docs/decisions.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .arbiter import ArbiterSyntaxError, parse_command
from .dice import DiceSyntaxError, Void, parse_words
from .durations import NS_PER_S, DurationError, parse_duration, seconds_to_ns
from .engine import ButtonEdge, Input
from .match import ArbiterAction, DiceEvent
from .sides import Button

TAP_NS = NS_PER_S // 10          # a scripted tap is released 0.1 s after its down edge
HOLD_EXTRA_NS = NS_PER_S // 2    # a scripted hold lasts hold_s + 0.5 s unless told

ACTIONS = ("down", "up", "tap", "hold", "roll", "void", "arbiter", "end")


class ScriptError(ValueError):
    def __init__(self, path: str, line: int, message: str) -> None:
        self.path, self.line = path, line
        super().__init__(f"{path}:{line}: {message}" if line else f"{path}: {message}")


@dataclass(frozen=True)
class Script:
    inputs: tuple[Input, ...]   # in the order the engine takes them
    end: int                    # the instant the run stops


def _button(word: str) -> Button:
    try:
        return Button(word.lower())
    except ValueError:
        raise ValueError(f"{word!r} is not a button (left, right or cube)") from None


def parse_script(text: str, hold_ns: int, path: str = "<script>") -> Script:
    """Parse a script; `hold_ns` is the config's hold time (the default length of `hold`)."""
    keyed: list[tuple[int, int, int, Input]] = []   # (instant, line, order in line, input)
    previous, end = 0, None
    # Lines end at "\n" only (a "\r" before it is whitespace): `str.splitlines` would also split
    # at form feeds and other separators, and the line numbers in errors would not match editors'.
    for lineno, raw in enumerate(text.split("\n"), start=1):
        words = raw.split("#", 1)[0].split()
        if not words:
            continue
        try:
            t = _time(words[0], previous)
        except DurationError as exc:
            raise ScriptError(path, lineno, f"bad TIME: {exc}") from None
        if t < previous:
            raise ScriptError(path, lineno, f"time goes backwards ({words[0]} is before the "
                                            f"previous line)")
        previous = t
        if len(words) < 2:
            raise ScriptError(path, lineno, f"no action after the time; expected one of: "
                                            f"{', '.join(ACTIONS)}")
        try:
            inputs = _expand(t, words[1].lower(), words[2:], hold_ns)
        except (ValueError, ArbiterSyntaxError, DiceSyntaxError, DurationError) as exc:
            raise ScriptError(path, lineno, str(exc)) from None
        if inputs is None:
            end = t
            break               # the run stops here: later lines are not run
        keyed += [(i.t, lineno, n, i) for n, i in enumerate(inputs)]
    stop = previous if end is None else end
    keyed.sort(key=lambda k: k[:3])
    return Script(tuple(i for t, _, _, i in keyed if t <= stop), stop)


def _time(word: str, previous: int) -> int:
    if word.startswith("+"):
        if word.startswith(("++", "+-")):
            raise DurationError(f"{word!r}: one + before the seconds, e.g. +2.5")
        return previous + seconds_to_ns(word[1:])
    if word.startswith("-"):
        raise DurationError(f"{word!r}: a time is not negative")
    return seconds_to_ns(word)


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
        return [ButtonEdge(t, button, True), ButtonEdge(t + length, button, False)]
    if action == "roll":
        side_words = {"left": "L", "right": "R"}
        return [DiceEvent(t, parse_words(["ROLL", *(side_words.get(a.lower(), a) for a in args)]))]
    if action == "void":
        if args:
            raise ValueError("void takes nothing after it")
        return [DiceEvent(t, Void())]
    if action == "arbiter":
        return [ArbiterAction(t, parse_command(args))]
    if action == "end":
        if args:
            raise ValueError("end takes nothing after it")
        return None
    raise ValueError(f"unknown action {action!r}; expected one of: {', '.join(ACTIONS)}")


def load_script(path: str | Path, hold_ns: int) -> Script:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise ScriptError(str(path), 0, f"cannot read the file: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise ScriptError(str(path), 0, "not a UTF-8 text file") from None
    return parse_script(text, hold_ns, str(path))
