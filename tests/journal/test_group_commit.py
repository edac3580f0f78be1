"""Journal before display, one sync per tap (issue 20): the loop's group commit.

The rule: every record the loop makes in a step is written and made durable with one sync before
anything shows it (panels, observers, a command's reply); the inputs already due together (a
release and bounces queued behind a press) share that sync. A *quiet* edge — a button edge with
no effect that changes nothing in the match but its instant (a tap's release, a bounce) — is
written at once without a sync of its own, and made durable by the next sync (the next press, a
timer, a checkpoint, the stop). A power cut that loses it leaves a journal that ends with its
press: recovery resumes with every button up (`Recover`), no hold to come, the very match the
panels showed.

The power-cut tests below record, at every picture, what the card holds for certain (the file
as of the last sync: what survives a power cut) and what the file holds (what survives a kill
-9: the page cache is the kernel's), and replay each: the match shown is always in both.
"""

from __future__ import annotations

import itertools
import os
from dataclasses import dataclass, field, replace
from pathlib import Path

import pytest

from gammonclock.config.loading import parse_config
from gammonclock.core.effects import Effect
from gammonclock.core.engine import ButtonEdge, ButtonState, Engine
from gammonclock.core.match import MatchState
from gammonclock.journal.files import journal_header
from gammonclock.journal.key import load_or_create_key
from gammonclock.journal.reader import read_journal
from gammonclock.journal.records import Stamp
from gammonclock.journal.replay import replay_from_snapshot
from gammonclock.journal.writer import JournalWriter
from gammonclock.runtime.service import GRACE_NS, TIMER_GRACE_NS, ClockService
from gammonclock.runtime.session import Session, recover
from gammonclock.sides import Button
from pin_helpers import FakeClock  # the tests' one monotonic clock (ns = 1000 s)

S = 1_000_000_000
MS = 1_000_000
ORIGIN = 1_000 * S

CONFIG = """\
[match]
length = 7
[players]
left = "Anna"
right = "Boris"
[time]
reserve = "20m"
"""


@dataclass
class Picture:
    t: int
    match: MatchState
    durable: bytes        # what a power cut leaves: the file as of its last sync
    written: bytes        # what a kill -9 leaves: everything written


@dataclass
class Syncs:
    """Counts the journal's syncs and remembers the file's size after each."""

    path: Path
    count: int = 0
    durable_size: int = 0

    def hook(self, monkeypatch: pytest.MonkeyPatch) -> None:
        for name in ("fsync", "fdatasync"):
            real = getattr(os, name, None)
            if real is None:
                continue

            def synced(fd: int, real=real) -> None:    # type: ignore[no-untyped-def]
                real(fd)
                if os.path.samefile(f"/proc/self/fd/{fd}", self.path):
                    self.count += 1
                    self.durable_size = os.fstat(fd).st_size
            monkeypatch.setattr(os, name, synced)


@dataclass
class Camera:
    """A presenter that keeps, with each picture, what the card holds at that moment."""

    syncs: Syncs
    pictures: list[Picture] = field(default_factory=list)

    def present(self, engine: Engine, t: int, effects: list[Effect]) -> int | None:
        written = self.syncs.path.read_bytes()
        self.pictures.append(Picture(t, engine.match, written[:self.syncs.durable_size],
                                     written))
        return None

    def close(self) -> None:
        pass


@dataclass
class Rig:
    service: ClockService
    clock: FakeClock
    path: Path
    syncs: Syncs
    camera: Camera
    key: bytes

    def edge(self, engine_ns: int, button: Button, pressed: bool) -> None:
        self.service.submit(ButtonEdge(ORIGIN + engine_ns, button, pressed))

    def step_at(self, engine_ns: int) -> None:
        self.clock.ns = ORIGIN + engine_ns
        self.service.step()

    def tap(self, engine_ns: int, button: Button, release_ns: int = 100 * MS) -> None:
        """A player's tap: the press, and its release apart, each stepped when due."""
        self.edge(engine_ns, button, True)
        self.step_at(engine_ns + GRACE_NS)
        self.edge(engine_ns + release_ns, button, False)
        self.step_at(engine_ns + release_ns + GRACE_NS)

    @property
    def session(self) -> Session:
        assert self.service.session is not None
        return self.service.session


@pytest.fixture
def rig(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Rig:
    config = parse_config(CONFIG, "test.toml")
    key = load_or_create_key(tmp_path / "state")
    counter = itertools.count()

    def stamps() -> Stamp:
        return Stamp(S + next(counter) * MS, "test-boot", 1_764_400_000 * S)
    path = tmp_path / "match.jsonl"
    writer = JournalWriter.create(path, key, journal_header(CONFIG, "test.toml"), 0, stamps())
    syncs = Syncs(path)
    syncs.durable_size = path.stat().st_size
    syncs.hook(monkeypatch)
    camera = Camera(syncs)
    clock = FakeClock()
    session = Session(Engine.start(config.rules, at=0), writer, stamps,
                      config.device.checkpoint_ns)
    service = ClockService(session, [camera], origin=ORIGIN, clock_ns=clock)
    return Rig(service, clock, path, syncs, camera, key)


def same_but_the_instant(a: MatchState, b: MatchState) -> bool:
    return replace(a, now=b.now) == b


def replayed_match(tmp_path: Path, blob: bytes, name: str) -> Engine:
    copy = tmp_path / name
    copy.write_bytes(blob)
    return replay_from_snapshot(copy).engine


def play(rig: Rig, taps: int, gap: int = 2 * S) -> None:
    """`taps` taps, turn after turn (the first starts game 1), a player's `gap` apart."""
    buttons = itertools.cycle([Button.LEFT, Button.RIGHT])
    for i in range(taps):
        rig.tap(S + i * gap, next(buttons))


# --- one sync per tap --------------------------------------------------------------------------

def test_a_tap_costs_one_sync_its_release_goes_with_the_next(rig):
    """A press is synced before it is shown; its release (nothing shown) is written at once and
    made durable by the next press's sync: one sync per tap, where each edge took one."""
    play(rig, 1)
    before = rig.syncs.count
    play_from = 3 * S
    buttons = itertools.cycle([Button.RIGHT, Button.LEFT])
    for i in range(20):
        rig.tap(play_from + i * 2 * S, next(buttons))
    assert rig.syncs.count - before == 20
    edges = [r for r in read_journal(rig.path).records if r.kind == "input"]
    assert len(edges) == 2 + 40                          # every edge is in the file, in order
    assert rig.session.unsynced != [] and rig.session.backlog == []   # the last release
    rig.session.close()
    assert rig.syncs.durable_size == rig.path.stat().st_size   # the stop syncs it


def test_edges_queued_behind_a_press_share_its_sync_and_its_picture(rig):
    """A press, two bounces and the release, all due when the loop wakes (a slow step): one
    write, one sync, one picture of the press's match."""
    play(rig, 1)
    syncs, pictures = rig.syncs.count, len(rig.camera.pictures)
    t = 5 * S
    rig.edge(t, Button.RIGHT, True)
    rig.edge(t + 1 * MS, Button.RIGHT, False)          # bounces (inside the debounce)
    rig.edge(t + 2 * MS, Button.RIGHT, True)
    rig.edge(t + 80 * MS, Button.RIGHT, False)         # the release
    rig.step_at(t + 80 * MS + GRACE_NS)
    assert rig.syncs.count - syncs == 1
    assert len(rig.camera.pictures) - pictures == 1
    assert rig.camera.pictures[-1].t == t                # the press's picture
    assert rig.syncs.durable_size == rig.path.stat().st_size
    inputs = [r for r in read_journal(rig.path).records if r.kind == "input"]
    assert [r.data["input"]["pressed"] for r in inputs[-4:]] == [True, False, True, False]


def test_a_timer_shown_is_synced_and_a_quiet_edge_before_it_with_it(rig):
    """The release waits for a sync; a checkpoint 5 s later is written beside it, quiet too;
    the checkpoint due 30 s after the last sync (the power-cut bound) is synced, and makes
    them all durable."""
    play(rig, 2)
    written = rig.path.stat().st_size
    assert rig.syncs.durable_size < written              # the last release: written only
    rig.step_at(3 * S + 5 * S + 100 * MS + TIMER_GRACE_NS)   # right's clock runs: a checkpoint
    assert rig.path.stat().st_size > written             # written (a kill -9 keeps it)
    assert rig.syncs.durable_size < written              # not synced alone
    rig.step_at(3 * S + 30 * S)                          # 30 s after the press's sync
    assert rig.syncs.durable_size < rig.path.stat().st_size
    rig.step_at(3 * S + 30 * S + TIMER_GRACE_NS)         # its grace, then
    assert rig.syncs.durable_size == rig.path.stat().st_size


# --- a power cut at each point -----------------------------------------------------------------

def test_every_picture_is_in_the_journal_a_power_cut_or_a_kill_would_leave(rig, tmp_path):
    """At each picture, the journal cut back to its last sync (a power cut) and the file as
    written (a kill -9) both replay to the match shown: nothing shown is ever lost."""
    play(rig, 8, gap=700 * MS)
    rig.edge(8 * S, Button.RIGHT, True)                  # a group: press, bounce, release
    rig.edge(8 * S + MS, Button.RIGHT, False)
    rig.edge(8 * S + 60 * MS, Button.RIGHT, False)
    rig.step_at(8 * S + 60 * MS + GRACE_NS)
    rig.step_at(15 * S)                                  # a checkpoint
    pictures = [p for p in rig.camera.pictures if p.t > 0]
    assert len(pictures) >= 9
    for n, picture in enumerate(pictures):
        for kind, blob in (("cut", picture.durable), ("kill", picture.written)):
            engine = replayed_match(tmp_path, blob, f"{kind}-{n}.jsonl")
            assert same_but_the_instant(engine.match, picture.match), (kind, n, picture.t)


def test_a_power_cut_before_a_release_is_synced_resumes_the_match_shown(rig, tmp_path):
    """The release of a tap written but not synced when the power goes: the journal ends with
    the press. Recovery resumes with every button up and no hold to come, and the match is the
    one the release left (it changed nothing but the instant)."""
    play(rig, 3)
    with_release = rig.path.read_bytes()
    cut = with_release[:rig.syncs.durable_size]
    assert len(cut) < len(with_release)                  # the release is not on the card
    assert b'"pressed":false' in with_release[len(cut):]
    lost = replayed_match(tmp_path, cut, "cut.jsonl")
    kept = replayed_match(tmp_path, with_release, "kept.jsonl")
    assert any(state.down for _, state in lost.buttons)  # the press, still down
    assert same_but_the_instant(lost.match, kept.match)
    assert same_but_the_instant(lost.match, rig.session.engine.match)

    copy = tmp_path / "cut.jsonl"
    resumed, _ = recover(copy, rig.key, lambda: Stamp(0, "after-the-cut", 0),
                         checkpoint_ns=5 * S)
    assert all(state == ButtonState(state.last_edge_at) for _, state in
               resumed.engine.buttons) and not any(s.down for _, s in resumed.engine.buttons)
    effects = resumed.advance(resumed.engine.now + 10 * S)   # past any hold: nothing fires
    assert effects == []
    resumed.close()


def test_a_power_cut_in_the_middle_of_a_group_loses_only_what_was_never_shown(rig, tmp_path):
    """A group's batch half on the card (the power went during its write): the torn line is
    dropped and the match is the one shown before the group."""
    play(rig, 2)
    shown = rig.camera.pictures[-1]
    before = rig.path.read_bytes()
    rig.edge(5 * S, Button.LEFT, True)
    rig.edge(5 * S + 50 * MS, Button.LEFT, False)
    rig.step_at(5 * S + 50 * MS + GRACE_NS)
    after = rig.path.read_bytes()
    grown = after[len(before):]
    assert grown.count(b"\n") == 2                       # press and release: one batch
    torn = before + grown[:len(grown) // 2]
    copy = tmp_path / "torn.jsonl"
    copy.write_bytes(torn)
    resumed, notes = recover(copy, rig.key, lambda: Stamp(0, "after-the-cut", 0),
                             checkpoint_ns=5 * S)
    assert any("torn" in note for note in notes)
    replay = replayed_match(tmp_path, before, "before.jsonl")
    assert same_but_the_instant(replay.match, shown.match)
    resumed.close()


def test_a_failed_sync_keeps_the_quiet_release_for_the_next_write(rig, monkeypatch):
    """The release was written unsynced; the next press's sync fails: the file is cut back to
    the last sync, both wait in order, and both are written when the card works again."""
    play(rig, 2)
    released = rig.path.stat().st_size
    real = os.fsync
    failing = True

    def flaky(fd: int) -> None:
        if failing:
            raise OSError(5, "Input/output error")
        real(fd)
    monkeypatch.setattr(os, "fsync", flaky)
    monkeypatch.setattr(os, "fdatasync", flaky)       # the journal's sync
    rig.edge(6 * S, Button.LEFT, True)
    rig.step_at(6 * S + GRACE_NS)
    assert rig.session.journal_error is not None
    assert rig.path.stat().st_size < released            # cut back to the last sync
    assert [kind for kind, *_ in rig.session.backlog] == ["input", "input"]
    failing = False
    rig.edge(6 * S + 100 * MS, Button.LEFT, False)
    rig.step_at(6 * S + 100 * MS + GRACE_NS)
    rig.step_at(7 * S)
    rig.session.close()
    read = read_journal(rig.path)
    assert read.problems() == []
    edges = [(r.data["input"]["button"], r.data["input"]["pressed"]) for r in read.records
             if r.kind == "input"]
    assert edges[-4:] == [("right", True), ("right", False), ("left", True), ("left", False)]


# --- the frames rendered beside the sync, on the glass after it ---------------------------------

WAIT_S = 5.0


def test_a_held_bus_writer_sends_nothing_until_released_and_then_the_newest():
    from gammonclock.hardware.bus_writer import BusWriter

    written: list[object] = []

    class Target:
        name = "panel"

        def write(self, job: object) -> bool:
            written.append(job)
            return False

        def rewrite_step(self) -> bool:
            return False
    writer, target = BusWriter("test bus"), Target()
    writer.hold()
    writer.submit(target, "old")
    writer.submit(target, "new")
    assert writer.flush(timeout=WAIT_S) and written == []     # held: nothing goes
    writer.release()
    assert writer.flush(timeout=WAIT_S)
    assert written == ["new"] and writer.dropped == 1
    writer.detach(target)


def test_the_panels_render_beside_the_sync_and_reach_the_glass_after_it(tmp_path, monkeypatch):
    """Real panels on a bus writer: while the press's record is being synced, its frames are
    rendered (on the render thread) but none reaches the glass; once the sync returned, both
    do. The sync waits (bounded) for the render to prove the two overlap."""
    from luma.core.device import dummy

    from gammonclock.hardware.bus_writer import BusWriter
    from gammonclock.hardware.panels import Panel
    from gammonclock.hardware.presenters import PanelPresenter
    from gammonclock.hardware.screens import HEIGHT, WIDTH
    from gammonclock.sides import Pair, Side

    class Glass(dummy):
        def __init__(self) -> None:
            super().__init__(width=WIDTH, height=HEIGHT, mode="1")
            self.frames = 0

        def display(self, image: object) -> None:
            super().display(image)
            self.frames += 1

    glass = Pair(Glass(), Glass())
    writer = BusWriter("test bus")
    presenter = PanelPresenter(Pair(Panel.for_device(glass.left, "left", writer=writer),
                                    Panel.for_device(glass.right, "right", writer=writer)))
    rendered = __import__("threading").Event()
    real_present = presenter.present

    def present(engine: Engine, t: int, effects: list[Effect]) -> int | None:
        due = real_present(engine, t, effects)
        rendered.set()
        return due
    presenter.present = present  # type: ignore[method-assign]

    config = parse_config(CONFIG, "test.toml")
    key = load_or_create_key(tmp_path / "state")
    path = tmp_path / "match.jsonl"
    counter = itertools.count()

    def stamps() -> Stamp:
        return Stamp(S + next(counter) * MS, "test-boot", 1_764_400_000 * S)
    journal = JournalWriter.create(path, key, journal_header(CONFIG, "test.toml"), 0, stamps())
    clock = FakeClock()
    service = ClockService(Session(Engine.start(config.rules, at=0), journal, stamps,
                                   config.device.checkpoint_ns), [presenter], origin=ORIGIN,
                           clock_ns=clock)
    service.present_all([])
    assert presenter.flush(WAIT_S)
    seen: list[tuple[bool, int]] = []     # per sync: rendered during it, frames on the glass
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        before = glass.left.frames + glass.right.frames
        real_fsync(fd)
        # the frames are rendered before the sync returns (perhaps before it began: the render
        # thread may finish while the records are written, so the event is cleared before the
        # step, never here) ...
        overlapped = rendered.wait(WAIT_S)
        writer.flush(timeout=WAIT_S)
        seen.append((overlapped, glass.left.frames + glass.right.frames - before))
    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "fdatasync", fsync, raising=False)

    rendered.clear()
    service.submit(ButtonEdge(ORIGIN + S, Button.LEFT, True))      # game 1 starts
    clock.ns = ORIGIN + S + GRACE_NS
    service.step()
    assert seen == [(True, 0)]                        # ... and none is on the glass yet
    assert presenter.flush(WAIT_S)
    assert glass.left.frames + glass.right.frames >= 1   # once the sync returned, they are
    service.close_session()
    for side in Side:
        presenter.panels[side].close()


def test_the_hall_reads_only_what_a_sync_covered(rig):
    """The hall link's bound (`next_seq - 1`: the last record on the card) stops before a
    release written and not yet synced, and moves past it once the next sync covers it."""
    from gammonclock.link.outbox import JournalTail

    play(rig, 2)
    writer = rig.session.journal
    assert isinstance(writer, JournalWriter)
    in_file = read_journal(rig.path).last.seq
    assert writer.next_seq - 1 == in_file - 1            # the release: in the file only
    tail = JournalTail(rig.path, 0)
    tail.read(100, upto=writer.next_seq - 1)
    assert tail.last_seq == in_file - 1
    rig.tap(5 * S, Button.LEFT)                          # the next press syncs it
    assert writer.next_seq - 1 >= in_file + 1
    tail.read(100, upto=writer.next_seq - 1)
    assert tail.last_seq >= in_file + 1


# --- checkpoints: written every 5 s, synced alone every 30 s -----------------------------------

def last_instant(tmp_path: Path, blob: bytes, name: str) -> int:
    copy = tmp_path / name
    copy.write_bytes(blob)
    return read_journal(copy).records[-1].t


def test_a_power_cut_at_any_instant_costs_at_most_30_s_and_a_kill_at_most_5_s(rig, tmp_path):
    """Turns of every length, then a clock left running 100 s: cut the power (the file as of
    its last sync) or kill the process (the file as written) just before every step of the
    loop — the worst instants, each record's sync still to come. The last record then kept is
    never more than 30 s (a power cut) or 5 s (a kill) behind the cut, plus the timers' grace,
    and every such journal recovers."""
    buttons = itertools.cycle([Button.LEFT, Button.RIGHT])
    t = S
    presses = []
    for gap in (2, 12, 40, 7, 65, 3, 31):
        presses.append(t)
        t += gap * S
    presses.append(t)
    end = t + 100 * S
    cuts: list[tuple[int, bytes, bytes]] = []      # (instant, durable, written) before a step
    wake = rig.service.step()
    pending = list(presses)
    for _ in range(1000):
        due = pending[0] + GRACE_NS if pending else end
        at = min(wake, ORIGIN + due) if wake is not None else ORIGIN + due
        if at >= ORIGIN + end:
            break
        written = rig.path.read_bytes()
        cuts.append((at - ORIGIN, written[:rig.syncs.durable_size], written))
        rig.clock.ns = at
        if pending and at == ORIGIN + due:
            press = pending.pop(0)
            button = next(buttons)
            rig.edge(press, button, True)
            rig.edge(press + 100 * MS, button, False)
        wake = rig.service.step()
    syncs_before_end = rig.syncs.count
    assert len(cuts) > 40
    for n, (instant, durable, written) in enumerate(cuts):
        lost_cut = instant - last_instant(tmp_path, durable, f"cut-{n}.jsonl")
        lost_kill = instant - last_instant(tmp_path, written, f"kill-{n}.jsonl")
        assert lost_cut <= 30 * S + TIMER_GRACE_NS, (n, instant, lost_cut)
        assert lost_kill <= 5 * S + TIMER_GRACE_NS + 100 * MS, (n, instant, lost_kill)
    for n in range(0, len(cuts), 7):                        # and they recover
        copy = tmp_path / f"cut-{n}.jsonl"
        resumed, _ = recover(copy, rig.key, lambda: Stamp(0, "after-the-cut", 0),
                             checkpoint_ns=5 * S)
        assert resumed.engine.match.running_side is None    # paused, charged up to the record
        resumed.close()
    # 8 presses, and a clock running about 100 + 65 + 40 + 31 s untouched: 8 syncs for the
    # presses, one per 30 s untouched, where a sync every 5 s took about 47 more.
    assert syncs_before_end <= 8 + 9
    ticks = [r for r in read_journal(rig.path).records if r.kind == "tick"]
    assert len(ticks) >= 40                                # still written every 5 s
