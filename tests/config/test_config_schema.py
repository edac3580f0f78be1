"""The one table of config keys (config_schema.py), and what issue 8 made one of each: the error
base, the back-off helper, and the name tables of the pin factories and the panel drivers.

The device sections of SPEC §13.1 (`[table]`, `[arbiter]`, `[hall]`, `[display]`, `[event]`)
are fields only: each key passes and fails here, row by row, on top of `[match] length = 7`.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
from pathlib import Path

import pytest

import gammonclock
from gammonclock.backoff import Backoff
from gammonclock.config import schema as config_schema
from gammonclock.config.loading import (
    DEFAULT_DEVICE,
    PANEL_DRIVERS,
    PIN_FACTORIES,
    SCHEMA,
    Config,
    ConfigError,
    HallConfig,
    PanelConfig,
    parse_config,
)
from gammonclock.config.schema import (
    DEVICE,
    FIELDS,
    MATCH,
    SECTIONS,
    markdown,
    marked_kinds,
    update_docs,
)
from gammonclock.config.table_id import default_table_id, table_id_from_host
from gammonclock.core.pin import hash_pin
from gammonclock.errors import GammonclockError
from gammonclock.hardware.errors import HardwareError
from gammonclock.sides import Button, Pair

ROOT = Path(__file__).resolve().parents[2]
S = 1_000_000_000
PATH = "table.toml"
BASE = "[match]\nlength = 7\n"


def parsed(extra: str) -> Config:
    return parse_config(BASE + extra, PATH)


def problems(extra: str) -> list[str]:
    with pytest.raises(ConfigError) as info:
        parsed(extra)
    return info.value.problems


def one(key: str, literal: str) -> str:
    """A TOML line setting the dotted `key` in its section."""
    section, name = key.rsplit(".", 1)
    return f"[{section}]\n{name} = {literal}\n"


# --- the new fields: pass ----------------------------------------------------------------------

PASSING = [
    # (key, TOML literal, what to read from the config, expected)
    ("table.id", '"table-12"', lambda c: c.device.table_id, "table-12"),
    ("table.id", '"A"', lambda c: c.device.table_id, "A"),
    ("table.id", '"' + "x" * 32 + '"', lambda c: c.device.table_id, "x" * 32),
    ("table.id", '"T_07"', lambda c: c.device.table_id, "T_07"),
    ("table.event", '"Spring Open 2025"', lambda c: c.device.table_event, "Spring Open 2025"),
    ("table.event", '"Кубок Москвы"', lambda c: c.device.table_event, "Кубок Москвы"),
    ("table.event", '"  Open  "', lambda c: c.device.table_event, "Open"),
    ("arbiter.pin", '"LRCLR"', lambda c: c.device.arbiter_pin, hash_pin("LRCLR")),
    ("arbiter.pin", '"LLLL"', lambda c: c.device.arbiter_pin, hash_pin("LLLL")),
    ("arbiter.pin", '"CRLCRLCR"', lambda c: c.device.arbiter_pin, hash_pin("CRLCRLCR")),
    ("arbiter.chord_s", "1", lambda c: c.device.arbiter_chord_ns, 1 * S),
    ("arbiter.chord_s", "10", lambda c: c.device.arbiter_chord_ns, 10 * S),
    ("arbiter.chord_s", "2.5", lambda c: c.device.arbiter_chord_ns, 2_500_000_000),
    ("arbiter.socket_group", '"gammonclock"', lambda c: c.device.arbiter_socket_group,
     "gammonclock"),
    ("arbiter.socket_group", '"_arbiters-1.x"', lambda c: c.device.arbiter_socket_group,
     "_arbiters-1.x"),
    ("display.language", '"en"', lambda c: c.device.language, "en"),
    ("display.language", '"ru"', lambda c: c.device.language, "ru"),
    ("event.round", '"Round 3"', lambda c: c.event.round, "Round 3"),
    ("event.round", '"Финал"', lambda c: c.event.round, "Финал"),
    ("event.name", '"Spring Open"', lambda c: c.event.name, "Spring Open"),
    ("event.name", '"' + "n" * 60 + '"', lambda c: c.event.name, "n" * 60),
    ("hall.broker", '"mqtt://10.0.0.2:1883"', lambda c: c.device.hall.broker,
     "mqtt://10.0.0.2:1883"),
    ("hall.broker", '"mqtt://broker.local"', lambda c: c.device.hall.broker,
     "mqtt://broker.local"),
    ("hall.broker", '"mqtts://hall.example.org:8883"', lambda c: c.device.hall.broker,
     "mqtts://hall.example.org:8883"),
    ("hall.broker", '"mqtt://[fd00::2]:1883"', lambda c: c.device.hall.broker,
     "mqtt://[fd00::2]:1883"),
]

HALL = '[hall]\nbroker = "mqtt://10.0.0.2:1883"\n'
HALL_KEYS = [
    # (key, literal, what to read from the hall, expected): with a broker set
    ("username", '"table-12"', lambda h: h.username, "table-12"),
    ("password_file", '"/etc/gammonclock/hall.password"', lambda h: h.password_file,
     "/etc/gammonclock/hall.password"),
    ("prefix", '"gammonclock"', lambda h: h.prefix, "gammonclock"),
    ("prefix", '"club/hall-2"', lambda h: h.prefix, "club/hall-2"),
]


@pytest.mark.parametrize("key, literal, read, expected", PASSING,
                         ids=[f"{k}={v[:20]}" for k, v, _, _ in PASSING])
def test_a_valid_value_is_taken(key, literal, read, expected):
    assert read(parsed(one(key, literal))) == expected


@pytest.mark.parametrize("key, literal, read, expected", HALL_KEYS,
                         ids=[f"{k}={v}" for k, v, _, _ in HALL_KEYS])
def test_a_valid_hall_key_is_taken(key, literal, read, expected):
    assert read(parsed(HALL + f"{key} = {literal}\n").device.hall) == expected


def test_a_ca_file_goes_with_mqtts():
    config = parsed('[table]\nid = "T7"\n[hall]\nbroker = "mqtts://hall:8883"\n'
                    'ca_file = "/etc/ca.pem"\n')
    # The account defaults to the table id: the shipped ACL's patterns expect it.
    assert config.device.hall == HallConfig("mqtts://hall:8883", "T7", None, "/etc/ca.pem",
                                            "gammonclock")


def test_the_defaults_of_the_new_fields():
    config = parsed("")
    device = config.device
    assert device.table_id == default_table_id(__import__("socket").gethostname())
    assert (device.table_event, device.arbiter_pin, device.arbiter_socket_group) == ("", None,
                                                                                     None)
    assert device.arbiter_chord_ns == 3 * S
    assert device.hall is None          # no [hall]: no hall
    assert device.language == "en"
    assert (config.event.round, config.event.name) == ("", "")


# --- the new fields: fail ----------------------------------------------------------------------

FAILING = [
    # (id, key, TOML literal, fragment of the problem)
    ("id-empty", "table.id", '""', "1–32 characters"),
    ("id-33", "table.id", '"' + "x" * 33 + '"', "1–32 characters"),
    ("id-space", "table.id", '"table 12"', "A-Z a-z 0-9 _ -"),
    ("id-dot", "table.id", '"t.12"', "is not a table id"),
    ("id-cyrillic", "table.id", '"стол"', "is not a table id"),
    ("id-number", "table.id", "12", "is not a table id"),
    ("event-number", "table.event", "1", "is not text"),
    ("event-61", "table.event", '"' + "e" * 61 + '"', "longer than 60"),
    ("event-newline", "table.event", '"a\\nb"', "control character"),
    ("pin-3", "arbiter.pin", '"LRC"', "4–8 button names"),
    ("pin-9", "arbiter.pin", '"LRCLRCLRC"', "4–8 button names"),
    ("pin-lowercase", "arbiter.pin", '"lrcl"', "is not a PIN"),
    ("pin-other-letter", "arbiter.pin", '"LRXL"', "is not a PIN"),
    ("pin-digits", "arbiter.pin", "1234", "is not a PIN"),
    ("chord-0.5", "arbiter.chord_s", "0.5", "1..10 (seconds)"),
    ("chord-11", "arbiter.chord_s", "11", "1..10 (seconds)"),
    ("chord-string", "arbiter.chord_s", '"3s"', "is not a number"),
    ("group-dash-first", "arbiter.socket_group", '"-x"', "is not a group name"),
    ("group-space", "arbiter.socket_group", '"a b"', "is not a group name"),
    ("group-33", "arbiter.socket_group", '"' + "g" * 33 + '"', "is not a group name"),
    ("language-de", "display.language", '"de"', "is not one of: en, ru"),
    ("language-case", "display.language", '"EN"', "is not one of: en, ru"),
    ("round-61", "event.round", '"' + "r" * 61 + '"', "longer than 60"),
    ("name-table", "event.name", "{a = 1}", "is not text"),
    ("broker-http", "hall.broker", '"http://10.0.0.2"', "mqtt://HOST[:PORT]"),
    ("broker-no-scheme", "hall.broker", '"10.0.0.2:1883"', "is not a broker URL"),
    ("broker-no-host", "hall.broker", '"mqtt://"', "is not a broker URL"),
    ("broker-port-0", "hall.broker", '"mqtt://h:0"', "is not a broker URL"),
    ("broker-port-too-big", "hall.broker", '"mqtt://h:65536"', "is not a broker URL"),
    ("broker-port-word", "hall.broker", '"mqtt://h:port"', "is not a broker URL"),
    ("broker-user", "hall.broker", '"mqtt://me:pw@h:1883"', "is not a broker URL"),
    ("broker-path", "hall.broker", '"mqtt://h/topics"', "is not a broker URL"),
    ("broker-query", "hall.broker", '"mqtt://h?x=1"', "is not a broker URL"),
    ("broker-space", "hall.broker", '"mqtt://a b"', "is not a broker URL"),
    ("broker-number", "hall.broker", "1883", "is not a broker URL"),
]

HALL_FAILING = [
    # (id, hall key, literal, fragment): with a broker set
    ("user-empty", "username", '""', "is not a user name"),
    ("user-colon", "username", '"a:b"', "is not a user name"),
    ("user-space", "username", '"a b"', "is not a user name"),
    ("password-empty", "password_file", '" "', "is not a file path"),
    ("password-number", "password_file", "1", "is not a file path"),
    ("ca-empty", "ca_file", '""', "is not a file path"),
    ("prefix-empty", "prefix", '""', "is not a topic prefix"),
    ("prefix-wildcard", "prefix", '"a/#"', "is not a topic prefix"),
    ("prefix-plus", "prefix", '"a/+/b"', "is not a topic prefix"),
    ("prefix-leading-slash", "prefix", '"/a"', "is not a topic prefix"),
    ("prefix-double-slash", "prefix", '"a//b"', "is not a topic prefix"),
]


@pytest.mark.parametrize("key, literal, fragment", [r[1:] for r in FAILING],
                         ids=[r[0] for r in FAILING])
def test_a_bad_value_names_the_key_and_what_is_allowed(key, literal, fragment):
    found = problems(one(key, literal))
    assert len(found) == 1, found
    assert found[0].startswith(f"{key}: ") and fragment in found[0], found


@pytest.mark.parametrize("key, literal, fragment", [r[1:] for r in HALL_FAILING],
                         ids=[r[0] for r in HALL_FAILING])
def test_a_bad_hall_value(key, literal, fragment):
    [problem] = problems(HALL + f"{key} = {literal}\n")
    assert problem.startswith(f"hall.{key}: ") and fragment in problem, problem


@pytest.mark.parametrize("hall, key, fragment", [
    ('[hall]\nusername = "t"\n', "hall.broker", "required in [hall]"),
    ("[hall]\n", "hall.broker", "required in [hall]"),
    ('[hall]\nbroker = "mqtt://h"\nca_file = "/ca.pem"\n', "hall.ca_file", "mqtts://"),
    ('[hall]\nbroker = "mqtt://h"\nport = 1883\n', "hall.port", "unknown key"),
], ids=["no-broker", "empty-section", "ca-without-tls", "unknown-key"])
def test_the_checks_across_hall_keys(hall, key, fragment):
    [problem] = problems(hall)
    assert problem.startswith(f"{key}: ") and fragment in problem, problem


@pytest.mark.parametrize("hostname, table_id", [
    ("raspberrypi", "raspberrypi"),
    ("table-12.local", "table-12"),          # the short name
    ("Table_7", "Table_7"),
    ("pi 4 (hall)", "pi4hall"),              # characters outside A-Z a-z 0-9 _ - left out
    ("x" * 40, "x" * 32),                    # cut to 32
    ("", "gammonclock"),                     # nothing left: a fixed name
    ("стол", "gammonclock"),
])
def test_the_default_table_id_from_the_host_name(hostname, table_id):
    assert table_id_from_host(hostname) == table_id
    assert re.fullmatch(r"[A-Za-z0-9_-]{1,32}", table_id_from_host(hostname))


# --- the table is the one source ---------------------------------------------------------------

def test_the_schema_is_the_table():
    assert {f"{s}.{k}" for s, keys in SCHEMA.items() for k in keys} == {f.key for f in FIELDS}
    assert len({f.key for f in FIELDS}) == len(FIELDS)
    assert set(SECTIONS) == set(SCHEMA)     # every section is a match or a device section
    assert set(SECTIONS.values()) == {MATCH, DEVICE}
    assert all(f.doc for f in FIELDS)


def test_the_default_device_is_the_reference_build():
    # The values DEFAULT_DEVICE had when it was written out by hand (hardware_docs/).
    d = DEFAULT_DEVICE
    assert d.pin_factory == "lgpio"
    assert d.button_pins == {Button.LEFT: 17, Button.RIGHT: 27, Button.CUBE: 22}
    assert (d.buzzer_pin, d.buzzer_enabled, d.low_time_ns) == (18, False, 30 * S)
    assert d.panels == Pair(PanelConfig("ssd1306", 1, 0x3C, 0, 255),
                            PanelConfig("ssd1306", 1, 0x3D, 0, 255))
    assert (d.dice_port, d.dice_baudrate) == (None, 9600)
    assert (d.state_dir, d.checkpoint_ns) == ("/var/lib/gammonclock", 5 * S)
    assert parsed("").device == d           # a file without device keys: the same


def test_problems_come_in_the_order_of_the_table():
    with pytest.raises(ConfigError) as info:
        parse_config('[hall]\nprefix = "#"\nbroker = 1\n[time]\ndelay = "x"\n'
                     '[match]\nlength = 7\ndiscipline = "x"\n', PATH)
    found = info.value.problems
    assert [p.split(": ", 1)[0] for p in found] == [
        "match.discipline", "time.delay", "hall.broker", "hall.prefix"]


# --- the docs are in step with the table -------------------------------------------------------

@pytest.mark.parametrize("doc, kinds", [
    ("README.md", ["match", "device"]),
    ("hardware_docs/config.md", ["device"]),
])
def test_the_docs_key_tables_are_generated_from_the_table(doc, kinds):
    text = (ROOT / doc).read_text(encoding="utf-8")
    assert marked_kinds(text) == kinds
    assert update_docs(text) == text, (
        f"{doc} is not in step with config_schema.py; run "
        f"`python -m gammonclock.config.schema --update {doc}`")


def test_every_key_is_in_the_docs():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    device = (ROOT / "hardware_docs/config.md").read_text(encoding="utf-8")
    for f in FIELDS:
        assert f"| `{f.key}` |" in readme
        if SECTIONS[f.section] == DEVICE:
            assert f"| `{f.key}` |" in device


def test_a_stale_table_is_rewritten(tmp_path, capsys):
    doc = tmp_path / "doc.md"
    doc.write_text("intro\n<!-- config-keys match -->\n| old |\n<!-- end config-keys match -->\n"
                   "outro\n", encoding="utf-8")
    assert config_schema.main(["--update", str(doc)]) == 0
    assert doc.read_text(encoding="utf-8") == ("intro\n<!-- config-keys match -->\n"
                                               + markdown("match")
                                               + "<!-- end config-keys match -->\noutro\n")
    assert config_schema.main(["--markdown", "device"]) == 0
    assert capsys.readouterr().out == markdown("device")


def test_the_example_in_the_device_docs_is_a_valid_config():
    text = (ROOT / "hardware_docs/config.md").read_text(encoding="utf-8")
    [example] = re.findall(r"```toml\n(.*?)```", text, re.DOTALL)
    device = parsed(example).device
    assert (device.table_id, device.hall and device.hall.username) == ("table-12", "table-12")


# --- the pairs: one table each -----------------------------------------------------------------

def test_the_pin_factories_are_one_table():
    from gammonclock.hardware.buttons import make_pin_factory

    for name in PIN_FACTORIES:
        assert parsed(one("hardware.pin_factory", f'"{name}"')).device.pin_factory == name
    with pytest.raises(HardwareError, match="use one of: " + ", ".join(PIN_FACTORIES)):
        make_pin_factory("pigpio")
    factory = make_pin_factory("mock")
    try:
        assert type(factory).__name__ == PIN_FACTORIES["mock"].factory.rsplit(".", 1)[1]
    finally:
        factory.close()


def test_the_panel_drivers_are_one_table():
    import luma.oled.device

    from gammonclock.hardware import panels

    for driver in PANEL_DRIVERS:   # each name is a panel class that luma.oled.device has
        assert inspect.isclass(getattr(luma.oled.device, driver, None)), driver
        assert parsed(one("displays.left.driver", f'"{driver}"')).device.panels.left.driver \
            == driver
        panels.Panel.from_config(PanelConfig(driver, 1, 0x3C, 0, 255), "left panel")
    [problem] = problems(one("displays.left.driver", '"st7735"'))
    assert problem.endswith("is not one of: " + ", ".join(PANEL_DRIVERS))


# --- one error base ----------------------------------------------------------------------------

def _exception_classes() -> list[type[BaseException]]:
    found = []
    for module in pkgutil.walk_packages(gammonclock.__path__, "gammonclock."):
        if module.name.endswith("__main__"):
            continue                        # running it is the command line
        loaded = importlib.import_module(module.name)
        found += [c for c in vars(loaded).values()
                  if inspect.isclass(c) and issubclass(c, BaseException)
                  and c.__module__ == loaded.__name__]
    return found


def test_every_error_of_the_package_derives_from_gammonclock_error():
    classes = _exception_classes()
    assert len(classes) >= 20               # the walk found them (ConfigError, JournalError, …)
    assert [c.__qualname__ for c in classes if not issubclass(c, GammonclockError)] == []


@pytest.mark.parametrize("module, name, builtin", [
    ("gammonclock.config.loading", "ConfigError", ValueError),
    ("gammonclock.durations", "DurationError", ValueError),
    ("gammonclock.sim.script", "ScriptError", ValueError),
    ("gammonclock.core.dice", "DiceSyntaxError", ValueError),
    ("gammonclock.core.arbiter", "ArbiterSyntaxError", ValueError),
    ("gammonclock.journal.inputs", "InputError", ValueError),
    ("gammonclock.journal.records", "Damaged", ValueError),
    ("gammonclock.runtime.arbiter_requests", "RequestError", ValueError),
    ("gammonclock.runtime.arbiter_client", "BadReply", ValueError),
    ("gammonclock.hardware.errors", "HardwareError", RuntimeError),
])
def test_an_error_keeps_its_builtin(module, name, builtin):
    cls = getattr(importlib.import_module(module), name)
    assert issubclass(cls, GammonclockError) and issubclass(cls, builtin)


def test_a_config_error_is_caught_as_a_gammonclock_error():
    with pytest.raises(GammonclockError):
        parse_config("[match]\nlength = 0\n", PATH)


# --- one back-off ------------------------------------------------------------------------------

@pytest.mark.parametrize("initial, maximum, delays", [
    (500, 30_000, [500, 1000, 2000, 4000, 8000, 16_000, 30_000, 30_000]),   # the panels (ms)
    (0.5, 10.0, [0.5, 1.0, 2.0, 4.0, 8.0, 10.0, 10.0]),                   # the dice reader (s)
    (30, 10.0, [30, 10.0, 10.0]),          # an initial wait over the cap is taken once, as ever
    (1, 1, [1, 1, 1]),
])
def test_the_delays_double_up_to_the_maximum(initial, maximum, delays):
    backoff = Backoff(initial, maximum)
    assert [backoff.failed() for _ in delays] == delays


def test_a_success_starts_over():
    backoff = Backoff(5, 100)
    assert [backoff.failed() for _ in range(3)] == [5, 10, 20]
    assert backoff.next_delay == 40
    backoff.succeeded()
    assert backoff.next_delay == 5 and backoff.failed() == 5


def test_the_next_attempt_is_due_on_the_callers_clock():
    backoff = Backoff(10, 1000)
    assert backoff.ready(0)                 # nothing failed yet
    assert backoff.failed_at(100) == 110
    assert not backoff.ready(109) and backoff.ready(110)
    assert backoff.failed_at(110) == 130    # the second wait is twice the first
    assert not backoff.ready(129) and backoff.ready(130)
