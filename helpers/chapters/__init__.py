"""Each chapter's own experiments, one module per chapter (`chNN_<notebook name>.py`).

The code a chapter teaches is written in its notebook. Where the benchmarks (`python -m helpers.bench`) or the tests
need the same code, it lives here between `# notebook cell: NAME` and `# end of notebook cell` lines, and
`make template` copies it into the notebook cell that names it; `tests/test_template.py` fails when the two differ.
Plumbing (the modules directly under `helpers/`) never imports from here.
"""
