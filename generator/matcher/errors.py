"""The exception root shared by the whole ``generator`` package (the matcher included).

It lives in the matcher because the matcher must run alone (in Pyodide, without the rest
of the package); ``generator.errors`` re-exports it and adds the generator's own errors.
"""


class KbError(Exception):
    """Root of every error the package raises on purpose."""


class InputError(KbError):
    """A file, folder or argument given by the user cannot be used."""


class RulesError(KbError):
    """The rules file is missing, of another format version, or not what its hash says."""
