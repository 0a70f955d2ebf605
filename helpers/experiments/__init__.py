"""Each chapter's experiments, one module per chapter (`chNN_<notebook name>.py`): the benchmarks
`python -m helpers.bench` reruns and the readings (ratios, spreads, verdicts) the notebooks print. They build on the
taught code in helpers/chapters; plumbing (the modules directly under `helpers/`) never imports from here.
"""
