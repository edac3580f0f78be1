"""The hall's `cmd` answers (hall_requests.py) against a loop that is slow to say what it did:
a command answered "unknown" is answered with what the clock actually did once that is known
(as the arbiter socket does), and never applied twice. No broker: the answers are returned."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from gammonclock.core.effects import Refused
from gammonclock.core.engine import Input
from gammonclock.core.reasons import Reason
from gammonclock.link import requests as hall_requests
from gammonclock.link.outbox import HallMemory
from gammonclock.link.requests import HallRequests
from gammonclock.runtime.inbox import Reply, Task
from gammonclock.runtime.lifecycle import LoadOutcome


class SilentLoop:
    """The service as the hall sees it: its loop takes every input at once and says nothing
    of its outcome until the test delivers it."""

    def __init__(self) -> None:
        self.taken: list[Input | Task] = []
        self.replies: list[Reply] = []
        self.session = None

    def submit(self, event: Input | Task, reply: Reply | None = None) -> bool:
        assert reply is not None and reply.take()
        self.taken.append(event)
        self.replies.append(reply)
        return True

    def clock_ns(self) -> int:
        return 0

    def status(self) -> dict[str, object]:
        return {"phase": "scripted"}


@pytest.fixture(autouse=True)
def quick(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(hall_requests, "REPLY_WAIT_S", 0.05)
    monkeypatch.setattr(hall_requests, "OUTCOME_WAIT_S", 0.05)


def requests(loop: SilentLoop, state: Path) -> HallRequests:
    return HallRequests(loop, None, HallMemory(state), lambda *_: None,   # type: ignore[arg-type]
                        match_topic="gammonclock/table-1/match")


def cmd(request_id: str, command: str, **more: str) -> bytes:
    return json.dumps({"id": request_id, "command": command, **more}).encode()


def kept_answer(state: Path, request_id: str) -> dict[str, Any]:
    answer: dict[str, Any] = HallMemory(state).answers[request_id]
    return answer


def test_a_retry_of_an_unknown_outcome_gets_the_outcome_once_it_has_come(tmp_path: Path) -> None:
    loop = SilentLoop()
    hall = requests(loop, tmp_path)
    first = hall.answer(cmd("slow", "deduct left 30s"))
    assert first["outcome"] == "unknown" and first["ok"] is False
    still = hall.answer(cmd("slow", "deduct left 30s"))     # no word yet: still unknown
    assert (still["outcome"], still["repeated"]) == ("unknown", True)
    loop.replies[0].deliver([Refused(0, "deduct left 30s", "more than half the reserve",
                                     Reason.DEDUCT_OVER_HALF)])
    again = hall.answer(cmd("slow", "deduct left 30s"))
    assert (again["outcome"], again["repeated"]) == ("refused", True)
    assert again["code"] == Reason.DEDUCT_OVER_HALF.value
    assert "more than half the reserve" in again["reason"]
    assert len(loop.taken) == 1                               # never applied twice
    assert kept_answer(tmp_path, "slow")["outcome"] == "refused"    # on the card from now on
    assert hall.answer(cmd("slow", "deduct left 30s"))["outcome"] == "refused"


def test_after_a_restart_an_unknown_outcome_stays_unknown(tmp_path: Path) -> None:
    """A restart forgets the Reply: the clock cannot tell any more, and says so."""
    loop = SilentLoop()
    assert requests(loop, tmp_path).answer(cmd("lost", "pause"))["outcome"] == "unknown"
    loop.replies[0].deliver([])
    restarted = requests(loop, tmp_path)
    answer = restarted.answer(cmd("lost", "pause"))
    assert (answer["outcome"], answer["repeated"]) == ("unknown", True)
    assert len(loop.taken) == 1


def test_a_slow_new_match_is_unknown_and_a_retry_gets_its_outcome(tmp_path: Path) -> None:
    """A load the loop took but had not finished is "unknown" (it may well load), never "not
    applied" (a retry would load it again)."""
    loop = SilentLoop()
    hall = requests(loop, tmp_path)
    first = hall.answer(cmd("m-1", "new-match", text="[match]\nlength = 5\n"))
    assert first["outcome"] == "unknown"
    loop.replies[0].deliver([], LoadOutcome(True, ["next match loaded: Anna-Boris, 5 points"]))
    again = hall.answer(cmd("m-1", "new-match", text="[match]\nlength = 5\n"))
    assert (again["outcome"], again["ok"], again["repeated"]) == ("acted", True, True)
    assert again["said"] == ["next match loaded: Anna-Boris, 5 points"]
    assert len(loop.taken) == 1


def test_an_outcome_that_comes_while_waiting_is_answered_at_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(hall_requests, "OUTCOME_WAIT_S", 10.0)   # a loaded machine is slow
    loop = SilentLoop()
    hall = requests(loop, tmp_path)

    def deliver_once_taken() -> None:
        while not loop.replies:
            time.sleep(0.001)
        time.sleep(0.01)
        loop.replies[0].deliver([])
    threading.Thread(target=deliver_once_taken, daemon=True).start()
    answer = hall.answer(cmd("quick", "pause"))
    assert (answer["outcome"], answer["ok"]) == ("acted", True)
    assert "repeated" not in answer


class BusyLoop(SilentLoop):
    """A loop whose queue is full until the test frees it."""

    def __init__(self) -> None:
        super().__init__()
        self.busy = True

    def submit(self, event: Input | Task, reply: Reply | None = None) -> bool:
        return False if self.busy else super().submit(event, reply)


MATCH = b"[match]\nlength = 3\n"


def test_a_match_whose_load_is_unknown_is_never_loaded_again(tmp_path: Path) -> None:
    """The loop took the load and said nothing in time: the same retained text delivered again
    (a reconnect) is not loaded a second time."""
    loop = SilentLoop()
    hall = requests(loop, tmp_path)
    hall.on_match(MATCH)
    assert len(loop.taken) == 1
    hall.on_match(MATCH)                                     # delivered again
    assert len(loop.taken) == 1
    assert HallMemory(tmp_path).match == hall_requests.match_digest(MATCH)


def test_a_match_the_busy_loop_did_not_take_waits_and_is_tried_again(tmp_path: Path) -> None:
    loop = BusyLoop()
    hall = requests(loop, tmp_path)
    hall.on_match(MATCH)
    assert loop.taken == [] and hall.pending_match == MATCH and hall.pending_can_load()
    hall.retry_pending()                                      # still busy: it waits on
    assert loop.taken == [] and hall.pending_match == MATCH
    loop.busy = False
    hall.retry_pending()
    assert len(loop.taken) == 1 and hall.pending_match is None
