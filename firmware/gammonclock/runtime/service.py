"""The real-time loop: one thread applies inputs in order, fires timers, and keeps the panels true.

Hardware callbacks (buttons, the dice reader, the arbiter socket) only `submit` timestamped inputs;
they never touch the match. The loop applies each input `GRACE_NS` after its instant and fires
each timer (a flag, a hold recognised, a break's end, a checkpoint) `TIMER_GRACE_NS` after its
instant, always in the order of the instants: a press made just before a flag is charged at its
edge even if its callback ran up to 50 ms late, and a release that came just before `hold_s` keeps
the press a tap. Between those moments the loop sleeps on its queue until the next thing is due:
a timer, an input, or the instant a panel's digits change. It never polls.

Besides the match's timers the loop keeps calls of its own (`call_at`): a button board asks to
read a bounced pin once it has settled, in the same service time and on the same thread as
everything else, so the order is the instants' and a fake clock drives it exactly.

A scripted run (`simulate.run_script`) is this same loop on a virtual clock with no grace: the
run moves the clock from one instant to the next and `step`s, so timers and inputs are ordered by
the very code that orders them on the device (SPEC §3 fine point 4).

Engine time is host monotonic time minus `origin`: 0 when a new match starts, and the instant of
the last journal record when a match is recovered, so an outage is charged to nobody.

A table plays one match after another (SPEC §13.2): `replace_session` swaps the next match in, on
this thread, and with no match loaded (`session` None, idle) the panels show the table and the
inputs act on nothing. Work that must happen on this thread in order with the inputs (loading a
match) comes as a `Task`.

The match is the loop's alone. A stop from another thread (`close_session`: the device closing
while its loop may still be draining, on a starved CPU or a slow card) waits for the loop's turn
and then ends the match there; the loop touches it no more. Two threads never step one session:
that once journaled two records under one seq, applied an input to an engine another thread had
moved on ("time went backwards") and popped a record another thread had written.

Journal before display, one sync per step (group commit): the records a step makes (the inputs
due together, a release and bounces queued behind a press, the timers of one wake) wait in the
session and are written with one sync before anything shows them, before a command's reply and
before a task runs. A quiet edge (a button let go, a bounce: no effect, nothing changed but the
instant) is written at once without a sync of its own and made durable by the next sync, so a
tap costs one sync, not two (see `Session.feed`: a power cut that loses it resumes the match
shown). The panels' frames are rendered beside that sync, on the render thread, and held in
their bus writers until it returns: ready when the card is, never on the glass before the
records they show are on it.

A loop that meets an error nothing expected (a bug) does not die silently and does not go on: it
logs the error, shows it on the panels, and `run` raises `LoopFailed` once the match's journal
holds its last instant. `gammonclock run` then exits non-zero and systemd starts the clock again,
which resumes the match from its journal, paused, the outage charged to nobody.
"""

from __future__ import annotations

import gc
import heapq
import itertools
import logging
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from gammonclock.core.effects import Effect, Refused
from gammonclock.core.engine import ButtonEdge, Engine, Input
from gammonclock.core.match import ArbiterAction, MatchState
from gammonclock.core.match_state import Phase
from gammonclock.core.reasons import Reason
from gammonclock.core.rules import format_score
from gammonclock.errors import GammonclockError

from .inbox import (
    MAX_WAITING_EDGES,
    MAX_WAITING_OTHERS,
    Arrival,
    Reply,
    Task,
    TimedCall,
    TimedCallAt,
)
from .presenting import Presenter, hold_frames
from .sdnotify import Notifier
from .session import Session
from .showing import Showing

log = logging.getLogger(__name__)

GRACE_NS = 5_000_000          # an input is applied this long after its edge (others may be late)
TIMER_GRACE_NS = 50_000_000   # a timer fires this long after its instant: no late press slips
LATE_NS = 50_000_000          # an input later than that is logged (and applied at the loop's now)
IDLE_NS = 20_000_000          # nothing due this long: the journal's zeros are filled ahead


def settle_memory() -> None:
    """Move every object alive now into the collector's permanent generation (`gc.freeze`): the
    modules, fonts and panels loaded at the start and the match's state so far are never scanned
    again, so a full collection on the loop costs what was made since, not the whole heap (one
    took 100 ms at the end of a 99-point match here, seconds on a Pi). A frozen object is still
    freed when its last reference goes (the history a snapshot cuts off); only a reference cycle
    frozen as garbage would stay, and the loop makes none. The loop calls it once READY (after a
    full collection) and after each snapshot (`Session.after_snapshot`)."""
    gc.freeze()


MESSAGE_NS = 10_000_000_000   # a message over the panels (a match loaded, a file refused) stays


class LoopFailed(GammonclockError, RuntimeError):
    """The clock's loop met an unexpected error (a bug) and stopped: the process should exit
    and be started again (systemd), which resumes the match from its journal."""


def lifecycle_of(match: MatchState) -> str:
    """SPEC §13.2's name of where the table's match stands, for people and the hall: a loaded
    match before game 1 is *ready* (its §9 `phase` stays `between_games`)."""
    if match.play_phase is Phase.MATCH_OVER:
        return "match_over"
    return "in_progress" if match.in_progress else "ready"


class ClockService:
    def __init__(self, session: Session | None, presenters: list[Presenter], *, origin: int,
                 clock_ns: Callable[[], int] = time.monotonic_ns, grace_ns: int = GRACE_NS,
                 timer_grace_ns: int = TIMER_GRACE_NS,
                 notifier: Notifier | None = None,
                 idle_state: Callable[[], dict[str, object]] | None = None) -> None:
        self.session = session          # None: no match loaded (idle)
        # The state JSON, and what the idle panels show, while no match is loaded.
        self.idle_state = idle_state or (lambda: {"phase": "idle"})
        self._swap_lock = threading.Lock()               # `session` and `origin` change together
        # systemd: READY once the panels show the match, WATCHDOG from this loop only, so a loop
        # that hangs (in an I2C write, on a dead disk) stops the pings and is restarted.
        self.notifier = notifier or Notifier({})
        self._next_ping: int | None = None
        # The loop's turn: a step, a drain and the closing of the match hold it, so a stop from
        # another thread never steps the match beside the loop. Once `_closed`, the match's
        # journal is closed and no step touches it again.
        self._turn = threading.RLock()
        self._closed = False
        self.failure: BaseException | None = None    # what stopped the loop (LoopFailed)
        # A screen saying the loop failed (the device gives one on its panels), else the
        # notice line only.
        self.fault_view: Callable[[str], Any] | None = None
        self.origin = origin
        self.clock_ns = clock_ns
        self.grace_ns = grace_ns
        self.timer_grace_ns = max(timer_grace_ns, grace_ns)
        self._inbox: queue.SimpleQueue[Arrival | None] = queue.SimpleQueue()
        # Heaps by instant (engine time), then arrival: the inputs, and the loop's own calls.
        self._pending: list[tuple[int, int, Input | Task, Reply | None]] = []
        self._calls: list[tuple[int, int, TimedCall]] = []
        self._arrivals = itertools.count()
        self._stop = threading.Event()
        self._waiting_lock = threading.Lock()
        self._waiting = {True: 0, False: 0}     # inputs submitted, not yet applied: by is-edge
        self.refused_inputs = 0                  # turned away because too many were waiting
        self._freezing = False     # once the loop runs: `settle_memory` after each snapshot
        self._picture: Engine | None = None    # the match to show at the next `_show`
        # What shows the match (the panels, the buzzer) and when it must be drawn again.
        self.showing = Showing(presenters, session=lambda: self.session,
                               engine_time=self.engine_time, clock_ns=lambda: self.clock_ns(),
                               idle_state=lambda: self.idle_state())
        if session is not None:
            session.group = True   # group commit: one sync per step, before the panels

    @property
    def presenters(self) -> list[Presenter]:
        return self.showing.presenters

    # --- from any thread --------------------------------------------------------------------

    def submit(self, event: Input | Task, reply: Reply | None = None) -> bool:
        """Hand over an input stamped with the host's monotonic time (any thread); `reply`, if
        given, receives its effects once the loop has applied (and journaled) it. False: too
        many inputs of its kind are waiting, and this one is turned away (never applied)."""
        edge = isinstance(event, ButtonEdge)
        with self._waiting_lock:
            if self._waiting[edge] >= (MAX_WAITING_EDGES if edge else MAX_WAITING_OTHERS):
                self.refused_inputs += 1
                full = True
            else:
                self._waiting[edge] += 1
                full = False
        if full:
            if self.refused_inputs == 1 or self.refused_inputs % 1000 == 0:
                log.warning("the clock's inbox is full: %s turned away (%d so far)", event,
                            self.refused_inputs)
            return False
        self._inbox.put((event, reply))
        return True

    def call_at(self, mono: int, action: TimedCall) -> None:
        """Have the loop call `action` at monotonic instant `mono` (any thread), ordered with
        the match's timers (after those of the same instant, before the inputs); the input it
        returns, if any, is applied at that instant."""
        self._inbox.put(TimedCallAt(mono, action))

    def waiting(self) -> int:
        """Inputs submitted and not yet applied (any thread)."""
        with self._waiting_lock:
            return self._waiting[True] + self._waiting[False]

    def status(self) -> dict[str, object]:
        """The SPEC §9 state at this instant, with SPEC §13.2's `lifecycle` (any thread: the
        engine is an immutable value, and bringing a copy to now changes nothing in the loop)."""
        with self._swap_lock:           # the match and its origin, of one and the same match
            session, origin = self.session, self.origin
        if session is None:
            return {**self.idle_state(), "lifecycle": "idle"}
        engine = session.engine
        now = max(engine.now, self.clock_ns() - origin)
        engine = engine.advance(now)[0]
        return {**engine.state_json(), "lifecycle": lifecycle_of(engine.match)}

    def stop(self) -> None:
        self._stop.set()
        self._inbox.put(None)

    # --- the loop ---------------------------------------------------------------------------

    def engine_time(self, mono: int) -> int:
        return mono - self.origin

    def run(self) -> None:
        """Run until `stop()`; everything that touches the match happens on this thread.
        Raises LoopFailed (after logging it and showing it on the panels) when a step meets an
        unexpected error: the caller exits for systemd to start the clock again."""
        try:
            with self._turn:
                self.present_all([])
            self.notifier.ready(self._status_line())
            # What lives all match is frozen once READY and after each snapshot: a full
            # collection never scans it again (gc.freeze; see settle_memory).
            self._freezing = True
            if self.session is not None:
                self.session.after_snapshot = settle_memory
            gc.collect()
            settle_memory()
            while not self._stop.is_set():
                wake = self.step()
                wake = self._heartbeat(wake)
                self.when_idle(wake)
                timeout = None if wake is None else max(0.0, (wake - self.clock_ns()) / 1e9)
                try:
                    item = self._inbox.get(timeout=timeout)
                except queue.Empty:
                    continue
                if item is not None:
                    with self._turn:
                        self._take(item)
            self.drain()
        except Exception as exc:
            raise self._failed(exc) from exc
        self.showing.close()

    def when_idle(self, wake: int | None) -> None:
        """No input waiting and nothing due for IDLE_NS: the journal's zeros filled ahead, off
        the press path (`Session.keep_ahead`)."""
        if self._inbox.empty() and (wake is None or wake - self.clock_ns() >= IDLE_NS):
            with self._turn:
                if not self._closed and self.session is not None:
                    self.session.keep_ahead()

    def _failed(self, exc: Exception) -> LoopFailed:
        """An unexpected error in a step: log it, show it, journal the match's instant and close
        its journal (the records before stay whole); the loop then stops. Going on would risk a
        match in memory that its journal does not hold, or the same error at every wake (a timer
        that cannot fire spins, and feeds the watchdog all the while); a restart resumes the
        match from the journal, paused, as after a power cut."""
        failure = LoopFailed(f"the clock's loop failed: {type(exc).__name__}: {exc}; the "
                             f"match is kept in its journal and resumes paused when the clock "
                             f"starts again")
        self.failure = failure
        log.critical("%s", failure, exc_info=exc)
        self._stop.set()
        with self._turn:
            self._show_failure(f"{type(exc).__name__}: {exc}")
            try:
                self._end_match(drain=False)
            except Exception:   # the journal's close failed: its records before stay whole
                log.exception("the match's journal could not be closed")
        return failure

    def _show_failure(self, text: str) -> None:
        """The panels say the clock failed and restarts (a display fault never hides it)."""
        from gammonclock.hardware.texts import Text
        message = Text("fault.restarting", error=text)     # said in the panels' language
        view = None
        if self.fault_view is not None:
            try:
                view = self.fault_view(message)
            except Exception:   # the log holds the error: the panels are a courtesy here
                log.exception("cannot make the screen for the loop's failure")
        t = self.session.engine.now if self.session is not None else 0
        self.showing.failure(message, view, t)

    def _heartbeat(self, wake: int | None) -> int | None:
        """Tell systemd's watchdog the loop is alive, twice per interval; return when the loop
        must wake at the latest (the next input, timer or redraw, or the next ping)."""
        self._ping_if_due()
        if self._next_ping is None:
            return wake
        return self._next_ping if wake is None else min(wake, self._next_ping)

    def _ping_if_due(self) -> None:
        """WATCHDOG=1 when half the interval has passed: between sleeps, and between the
        inputs of a long step (a backlog of chattering edges, each fsynced, is progress)."""
        interval = self.notifier.watchdog_ns
        if interval is None:
            return
        now = self.clock_ns()
        if self._next_ping is None or now >= self._next_ping:
            self.notifier.watchdog()
            self._next_ping = now + interval // 2

    def _status_line(self) -> str:
        if self.session is None:
            return "idle: waiting for the next match"
        match = self.session.engine.match
        return (f"{match.phase.value}, game {match.game}, score "
                f"{format_score(match.score.left)}-{format_score(match.score.right)}")

    def drain(self) -> None:
        """Apply every input still waiting out its grace, in order (the loop is stopping). From
        another thread it waits for the loop's turn; once the match is closed it does nothing."""
        with self._turn:
            if self._closed:
                return
            self._step()
            self.grace_ns = self.timer_grace_ns = 0
            self._step()

    def close_session(self) -> None:
        """Stop the loop and end the match here: the inputs waiting applied, the instant of the
        stop journaled, the journal closed (any thread; the device's stop). A loop still
        running (it drains its own inputs on a starved CPU) is waited for between two steps,
        and touches the match no more afterwards."""
        self.stop()
        with self._turn:
            self._end_match(drain=self.failure is None)

    def _end_match(self, drain: bool) -> None:
        if self._closed:
            return
        session = self.session
        try:
            if drain:
                self.drain()
            if session is not None:
                session.checkpoint(max(session.engine.now, self.engine_time(self.clock_ns())))
        except Exception:   # a bug at the very end: the journal is closed all the same
            log.exception("the match's last instant could not be journaled")
        finally:
            self._closed = True
            if session is not None:
                session.close()

    def _take_arrivals(self) -> None:
        """Move everything in the inbox into its heap."""
        while True:
            try:
                item = self._inbox.get_nowait()
            except queue.Empty:
                return
            if item is not None:
                self._take(item)

    def _take(self, item: Arrival) -> None:
        """Move an arrived input (or call) into its heap, stamped in engine time."""
        if isinstance(item, TimedCallAt):
            heapq.heappush(self._calls, (self.engine_time(item.at), next(self._arrivals),
                                         item.action))
            return
        event, reply = item
        event = self._in_engine_time(event)
        heapq.heappush(self._pending, (event.t, next(self._arrivals), event, reply))

    def _in_engine_time(self, event: Input | Task) -> Input | Task:
        at = self.engine_time(event.t)
        return event if at == event.t else replace(event, t=at)

    def step(self) -> int | None:
        """Do everything due by now; return the monotonic instant of the next thing due (None
        once the match is closed: nothing is ever due again)."""
        with self._turn:
            if self._closed:
                return None
            return self._step()

    def _step(self) -> int | None:
        self._take_arrivals()
        now = self.engine_time(self.clock_ns())
        # The match's timers due together (a late wake-up, a clock run faster than real time:
        # checkpoints, a delay's end) are journaled one by one and shown once: pictures that
        # would stand for microseconds are never drawn. An input or a call shows them first.
        unshown: list[Effect] | None = None
        inputs = False      # whether `unshown` is the inputs' (else the timers')
        while True:
            timer, own = self._next_timer()
            first = self._pending[0][0] if self._pending else None
            if timer is not None and (first is None or timer <= first):
                # The timer comes first; it (and every input after it) waits out its grace.
                if timer > now - self.timer_grace_ns:
                    break
                if own:
                    self._show(unshown)
                    unshown = None
                    self._call()
                    self._take_arrivals()     # the call may have made another (a settle moved on)
                else:
                    assert self.session is not None      # a match timer needs a match
                    if inputs:                # the inputs' picture before the timer's
                        self._show(unshown)
                        unshown, inputs = None, False
                    unshown = (unshown or []) + self.session.advance(timer)
            elif first is not None and first <= now - self.grace_ns:
                if not inputs:                # the timers' picture before the inputs'
                    self._show(unshown)
                    unshown, inputs = None, True
                # The inputs due together (a release and bounces queued behind a press, a
                # backlog after a stall) are journaled with one sync and shown once.
                unshown = self._apply_first(unshown)
            else:
                break
            self._ping_if_due()
        self._show(unshown)
        self.showing.redraw_due(now)
        return self._next_wake(timer)     # presenters change no timer: `timer` still stands

    def _show(self, effects: list[Effect] | None) -> None:
        """Journal what waits (one sync), then present the effects not shown yet (None:
        nothing new to show, unless the journal's alert changed with this very write).

        Presenters that can hold their frames (the panels' bus writers) render them beside the
        sync, on the render thread, and let them go once it has returned: the frames are ready
        when the card is, and still none leaves before the records it shows are on the card."""
        picture, self._picture = self._picture, None
        session = self.session
        if effects is not None and session is not None and session.commit_due:
            held = [i for i, presenter in enumerate(self.presenters) if hold_frames(presenter)]
            if held:
                self.showing.beside_sync(effects, picture or session.engine, held,
                                         self._commit)
                return
        if self._commit() or effects is not None:
            self.showing.now(effects or [], picture)

    def _commit(self) -> bool:
        """Group commit: the records the match made since the last one, written with one
        sync, before anything shows them. True when the journal's alert changed (its write
        failed, or drained the records waiting): the panels say so at once."""
        session = self.session
        if session is None:
            return False
        alert = session.journal_error
        session.commit()
        return session.journal_error != alert

    def _next_timer(self) -> tuple[int | None, bool]:
        """The instant of the next timer, and whether it is one of the loop's own calls rather
        than the match's (a flag, a hold, a break's end, a checkpoint: first at a tie)."""
        timer = self.session.next_wakeup() if self.session is not None else None
        if self._calls and (timer is None or self._calls[0][0] < timer):
            return self._calls[0][0], True
        return timer, False

    def _call(self) -> None:
        at, _, action = heapq.heappop(self._calls)
        try:
            event = action(self.session.engine if self.session is not None else None)
        except Exception:   # a pin that cannot be read never stops the clock
            log.exception("the loop's call due at %d ns (engine time) failed", at)
            return
        if event is not None:
            moved = self._in_engine_time(event)
            assert not isinstance(moved, Task)
            effects, changed = self._feed(moved)
            self._show(effects if changed else None)

    def _apply_first(self, unshown: list[Effect] | None) -> list[Effect] | None:
        """Apply the first pending input (unless its sender withdrew it); return the effects
        still to show (None: nothing), with `unshown` (those of the inputs and timers before
        it in this step). Its records wait for the step's one sync unless a reply or a task
        needs them on disk now."""
        _, _, event, reply = heapq.heappop(self._pending)
        with self._waiting_lock:
            self._waiting[isinstance(event, ButtonEdge)] -= 1
        if reply is not None and not reply.take():
            log.info("input %s withdrawn by its sender before it was applied", event)
            return unshown
        if isinstance(event, Task):
            self._show(unshown)       # the task sees (and may replace) a match on disk
            try:
                value = event.run()
            except Exception as exc:   # a task's bug costs its reply, never the clock
                log.exception("the loop's task %s failed", event)
                value = exc
            if reply is not None:
                reply.deliver([], value)
            return None
        effects, changed = self._feed(event)
        if changed:
            unshown = (unshown or []) + effects
            # The picture is the match after the last input that changed it: a release or a
            # bounce after it changes nothing shown (it was never drawn for itself).
            self._picture = self.session.engine if self.session is not None else None
        if reply is not None:
            self._show(unshown)       # applied, journaled and shown before it is reported
            reply.deliver(effects)
            return None
        return unshown

    def apply(self, event: Input) -> list[Effect]:
        """Apply an input at once (the loop's thread only: a Task's work)."""
        effects, changed = self._feed(event)
        self._show(effects if changed else None)
        return effects

    def _feed(self, event: Input) -> tuple[list[Effect], bool]:
        """Apply an input (its record waits for the next `_commit`); return its effects and
        whether the panels must show them."""
        if self.session is None:
            return self._no_match(event), False
        engine_now = self.session.engine.now
        if event.t < engine_now:
            # Its callback ran later than the grace: apply it now rather than rewrite history.
            if engine_now - event.t > LATE_NS:
                log.warning("input %s arrived %.1f ms late", event,
                            (engine_now - event.t) / 1e6)
            event = replace(event, t=engine_now)
        before, alert = self.session.engine.match, self.session.journal_error
        effects = self.session.feed(event)
        # The journal's alert lives outside the match: its write may fail, or succeed again,
        # on exactly this input (a quiet edge is written at once; the others at `_commit`,
        # which says so too).
        return effects, bool(effects or self.session.journal_error != alert
                             or not self.session.engine.match.differs_only_in_instant(before))

    def _no_match(self, event: Input) -> list[Effect]:
        """An input while no match is loaded: a press or a roll does nothing; a command is
        refused (and, with no match, journaled nowhere)."""
        if isinstance(event, ArbiterAction):
            return [Refused(event.t, event.command.describe(), "no match is loaded: load one "
                            "with `gammonclock arbiter new-match FILE` (or a USB stick)",
                            Reason.NO_MATCH, (("case", "load_one"),))]
        return []

    # --- the next match (the loop's thread only) -------------------------------------------

    def replace_session(self, session: Session | None, origin: int) -> list[str]:
        """Play `session` from now on (None: idle), its engine's 0 at monotonic `origin`. The
        inputs still waiting were made for the match before: those from before the swap are
        dropped (a command's sender hears it was not applied), later ones are kept; the loop's
        own calls are kept, in the new engine time. Returns what was dropped, for the log."""
        self._take_arrivals()      # what came before the swap is judged by the match before
        self._commit()             # the match before keeps its records
        swap_at, old_origin = self.clock_ns(), self.origin
        with self._swap_lock:
            self.session, self.origin = session, origin
        if session is not None:
            session.group = True
            if self._freezing:
                session.after_snapshot = settle_memory
        kept, dropped = [], []
        for at, n, event, reply in self._pending:
            mono = at + old_origin
            if mono < swap_at:
                dropped.append(str(event))
                with self._waiting_lock:
                    self._waiting[isinstance(event, ButtonEdge)] -= 1
                if reply is not None and reply.take():
                    reply.deliver([Refused(at, str(event), "a next match was loaded before it "
                                           "applied", Reason.NO_MATCH, (("case", "swapped"),))])
                continue
            kept.append((mono - origin, n, replace(event, t=mono - origin), reply))
        self._pending = kept
        heapq.heapify(self._pending)
        self._calls = [(at + old_origin - origin, n, action) for at, n, action in self._calls]
        heapq.heapify(self._calls)
        self.showing.forget_redraws()
        self.present_all([])
        return dropped

    def show_message(self, view: Any, duration_ns: int = MESSAGE_NS) -> None:
        """A screen over both panels for a while (a match loaded, a match file refused); the
        loop's thread only. Never over a game in progress: the players' clocks stay in view
        (the caller shows a short notice instead)."""
        self.showing.message = (view, self.clock_ns() + duration_ns)
        self.present_all([])

    def notify(self, text: str) -> None:
        """A short notice on the panels' notice line (the loop's thread only)."""
        # From now (engine time), not the last input's instant, which may lie a checkpoint
        # back: a notice stamped there could be gone at the next redraw.
        now = self.engine_time(self.clock_ns())
        t = max(self.session.engine.now, now) if self.session is not None else now
        self.showing.notify(text, t)
        self.present_all([])

    def present_all(self, effects: list[Effect]) -> None:
        """Show the match now, once what it made is on disk."""
        self._commit()
        self.showing.now(effects)

    def _next_wake(self, timer: int | None) -> int | None:
        """The monotonic instant of the next input, timer (at `timer`) or redraw due."""
        redraw = self.showing.next_redraw()
        candidates = [] if redraw is None else [redraw]
        first = self._pending[0][0] if self._pending else None
        if timer is not None:
            candidates.append(timer + self.timer_grace_ns)
        if first is not None and (timer is None or first < timer):
            candidates.append(first + self.grace_ns)   # inputs after a timer wait for it
        return min(candidates) + self.origin if candidates else None


