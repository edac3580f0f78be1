"""`gammonclock …`: the command line. Thin: it parses arguments and calls into the package."""

from __future__ import annotations

import argparse
import logging
import signal
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from gammonclock.config.loading import (
    Config,
    ConfigError,
    DeviceConfig,
    DeviceFile,
    keyed_config,
    load_config,
    load_device_config,
)
from gammonclock.core.engine import Engine
from gammonclock.core.pin import pepper_of
from gammonclock.durations import MAX_SPEED, MIN_SPEED, quoted
from gammonclock.journal.durable import fsync_dir
from gammonclock.journal.files import journal_header
from gammonclock.journal.key import load_or_create_key
from gammonclock.journal.records import JournalError, Stamp
from gammonclock.journal.replay import SNAPSHOT_EVERY
from gammonclock.journal.writer import JournalWriter
from gammonclock.runtime.sdnotify import Notifier
from gammonclock.runtime.session import Session, StampSource, system_stamps
from gammonclock.sim.script import ScriptError, load_script
from gammonclock.sim.simulate import Pacer, run_script

from .arbiter import arbiter_command, usb_stick_command
from .common import EXIT_BAD_INPUT, EXIT_LOOP_FAILED, fail, print_account, print_state, state_dir_of
from .records import export_command, replay_command, verify_command

NO_SNAPSHOTS = 1 << 62     # a scripted run in virtual time: no snapshot records


def _simulate(args: argparse.Namespace) -> int:
    try:
        config = load_config(args.config)
        if args.script is None:
            if args.json or args.journal or args.frames or args.gif or args.speed:
                return fail("simulate: --json, --journal, --frames, --gif and --speed are for "
                             "scripted runs: give --script FILE")
            return _interactive(args, config)
        script = load_script(args.script, config.rules.hold_ns,
                             debounce_ns=config.rules.debounce_ns)
    except (ConfigError, ScriptError) as exc:
        return fail(exc)
    for note in script.bounces:      # run as the device would run them; said, not refused
        print(note, file=sys.stderr)
    # Checkpoints bound what a power cut costs and snapshots how long a recovery takes; a run in
    # virtual time has no power to lose (and is synced once at the end), so its journal holds
    # the inputs and the timers' effects only (it still replays and recovers, in full).
    checkpoint_ns = config.device.checkpoint_ns if args.speed else None
    key = pepper = None
    if args.journal:
        try:
            key = load_or_create_key(state_dir_of(args, config.device))
        except JournalError as exc:
            return fail(exc)
        # The journal's header and the engine hold one PIN hash, keyed by the device key.
        pepper = pepper_of(key)
        config = keyed_config(config, pepper)
    # The panels' language is the match's, else the device's (SPEC §15): the combined file's, as
    # the device keeps it in its session (lifecycle's `start`).
    session = Session(Engine.start(config.rules, at=0), checkpoint_ns=checkpoint_ns,
                      snapshot_every=SNAPSHOT_EVERY if args.speed else NO_SNAPSHOTS,
                      observers=[] if args.json else [print_account],
                      language=config.device.language)
    stamps = session.stamps if args.speed else _virtual_wall_stamps(session)
    session.stamps = stamps
    if args.journal:
        assert key is not None
        try:
            # A run in virtual time has no power to lose: one sync at the end, not one a
            # record. Paced (--speed), it stands for the device: every record is synced.
            journal = JournalWriter.create(
                args.journal, key, journal_header(config.text, str(args.config), pepper=pepper),
                0, stamps(), fsync=bool(args.speed))
            session.journal = journal
        except JournalError as exc:
            return fail(exc)
    presenters = []
    if args.frames or args.gif:
        from gammonclock.sim.ui import FrameRecorder
        presenters.append(FrameRecorder(args.frames, args.gif,
                                        language=lambda: session.language))
    pace = Pacer(args.speed) if args.speed else None
    run_script(session, script.inputs, script.end, pace, presenters)
    for presenter in presenters:
        presenter.close()
    if args.journal and not args.speed:
        try:
            journal.sync()
            fsync_dir(Path(args.journal).parent)
        except JournalError as exc:
            return fail(exc)
    session.close()
    print_state(session.engine, args.json)
    return 0


def _virtual_wall_stamps(session: Session) -> StampSource:
    """Stamps for an unpaced scripted run: the wall clock of a match that started now and went
    at the script's pace (the engine's instant at each record), so exports read like real play."""
    first = system_stamps()()
    boot, start_wall, mono = first.boot, first.wall, time.monotonic_ns

    def stamp() -> Stamp:
        return Stamp(mono(), boot, start_wall + session.engine.now)
    return stamp


def _interactive(args: argparse.Namespace, config: Config) -> int:
    """The simulator people use: the device with mock pins pressed from the keyboard."""
    from gammonclock.device.build import build_device
    from gammonclock.sim.ui import run_interactive, window_available

    if not window_available() and not (sys.stdin.isatty() and sys.stdout.isatty()):
        return fail("simulate: the interactive simulator needs a window or a terminal; "
                     "give --script FILE for a scripted run")
    from gammonclock.runtime.arbiter_socket import (
        private_folder,
        simulator_socket_path,
        socket_path,
        someone_serves,
    )

    device_config = replace(config.device, pin_factory="mock")
    state_dir = (str(args.state_dir) if args.state_dir
                 else tempfile.mkdtemp(prefix="gammonclock-simulator-"))
    # `gammonclock arbiter` finds this login's simulator without flags; a second simulator
    # serves in its own state folder (`--state-dir` finds it).
    socket_at = None if args.state_dir else simulator_socket_path()
    if socket_at is not None and someone_serves(socket_at):
        socket_at = None
    if socket_at is not None:
        socket_at.parent.mkdir(mode=0o700, exist_ok=True)
        if not private_folder(socket_at.parent):   # another login's, in the shared /tmp
            print(f"gammonclock: {socket_at.parent} is not this login's own folder (mode 0700); "
                  "the simulator's socket is in its state folder instead", file=sys.stderr)
            socket_at = None
    try:
        device = build_device(replace(config, device=device_config), state_dir,
                              socket_at=socket_at)
    except JournalError as exc:   # another clock on this folder, a bad key or journal
        return fail(exc, status=1)
    where = ("`gammonclock arbiter status` finds it" if socket_at is not None
             else f"`gammonclock arbiter --state-dir {state_dir} status`")
    shown = socket_at or socket_path(state_dir)
    print(f"gammonclock: the simulator's arbiter socket is {shown}; {where}", file=sys.stderr)
    from gammonclock.runtime.service import LoopFailed
    try:
        run_interactive(device, text=True if args.text else None, socket=shown)
    except LoopFailed as exc:
        fail(exc, status=EXIT_LOOP_FAILED)
        print(f"gammonclock: the match's journal is in {state_dir}/journals")
        return EXIT_LOOP_FAILED
    print(f"gammonclock: the match's journal is in {state_dir}/journals")
    return 0


def _run_source(args: argparse.Namespace) -> tuple[Config | DeviceFile, DeviceConfig]:
    """What `run` starts from: a device config (`--device`; `--config` is then the match file
    loaded at boot), or one file holding both (`--config`). Raises ConfigError."""
    if args.device:
        device = load_device_config(args.device)
        return device, device.device
    config = load_config(args.config)
    return config, config.device


def _run(args: argparse.Namespace) -> int:
    """The device: run the clock in real time until stopped (SIGTERM, SIGINT)."""
    logging.basicConfig(level=logging.INFO,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    if not args.device and not args.config:
        return fail("run: give --device FILE (the device config; its table.match_file is the "
                     "match at boot) or --config FILE (one file holding the device and a match)")
    try:
        source, device_config = _run_source(args)
    except ConfigError as exc:
        _show_config_error(str(exc))
        return _start_failed(exc, EXIT_BAD_INPUT)
    from gammonclock.device.build import StartRefused, build_device
    from gammonclock.hardware.errors import HardwareError

    # A stop signal during start-up waits until the handlers are in place: the stop is then
    # clean (the instant journaled) instead of a kill.
    stop_signals = {signal.SIGTERM, signal.SIGINT}
    notifier = Notifier()
    signal.pthread_sigmask(signal.SIG_BLOCK, stop_signals)
    try:
        try:
            device = build_device(source, state_dir_of(args, device_config),
                                  match_path=args.config if args.device else None)
        except StartRefused as exc:
            # Shown on the panels; wait to be stopped, so that systemd does not restart a
            # clock that would refuse again (the arbiter moves the file away, then restarts).
            log = logging.getLogger("gammonclock")
            log.error("%s", exc)
            log.error("nothing started; shown on the panels; waiting to be stopped")
            _wait_refused(notifier, stop_signals, exc.panel)
            exc.release()
            return 1
        except (HardwareError, JournalError) as exc:
            return _start_failed(exc, 1)
        for note in device.notes:
            logging.getLogger("gammonclock").info("%s", note)
        device.service.notifier = notifier

        def stop(*_: object) -> None:
            notifier.stopping()           # systemd: the stop has begun (the journal closes next)
            device.service.stop()
        for signum in stop_signals:
            signal.signal(signum, stop)
    finally:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, stop_signals)
    from gammonclock.runtime.service import LoopFailed
    try:
        device.service.run()
    except LoopFailed as exc:
        # Logged and shown on the panels by the loop; non-zero, so that systemd starts the
        # clock again (the match resumes from its journal, paused).
        return fail(exc, status=EXIT_LOOP_FAILED)
    finally:
        device.close()
    return 0


def _start_failed(reason: object, status: int) -> int:
    """A start that failed: the reason in the journal (stderr) and in `systemctl status`, which
    keeps a service's last STATUS= through its restarts (a restart counter alone says nothing)."""
    Notifier().status("failed to start: " + " ".join(str(reason).split()))
    return fail(reason, status)


def _wait_refused(notifier: Notifier, stop_signals: set[signal.Signals], why: str) -> None:
    """A clock that refused to start waits to be stopped: up for systemd (so it is not started
    again in a loop), with the reason in `systemctl status`, its watchdog fed while it waits."""
    notifier.ready(f"refused to start: {why}")
    interval = notifier.watchdog_ns
    while True:
        notifier.watchdog()
        if signal.sigtimedwait(stop_signals, interval / 2e9 if interval else 3600) is not None:
            break
    notifier.stopping()


def _show_config_error(message: str) -> None:
    """Both panels (at the reference build's addresses) say why the clock will not start."""
    try:
        from gammonclock.config.loading import DEFAULT_DEVICE
        from gammonclock.hardware.panels import Panel
        from gammonclock.hardware.presenters import PanelPresenter
        from gammonclock.hardware.views import config_error_view
        from gammonclock.sides import Pair
        panels = Pair(Panel.from_config(DEFAULT_DEVICE.panels.left, "left panel"),
                      Panel.from_config(DEFAULT_DEVICE.panels.right, "right panel"))
        presenter = PanelPresenter(panels)
        presenter.show_message(config_error_view(message))
        presenter.close()
    except Exception:   # no panels here (a laptop): the message on stderr is enough
        logging.getLogger("gammonclock").debug("no panels to show the config error on",
                                               exc_info=True)


def _check_config(args: argparse.Namespace) -> int:
    """Every problem of each file (exit 2), or each read back in words (exit 0), checked as
    `--as` says or as its sections say (the verdict names which). A device config given before
    a match file is the device that match is read on."""
    from gammonclock.config.readback import check_file, file_language

    status, device = 0, None
    for index, path in enumerate(args.files):
        try:
            checked = check_file(path, device, args.as_kind, args.language)
        except ConfigError as exc:
            # Said in the file's language (SPEC §15), its names and keys as written.
            print(exc.said(args.language or file_language(path, device)), file=sys.stderr)
            status = EXIT_BAD_INPUT
            continue
        device = checked.device
        if index:
            print()
        print(f"{path}: {checked.verdict}")
        for note in checked.notes:
            print(f"  {note}")
        print(checked.words)
    return status


def _check_hardware(args: argparse.Namespace) -> int:
    """The wiring check: both panels show LEFT or RIGHT, every press is printed."""
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    from gammonclock.config.readback import file_language
    try:
        device = load_device_config(args.device)
    except ConfigError as exc:       # in the file's language too (SPEC §15), its keys as written
        return fail(exc.said(args.language or file_language(args.device, None)))
    from gammonclock.device.check import check_hardware
    return check_hardware(device.device, out=sys.stdout, seconds=args.seconds,
                          state_dir=None if args.no_card else state_dir_of(args, device.device),
                          lang=args.language or device.device.language)


def _speed(text: str) -> float:
    """`--speed`: a finite number from MIN_SPEED to MAX_SPEED, else argparse's exit 2."""
    try:
        speed = float(text)
    except ValueError:
        speed = float("nan")
    if not MIN_SPEED <= speed <= MAX_SPEED:     # nan and inf fail here too
        raise argparse.ArgumentTypeError(f"{quoted(text)} is not a speed; use a number "
                                         f"from {MIN_SPEED} to {MAX_SPEED}, e.g. 10")
    return speed


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="gammonclock",
                                     description="Tournament clock for backgammon and long nardy.")
    commands = parser.add_subparsers(dest="command", required=True)

    sim = commands.add_parser("simulate", help="run a match config with a script in virtual time")
    sim.add_argument("--config", required=True, help="the match config (TOML)")
    sim.add_argument("--script", help="the script of inputs (SPEC §9)")
    sim.add_argument("--json", action="store_true",
                     help="print only the final state as one JSON object")
    sim.add_argument("--journal", type=Path,
                     help="write the run's journal to this new file (in virtual time it is "
                          "synced once, at the end, with no 5-s checkpoints or snapshots: there "
                          "is no power to lose; with --speed every record is synced before it "
                          "shows, as on the device)")
    sim.add_argument("--state-dir", type=Path,
                     help="where the device key is (default: $GAMMONCLOCK_STATE_DIR or the "
                          "config's journal.state_dir)")
    sim.add_argument("--speed", type=_speed,
                     help="keep to the wall clock, this many times faster than real time "
                          f"({MIN_SPEED} to {MAX_SPEED})")
    sim.add_argument("--frames", type=Path, help="write a PNG of each panel whenever it changes")
    sim.add_argument("--gif", type=Path, help="write an animated GIF of both panels")
    sim.add_argument("--text", action="store_true",
                     help="interactive: draw in the terminal even when a window could open")
    sim.set_defaults(handler=_simulate)

    run = commands.add_parser("run", help="run the clock on the device, in real time")
    run.add_argument("--device", help="the device config (TOML; /etc/gammonclock/device.toml): "
                                      "its table.match_file is the match loaded at boot")
    run.add_argument("--config", help="with --device: the match file loaded at boot (instead of "
                                      "table.match_file); alone: one file holding the device "
                                      "and the match")
    run.add_argument("--state-dir", type=Path,
                     help="journals and the device key (default: $GAMMONCLOCK_STATE_DIR or the "
                          "config's journal.state_dir)")
    run.set_defaults(handler=_run)

    rep = commands.add_parser("replay", help="rebuild a match's state from its journal")
    rep.add_argument("journal", help="the journal file")
    rep.add_argument("--json", action="store_true", help="print only the state as JSON")
    rep.set_defaults(handler=replay_command)

    ver = commands.add_parser("verify", help="check that a journal is intact (untampered): "
                                             "exit 0 intact (or only its seal not checkable: "
                                             "another device's journal, or no key), 1 tampered")
    ver.add_argument("journal", help="the journal file")
    ver.add_argument("--state-dir", type=Path,
                     help="where the device key is (default $GAMMONCLOCK_STATE_DIR, else the "
                          "journal.state_dir of /etc/gammonclock/device.toml, else "
                          "/var/lib/gammonclock); without a key the chain is checked, not the "
                          "seals")
    ver.add_argument("--language", choices=["en", "ru"],
                     help="the language of the verdict (default: the match's [display] "
                          "language, SPEC §15)")
    ver.set_defaults(handler=verify_command)

    arb = commands.add_parser("arbiter", help="an arbiter's command to the running clock, or "
                                              "`status`")
    arb.add_argument("--state-dir", type=Path, help="the clock's state directory")
    arb.add_argument("--json", action="store_true", help="print the reply as JSON")
    arb.add_argument("--language", choices=["en", "ru"],
                     help="the language of the client's own words (default: the [display] "
                          "language of /etc/gammonclock/device.toml, else English; the clock's "
                          "replies are in the match's language)")
    # REMAINDER: the command's own words may start with "-" (`adjust left -30s`); the options
    # above are taken out of them wherever they stand (`_arbiter_options`).
    arb.add_argument("words", nargs=argparse.REMAINDER, metavar="COMMAND",
                     help="pause, resume, adjust SIDE ±DURATION, deduct SIDE DURATION, add SIDE "
                          "DURATION, point SIDE, forfeit SIDE [POINTS], disqualify SIDE, warn SIDE "
                          "TEXT, challenge SIDE upheld|rejected, undo, score L R, cube VALUE "
                          "[SIDE], abandon, moved [TABLE], status, new-match FILE [--force], "
                          "continue FROM [--force] [--unverified], provision (take the "
                          "provisioning stick this clock offers)")
    arb.set_defaults(handler=arbiter_command)

    chk = commands.add_parser("check-config", help="check config files (match, device, or one "
                                                   "holding both): every problem, or each read "
                                                   "back in words")
    chk.add_argument("files", nargs="+", metavar="FILE",
                     help="a config file (TOML); a device config before a match file is the "
                          "device that match is read on")
    chk.add_argument("--as", dest="as_kind", choices=("match", "device", "combined"),
                     help="check every FILE as this kind: `match` as a running clock reads a "
                          "next match (a device section is an error), `device` as a device "
                          "config, `combined` as one file for `simulate --config` and `run "
                          "--config`; default: as its sections say (the verdict names which)")
    chk.add_argument("--language", choices=["en", "ru"],
                     help="say the verdicts, problems and read-backs in this language; "
                          "default: each file's [display] language (else its device's)")
    chk.set_defaults(handler=_check_config)

    usb = commands.add_parser(
        "usb-stick", help="a USB stick was plugged in (run as root by gammonclock-usb@.service): "
                          "mount it, export the journals to it, load its next match, unmount")
    usb.add_argument("target", help="the stick's device (/dev/sda1), or a folder standing for it")
    usb.add_argument("--state-dir", type=Path, help="the clock's state directory (its socket)")
    usb.set_defaults(handler=usb_stick_command)

    hw = commands.add_parser(
        "check-hardware",
        help="test a newly wired clock (stop the service first): the state card's sync "
             "times (fit, slow or replace it), then each panel shows LEFT or RIGHT in a frame, "
             "every button press and release is printed; exit 0 when both panels answer, every "
             "button was pressed and the card need not be replaced, else 1")
    hw.add_argument("--device", default="/etc/gammonclock/device.toml",
                    help="the device config to check (default: %(default)s)")
    hw.add_argument("--seconds", type=float, help="end after this many seconds (default: run "
                                                  "until Ctrl-C)")
    hw.add_argument("--state-dir", type=Path,
                    help="the state folder whose card is measured (default: "
                         "$GAMMONCLOCK_STATE_DIR, else the device config's)")
    hw.add_argument("--no-card", action="store_true",
                    help="skip the state card's measure (about two seconds of syncs)")
    hw.add_argument("--language", choices=["en", "ru"],
                    help="the language of what the check prints and shows (default: the device "
                         "config's [display] language, SPEC §15)")
    hw.set_defaults(handler=_check_hardware)

    exp = commands.add_parser("export", help="export a match for the arbiter: csv, json or html; "
                                             "the journal's verdict first: exit 0 written, 1 "
                                             "TAMPERED (not written without --allow-tampered), "
                                             "2 bad input")
    which = exp.add_mutually_exclusive_group(required=True)
    which.add_argument("journal", nargs="?", help="the journal file")
    which.add_argument("--latest", action="store_true",
                       help="the newest journal in the state directory")
    exp.add_argument("--format", required=True, choices=["csv", "json", "html"])
    exp.add_argument("--out", required=True, type=Path, help="the file to write")
    exp.add_argument("--language", choices=["en", "ru"],
                     help="the language of the report and of the CSV's header (default: the "
                          "match's [display] language, SPEC §15; the JSON is always English)")
    exp.add_argument("--state-dir", type=Path,
                     help="where journals and the device key are (for --latest and the seal "
                          "check; default $GAMMONCLOCK_STATE_DIR, else the journal.state_dir "
                          "of /etc/gammonclock/device.toml, else /var/lib/gammonclock)")
    exp.add_argument("--allow-tampered", action="store_true",
                     help="write the export of a journal that does not verify (TAMPERED) all "
                          "the same, marked so at its top; the exit status stays 1")
    exp.set_defaults(handler=export_command)

    from .hall import add_hall_parser  # argparse only: paho and aiohttp load when it runs
    add_hall_parser(commands)
    return parser


def _keeps_running(args: argparse.Namespace) -> bool:
    """A program that serves until stopped: the clock itself (`run`, or the interactive
    simulator: the same device) and the director's hall (a page reader or the broker that went
    away must never kill it)."""
    return args.command in ("run", "hall") or (args.command == "simulate"
                                                 and args.script is None)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if hasattr(signal, "SIGPIPE") and not _keeps_running(args):
        # `gammonclock replay … | head` ends quietly. Never for the clock itself: there a pipe or
        # socket closed by its reader (an arbiter client that went away) must be an error on
        # that one write (Python ignores SIGPIPE), not a signal that kills the match.
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    return int(args.handler(args))


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
