"""`python -m helpers.bench NAME [--json]`: see helpers/bench/__init__.py."""

import gc
import sys

from helpers.bench import main

status = main()
gc.freeze()  # spare the garbage collector's last pass over TensorFlow's objects at exit (about 2 s)
sys.exit(status)
