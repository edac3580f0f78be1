"""check-hardware measures what the journal does: appends into zeros filled ahead, each
`fdatasync`ed, the file's size never changing under them (issue 20)."""

from __future__ import annotations

from gammonclock.device import check as hardware_check
from journal_helpers import record_syncs


def test_the_card_check_times_fdatasyncs_into_a_file_filled_ahead(tmp_path, monkeypatch):
    syncs = record_syncs(monkeypatch)     # (which sync, the file's size then)
    check = hardware_check.measure_card(tmp_path, appends=12, gap_s=0.0)
    assert len(check.syncs_ns) == 12
    # One fsync for the zeros filled ahead, then each append's fdatasync, none growing the file.
    assert [name for name, _ in syncs] == ["fsync"] + ["fdatasync"] * 12
    filled = syncs[0][1]
    assert filled >= 12 * len(hardware_check.CARD_RECORD)
    assert {size for _, size in syncs} == {filled}
    assert list(tmp_path.iterdir()) == []
