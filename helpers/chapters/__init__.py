"""The code the chapters teach, one module per notebook (`chNN_<notebook name>.py`), generated from the notebook's
exported cells by `make export` (tools/export.py): edit the notebook, never these files. Later chapters and the
benchmarks import from here, as chapter 4 uses chapter 1's `measure`.
"""
