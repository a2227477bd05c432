"""GPU Failure Atlas: the corpus, the site and the log matcher, as stages of one data flow.

A failure entry goes ``kb/entries/*.yaml`` -> ``corpus`` (load, validate) -> ``exports``
(rules.json, open data, fleet configurations) and ``site`` (MkDocs pages, search index, the
doctor's files). A log line goes ``cli`` (`kb diagnose`) or the doctor page -> ``matcher`` (read,
parse, match, rank, report), which reads only the compiled rules. ``errors`` holds the package's
one exception root; ``config`` the settings from pyproject.toml; ``atomic`` safe file writes.
"""

__version__ = "0.1.0"
