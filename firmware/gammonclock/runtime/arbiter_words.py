"""An arbiter's command that is not one, said in the arbiter's language (SPEC §15, issue 25).

The core parses the words and raises `ArbiterSyntaxError` with its English message, a `code`
and the `fields` (it imports no words); here the code is said from words.py's catalogue ("arb.*",
a duration's "dur.*") in the match's language, for the socket's and the hall's replies. The
command names, sides, outcomes and values are said as the arbiter types them. An error without a
code the catalogue knows (any other ValueError) is said as it is.
"""

from __future__ import annotations

from gammonclock import words
from gammonclock.core.arbiter import USAGE, ArbiterSyntaxError
from gammonclock.durations import MAX_DIGITS, MAX_DURATION_TEXT, DurationError


def syntax_error_said(exc: BaseException, lang: str) -> str:
    """`exc` (from `parse_command`) in `lang`; its English message when it has no known code."""
    if isinstance(exc, DurationError):
        key = f"dur.{exc.code}"
        if key not in words.WORDS:
            return str(exc)
        return words.say(key, lang, value=exc.shown, max=MAX_DURATION_TEXT, digits=MAX_DIGITS)
    if not isinstance(exc, ArbiterSyntaxError):
        return str(exc)
    fields = exc.fields
    if exc.code == "duration" and isinstance(fields.get("error"), DurationError):
        return syntax_error_said(fields["error"], lang)   # type: ignore[arg-type]
    if exc.code == "usage":
        how = f"arb.how.{fields['name']}"
        usage = words.say(how, lang) if how in words.WORDS else USAGE[str(fields["name"])]
        detail = fields.get("detail")
        if isinstance(detail, BaseException):
            return words.say("arb.usage_after", lang, detail=syntax_error_said(detail, lang),
                             usage=usage)
        return words.say("arb.usage", lang, usage=usage)
    if exc.code == "takes":
        n = fields["n"]
        form = "none" if n == 0 else "one" if n == 1 else "many"
        return words.say(f"arb.takes.{form}", lang, **fields)
    key = f"arb.{exc.code}"
    if key not in words.WORDS:
        return str(exc)
    return words.say(key, lang, **fields)
