"""``python scripts/topology [NAME …]``: set Django up, then run the checks (``run.main``)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "peerrevenue.settings")

import django  # noqa: E402

# Before the checks are imported: they import the project's models.
django.setup()

from scripts.topology.run import main  # noqa: E402

sys.exit(main(sys.argv[1:]))
