"""docs/threat-model.md held to the code (SPEC §14.1, issue 31): every row of its tables names a
test that tries that surface hostile, every test it names exists, and every route of the
director's page and every topic of the hall's ACL has its row. A new surface is not done without
its row: adding a route or a topic without one fails here."""

from __future__ import annotations

import ast
import re
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "threat-model.md"
TEST = re.compile(r"`(tests/[\w/]+\.py)::(\w+)`")


def rows() -> list[tuple[str, list[str]]]:
    """(section, cells) of every row of the doc's tables whose last column is the hostile test."""
    found, section, in_table = [], "", False
    for line in DOC.read_text(encoding="utf-8").splitlines():
        if line.startswith("## "):
            section = line[3:]
        if not line.startswith("|"):
            in_table = False
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if not in_table:
            in_table = cells[-1] == "hostile test"
            continue
        if set(line) <= set("|-: "):
            continue
        found.append((section, cells))
    return found


@cache
def defined_in(path: str) -> frozenset[str]:
    tree = ast.parse((ROOT / path).read_text(encoding="utf-8"))
    return frozenset(node.name for node in ast.walk(tree)
                     if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
                     and node.name.startswith("test_"))


def test_every_row_names_a_hostile_test_that_exists() -> None:
    table_rows = rows()
    assert len(table_rows) > 40, "the doc's tables were not found"
    for section, cells in table_rows:
        named = TEST.findall(cells[-1])
        assert named, f"{section}: the row {cells[0]!r} names no test"
        for path, name in named:
            assert (ROOT / path).is_file(), f"{section}, {cells[0]}: no file {path}"
            assert name in defined_in(path), f"{section}, {cells[0]}: no test {name} in {path}"


def test_every_test_named_anywhere_in_the_doc_exists() -> None:
    for path, name in TEST.findall(DOC.read_text(encoding="utf-8")):
        assert (ROOT / path).is_file(), f"no file {path}"
        assert name in defined_in(path), f"no test {name} in {path}"


def test_every_route_of_the_directors_page_has_its_row() -> None:
    from gammonclock.hall.server import Hall, HallOptions
    from gammonclock.hall.web import make_app
    from gammonclock.wire import BrokerURL

    hall = Hall(HallOptions(BrokerURL.parse("mqtt://127.0.0.1:1"), "hall", "x",
                            archive=Path("/nonexistent")))
    app = make_app(hall)
    named = {(method, path) for section, cells in rows() if section.startswith("7.")
             for method, path in re.findall(r"`(GET|POST|PUT|DELETE) ([^`]+)`", cells[0])}
    for route in app.router.routes():
        if route.method == "HEAD" or route.resource is None:
            continue
        info = route.resource.get_info()
        path = info.get("path") or info.get("formatter") or info["prefix"].rstrip("/") + "/"
        assert (route.method, path) in named, (
            f"{route.method} {path}: no row in docs/threat-model.md §7")


def test_every_topic_of_the_halls_acl_has_its_row() -> None:
    acl = (ROOT / "hall" / "acl").read_text(encoding="utf-8")
    topics = set(re.findall(r"pattern (?:read|write) gammonclock/%u/([\w/]+)", acl))
    assert {"events", "journal", "match", "cmd", "ack", "moved"} <= topics, topics
    doc = "\n".join(cells[0] for section, cells in rows() if section[:2] in ("5.", "6."))
    for topic in sorted(topics):
        assert f"`P/T/{topic}`" in doc, f"P/T/{topic}: no row in docs/threat-model.md §5–6"
