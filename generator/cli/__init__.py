"""Stage 3, the `kb` command line: ``commands`` (the parser and every authoring and build command),
``diagnose`` (`kb rules`, `kb diagnose`, `kb eval`), ``workers`` (diagnosis over several
processes) and ``scaffold`` (`kb new`)."""

from generator.cli.commands import main

__all__ = ["main"]
