"""`gammonclock arbiter` on a Russian match (issue 25): a refused command is said once, on
stderr with its exit status, as in English (the said line that repeats it, "отказано …", is not
printed again on stdout)."""

from __future__ import annotations

from gammonclock.cli.main import main


def test_a_refusal_is_said_once_in_russian(running_ru, capsys) -> None:
    _, state_dir = running_ru
    assert main(["arbiter", "--state-dir", str(state_dir), "deduct", "left", "10m"]) != 0
    captured = capsys.readouterr()
    assert "отказано" not in captured.out, captured.out
    assert captured.err.strip() == ("gammonclock: deduct left 600s: больше половины оставшегося "
                                    "резерва (14:00,0)")
