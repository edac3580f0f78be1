"""`gammonclock replay`, `verify` and `export`: a journal replayed, checked, or exported for the
arbiter."""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path
from typing import Any

from gammonclock import words
from gammonclock.config.loading import (
    ConfigError,
)
from gammonclock.config.problems import said
from gammonclock.journal.key import KeyRefused, read_key
from gammonclock.journal.reader import JournalStream
from gammonclock.journal.records import JournalError
from gammonclock.journal.replay import (
    UNDO_KEPT,
    Checked,
    diverged_note,
    replay,
    verify_and_replay,
)

from .common import fail, print_account, print_state

# The exit status of a journal that does not verify (`verify`, `export`): SPEC §14.1.
EXIT_TAMPERED = 1


def replay_command(args: argparse.Namespace) -> int:
    try:
        read = JournalStream.open(args.journal)
        replayed = replay(read, observe=None if args.json else print_account,
                          keep=UNDO_KEPT)     # its memory does not grow with the journal
    except (JournalError, ConfigError) as exc:
        return fail(exc)
    lang = replayed.config.device.language          # the match's (SPEC §15)
    for note in read.problems():
        print(f"gammonclock: {said(note, lang)}", file=sys.stderr)
    if replayed.diverged:
        print(f"gammonclock: {said(diverged_note(replayed.diverged), lang)}", file=sys.stderr)
    print_state(replayed.engine, args.json)
    return 0

def verify_command(args: argparse.Namespace) -> int:
    """The journal's verdict, in the words the export prints (`journal.Verdict.words`): exit 1
    when it is tampered with; 0 when its chain holds, its seals checked with this device's key
    or not (a journal of another device, or no key here: the verdict says which). A record this
    firmware does not understand, or a journal it cannot read: exit 2, naming it. The key is
    found as the export finds it (`export.keys.choose_key`)."""
    from gammonclock.export.keys import choose_key
    from gammonclock.export.text import integrity_text

    chosen = choose_key(args.state_dir)
    told = args.language or journal_language(args.journal)
    for note in chosen.notes:
        print(f"gammonclock: {said(note, told)}", file=sys.stderr)
    try:
        if chosen.key is None:
            _refuse_a_bad_key(chosen.state_dir)
            print(f"gammonclock: {said(chosen.said, told)}", file=sys.stderr)
        checked = verify_and_replay(args.journal, chosen.key, no_key=chosen.no_check)
    except JournalError as exc:
        return fail(exc)
    verdict = checked.verdict
    # In the match's language (SPEC §15), else --language's; the words of the export's report.
    lang = args.language or (checked.replayed.config.device.language
                             if checked.replayed is not None else "en")
    if not verdict.intact:
        print(f"{args.journal}: {integrity_text(verdict, lang=lang)}")
        return EXIT_TAMPERED
    print(f"{args.journal}: {integrity_text(verdict, lang=lang)}; "
          f"{_match_summary(checked, lang)}")
    return 0

def _refuse_a_bad_key(state_dir: str) -> None:
    """KeyRefused for a key file that is there but holds no whole key (empty, short, not hex):
    never used, and `verify` does not pass it over as "no key" either (a journal forged with
    the empty key would then read "seal not checked"). A key not there or not readable: None."""
    try:
        read_key(state_dir)
    except KeyRefused:
        raise
    except JournalError:
        pass

def export_command(args: argparse.Namespace) -> int:
    """The journal's verdict first, in every format (SPEC §14.1), in `verify`'s words and the
    match's language: when it is TAMPERED, first on stderr, and then nothing is written and
    the exit status is 1, unless --allow-tampered: then the export is written, marked TAMPERED
    at its top, and the exit status is still 1 (it is no valid record). When its chain holds
    (its seals checked or not), the export is written and the verdict is stdout's first line,
    then what was written, exit 0. Exit 2 for bad input (a journal not read, a record not
    understood: nothing is called intact then)."""
    from gammonclock.export import ExportError, check_journal, export_journal
    from gammonclock.export.keys import choose_key
    from gammonclock.export.text import integrity_text
    from gammonclock.journal.files import latest_journal

    logging.basicConfig(level=logging.WARNING, format="gammonclock: %(message)s")
    # --state-dir, $GAMMONCLOCK_STATE_DIR, the device config's, the default (export/keys.py).
    chosen = choose_key(args.state_dir)
    state_dir = chosen.state_dir
    journal = args.journal or (latest_journal(state_dir) if args.latest else None)
    if journal is None:
        return fail(f"export: no journal in {state_dir}/journals" if args.latest
                     else "export: name a JOURNAL or give --latest")
    lang = args.language or journal_language(journal)     # the report's (SPEC §15)
    told = [f"gammonclock: {said(note, lang)}" for note in (*chosen.notes, chosen.said)]
    try:
        verdict = check_journal(journal, chosen.key, chosen.no_check)
    except ExportError as exc:
        for line in told:
            print(line, file=sys.stderr)
        return fail(exc)
    verdict_line = f"{journal}: {integrity_text(verdict, lang=lang)}"
    if not verdict.intact:          # said first, on stderr: the export is refused
        print(f"gammonclock: {verdict_line}", file=sys.stderr)
    for line in told:               # which key checked the seals, or why none did
        print(line, file=sys.stderr)
    if not verdict.intact and not args.allow_tampered:
        print(f"gammonclock: {words.say('exp.refused_tampered', lang, out=args.out)}",
              file=sys.stderr)
        return EXIT_TAMPERED
    try:
        export_journal(journal, args.format, args.out, key=chosen.key, no_check=chosen.no_check,
                       language=args.language, allow_tampered=args.allow_tampered,
                       verdict=verdict)
    except ExportError as exc:
        return fail(exc)
    if not verdict.intact:
        done = words.say("exp.done_tampered", lang, out=args.out, format=args.format,
                         journal=journal)
        print(f"gammonclock: {done}", file=sys.stderr)
        return EXIT_TAMPERED
    # Said first on stdout, once the match is read: a journal whose chain holds but whose
    # records this firmware cannot understand is no "intact" export (exit 2 above).
    print(verdict_line)
    print(words.say("exp.done", lang, out=args.out, format=args.format, journal=journal))
    return 0


def journal_language(path: str | Path) -> str:
    """The language of the match a journal holds (its header's `[display] language`, SPEC §15);
    English when its header cannot be read (the command then says why, in English)."""
    from gammonclock.config.loading import config_of_header
    from gammonclock.journal.reader import read_header

    try:
        return words.language(config_of_header(read_header(path).data, str(path))
                              .device.language)
    except (JournalError, ConfigError, KeyError, TypeError):
        return "en"

def _match_summary(checked: Checked, lang: str = "en") -> str:
    """The match `verify` replayed, in one line, in `lang` (English: the codes as they are)."""
    replayed = checked.replayed
    if replayed is None:
        return words.say("vf.cannot_replay", lang, problem=said(checked.config_problem, lang))
    rules, state = replayed.config.rules, replayed.engine.state_json()
    score: Any = state["score"]
    english = words.language(lang) == "en"
    name = rules.discipline.name
    return words.say(
        "vf.match", lang,
        discipline=name if english else words.word_or_self("discipline", name, lang),
        length=rules.length if english else words.up_to(rules.length, lang),
        left=rules.names.left, right=rules.names.right,
        score=f"{words.number(score['left'], lang)}-{words.number(score['right'], lang)}",
        phase=state["phase"] if english else words.word_or_self("phase", str(state["phase"]),
                                                                lang))
