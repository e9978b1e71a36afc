"""Entry point of ``python -m torch_memopt.bench``; see :mod:`torch_memopt.bench`."""
from .cli import main

raise SystemExit(main())
