"""Stage 1, the corpus: entry files in, a validated corpus out.

``categories`` (the categories, dependency-free), ``model`` (the pydantic entry model), ``load``
(YAML with positions), ``safety`` (what entry text may hold), ``literals`` and ``regex_budget``
(static and timed analysis of signature patterns), ``checks`` (validators beyond the model),
``validated`` (the Corpus: every file loaded, every check run, one failure with all problems),
and the authoring tools ``fmt`` (canonical layout) and ``fieldref`` (the contributor guide's
field reference).

Nothing is imported here, so that importing ``generator.corpus.categories`` stays cheap.
"""
