"""What some tests need beyond the README's light test install, declared once: a skip with its reason where it is
missing. The training extra (torch, torchvision, Ultralytics: several GB) comes with ``pip install -e ".[train]"``
(``.ci/run`` installs it in a step of its own); ``../shared`` (the real photos, the rule seeds) lies beside the
repository on the project's machines and in CI."""

from __future__ import annotations

from importlib.util import find_spec

import pytest

from vision.runtime import realdata

TRAIN_EXTRA = 'the train extra: pip install -e ".[train]"'

needs_torch = pytest.mark.skipif(find_spec("torch") is None, reason=f"needs torch, {TRAIN_EXTRA}")

REAL_PHOTOS = realdata.default_root()
"""The labelled real photos (``$RUMMIKUB_REAL_DATA`` or ``../shared/data/rummikub-nvypk-train``)."""

needs_real_photos = pytest.mark.skipif(
    not (REAL_PHOTOS / "images").is_dir(),
    reason=f"needs the real photos in {REAL_PHOTOS} (../shared/data beside the repository, or RUMMIKUB_REAL_DATA)",
)
