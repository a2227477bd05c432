"""Prefilter engines backed by compiled libraries, for the CLI only.

``re2scan`` (google-re2) and ``hsscan`` (Hyperscan) find the lines worth matching faster than
pure Python. They live below ``matcher/`` but are not part of the browser's copy: the log doctor
ships ``matcher/*.py`` only, and the matcher never imports them (the CLI hands one in).
"""
