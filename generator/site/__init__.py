"""Stage 2b, the site: the validated corpus rendered into MkDocs pages and the site's own files.

``mkdocs_hook`` (runs the stage inside every `mkdocs build`/`serve`), ``render`` with
``templates/`` (Markdown pages), ``search_index`` (the header search's index), ``assets`` (the log
doctor's runtime, samples and the open data in the built site), ``csp`` and ``page_guard`` (what a
built page may contain), ``build_lock`` (one build at a time).
"""
