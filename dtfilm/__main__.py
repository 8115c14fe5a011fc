from __future__ import annotations

import sys

from dtfilm.cli import main

sys.exit(main())
