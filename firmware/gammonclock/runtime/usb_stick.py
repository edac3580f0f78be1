"""The USB stick (SPEC §13.3): the clock's matches out onto it, the next match's file read off it.

    report = export_to_stick(Path("/run/gammonclock/usb/sda1"), "T7", finished, current, key)
    show(report.summary())                    # "3 matches exported, 1 in progress"
    found = next_match_on_stick(Path("/run/gammonclock/usb/sda1"), "T7")

This runs inside the clock's process on a folder that is the mounted stick (`usb_mount` mounts
it). A stick is a thing people pull out, fill up and write-protect, so every fault of the stick is
a `StickReport.problem` in plain words, never an exception, and the clock's own journals are only
ever opened for reading. Every file goes onto the stick under a temporary name (`.NAME.partial`),
is flushed and fsynced, then renamed: a stick never holds half a file under a final name. A
finished match's journal is written after its CSV and HTML, so a journal already on the stick,
byte for byte the same, means its exports are there too, and re-inserting a stick is quick.

The stick is not trusted: a folder or a temporary name on it that is a symbolic link (ext4 sticks
can hold them) must not lead a write into the clock's own files, nor a read to a match file that
is not on the stick (a `gammonclock/` folder linked to /etc/gammonclock), so links are refused or
removed, never followed: the match file is opened one component at a time from the stick's own
folder (`dir_fd`, O_NOFOLLOW), each on the stick's file system.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import re
import stat
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from gammonclock import words
from gammonclock.config.problems import Problem, Told, message_of, said
from gammonclock.errors import GammonclockError
from gammonclock.export import ExportError, read_match, render
from gammonclock.export.text import integrity_text
from gammonclock.journal.prealloc import written_bytes
from gammonclock.journal.records import JournalError
from gammonclock.journal.verify import Verdict, verify

__all__ = ["EXPORTS_DIR", "MAX_MATCH_FILE", "StickError", "StickReport", "export_to_stick",
           "next_match_on_stick"]

log = logging.getLogger(__name__)

STICK_DIR = "gammonclock"                       # everything of ours on a stick is in here
EXPORTS_DIR = f"{STICK_DIR}/exports"            # ... then one folder per table
MAX_MATCH_FILE = 64 * 1024                      # a match file is a few lines of TOML
PARTIAL_SUFFIX = ".partial"
# The same characters as config key `table.id`: a table id is one safe path component.
TABLE_ID = re.compile(r"[A-Za-z0-9_-]{1,32}")

# The errno values of a stick's three everyday faults, each with what the panels say.
GONE = frozenset({errno.ENOENT, errno.EIO, errno.ENODEV, errno.ENXIO, errno.ESTALE,
                  errno.ENOTDIR, errno.ENOTCONN, errno.ESHUTDOWN})
FULL = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})
READ_ONLY = frozenset({errno.EROFS, errno.EACCES, errno.EPERM})
UNTOUCHED = "the clock's files are untouched"


class StickError(GammonclockError):
    """A stick's match file that cannot be taken; the message names the file and says why."""


@dataclass
class StickReport:
    """What `export_to_stick` did, for the panels and the log."""

    exported: int = 0                   # finished matches on the stick now (this time or before)
    copied: list[str] = field(default_factory=list)   # files written this time, stick-relative
    in_progress: str | None = None      # the in-progress journal's name, when it is on the stick
    problem: str | None = None          # what went wrong, in plain words
    without_html: list[str] = field(default_factory=list)   # matches exported without HTML
    # finished journals that do not verify: copied as they are, their CSV and HTML marked
    tampered: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # for the log: each names the file and why

    @property
    def nothing_new(self) -> bool:
        """Every match was on the stick already: nothing was written this time."""
        return self.problem is None and not self.copied and self.exported > 0

    def summary(self, lang: str = "en") -> str:
        """Short text for the reply: "3 matches exported, 1 in progress", or the problem; in
        `lang` (the table's: SPEC §15), the file names as they are."""
        if self.problem is not None:
            return said(self.problem, lang)
        if self.nothing_new:
            return words.say("usb.nothing_new", lang, n=self.exported)
        text = words.say(f"usb.exported.{'one' if self.exported == 1 else 'many'}", lang,
                         n=self.exported)
        if self.in_progress is not None:
            text += words.say("usb.in_progress", lang)
        if self.without_html:
            text += words.say("usb.without_html", lang, n=len(self.without_html))
        if self.tampered:
            text += words.say("usb.tampered", lang, n=len(self.tampered))
        return text


# --- exporting --------------------------------------------------------------------------------

@dataclass
class _Match:
    """One journal to put on the stick: its bytes as read once from the clock's file."""

    source: Path
    data: bytes
    finished: bool


class _Progress:
    """Counts the files written, to say how far a copy got when the stick failed."""

    def __init__(self, stick: Path, report: StickReport, planned: int) -> None:
        self.stick, self.report, self.planned = stick, report, planned

    def wrote(self, path: Path) -> None:
        self.report.copied.append(path.relative_to(self.stick).as_posix())

    def how_far(self) -> Problem:
        return Problem("usb.how_far", done=len(self.report.copied), planned=self.planned)


def export_to_stick(stick: Path, table_id: str, finished: Sequence[Path],
                    in_progress: Path | None, key: bytes | None) -> StickReport:
    """Copy each finished journal with its CSV and HTML exports, and the in-progress journal as
    it stands, into `stick/gammonclock/exports/TABLE/` (SPEC §13.3).

    With the device `key`, the HTML says whether the journal's seals hold. A fault of the stick
    (pulled out, full, read-only) stops the copy and is the report's `problem`; it never raises.
    """
    report = StickReport()
    if not stick.is_dir():
        report.problem = Problem("usb.no_stick", stick=stick)
        return report
    if not TABLE_ID.fullmatch(table_id):
        report.problem = Problem("usb.bad_table_id", id=repr(table_id))
        return report
    matches = _read_clock_journals(finished, in_progress, report)
    progress = _Progress(stick, report, 0)
    try:
        todo = _not_yet_on_stick(stick, table_id, matches, report)
        progress.planned = sum(3 if match.finished else 1 for match in todo)
        folder = _export_folder(stick, table_id)
        _remove_leftovers(folder)
        for match in todo:
            _put_match(folder, match, key, report, progress)
    except StickError as exc:
        report.problem = Problem("usb.untouched", problem=message_of(exc))
    except OSError as exc:
        report.problem = _fault(exc, progress)
    if report.problem is not None:
        log.warning("USB stick: %s", report.problem)
    return report


def _read_clock_journals(finished: Sequence[Path], in_progress: Path | None,
                         report: StickReport) -> list[_Match]:
    """The journals' bytes, read once (read-only); one that cannot be read is a note."""
    wanted = [(path, True) for path in finished]
    if in_progress is not None:
        wanted.append((in_progress, False))
    matches = []
    for path, done in wanted:
        try:
            matches.append(_Match(path, written_bytes(path), done))   # no zeros ahead
        except OSError as exc:
            _note(report, Problem("usb.note_unreadable", path=path, why=exc.strerror or exc))
    return matches


def _export_folder(stick: Path, table_id: str) -> Path:
    """`stick/gammonclock/exports/TABLE`, made if missing; raises StickError when a part of it
    is not a real folder (a file, or a link that could lead the copy off the stick)."""
    folder = stick
    for part in (*EXPORTS_DIR.split("/"), table_id):
        folder = folder / part
        try:
            os.mkdir(folder)
        except FileExistsError:
            pass
        mode = os.lstat(folder).st_mode
        if stat.S_ISLNK(mode):      # the panels show this line first: it says the load too
            raise StickError(Problem("usb.link", path=folder.relative_to(stick).as_posix()))
        if not stat.S_ISDIR(mode):
            raise StickError(Problem("usb.not_folder", path=folder.relative_to(stick).as_posix()))
    _fsync_dir(folder.parent)
    return folder


def _remove_leftovers(folder: Path) -> None:
    """Temporary files of a copy cut short (a stick pulled out earlier)."""
    with os.scandir(folder) as entries:
        leftovers = [entry.path for entry in entries
                     if entry.name.startswith(".") and entry.name.endswith(PARTIAL_SUFFIX)
                     and not entry.is_dir(follow_symlinks=False)]
    for path in leftovers:
        os.unlink(path)


def _not_yet_on_stick(stick: Path, table_id: str, matches: list[_Match], report: StickReport
                      ) -> list[_Match]:
    """The matches whose journal is not on the stick byte for byte; the others count as done.
    Nothing is looked for through a link: with one on the way, every match is still to do."""
    folder = stick
    for part in (*EXPORTS_DIR.split("/"), table_id):
        folder = folder / part
        try:
            if not stat.S_ISDIR(os.lstat(folder).st_mode):
                return list(matches)
        except (FileNotFoundError, NotADirectoryError):
            return list(matches)
    todo = []
    for match in matches:
        if not _same_on_stick(folder / match.source.name, match.data):
            todo.append(match)
        elif match.finished:
            report.exported += 1
        else:
            report.in_progress = match.source.name
    return todo


def _same_on_stick(path: Path, data: bytes) -> bool:
    """Whether `path` on the stick is a plain file holding exactly `data`."""
    try:
        info = os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):     # not there, or no folder yet
        return False
    if not stat.S_ISREG(info.st_mode) or info.st_size != len(data):
        return False
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    with os.fdopen(fd, "rb") as f:
        return f.read(len(data) + 1) == data


def _put_match(folder: Path, match: _Match, key: bytes | None, report: StickReport,
               progress: _Progress) -> None:
    """A finished match: its CSV and HTML, then its journal (last: the journal on the stick says
    the exports are there). A match in progress: its journal only."""
    name = match.source.name
    if match.finished:
        for export_name, text in _exports(match, key, report, progress):
            _write_file(folder / export_name, text.encode("utf-8"), progress)
    _write_file(folder / name, match.data, progress)
    if match.finished:
        report.exported += 1
    else:
        report.in_progress = name


def _exports(match: _Match, key: bytes | None, report: StickReport, progress: _Progress
             ) -> list[tuple[str, str]]:
    """The CSV and HTML of a finished match as (file name, text); what cannot be made is a
    note (and one file fewer to copy), never a failure of the whole. Both carry the journal's
    verdict (SPEC §14.1): a journal that does not verify is still copied (it is the record),
    its CSV and HTML marked TAMPERED at their top, and the report counts it."""
    stem, source = match.source.stem, match.source
    try:
        record = read_match(source)
    except ExportError as exc:
        _note(report, Problem("usb.note_no_exports", path=source, error=exc))
        progress.planned -= 2
        return []
    verdict = _verdict(source, key, report)
    if verdict is not None and not verdict.intact:
        report.tampered.append(source.name)
        _note(report, Problem("usb.note_tampered", path=source,
                              verdict=Told(verdict.words, lambda lang: integrity_text(
                                  verdict, lang=lang))))
    made = [(f"{stem}.csv", render(record, "csv", verdict))]
    try:
        made.append((f"{stem}.html", render(record, "html", verdict)))
    except ExportError as exc:
        _note(report, Problem("usb.note_no_html", path=source, error=exc))
        report.without_html.append(source.name)
        progress.planned -= 1
    return made


def _verdict(source: Path, key: bytes | None, report: StickReport) -> Verdict | None:
    """The journal's verdict, for its CSV and HTML: the chain always, the seals with the device
    `key`; None when it cannot tell (a record this firmware does not understand)."""
    try:
        return verify(source, key)
    except JournalError as exc:
        _note(report, Problem("usb.note_no_seals", path=source, error=exc))
        return None


def _write_file(path: Path, data: bytes, progress: _Progress) -> None:
    """Write `data` to `path` through `.NAME.partial` in the same folder: written, flushed,
    fsynced, renamed, the folder fsynced. The temporary file is removed if anything fails."""
    temporary = path.with_name(f".{path.name}{PARTIAL_SUFFIX}")
    # A name left on the stick (or planted: a link) goes first; O_EXCL | O_NOFOLLOW then makes
    # sure the bytes go into a new file on the stick and nowhere else.
    temporary.unlink(missing_ok=True)
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o666)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(temporary, path)
    except BaseException:
        _remove_quietly(temporary)
        raise
    _fsync_dir(path.parent)
    progress.wrote(path)


def _remove_quietly(path: Path) -> None:
    """Best effort: a stick that is gone keeps its temporary file, under a name nobody takes
    for the file (and the next copy onto that stick removes it)."""
    try:
        path.unlink(missing_ok=True)
    except OSError:
        pass


def _fsync_dir(folder: Path) -> None:
    """Make the folder's new entries durable; a file system that cannot fsync a folder is
    fine, a stick that is gone is not."""
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    except OSError as exc:
        if exc.errno not in (errno.EINVAL, errno.ENOTSUP, errno.EBADF):
            raise
    finally:
        os.close(fd)


def _fault(exc: OSError, progress: _Progress) -> Problem:
    """The panels' words for a stick's fault, with how far the copy got."""
    done = Problem("usb.untouched", problem=progress.how_far())
    if exc.errno in GONE:
        return Problem("usb.gone", done=done)
    if exc.errno in FULL:
        return Problem("usb.full", done=done)
    if exc.errno in READ_ONLY:
        return Problem("usb.read_only", done=done)
    return Problem("usb.cannot_write", why=exc.strerror or exc, done=done)


def _note(report: StickReport, text: str) -> None:
    log.warning("USB stick: %s", text)
    report.notes.append(text)


# --- the next match ---------------------------------------------------------------------------

def next_match_on_stick(stick: Path, table_id: str) -> tuple[Path, str] | None:
    """The match file on the stick for this table: `gammonclock/TABLE.toml`, else
    `gammonclock/match.toml`, else None; returned as its path and its text, not parsed.

    A leading UTF-8 byte order mark (Windows editors write one) is dropped. Raises StickError,
    naming the file, for one that cannot be read, is not UTF-8, or is larger than 64 KiB, and
    for a match file or a `gammonclock/` folder that is a link or not on the stick's own file
    system: nothing is read through it.
    """
    if not TABLE_ID.fullmatch(table_id):
        raise StickError(Problem("usb.bad_table_file", id=repr(table_id)))
    try:
        root = os.open(stick, os.O_RDONLY | os.O_DIRECTORY)
    except (FileNotFoundError, NotADirectoryError):
        return None                         # no stick: export_to_stick has said so
    except OSError as exc:
        raise StickError(Problem("usb.cannot_read_stick", path=stick, why=exc.strerror or exc)
                         ) from None
    try:
        folder = _open_stick_folder(stick, root)
        if folder is None:
            return None
        try:
            return _find_match_file(stick / STICK_DIR, folder, table_id, os.fstat(root).st_dev)
        finally:
            os.close(folder)
    finally:
        os.close(root)


@contextlib.contextmanager
def our_folder(stick: Path) -> Iterator[tuple[int, int] | None]:
    """The stick's `gammonclock/` folder, opened without following a link, and the stick's
    file system (`st_dev`), for what reads a folder of ours on the stick one step at a time;
    None when there is no stick or no such folder, or the folder cannot be read (the next
    match's reading says why). Closed after."""
    try:
        root = os.open(stick, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        yield None                           # no stick: the export has said so
        return
    try:
        try:
            mine = _open_stick_folder(stick, root)
        except StickError:
            mine = None
        if mine is None:
            yield None
            return
        try:
            yield mine, os.fstat(root).st_dev
        finally:
            os.close(mine)
    finally:
        os.close(root)


def _open_stick_folder(stick: Path, root: int) -> int | None:
    """The stick's `gammonclock/` folder, opened without following a link; None when the stick
    has none (or a file of that name)."""
    path = stick / STICK_DIR
    try:
        info = os.lstat(STICK_DIR, dir_fd=root)
        if stat.S_ISLNK(info.st_mode):
            raise StickError(Problem("usb.cannot_read", path=path, why=Problem(
                "usb.folder_link", dir=STICK_DIR)))
        if not stat.S_ISDIR(info.st_mode):
            return None
        fd = os.open(STICK_DIR, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=root)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        raise StickError(Problem("usb.cannot_read", path=path, why=exc.strerror or exc)
                         ) from None
    if os.fstat(fd).st_dev != os.fstat(root).st_dev:
        os.close(fd)
        raise StickError(Problem("usb.cannot_read", path=path, why=Problem(
            "usb.folder_elsewhere", dir=STICK_DIR)))
    return fd


def _find_match_file(folder_path: Path, folder: int, table_id: str, stick_device: int
                     ) -> tuple[Path, str] | None:
    for name in (f"{table_id}.toml", "match.toml"):
        path = folder_path / name
        try:
            os.lstat(name, dir_fd=folder)
        except (FileNotFoundError, NotADirectoryError):
            continue
        except OSError as exc:
            raise StickError(Problem("usb.cannot_read", path=path, why=exc.strerror or exc)
                             ) from None
        return path, _read_match_file(path, folder, name, stick_device)
    return None


class StickFileRefused(GammonclockError, ValueError):
    """A file on the stick that is not to be read: not a plain file (`plain` False), or one that
    cannot be read (`why`: a link, another file system, the OS's words)."""

    def __init__(self, plain: bool, why: Problem | str | None = None) -> None:
        super().__init__(why)
        self.plain, self.why = plain, why


def plain_file_on_stick(folder: int, name: str, device: int, limit: int) -> bytes:
    """The bytes of `name` in the open stick folder `folder`, at most `limit` + 1 (more: too
    large): a plain file (not a link, a pipe or a device), on the stick's own file system
    (`device`), opened without following a link. FileNotFoundError when it is not there;
    StickFileRefused otherwise. Every file read off a stick is read so (a match file, a
    provisioning set)."""
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=folder)
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise StickFileRefused(True, Problem("usb.file_link") if exc.errno == errno.ELOOP
                               else exc.strerror or str(exc)) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise StickFileRefused(False)
        if info.st_dev != device:
            raise StickFileRefused(True, Problem("usb.file_elsewhere"))
        return _read_at_most(fd, limit + 1)
    except OSError as exc:
        raise StickFileRefused(True, exc.strerror or str(exc)) from None
    finally:
        os.close(fd)


def _read_match_file(path: Path, folder: int, name: str, stick_device: int) -> str:
    """The text of a match file on the stick: a plain file (not a link, a pipe or a device) on
    the stick's file system, of at most MAX_MATCH_FILE bytes of UTF-8."""
    try:
        blob = plain_file_on_stick(folder, name, stick_device, MAX_MATCH_FILE)
    except StickFileRefused as refused:
        raise StickError(Problem("usb.not_plain", path=path) if not refused.plain
                         else Problem("usb.cannot_read", path=path, why=refused.why)) from None
    except OSError as exc:
        raise StickError(Problem("usb.cannot_read", path=path, why=exc.strerror or exc)
                         ) from None
    if len(blob) > MAX_MATCH_FILE:
        raise StickError(Problem("usb.too_large", path=path, kib=MAX_MATCH_FILE // 1024))
    try:
        text = blob.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise StickError(Problem("usb.not_utf8", path=path, byte=exc.start)) from None
    return text.removeprefix("\ufeff")


def _read_at_most(fd: int, limit: int) -> bytes:
    chunks: list[bytes] = []
    size = 0
    while size < limit:
        chunk = os.read(fd, limit - size)
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)
