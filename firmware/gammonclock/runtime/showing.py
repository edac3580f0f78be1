"""What the loop shows, and when it must show it again: the presenters (the panels, the buzzer),
each one's next redraw, a message over the panels, and the thread that renders the panels'
frames beside the journal's sync. The loop's thread only (`service.py` decides when; this says
how). A display or buzzer fault never stops the clock: each presenter is guarded alone."""

from __future__ import annotations

import concurrent.futures
import logging
from collections.abc import Callable
from typing import Any

from gammonclock.core.effects import Effect
from gammonclock.core.engine import Engine

from .presenting import Presenter, release_frames
from .session import Session

log = logging.getLogger(__name__)

Message = tuple[Any, int]     # a view over the panels, and until when it stays (monotonic)


class Showing:
    def __init__(self, presenters: list[Presenter], *, session: Callable[[], Session | None],
                 engine_time: Callable[[int], int], clock_ns: Callable[[], int],
                 idle_state: Callable[[], dict[str, object]]) -> None:
        self.presenters = presenters
        self.redraw_at: list[int | None] = [None] * len(presenters)   # engine time, per presenter
        self.message: Message | None = None
        self._session, self._engine_time, self._clock_ns = session, engine_time, clock_ns
        self._idle_state = idle_state
        self._render_pool: concurrent.futures.ThreadPoolExecutor | None = None

    def beside_sync(self, effects: list[Effect], engine: Engine, held: list[int],
                    commit: Callable[[], bool]) -> None:
        """Render the held presenters' frames on the render thread while this one writes and
        syncs the journal (`commit`); release them once the sync returned (drawn again first
        when the journal's alert changed with it); then present the others."""
        t, message = engine.now, self.message_shown()

        def render() -> list[int | None]:
            return [self.present(self.presenters[i], t, effects, message, engine) for i in held]
        future = self._renderer().submit(render)
        try:
            changed = commit()
            for i, due in zip(held, future.result(), strict=True):
                self.redraw_at[i] = due
            if changed:
                for i in held:
                    self.redraw_at[i] = self.present(self.presenters[i], t, effects, message,
                                                     engine)
        finally:
            future.result()      # never two threads on a presenter
            for i in held:
                release_frames(self.presenters[i])
        for i, presenter in enumerate(self.presenters):
            if i not in held:
                self.redraw_at[i] = self.present(presenter, t, effects, message, engine)

    def _renderer(self) -> concurrent.futures.ThreadPoolExecutor:
        """The thread that renders frames beside the journal's sync (made once)."""
        if self._render_pool is None:
            self._render_pool = concurrent.futures.ThreadPoolExecutor(
                max_workers=1, thread_name_prefix="render")
        return self._render_pool

    def now(self, effects: list[Effect], engine: Engine | None = None) -> None:
        """Show the match (`engine`: as it stood after an input of this step) now."""
        session = self._session()
        if engine is None and session is not None:
            engine = session.engine
        t = engine.now if engine is not None else self._engine_time(self._clock_ns())
        message = self.message_shown()
        for i, presenter in enumerate(self.presenters):
            self.redraw_at[i] = self.present(presenter, t, effects, message, engine)

    def message_shown(self) -> Message | None:
        """The message over the panels now: none once its time is up, and none as soon as a
        game is on (the players' clocks are never hidden)."""
        message, session = self.message, self._session()
        if message is None:
            return None
        game_on = session is not None and session.engine.match.in_progress
        if game_on or self._clock_ns() >= message[1]:
            self.message = None
            return None
        return message

    def present(self, presenter: Presenter, t: int, effects: list[Effect],
                message: Message | None = None, engine: Engine | None = None) -> int | None:
        """One presenter shows the match (or the message, or the idle table) at `t`; returns
        when it must be called again (engine time), or None."""
        try:
            show_message = getattr(presenter, "show_message", None)
            if message is not None and show_message is not None:
                show_message(message[0], t)
                return self._engine_time(message[1])
            session = self._session()
            if session is None:
                present_idle = getattr(presenter, "present_idle", None)
                return None if present_idle is None else present_idle(self._idle_state(), t)
            return presenter.present(engine or session.engine, t, effects)
        except Exception:   # a display or buzzer fault never stops the clock
            log.exception("presenter %r failed", presenter)
            return None

    def redraw_due(self, now: int) -> None:
        """Each presenter whose redraw instant has come draws again."""
        for i, presenter in enumerate(self.presenters):
            due = self.redraw_at[i]
            if due is not None and due <= now:
                self.redraw_at[i] = self.present(presenter, now, [], self.message_shown())

    def add(self, presenter: Presenter) -> None:
        """One more presenter, nothing due for it until it is first shown."""
        self.presenters.append(presenter)
        self.redraw_at.append(None)

    def forget_redraws(self) -> None:
        """No redraw is due (a new origin: the instants asked for mean nothing now) until the
        presenters are shown again."""
        self.redraw_at = [None] * len(self.presenters)

    def next_redraw(self) -> int | None:
        return min((at for at in self.redraw_at if at is not None), default=None)

    def notify(self, text: str, t: int) -> None:
        """A short notice on each presenter's notice line (drawn at the next `now`)."""
        for presenter in self.presenters:
            notify = getattr(presenter, "notify", None)
            if notify is not None:
                notify(text, t)

    def failure(self, message: Any, view: Any, t: int) -> None:
        """The loop failed: its screen (`view`) where a presenter can show one, else the
        notice (`message`), each presenter alone."""
        for presenter in self.presenters:
            show = getattr(presenter, "show_message", None)
            notify = getattr(presenter, "notify", None)
            try:
                if view is not None and show is not None:
                    show(view, t)
                    continue
                if notify is None:
                    continue
                notify(message, t)
            except Exception:   # one panel's fault must not keep the other dark
                log.exception("presenter %r cannot show the loop's failure", presenter)
                continue
            self.present(presenter, t, [])     # guarded: the notice drawn now

    def close(self) -> None:
        if self._render_pool is not None:
            self._render_pool.shutdown(wait=True)
        for presenter in self.presenters:
            try:
                presenter.close()
            except Exception:   # closing one must not keep the others lit or open
                log.exception("closing presenter %r failed", presenter)
