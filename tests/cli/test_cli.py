"""`gammonclock simulate` end to end (SPEC §9): JSON on stdout, exit 2 with file and line (or
file and key) on bad input, refusals are not errors, a readable account without --json."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from gammonclock.cli.main import main
from gammonclock.config.loading import load_config
from gammonclock.sim.script import load_script
from gammonclock.sim.simulate import simulate

CONFIG = """\
[match]
length = 7
[players]
left = "Anna"
right = "Boris"
"""

SPEC_KEYS = {"phase", "game", "match_length", "score", "crawford_game", "cube", "running",
             "clock", "breaks_left", "winner", "end_reason", "flag"}


@pytest.fixture
def files(tmp_path):
    """Writes a config and a script into tmp_path; returns their paths."""
    def write(script: str, config: str = CONFIG) -> tuple[Path, Path]:
        config_path, script_path = tmp_path / "table.toml", tmp_path / "match.script"
        config_path.write_text(config, encoding="utf-8")
        script_path.write_text(textwrap.dedent(script), encoding="utf-8")
        return config_path, script_path
    return write


def run(capsys, config: Path, script: Path, *, as_json: bool = True) -> tuple[int, str, str]:
    argv = ["simulate", "--config", str(config), "--script", str(script)]
    code = main(argv + (["--json"] if as_json else []))
    out, err = capsys.readouterr()
    return code, out, err


def state(capsys, config: Path, script: Path) -> dict:
    """The final state of a run that must succeed, from the one JSON line on stdout."""
    code, out, err = run(capsys, config, script)
    assert (code, err) == (0, "")
    assert len(out.strip().splitlines()) == 1   # one JSON object, nothing else
    return json.loads(out)


def reserves(s: dict) -> tuple[int, int]:
    return s["clock"]["left"]["reserve_ms"], s["clock"]["right"]["reserve_ms"]


# --- the final state ------------------------------------------------------------------------

def test_the_json_has_the_shape_of_spec_9(capsys, files):
    # Right starts; right ran 5 s (inside the 12 s delay), left 20 s (8 s charged), right 5 s.
    s = state(capsys, *files("""
        0 tap left
        5 tap right
        25 tap left
        30 end
    """))
    assert SPEC_KEYS <= set(s)
    assert {k: s[k] for k in SPEC_KEYS} == {
        "phase": "running", "game": 1, "match_length": 7,
        "score": {"left": 0, "right": 0}, "crawford_game": False,
        "cube": {"value": 1, "owner": None, "enabled": True},
        "running": "right",
        "clock": {"left": {"reserve_ms": 832_000}, "right": {"reserve_ms": 840_000}},
        "breaks_left": {"left": 1, "right": 1},
        "winner": None, "end_reason": None, "flag": None,
    }


def test_before_anything_happens(capsys, files):
    s = state(capsys, *files("10 end\n"))
    assert (s["phase"], s["game"], s["running"]) == ("between_games", 1, None)
    assert reserves(s) == (840_000, 840_000)


def test_a_game_ended_by_a_default_hold(capsys, files):
    # Right holds (default hold: hold_s + 0.5 s) to enter "right wins single"; left confirms.
    s = state(capsys, *files("""
        0 tap left
        5 hold right
        8 tap left
        9 end
    """))
    assert (s["phase"], s["game"], s["running"]) == ("between_games", 2, None)
    assert s["score"] == {"left": 0, "right": 1}
    assert reserves(s) == (840_000, 840_000)


def test_an_exact_decimal_delay_from_the_config(capsys, files):
    # delay = 31.9 s exactly: right's 40 s turn is charged 8.1 s, to the millisecond.
    config = "[time]\ndelay = 31.9\n" + CONFIG
    s = state(capsys, *files("0 tap left\n40 tap right\n41 end\n", config))
    assert reserves(s) == (840_000, 831_900)


def test_reserve_ms_is_rounded_down(capsys, files):
    config = "[time]\ndelay = 0\n" + CONFIG
    s = state(capsys, *files("0 tap left\n1.0005 end\n", config))
    assert reserves(s) == (840_000, 838_999)


# --- refused or ignored actions are not errors ----------------------------------------------

REFUSALS = [
    # (id, script, what the state shows)
    ("deduct-over-half", "0 tap left\n1 arbiter deduct left 10m\n2 end",
     {"clock": {"left": {"reserve_ms": 840_000}, "right": {"reserve_ms": 840_000}}}),
    ("double-on-the-first-turn", "0 tap left\n1 tap cube\n2 end",
     {"phase": "running", "running": "right", "cube": {"value": 1, "owner": None,
                                                       "enabled": True}}),
    ("out-of-turn-tap", "0 tap left\n1 tap left\n2 end", {"phase": "running", "running": "right"}),
    ("resume-when-not-paused", "0 tap left\n1 arbiter resume\n2 end",
     {"phase": "running", "running": "right"}),
    ("break-before-game-1", "0 hold left\n3 end",
     {"phase": "between_games", "breaks_left": {"left": 1, "right": 1}}),
    ("score-at-the-length", "1 arbiter score 7 0\n2 end", {"score": {"left": 0, "right": 0}}),
]


@pytest.mark.parametrize("script, expected", [r[1:] for r in REFUSALS],
                         ids=[r[0] for r in REFUSALS])
def test_a_refused_action_is_not_an_error(capsys, files, script, expected):
    s = state(capsys, *files(script + "\n"))
    assert {k: s[k] for k in expected} == expected


def test_a_deduct_of_exactly_half_is_allowed(capsys, files):
    # The contrast to the refused 10 m: the same words with 7 m act (fine point 11).
    s = state(capsys, *files("0 tap left\n1 arbiter deduct left 7m\n2 end\n"))
    assert reserves(s) == (420_000, 840_000)


# --- bad input: exit 2, a clear message on stderr -------------------------------------------

BAD_SCRIPTS = [
    # (id, script, line, fragment)
    ("unknown-action", "0 tap left\n# note\n5 frob right\n", 3, "frob"),
    ("time-backwards", "5 tap left\n4 tap right\n", 2, "backwards"),
    ("bad-arbiter-words", "0 tap left\n1 arbiter deduct left 30x\n", 2, "30x"),
    ("bad-button", "0 tap pedal\n", 1, "pedal"),
    ("bad-time", "0 tap left\nsoon tap right\n", 2, "soon"),
]


@pytest.mark.parametrize("script, line, fragment", [r[1:] for r in BAD_SCRIPTS],
                         ids=[r[0] for r in BAD_SCRIPTS])
def test_a_bad_script(capsys, files, script, line, fragment):
    config, script_path = files(script)
    code, out, err = run(capsys, config, script_path)
    assert (code, out) == (2, "")
    assert f"{script_path}:{line}:" in err and fragment in err


BAD_CONFIGS = [
    # (id, config, key paths named)
    ("no-unit", CONFIG + '[time]\ndelay = "12"\n', ["time.delay"]),
    ("missing-length", '[players]\nleft = "Anna"\n', ["match.length"]),
    ("unknown-key", CONFIG + "[buttons]\nhold = 2\n", ["buttons.hold"]),
    ("several", CONFIG.replace("length = 7", "length = 100") + "[buttons]\nhold_s = 9\n",
     ["match.length", "buttons.hold_s"]),
    ("not-toml", "[match\nlength = 7\n", []),
]


@pytest.mark.parametrize("config, keys", [r[1:] for r in BAD_CONFIGS],
                         ids=[r[0] for r in BAD_CONFIGS])
def test_a_bad_config(capsys, files, config, keys):
    config_path, script = files("0 tap left\n", config)
    code, out, err = run(capsys, config_path, script)
    assert (code, out) == (2, "")
    assert str(config_path) in err
    for key in keys:
        assert any(str(config_path) in line and key in line for line in err.splitlines()), err


@pytest.mark.parametrize("missing", ["config", "script"])
def test_a_missing_file(capsys, files, tmp_path, missing):
    config, script = files("0 tap left\n")
    nowhere = tmp_path / "nowhere.txt"
    config, script = (nowhere, script) if missing == "config" else (config, nowhere)
    code, out, err = run(capsys, config, script)
    assert (code, out) == (2, "")
    assert str(nowhere) in err


def test_simulate_without_a_script(capsys, files):
    # Without a script the interactive simulator opens; --json belongs to scripted runs.
    config, _ = files("")
    assert main(["simulate", "--config", str(config), "--json"]) == 2
    assert "--script" in capsys.readouterr().err


def test_interactive_simulator_without_a_window_or_terminal_says_so(capsys, files, monkeypatch):
    for name in ("DISPLAY", "WAYLAND_DISPLAY", "SDL_VIDEODRIVER"):
        monkeypatch.delenv(name, raising=False)
    config, _ = files("")
    assert main(["simulate", "--config", str(config)]) == 2
    assert "window or a terminal" in capsys.readouterr().err


# --- the readable account -------------------------------------------------------------------

def test_without_json_one_line_per_effect_then_the_state(capsys, files):
    config, script = files("""
        0 tap left
        5 tap right
        6 tap cube
        7 arbiter deduct left 10m
        8 hold right
        12 tap left
        13 end
    """)
    effects = []
    rules = load_config(config).rules
    parsed = load_script(script, rules.hold_ns)
    simulate(rules, parsed.inputs, parsed.end, observe=lambda _, new: effects.extend(new))

    code, out, err = run(capsys, config, script, as_json=False)
    assert (code, err) == (0, "")
    lines = out.splitlines()
    account, final = lines[:lines.index("{")], "\n".join(lines[lines.index("{"):])
    assert len(account) == len(effects) > 5
    for line, effect in zip(account, effects):
        assert effect.describe() in line
        assert "Anna" in line and "Boris" in line   # both reserves, by the players' names
    code, out, _ = run(capsys, config, script)
    assert json.loads(final) == json.loads(out)


# --- the installed command ------------------------------------------------------------------

def test_the_installed_command(files):
    config, script = files("0 tap left\n5 tap right\n10 end\n")
    command = shutil.which("gammonclock", path=str(Path(sys.executable).parent))
    argv = [command] if command else [sys.executable, "-m", "gammonclock"]
    done = subprocess.run(argv + ["simulate", "--config", str(config), "--script", str(script),
                                  "--json"], capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stderr) == (0, "")
    s = json.loads(done.stdout)
    assert (s["phase"], s["running"]) == ("running", "left")
    assert reserves(s) == (840_000, 840_000)


def test_the_installed_command_on_a_bad_script(files):
    config, script = files("0 tap left\n1 tap nobody\n")
    argv = [sys.executable, "-m", "gammonclock"]
    done = subprocess.run(argv + ["simulate", "--config", str(config), "--script", str(script),
                                  "--json"], capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout) == (2, "")
    assert f"{script}:2:" in done.stderr


def test_the_readmes_11_point_example_journals_verifies_and_exports(tmp_path, capsys):
    root = Path(__file__).resolve().parents[2]
    journal, state = tmp_path / "match11.jsonl", str(tmp_path)
    assert main(["simulate", "--config", str(root / "config" / "backgammon_11.toml"),
                 "--script", str(root / "examples" / "match11.script"),
                 "--journal", str(journal), "--state-dir", state, "--json"]) == 0
    final = json.loads(capsys.readouterr().out)
    assert (final["phase"], final["match_length"], final["winner"]) == ("match_over", 11, "left")
    assert main(["verify", str(journal), "--state-dir", state]) == 0
    assert "intact" in capsys.readouterr().out
    for fmt in ("csv", "json", "html"):
        out = tmp_path / f"match11.{fmt}"
        assert main(["export", str(journal), "--format", fmt, "--out", str(out),
                     "--state-dir", state]) == 0
        assert out.stat().st_size > 1000
    exported = json.loads((tmp_path / "match11.json").read_text())
    assert exported["final_state"] == final
    assert "data:image/png;base64," in (tmp_path / "match11.html").read_text()
    # The script's arbiter lines are the script's (issue 19: the report said "By: unknown").
    assert {a["author"] for a in exported["arbiter_actions"]} == {"script"}
    assert "<td>unknown</td>" not in (tmp_path / "match11.html").read_text()


@pytest.mark.parametrize("speed, per_record", [(None, False), ("1000", True)])
def test_a_scripted_journal_is_fsynced_once_in_virtual_time_and_per_record_when_paced(
        tmp_path, capsys, monkeypatch, speed, per_record):
    import os

    import gammonclock.journal.writer as journal_module
    root = Path(__file__).resolve().parents[2]
    synced: list[int] = []
    real_fsync = os.fsync
    monkeypatch.setattr(journal_module.os, "fsync", lambda fd: synced.append(fd) or real_fsync(fd))
    real_datasync = os.fdatasync       # the journal's sync
    monkeypatch.setattr(journal_module.os, "fdatasync",
                        lambda fd: synced.append(fd) or real_datasync(fd))
    journal = tmp_path / "demo.jsonl"
    script = tmp_path / "short.script"
    script.write_text("0 tap left\n30 tap right\n60 tap left\n90 end\n")
    args = ["simulate", "--config", str(root / "config" / "backgammon.toml"), "--script",
            str(script), "--journal", str(journal), "--state-dir", str(tmp_path), "--json"]
    assert main(args + (["--speed", speed] if speed else [])) == 0
    lines = [json.loads(line) for line in journal.read_text().splitlines()]
    records = len(lines)
    empty_ticks = [r for r in lines if r["kind"] == "tick" and not r["data"]["effects"]]
    if per_record:
        # As on a device: each record synced, but the bare 5-s checkpoints (written at once,
        # synced with the next record, or alone 30 s after the last sync).
        assert records - len(empty_ticks) <= len(synced) < records
        assert len(empty_ticks) >= 10        # the 5-s checkpoints of 90 s of play, as on a device
    else:
        assert len(synced) <= 4    # the new key and its folder, the journal once and its folder
        assert empty_ticks[:-1] == []        # no checkpoints: no power to lose (the last: the end)
    assert main(["verify", str(journal), "--state-dir", str(tmp_path)]) == 0


@pytest.mark.parametrize("argv, dies_on_a_closed_pipe", [
    (["hall", "--broker", "mqtt://127.0.0.1:1"], False),  # the hall: a reader gone is no death
    (["run", "--config", "x.toml"], False),                # the clock itself
    (["check-config", "x.toml"], True),                    # `… | head` ends quietly
])
def test_only_one_shot_commands_die_on_a_closed_pipe(monkeypatch, argv, dies_on_a_closed_pipe):
    """A program that serves until stopped keeps Python's SIGPIPE ignored: a write to a socket
    whose other end went (the broker dropping the hall's connection, a page's reader) is an
    error on that write. The hall process died of SIGPIPE under bench_hostile's attack."""
    import argparse
    import signal

    import gammonclock.cli.main as cli

    seen: list[object] = []
    real = cli.build_parser()

    class Parser:
        """The real parser; the command's handler only notes SIGPIPE's disposition."""

        def parse_args(self, given: list[str] | None) -> argparse.Namespace:
            args = real.parse_args(given)
            args.handler = lambda _args: seen.append(signal.getsignal(signal.SIGPIPE)) or 0
            return args

    parser = Parser
    monkeypatch.setattr(cli, "build_parser", parser)
    before = signal.signal(signal.SIGPIPE, signal.SIG_IGN)
    try:
        assert main(argv) == 0
    finally:
        signal.signal(signal.SIGPIPE, before)
    assert (seen == [signal.SIG_DFL]) is dies_on_a_closed_pipe


def test_every_file_the_halls_help_names_is_where_it_says(capsys):
    """`gammonclock hall --help` named hall/broker/public.conf, where the checkout has
    hall/public.conf (issue 32): every hall/… path the help names is a file of the checkout."""
    import re

    with pytest.raises(SystemExit):
        main(["hall", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    named = set(re.findall(r"\bhall/[\w./-]*\w", text))
    assert {"hall/public.conf", "hall/public-hall.acl"} <= named, named
    root = Path(__file__).resolve().parents[2]
    for path in sorted(named):
        assert (root / path).is_file(), f"the help names {path}, which is not in the checkout"
