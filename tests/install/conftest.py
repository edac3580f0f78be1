"""The fixtures of the installer's tests."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from install_helpers import ROOT, USB_RULE_SOURCE, USB_UNIT_SOURCE, make_checkout


@pytest.fixture(scope="module")
def checkout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The checkout the installer runs from: this one once it holds every file it installs."""
    if all((ROOT / name).is_file() for name in (USB_RULE_SOURCE, USB_UNIT_SOURCE)):
        return ROOT
    if not (ROOT / ".git").exists() or shutil.which("git") is None:
        pytest.skip("the USB stick's files are not in this checkout yet, and it is not git's")
    return make_checkout(tmp_path_factory.mktemp("checkout"))
