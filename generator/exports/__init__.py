"""Stage 2a, exports: the validated corpus compiled into files other programs read.

``rules`` (rules.json, the only input of the log matcher), ``datasets`` (the open data:
xid.json, xid.csv, entries.json, rules.json) and ``fleet`` (node-problem-detector and Loki ruler
configurations).
"""
