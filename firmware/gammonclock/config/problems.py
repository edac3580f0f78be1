"""A config problem that can be said in another language (SPEC §15, issue 25): `gammonclock
check-config` says a Russian config's problems in Russian, the file names, key paths and values
as written kept verbatim.

A `Problem` is a `str` holding the English (every caller that shows, compares or logs a config
error keeps working), that remembers its catalogue id (words.py, "cfg.*") and arguments, as the
panels' `hardware.texts.Text` does. An argument may itself be a Problem (a hint inside a
sentence). A problem line of a `ConfigError` is a `Line`: the key path as written and its
problem. A problem given as a plain str (a check not worded yet, an error of another library)
is said as it is.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable, Iterable, Mapping
from fractions import Fraction

from gammonclock import words


class Problem(str):
    """A problem's English words that remember how to be said in another language."""

    key: str
    args: Mapping[str, object]

    def __new__(cls, key: str, **args: object) -> Problem:
        text = super().__new__(cls, words.say(key, "en", **args))
        text.key, text.args = key, args
        return text

    def said(self, lang: str) -> str:
        return words.say(self.key, lang, **{name: said(value, lang)
                                            for name, value in self.args.items()})


class Counted(str):
    """A number with its noun, in the plural form each language wants ("5 points", "5 очков")."""

    noun: str
    n: int | Fraction

    def __new__(cls, noun: str, n: int | Fraction) -> Counted:
        text = super().__new__(cls, words.counted(noun, n, "en"))
        text.noun, text.n = noun, n
        return text

    def said(self, lang: str) -> str:
        return words.counted(self.noun, self.n, lang)


class Line(str):
    """One line of a ConfigError: "KEY: PROBLEM" (the key as written, shortened)."""

    subject: str
    problem: str

    def __new__(cls, subject: str, problem: str) -> Line:
        text = super().__new__(cls, f"{subject}: {problem}")
        text.subject, text.problem = subject, problem
        return text

    def said(self, lang: str) -> str:
        return f"{self.subject}: {said(self.problem, lang)}"


class Told(str):
    """Words made elsewhere that can be said in any language: the English, and the function
    that says them in `lang` (a ConfigError's lines, a journal's verdict), so that a Problem
    can hold them as an argument and a panel can show them in its language."""

    say: Callable[[str], str]

    def __new__(cls, english: str, say: Callable[[str], str]) -> Told:
        text = super().__new__(cls, english)
        text.say = say
        return text

    def said(self, lang: str) -> str:
        return self.say(lang)


def said(text: object, lang: str) -> str:
    """`text` in `lang`: a Problem or Line in the catalogue's words, anything else as it is."""
    if isinstance(text, (Problem, Line, Counted, Told)):
        return text.said(lang)
    return str(text)


# tomllib's message: "Invalid value (at line 3, column 9)", "… (at end of document)"
_TOML_AT = re.compile(r"(?P<what>.*) \(at (?:line (?P<line>\d+), column (?P<column>\d+)|"
                      r"(?P<end>end of document))\)", re.DOTALL)


def toml_problem(exc: tomllib.TOMLDecodeError) -> Problem:
    """A file that is not TOML: our words around tomllib's own (English, as it says it), the
    place it names said in the catalogue's words."""
    m = _TOML_AT.fullmatch(str(exc))
    if m is None:
        return Problem("cfg.not_toml", error=str(exc))
    if m["end"]:
        return Problem("cfg.not_toml_end", error=m["what"])
    return Problem("cfg.not_toml_at", error=m["what"], line=m["line"], column=m["column"])


def message_of(exc: BaseException) -> str:
    """An error's message: the Problem itself when it was raised with one, its words that say
    themselves when it has a `said` (a ConfigError), else its English."""
    if exc.args and isinstance(exc.args[0], (Problem, Told)):
        return exc.args[0]
    say = getattr(exc, "said", None)
    if callable(say):
        return Told(str(exc), say)
    return str(exc)


def error_lines(path: str, problems: Iterable[str], lang: str) -> str:
    """A ConfigError's text in `lang`: one line per problem, each naming the file (a journal's
    header, "… (header)", said too)."""
    return "\n".join(f"{said(path, lang)}: {said(p, lang)}" for p in problems)


def language_in(text: str) -> str | None:
    """The `[display] language` a config's text asks for, as far as it can be read (a file
    with problems is said in its own language too); None when it says none (or one the clock
    does not speak, or it is not TOML)."""
    try:
        data = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, ValueError, RecursionError):
        return None
    display = data.get("display")
    lang = display.get("language") if isinstance(display, dict) else None
    return lang if lang in words.LANGUAGES else None
