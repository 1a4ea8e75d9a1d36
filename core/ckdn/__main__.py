"""``python -m ckdn`` is the same entry point as the ``ckdn`` console script."""

from ckdn.cli import main

raise SystemExit(main())
