"""GPU Failure Atlas generator: the entry model, validation, page rendering and the `kb` CLI.

Modules: ``model`` (pydantic entry model), ``load`` (YAML with positions), ``checks``
(validator classes), ``corpus`` (load + check), ``safety`` (content safety), ``render``
(Jinja2 pages), ``config`` (settings), ``cli`` (the ``kb`` command), ``errors``.
"""

__version__ = "0.1.0"
