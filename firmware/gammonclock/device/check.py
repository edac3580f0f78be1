"""`gammonclock check-hardware`: the panels, buttons and buzzer of a freshly wired clock.

For the tournament director at the table, with the clock's service stopped. Each panel is opened
from the device config and shows a test screen: which side it is, large (a swapped pair of
addresses is obvious at the table), the table id, and a frame on the glass's very edge (an edge
cut off or a shifted picture shows a wrong `driver`). Then every press and release of a button is
printed with its GPIO and shown on both panels, with a short beep when the buzzer is on. When
`stop` is set, `seconds` pass or Ctrl-C comes, a summary says which part did not answer; the exit
status is 0 only when both panels answered and every button was pressed, so it can be scripted.

First, given the state folder, it measures the card under it (`measure_card`): 100 small appends
to a temporary file there, as the journal writes them (into zeros filled ahead and fsynced, each
append then `fdatasync`ed: its data alone), 20 ms apart as presses come (back-to-back syncs are
cheaper than a table's), about two seconds in all; of 100, the p99 is the second slowest, so one
stall alone does not condemn a card. The journal waits for one such sync before a press shows,
so the card's sync p99 says whether it is fit: up to 20 ms fit, up to 50 ms slow (usable, presses
will show late now and then), above: replace it before the event (the exit status is then 1 too).
A state folder the arbiter cannot write to (the service's own, mode 0750) is measured through a
writable folder on the same file system (the home folder, /var/tmp, the temporary folder).

The buttons are the clock's own `ButtonBoard` (pull-ups, no backend debounce), its sink a queue:
gpiozero's callback thread only enqueues, and this module's one thread prints and draws, so the
output never interleaves. Bounces are printed as they come: a chattering button shows as such.
"""

from __future__ import annotations

import errno
import os
import queue
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from PIL import Image, ImageDraw

from gammonclock import words
from gammonclock.config.loading import DeviceConfig, PanelConfig
from gammonclock.config.problems import Counted, Problem, message_of, said
from gammonclock.core.engine import ButtonEdge
from gammonclock.durations import NS_PER_S
from gammonclock.hardware.buttons import ButtonBoard, make_pin_factory
from gammonclock.hardware.buzzer import BeepPattern, GpioBuzzer, NullBuzzer, make_buzzer
from gammonclock.hardware.errors import HardwareError
from gammonclock.hardware.panels import SHIFT_PERIOD_NS, SHIFTS, LumaDevice, Panel, luma_device
from gammonclock.hardware.screens import HEIGHT, ON, WIDTH, Layout, PanelView, render
from gammonclock.journal.prealloc import fill_target, fill_zeros
from gammonclock.sides import Button, Pair, Side

from .build import dummy_panels

__all__ = ["CARD_FIT_P99_MS", "CARD_SLOW_P99_MS", "PRESS_BEEP", "CardCheck", "card_folder",
           "card_verdict", "check_hardware", "check_screen", "measure_card", "panel_hint",
           "still_instant"]

# One short beep per press: heard at the table, over before the next press.
PRESS_BEEP = BeepPattern(on_s=0.05, off_s=0.0, count=1)
# How often the wait looks at `stop` and the deadline: a caller's Event cannot wake a queue.
POLL_S = 0.1

STOP_SERVICE = "sudo systemctl stop gammonclock"
DISPLAYS_DOC = "hardware_docs/displays.md"
WIRING_DOC = "hardware_docs/wiring.md"

# The errno of an I²C write that no device acknowledged (luma reports it as "not found").
NO_ANSWER = frozenset({errno.EREMOTEIO, errno.EIO, errno.ENXIO})

# The state card: appends measured, their gap (spaced like presses), a journal record's size.
CARD_APPENDS = 100
CARD_GAP_S = 0.02
CARD_RECORD = b"x" * 199 + b"\n"
# The verdict on the card's sync p99: a press waits for one sync before it shows, and the other
# latencies of a press take about 5–10 ms, so up to 20 ms keeps a press on the glass within 30 ms.
CARD_FIT_P99_MS = 20.0
CARD_SLOW_P99_MS = 50.0      # above it: replace the card

# What the arbiter reads is said in the device's `[display] language` (`--language` overrides,
# words.py "hw.*"); commands, paths, config keys, GPIO numbers and the system's calls as written,
# an error of another program (the OS's, luma's, gpiozero's) as it says it.


# --- panels ----------------------------------------------------------------------------------

class _Opener:
    """A panel's device factory that keeps why the last opening failed (Panel only logs it)."""

    def __init__(self, open_device: Callable[[], LumaDevice]) -> None:
        self._open_device = open_device
        self.error: Exception | None = None

    def __call__(self) -> LumaDevice:
        try:
            device = self._open_device()
        except Exception as exc:
            self.error = exc
            raise
        self.error = None
        return device


def errno_of(exc: BaseException) -> int | None:
    """The errno behind `exc`: luma re-raises smbus2's OSError as its own error, chained."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, OSError) and seen.errno is not None:
            return seen.errno
        seen = seen.__cause__ or seen.__context__
    return None


def panel_hint(exc: BaseException, config: PanelConfig, lang: str = words.DEFAULT) -> str:
    """What to do about a panel of `config` that failed with `exc`, in `lang`."""
    bus = f"/dev/i2c-{config.port}"
    code = errno_of(exc)
    if code in NO_ANSWER:
        return words.say("hw.hint.no_answer", lang, address=f"0x{config.address:02x}",
                         port=config.port, doc=DISPLAYS_DOC)
    if code == errno.ENOENT:
        return words.say("hw.hint.no_bus", lang, bus=bus, doc=DISPLAYS_DOC)
    if code in (errno.EACCES, errno.EPERM):
        return words.say("hw.hint.no_access", lang, bus=bus, doc=DISPLAYS_DOC)
    return words.say("hw.hint.see", lang, doc=DISPLAYS_DOC)


def error_text(exc: BaseException) -> str:
    """`exc` with the OSError luma wrapped in it, whose errno says what went wrong."""
    text = f"{type(exc).__name__}: {exc}"
    inner = exc.__cause__ or exc.__context__
    if isinstance(inner, OSError) and inner is not exc:
        text += f" ({inner})"
    return text


def still_instant(elapsed_ns: int) -> int:
    """An instant for `Panel.show` that grows with `elapsed_ns` (the panel's retry back-off runs
    on it) yet always has the burn-in shift (0, 0): the frame stays on the glass's very edge."""
    periods, within = divmod(elapsed_ns, SHIFT_PERIOD_NS)
    return periods * SHIFT_PERIOD_NS * len(SHIFTS) + within


def check_screen(side: Side, table_id: str, message: str,
                 lang: str = words.DEFAULT) -> Image.Image:
    """The test screen of the panel facing `side`: its side large, `message` in the band, the
    table id, and a one-pixel frame on the outermost pixels; its words in `lang`."""
    # The side's name wins the header's room over a long table id (the terminal shows it all).
    view = PanelView(Layout.COUNTDOWN, header=words.say("hw.screen.table", lang, table=table_id),
                     header_right=words.say(f"hw.screen.panel.{side.value}", lang),
                     title=message, big=words.say(f"hw.screen.big.{side.value}", lang))
    image = render(view)
    ImageDraw.Draw(image).rectangle((0, 0, WIDTH - 1, HEIGHT - 1), outline=ON)
    return image


# --- the state card --------------------------------------------------------------------------

def _rank(values: Sequence[int], q: float) -> int:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def ms(ns: int, lang: str) -> str:
    """Nanoseconds as milliseconds to the tenth: "1.5"; "1,5" in Russian."""
    return words.number(f"{ns / 1e6:.1f}", lang)


def card_verdict(p99_ns: int) -> str:
    """"fit", "slow" or "replace" for a card whose sync (fdatasync) p99 is `p99_ns`."""
    ms = p99_ns / 1e6
    return "fit" if ms <= CARD_FIT_P99_MS else "slow" if ms <= CARD_SLOW_P99_MS else "replace"


@dataclass(frozen=True)
class CardCheck:
    """The sync (fdatasync) times measured in `folder`."""

    folder: str
    syncs_ns: tuple[int, ...]

    @property
    def p50_ns(self) -> int:
        return _rank(self.syncs_ns, 0.50)

    @property
    def p99_ns(self) -> int:
        return _rank(self.syncs_ns, 0.99)

    @property
    def max_ns(self) -> int:
        return max(self.syncs_ns)

    @property
    def verdict(self) -> str:
        return card_verdict(self.p99_ns)

    def figures(self, lang: str = words.DEFAULT) -> str:
        return words.say("hw.card.figures", lang, p50=ms(self.p50_ns, lang),
                         p99=ms(self.p99_ns, lang), max=ms(self.max_ns, lang))

    def says(self, lang: str = words.DEFAULT) -> str:
        """The verdict, for the arbiter."""
        fit = words.number(f"{CARD_FIT_P99_MS:g}", lang)
        slow = words.number(f"{CARD_SLOW_P99_MS:g}", lang)
        hint = words.say("hw.card.hint", lang)
        if self.verdict == "fit":
            return words.say("hw.card.fit", lang, fit=fit)
        if self.verdict == "slow":
            return words.say("hw.card.slow", lang, fit=fit, slow=slow, hint=hint)
        return words.say("hw.card.replace", lang, slow=slow, hint=hint)


def measure_card(folder: str | Path, appends: int = CARD_APPENDS, gap_s: float = CARD_GAP_S,
                 clock_ns: Callable[[], int] = time.perf_counter_ns,
                 pause: Callable[[float], None] = time.sleep) -> CardCheck:
    """`appends` small appends to a temporary file in `folder`, `gap_s` apart, as the journal
    makes them: into zeros written and fsynced ahead (`journal.prealloc`), each `fdatasync`ed
    (the time measured); the file is removed. OSError when the folder cannot be written."""
    fd, path = tempfile.mkstemp(prefix=".gammonclock-card-check-", dir=folder)
    samples: list[int] = []
    try:
        fill_zeros(fd, 0, fill_target(appends * len(CARD_RECORD)))
        for n in range(appends):
            if n:
                pause(gap_s)
            os.write(fd, CARD_RECORD)
            start = clock_ns()
            os.fdatasync(fd)
            samples.append(clock_ns() - start)
    finally:
        os.close(fd)
        os.unlink(path)
    return CardCheck(str(folder), tuple(samples))


def _existing(path: Path) -> Path:
    """`path`, or its nearest existing parent."""
    while not path.exists() and path != path.parent:
        path = path.parent
    return path


def card_folder(state_dir: str | Path,
                others: Sequence[str | Path] | None = None) -> tuple[Path | None, str]:
    """Where to measure the card of `state_dir`: the folder (or None) and what to say of it.
    `state_dir` itself when this user may write to it, else a writable folder of `others` (the
    home folder, /var/tmp, the temporary folder) on the same file system."""
    state = Path(state_dir)
    if state.is_dir() and os.access(state, os.W_OK | os.X_OK):
        return state, str(state)
    try:
        device = _existing(state).stat().st_dev
    except OSError as exc:
        return None, f"{state}: {exc.strerror}"
    if others is None:
        others = [Path.home(), "/var/tmp", tempfile.gettempdir()]
    for other in map(Path, others):
        try:
            same = other.is_dir() and other.stat().st_dev == device
        except OSError:
            continue
        if same and os.access(other, os.W_OK | os.X_OK):
            return other, Problem("hw.card.same_fs", folder=str(other), state=str(state))
    return None, Problem("hw.card.missing" if not state.exists() else "hw.card.unwritable",
                         state=str(state))


# --- the check -------------------------------------------------------------------------------

class HardwareCheck:
    """The state of one check: what answered, what was pressed; printing and drawing on the
    caller's thread only."""

    def __init__(self, device: DeviceConfig, out: TextIO, clock_ns: Callable[[], int],
                 lang: str = words.DEFAULT) -> None:
        self.device = device
        self.lang = words.language(lang)
        self.out = out
        self.clock_ns = clock_ns
        self.started = clock_ns()
        self.panels: Pair[Panel] | None = None
        self.openers: dict[Side, _Opener] = {}
        self.answering: dict[Side, bool] = {}
        self.message = words.say("hw.screen.press", self.lang)
        self.factory: Any = None
        self.own_factory = False
        self.board: ButtonBoard | None = None
        self.buzzer: GpioBuzzer | NullBuzzer = NullBuzzer()
        self.events: queue.Queue[ButtonEdge] = queue.Queue()
        self.presses = dict.fromkeys(Button, 0)
        self.down_at: dict[Button, int] = {}
        self.card: CardCheck | None = None
        self.card_unchecked: str | None = None

    # --- the state card ---

    def check_card(self, state_dir: str | Path, appends: int, gap_s: float) -> None:
        lang = self.lang
        self.say(words.say("hw.card", lang, folder=state_dir))
        folder, where = card_folder(state_dir)
        if folder is None:
            self.card_unchecked = said(where, lang)
            self.say(words.say("hw.card.unchecked", lang, why=self.card_unchecked))
            return
        try:
            self.card = measure_card(folder, appends, gap_s)
        except OSError as exc:
            self.card_unchecked = f"{folder}: {exc.strerror or exc}"
            self.say(words.say("hw.card.unchecked", lang, why=self.card_unchecked))
            return
        self.say(words.say("hw.card.measured", lang, appends=Counted("appends", appends).said(lang),
                           where=said(where, lang), gap=words.number(f"{gap_s * 1e3:g}", lang),
                           figures=self.card.figures(lang)))
        self.say(f"  {self.card.says(lang)}")

    def say(self, text: str) -> None:
        print(text, file=self.out, flush=True)

    # --- panels ---

    def open_panels(self, panels: Pair[Panel] | None) -> None:
        self.say(words.say("hw.panels", self.lang))
        if panels is None and self.device.pin_factory == "mock":
            panels = dummy_panels()
        if panels is None:
            panels = Pair(*(self._from_config(side) for side in Side))
        self.panels = panels
        for side in Side:
            self.answering[side] = self._draw(side)
            state = (words.say("hw.ok", self.lang) if self.answering[side]
                     else self._failure(side))
            self.say(f"  {self.panel_name(side)} ({self._describe(side)}): {state}")
        if any(self.answering.values()):
            self.say(words.say("hw.panels.look", self.lang))

    def panel_name(self, side: Side) -> str:
        return words.say(f"hw.panel.{side.value}", self.lang)

    def _from_config(self, side: Side) -> Panel:
        config = self.device.panels[side]
        self.openers[side] = opener = _Opener(lambda: luma_device(config))
        return Panel(opener, f"{side} panel", config.contrast)

    def _describe(self, side: Side) -> str:
        if side in self.openers:
            config = self.device.panels[side]
            return words.say("hw.panel_at", self.lang, driver=config.driver, port=config.port,
                             address=f"0x{config.address:02x}")
        return words.say("hw.panel.in_memory" if self.device.pin_factory == "mock"
                         else "hw.panel.not_config", self.lang)

    def _failure(self, side: Side) -> str:
        opener = self.openers.get(side)
        if opener is None or opener.error is None:
            return words.say("hw.failed.nothing", self.lang)
        return (words.say("hw.failed.error", self.lang, error=error_text(opener.error)) + "\n    "
                + panel_hint(opener.error, self.device.panels[side], self.lang))

    def _draw(self, side: Side) -> bool:
        assert self.panels is not None
        image = check_screen(side, self.device.table_id, self.message, self.lang)
        return self.panels[side].show(image, still_instant(self.clock_ns() - self.started))

    def redraw(self) -> None:
        """Both panels with the current message; a panel that comes or goes is reported."""
        for side in Side:
            answering = self._draw(side)
            if answering != self.answering[side]:
                self.answering[side] = answering
                state = (words.say("hw.panel.answers_now", self.lang) if answering
                         else self._failure(side))
                self.say(f"  {self.panel_name(side)}: {state}")

    # --- buttons ---

    def open_buttons(self, factory: Any) -> bool:
        """The pin factory (`factory`, or the config's), the buttons and the buzzer; False (said)
        when the pins cannot be had."""
        lang = self.lang
        self.say(words.say("hw.buttons", lang))
        if factory is None:
            try:
                factory = make_pin_factory(self.device.pin_factory)
            except HardwareError as exc:
                self.say(f"  {said(message_of(exc), lang)}")
                return False
            self.own_factory = True
        self.factory = factory
        try:
            self.board = ButtonBoard(self.device.button_pins, factory, self.events.put,
                                     clock_ns=self.clock_ns)
        except HardwareError as exc:
            self.say("  " + words.say("hw.still_running", lang, error=said(message_of(exc), lang),
                                      command=STOP_SERVICE))
            return False
        for button in Button:
            name = self.button_name(button)
            self.say("  " + (words.say("hw.button.pressed_already", lang, button=name)
                             if self.board.is_pressed(button) else name))
        self.buzzer = make_buzzer(self.device.buzzer_enabled, self.device.buzzer_pin, factory,
                                  low_time=PRESS_BEEP)
        if isinstance(self.buzzer, GpioBuzzer):
            self.say(words.say("hw.buzzer.on", lang, gpio=self.device.buzzer_pin))
        elif self.device.buzzer_enabled:
            self.say(words.say("hw.buzzer.failed", lang, gpio=self.device.buzzer_pin))
        else:
            self.say(words.say("hw.buzzer.off", lang))
        return True

    def button_name(self, button: Button) -> str:
        return words.say(f"hw.button.{button.value}", self.lang,
                         gpio=self.device.button_pins[button])

    def header_pin(self, gpio: int) -> str:
        """" (header pin 15)" for GPIO 22 where the backend knows the board, else ""."""
        try:
            for _, pin in self.factory.board_info.find_pin(f"GPIO{gpio}"):
                return words.say("hw.header_pin", self.lang, pin=pin.number)
        except Exception:   # noqa: BLE001 - a board gpiozero does not know: the GPIO says enough
            pass
        return ""

    def report(self, edge: ButtonEdge) -> None:
        """One edge: printed, shown on both panels, a beep for a press."""
        name, which, lang = self.button_name(edge.button), edge.button.value, self.lang
        if edge.pressed:
            self.presses[edge.button] += 1
            self.down_at[edge.button] = edge.t
            self.say(words.say("hw.down", lang, button=name))
            self.buzzer.low_time()      # the press beep (PRESS_BEEP, given as its low-time)
            self.message = words.say(f"hw.screen.down.{which}", lang)
        else:
            down_at = self.down_at.pop(edge.button, None)
            if down_at is None:
                self.say(words.say("hw.up", lang, button=name))
            else:
                held = words.seconds(f"{(edge.t - down_at) / NS_PER_S:.2f}", lang)
                self.say(words.say("hw.up_after", lang, button=name, held=held))
            self.message = words.say(f"hw.screen.up.{which}", lang)
        self.redraw()

    def wait(self, stop: Callable[[], bool], seconds: float | None) -> None:
        """Report edges until `stop()` or `seconds` pass; Ctrl-C ends the wait too."""
        deadline = None if seconds is None else self.started + int(seconds * NS_PER_S)
        try:
            while not stop() and (deadline is None or self.clock_ns() < deadline):
                try:
                    edge = self.events.get(timeout=POLL_S)
                except queue.Empty:
                    continue
                self.report(edge)
        except KeyboardInterrupt:
            self.say("  (Ctrl-C)")

    def drain(self) -> None:
        """Report the edges that came before the buttons were closed."""
        while True:
            try:
                edge = self.events.get_nowait()
            except queue.Empty:
                return
            self.report(edge)

    # --- the end ---

    def summary(self) -> int:
        """The summary, and the exit status: 0 when both panels answered and every button was
        pressed, else 1."""
        lang = self.lang
        self.say(words.say("hw.summary", lang))
        if self.card is not None:
            self.say(words.say("hw.sum.card", lang,
                               verdict=words.say(f"hw.verdict.{self.card.verdict}", lang),
                               figures=self.card.figures(lang)))
        elif self.card_unchecked is not None:
            self.say(words.say("hw.sum.card_unchecked", lang, why=self.card_unchecked))
        for side in Side:
            state = words.say("hw.ok" if self.answering.get(side) else "hw.failed", lang)
            self.say(f"  {self.panel_name(side)}: {state}")
        for button in Button:
            count = self.presses[button]
            if count:
                self.say(f"  {self.button_name(button)}: {Counted('presses', count).said(lang)}")
            else:
                gpio = self.device.button_pins[button]
                self.say(words.say("hw.sum.never", lang,
                                   button=words.say(f"hw.bare.{button.value}", lang),
                                   gpio=gpio, header=self.header_pin(gpio), doc=WIRING_DOC))
        failed = ([words.say(f"hw.failed.panel.{side.value}", lang)
                   for side in Side if not self.answering.get(side)]
                  + [words.say(f"hw.failed.button.{b.value}", lang)
                     for b in Button if not self.presses[b]]
                  + ([words.say("hw.failed.card", lang)]
                     if self.card is not None and self.card.verdict == "replace" else []))
        if failed:
            self.say(words.say("hw.not_all_good", lang, failed=", ".join(failed)))
            return 1
        self.say(words.say("hw.all_good", lang))
        return 0

    def close_buttons(self) -> None:
        if self.board is not None:
            self.board.close()
            self.board = None

    def close(self) -> None:
        """Everything, in the order that loses nothing: no more edges, the last beep heard."""
        self.close_buttons()
        self.buzzer.wait_idle(1.0)
        self.buzzer.close()
        if self.own_factory:
            self.factory.close()
        if self.panels is not None:
            for panel in self.panels:
                panel.close()


def check_hardware(device: DeviceConfig, *, out: TextIO, seconds: float | None,
                   stop: threading.Event | None = None, panels: Pair[Panel] | None = None,
                   factory: Any = None, clock_ns: Callable[[], int] = time.monotonic_ns,
                   state_dir: str | Path | None = None, card_appends: int = CARD_APPENDS,
                   card_gap_s: float = CARD_GAP_S, lang: str = words.DEFAULT) -> int:
    """Check the card of `state_dir` (None: not), the panels, buttons and buzzer of `device`,
    printing to `out`; returns the exit status (0: both panels answered, every button was pressed
    and the card need not be replaced; 1: not, or no pins).

    Runs until `stop` (a threading.Event) is set, `seconds` pass (None: no limit) or Ctrl-C.
    `panels` and `factory` (a gpiozero pin factory, left open) replace the config's, for tests;
    with `pin_factory = "mock"` the panels are luma's in-memory `dummy` devices. Everything is
    said in `lang` (the CLI gives the device's `[display] language`, or `--language`).
    """
    check = HardwareCheck(device, out, clock_ns, lang)
    lang = check.lang
    ends = "Ctrl-C" if seconds is None else words.say(
        "hw.ends_or", lang, seconds=words.seconds(f"{seconds:g}", lang))
    check.say(words.say("hw.start", lang, table=device.table_id, factory=device.pin_factory,
                        command=STOP_SERVICE))
    try:
        if state_dir is not None:
            check.check_card(state_dir, card_appends, card_gap_s)
        check.open_panels(panels)
        if not check.open_buttons(factory):
            check.say(words.say("hw.not_all_good_pins", lang))
            return 1
        check.say(words.say("hw.prompt", lang, ends=ends))
        check.wait(stop.is_set if stop is not None else lambda: False, seconds)
        check.close_buttons()
        check.drain()
        return check.summary()
    finally:
        check.close()
