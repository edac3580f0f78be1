"""`scripts/install --time-server HOST` (issue 24) into a staging root: the table takes its wall
clock from the director's machine through systemd-timesyncd's drop-in, written once (a second
run changes nothing and says so), changed when the host changes, and a host that is not a host
name or an address is refused before any change."""

from __future__ import annotations

import stat

import pytest

from install_helpers import install, listing, staged

DROPIN = "etc/systemd/timesyncd.conf.d/gammonclock.conf"


def test_the_drop_in_points_timesyncd_at_the_directors_machine(checkout, tmp_path):  # noqa: F811
    out = staged(checkout, tmp_path, "--time-server", "10.0.0.2")
    dropin = tmp_path / DROPIN
    text = dropin.read_text(encoding="utf-8")
    assert "[Time]\nNTP=10.0.0.2\n" in text
    assert stat.S_IMODE(dropin.stat().st_mode) == 0o644
    assert f"install: wrote {dropin}: systemd-timesyncd takes the time from 10.0.0.2" in out
    assert "left for the Pi, not run in a staging root: apt-get install -y systemd-timesyncd" \
        in out
    again = staged(checkout, tmp_path, "--time-server", "10.0.0.2")
    assert "install: nothing changed: everything was already done" in again
    assert f"the time server 10.0.0.2 in {dropin} (already done)" in again


def test_without_the_flag_no_time_is_set_up(checkout, tmp_path):  # noqa: F811
    out = staged(checkout, tmp_path)
    assert not (tmp_path / DROPIN).exists() and "timesyncd" not in out


def test_another_host_rewrites_the_drop_in(checkout, tmp_path):  # noqa: F811
    staged(checkout, tmp_path, "--time-server", "10.0.0.2")
    out = staged(checkout, tmp_path, "--time-server=director.local")
    assert "NTP=director.local\n" in (tmp_path / DROPIN).read_text(encoding="utf-8")
    assert "install: done: 1 changes" in out


def test_a_dry_run_says_it_would_write_the_drop_in(checkout, tmp_path):  # noqa: F811
    before = listing(tmp_path)
    out = staged(checkout, tmp_path, "--dry-run", "--time-server", "fd00::2")
    assert f"install: would write {tmp_path / DROPIN} (NTP=fd00::2, mode 0644)" in out
    assert listing(tmp_path) == before


@pytest.mark.parametrize("host", ["", "-x", "a b", "10.0.0.2\nFallbackNTP=evil", "a;rm",
                                  "x" * 254])
def test_a_host_that_is_not_one_is_refused_before_any_change(checkout, tmp_path, host):  # noqa: F811
    run = install(checkout, tmp_path, "--skip-venv", "--time-server", host)
    assert run.returncode == 1
    assert "--time-server" in run.stderr and "not a host name or an IP address" in run.stderr
    assert list(tmp_path.iterdir()) == []
