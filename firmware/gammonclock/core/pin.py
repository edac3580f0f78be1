"""The arbiter's PIN as the clock keeps it (SPEC §13.4): a salted, slow hash, never the PIN.

A PIN is 4–8 button letters (`L`, `R`, `C`). The device config may give it in clear
(`[arbiter] pin = "LRCLR"`, read on the device only) or as its hash (`pin_hash`); either way the
rules the engine uses hold the hash (`PinCheck`), and a journal's header is written with the
hash in place of the clear PIN (`redact_pin`), so a journal, its exports, a stick's copy and the
hall never hold the PIN.

The hash is scrypt over the letters, written with its parameters:

    scrypt$14$8$1$<salt, base64>$<digest, base64>      (log2 N, r, p; a 16-byte salt)

There are only 9 801 PINs and their length shows, so a salted slow hash alone falls to a search
on a laptop in minutes. The clock therefore keys the hash by its device key (the key that seals
its journals, which never leaves the Pi's card): the password scrypt hashes is
HMAC-SHA256(pepper, letters), where pepper = HMAC-SHA256(device key, "gammonclock arbiter PIN").
Such a hash is written `scrypt-k$…`; without the key no PIN can be tried against it. A journal
written with a device key holds the keyed hash; an unkeyed `scrypt$…` (a hand-written pin_hash,
a run without a key) still works as before.

An entry at the panels is judged by the same function over the letters entered
(`PinCheck.digest`, which needs the pepper for a keyed hash); what the journal keeps of an entry
is that digest, and a replay compares it with the hash's (`PinCheck.matches`, in constant time):
no PIN and no key needed. The pepper rides in the `PinCheck` in memory only (never compared,
printed or written). A clear PIN is hashed once per process and pepper (`hash_pin` caches), with
a fresh random salt each time the process starts. Whether a clear PIN is the one a hash holds
(the same match file again, after a restart) is verified against that hash (`redact_pin_as`),
never by hashing it again with a new salt: the hash verified is then the one `hash_pin` gives.

`python -m gammonclock.pin` (gammonclock/pin.py, outside the core: it reads the device key)
prints a hash for the device config.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import re
import secrets
import tomllib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from functools import cache
from threading import Lock

from gammonclock.errors import GammonclockError
from gammonclock.sides import Button

SCHEME = "scrypt"
KEYED_SCHEME = "scrypt-k"          # the password is HMAC(pepper, letters): see the module doc
PEPPER_LABEL = b"gammonclock arbiter PIN"
LOG_N, R, P = 14, 8, 1             # 16 MiB and ~0.1 s per hash on a laptop core
SALT_BYTES = 16
DIGEST_BYTES = 32
# What a pin_hash may ask for: bounded, so that no config makes an entry take seconds or the
# memory of a Pi (scrypt needs 128 × r × N bytes).
LOG_N_RANGE = (10, 16)
R_RANGE = (1, 16)
P_RANGE = (1, 4)
MAX_MEMORY = 64 * 1024 * 1024
# What each parameter of a hash is, for a person reading why it is refused (the config's words
# for it, in each language, are words.py's "cfg.pin_hash.param.NAME").
SCRYPT_PARAMETERS = {"log2 N": "scrypt cost (log2 N, the 2nd field)",
                     "r": "scrypt block size (r, the 3rd field)",
                     "p": "scrypt parallelism (p, the 4th field)"}
PIN_LETTERS = {"L": Button.LEFT, "R": Button.RIGHT, "C": Button.CUBE}
LETTERS = {button: letter for letter, button in PIN_LETTERS.items()}
MAX_PIN = 8                        # an entry ends at the 8th press at the latest
HASH_HINT = ('a hash as `python -m gammonclock.pin PIN [--key FILE]` prints it: '
             '"scrypt-k$14$8$1$<salt base64>$<digest base64>" (or "scrypt$…", unkeyed)')

_HASH = re.compile(r"(scrypt|scrypt-k)\$(\d{1,2})\$(\d{1,2})\$(\d)\$([A-Za-z0-9+/]+={0,2})\$"
                   r"([A-Za-z0-9+/]+={0,2})", re.ASCII)


class PinHashError(GammonclockError, ValueError):
    """A pin_hash that is not one this firmware makes and can check: the English message, and
    a `code` with its `fields` for a caller that words it in another language (the core imports
    no words): "form"; "not_base64" and "not_our_base64" (what); "range" (name, value, low,
    high); "memory" (mib); "salt_size"; "digest_size" (n)."""

    def __init__(self, message: str, code: str, **fields: object) -> None:
        super().__init__(message)
        self.code, self.fields = code, fields


class PinKeyMissing(GammonclockError, RuntimeError):
    """An entry's digest asked of a keyed hash without its device's key (a replay, an export,
    the hall): only the clock that holds the key can compute one; a replay only compares."""


def pepper_of(key: bytes) -> bytes:
    """The PIN's pepper from a device key (derived: the key itself is never a hash's input)."""
    return hmac.new(key, PEPPER_LABEL, hashlib.sha256).digest()


def _password(pin: str, pepper: bytes | None) -> bytes:
    """What scrypt hashes: the letters, or for a keyed hash HMAC(pepper, letters)."""
    text = pin.encode("ascii")
    return text if pepper is None else hmac.new(pepper, text, hashlib.sha256).digest()


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _unb64(text: str, what: str) -> bytes:
    try:
        data = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise PinHashError(f"its {what} is not base64", "not_base64", what=what) from None
    if _b64(data) != text:
        raise PinHashError(f"its {what} is not base64 as written by this firmware",
                           "not_our_base64", what=what)
    return data


@dataclass(frozen=True)
class PinCheck:
    """What the engine knows of the PIN: its hash (`hashed`, as the config and the header
    write it). `legacy_pin` is set only for a journal written before the hash existed (its header
    holds the PIN in clear and its PIN taps as button edges): that journal replays as it was
    written, judged by the letters; `locked_chord_stands` likewise for one written before a
    chord during a lockout was undone."""

    hashed: str
    legacy_pin: str | None = None
    # A journal written before a chord during a lockout was undone (issue 31; its header has
    # no `lockout_chord`): that chord's presses acted as presses, and it replays so.
    locked_chord_stands: bool = False
    # A journal written before the menu had "match moved" (issue 31, the same header mark):
    # its presses replay on the menu it was played on.
    menu_without_moved: bool = False
    # A keyed hash's pepper (`pepper_of` the device key): in memory only, on the clock that
    # holds the key. Never compared (a replay's check equals the live one), printed or written.
    pepper: bytes | None = field(default=None, repr=False, compare=False)

    @staticmethod
    def parse(text: str) -> PinCheck:
        """The check of a pin_hash; PinHashError saying what is wrong."""
        _parts(text)
        return PinCheck(text)

    @property
    def keyed(self) -> bool:
        """A hash keyed by a device key (`scrypt-k$…`)."""
        return self.hashed.startswith(KEYED_SCHEME + "$")

    @property
    def can_digest(self) -> bool:
        """Whether this check can compute an entry's digest (a keyed one needs the pepper)."""
        return not self.keyed or self.pepper is not None

    def with_key(self, pepper: bytes | None) -> PinCheck:
        """This check able to compute digests with `pepper` (`pepper_of` the device key) when
        the hash is keyed; an unkeyed hash (or no pepper) is returned as it is."""
        if pepper is None or not self.keyed or self.pepper == pepper:
            return self
        return replace(self, pepper=pepper)

    def digest(self, buttons: Sequence[Button]) -> str:
        """The digest of the buttons entered, with this hash's salt and parameters (base64).
        PinKeyMissing for a keyed hash without its pepper: never a digest that cannot match."""
        if not self.can_digest:
            raise PinKeyMissing("the arbiter PIN's hash is keyed by a device key this process "
                                "does not hold: an entry's digest can only be computed on "
                                "the clock itself (a replay compares the journaled digests)")
        log_n, r, p, salt, _ = _parts(self.hashed)
        pepper = self.pepper if self.keyed else None
        return _b64(_scrypt(_password(letters(buttons), pepper), salt, log_n, r, p))

    def matches(self, digest: str) -> bool:
        """Whether an entry's digest is the PIN's (constant time)."""
        want = _b64(_parts(self.hashed)[4])
        return hmac.compare_digest(digest.encode("ascii", "replace"), want.encode("ascii"))


def _parts(text: str) -> tuple[int, int, int, bytes, bytes]:
    m = _HASH.fullmatch(text) if isinstance(text, str) and len(text) <= 200 else None
    if m is None:
        raise PinHashError(f"it is not {HASH_HINT}", "form")
    log_n, r, p = int(m[2]), int(m[3]), int(m[4])
    for value, (low, high), name in ((log_n, LOG_N_RANGE, "log2 N"), (r, R_RANGE, "r"),
                                     (p, P_RANGE, "p")):
        if not low <= value <= high:
            raise PinHashError(f"its {SCRYPT_PARAMETERS[name]} is {value}; {low}..{high} is "
                               "allowed", "range", name=name, value=value, low=low, high=high)
    if 128 * r * (1 << log_n) > MAX_MEMORY:
        raise PinHashError(f"its parameters ask scrypt for more than {MAX_MEMORY // 2**20} MiB "
                           "of memory (128 × r × 2^log2 N bytes)", "memory",
                           mib=MAX_MEMORY // 2**20)
    salt, digest = _unb64(m[5], "salt"), _unb64(m[6], "digest")
    if not 8 <= len(salt) <= 64:
        raise PinHashError("its salt must be 8..64 bytes", "salt_size")
    if len(digest) != DIGEST_BYTES:
        raise PinHashError(f"its digest must be {DIGEST_BYTES} bytes", "digest_size",
                           n=DIGEST_BYTES)
    return log_n, r, p, salt, digest


def _scrypt(password: bytes, salt: bytes, log_n: int, r: int, p: int) -> bytes:
    n = 1 << log_n
    return hashlib.scrypt(password, salt=salt, n=n, r=r, p=p,
                          maxmem=2 * 128 * r * n * p + 1024 * 1024, dklen=DIGEST_BYTES)


def letters(buttons: Iterable[Button]) -> str:
    return "".join(LETTERS[b] for b in buttons)


def make_hash(pin: str, salt: bytes | None = None, pepper: bytes | None = None) -> str:
    """A pin_hash of `pin` (letters), with a fresh random salt unless one is given; keyed
    (`scrypt-k$…`) with `pepper` (`pepper_of` the device key)."""
    salt = secrets.token_bytes(SALT_BYTES) if salt is None else salt
    scheme = SCHEME if pepper is None else KEYED_SCHEME
    return (f"{scheme}${LOG_N}${R}${P}${_b64(salt)}$"
            f"{_b64(_scrypt(_password(pin.upper(), pepper), salt, LOG_N, R, P))}")


# The checks of the clear PINs this process has hashed or verified, by (PIN, pepper).
_HASHED: dict[tuple[str, bytes | None], PinCheck] = {}
_HASHED_LOCK = Lock()


def hash_pin(pin: str, pepper: bytes | None = None) -> PinCheck:
    """The check of a clear PIN, keyed with `pepper` when given: hashed once per process and
    pepper (the config is read at every start and every new match; the header written then must
    hold the very hash the engine uses, so the cache never forgets one: there are only 9 801
    PINs). A hash this process verified the PIN against first (a resumed match's: `adopt`) is
    that one, not hashed again."""
    with _HASHED_LOCK:
        check = _HASHED.get((pin, pepper))
    if check is None:
        made = PinCheck(make_hash(pin, pepper=pepper), pepper=pepper)
        with _HASHED_LOCK:
            check = _HASHED.setdefault((pin, pepper), made)   # a race's loser takes the first
    return check


def is_pin(check: PinCheck, pin: str) -> bool:
    """Whether the clear `pin` is the one `check` holds: verified against its hash (one scrypt
    per hash, PIN and pepper in a process), never hashed anew. False when `check` cannot tell (a
    keyed hash without its pepper; a journal's from before the hash, which holds the PIN in
    clear and is no hash of this firmware's to keep)."""
    if check.legacy_pin is not None or not check.can_digest:
        return False
    pepper = check.pepper if check.keyed else None
    with _HASHED_LOCK:
        hashed_here = _HASHED.get((pin, pepper))
    if hashed_here is not None and hashed_here.hashed == check.hashed:
        return True                 # the hash this process made of it, or verified before
    found = _is_pin(check.hashed, pin.upper(), pepper)
    if found:
        with _HASHED_LOCK:          # that hash is now this PIN's, as if hashed here
            _HASHED.setdefault((pin, pepper), check)
    return found


@cache
def _is_pin(hashed: str, pin: str, pepper: bytes | None) -> bool:
    log_n, r, p, salt, digest = _parts(hashed)
    return hmac.compare_digest(_scrypt(_password(pin, pepper), salt, log_n, r, p), digest)


# --- a config text with the PIN in clear -------------------------------------------------------

_PIN_LINE = re.compile(r'^([ \t]*)pin([ \t]*=[ \t]*)("[LRC]{4,8}"|\'[LRC]{4,8}\')'
                       r"([ \t]*(?:#[^\r\n]*)?\r?)$", re.MULTILINE)
_TABLE = re.compile(r"^[ \t]*\[+[ \t]*([^\]\r\n]*?)[ \t]*\]+[ \t]*(?:#[^\r\n]*)?\r?$",
                    re.MULTILINE)


class RedactError(GammonclockError, ValueError):
    """A config text whose clear PIN cannot be replaced safely (written in an unusual form)."""


def clear_pin(data: dict[str, object]) -> str | None:
    """The clear PIN a parsed config holds (`[arbiter] pin`), if any."""
    arbiter = data.get("arbiter")
    pin = arbiter.get("pin") if isinstance(arbiter, dict) else None
    return pin if isinstance(pin, str) else None


def redact_pin(text: str, pepper: bytes | None = None) -> str:
    """`text` with its `[arbiter] pin = "…"` replaced by `pin_hash = "<hash>"` (the hash the
    engine uses, `hash_pin`, keyed with `pepper` when given); a text without a clear PIN is
    returned as it is. RedactError when the PIN is written in a form this cannot replace on its
    own line under `[arbiter]` (an inline table, a dotted key, a multi-line string…): then
    nothing may be written."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise RedactError(f"not valid TOML: {exc}") from None
    pin = clear_pin(data)
    if pin is None:
        return text
    return _replaced(text, pin, hash_pin(pin, pepper))


def redact_pin_as(text: str, check: PinCheck | None) -> str | None:
    """`text` as a journal's header kept it when its PIN's hash was `check`: its clear PIN
    replaced by `check`'s very hash if it is that PIN (`is_pin`: verified, not hashed again with
    a new salt, which would never be the same text); None if it is another PIN (or none where
    `check` is one, or one where `check` is none), or `check` cannot tell. A text without a
    clear PIN is returned as it is. RedactError as `redact_pin`."""
    try:
        pin = clear_pin(tomllib.loads(text))
    except tomllib.TOMLDecodeError as exc:
        raise RedactError(f"not valid TOML: {exc}") from None
    if pin is None:
        return text
    if check is None or not is_pin(check, pin):
        return None
    return _replaced(text, pin, check)


def _replaced(text: str, pin: str, check: PinCheck) -> str:
    """`text` with the clear `pin` of its `[arbiter]` replaced by `pin_hash = check's hash`."""
    found = [m for m in _PIN_LINE.finditer(text) if _table_at(text, m.start()) == "arbiter"]
    if len(found) != 1:
        raise RedactError("[arbiter] pin is written in a form the clock cannot keep out of "
                          'its journals; write it on a line of its own: pin = "LRCLR"')
    m = found[0]
    redacted = (text[:m.start()] + f'{m[1]}pin_hash{m[2]}"{check.hashed}"{m[4]}'
                + text[m.end():])
    try:
        after = tomllib.loads(redacted)
    except tomllib.TOMLDecodeError:
        raise RedactError("[arbiter] pin cannot be replaced by its hash in this text") from None
    arbiter = after.get("arbiter")
    if clear_pin(after) is not None or not isinstance(arbiter, dict) \
            or arbiter.get("pin_hash") != check.hashed:
        raise RedactError("[arbiter] pin cannot be replaced by its hash in this text")
    if re.search(rf"(?<![A-Za-z]){pin}(?![A-Za-z])", redacted.replace(check.hashed, "")):
        raise RedactError("the PIN is written elsewhere in the file too (a comment, a name?); "
                          "the clock would copy it into its journals: remove it")
    return redacted


def _table_at(text: str, offset: int) -> str | None:
    """The name of the TOML table a line at `offset` is in ("" at the top)."""
    name = ""
    for m in _TABLE.finditer(text, 0, offset):
        name = m[1].replace(" ", "").replace('"', "")
    return name
