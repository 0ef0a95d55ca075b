"""The reference ``medh5.errors`` hierarchy over purehdf's ``Medh5Error``:
``MEDH5ValidationError`` is also a ``ValueError``, the file errors are also
the matching ``OSError`` subclasses, so ``except`` clauses written for the
reference catch the same failures."""

from . import _native

MEDH5Error = _native.Medh5Error

__all__ = ["MEDH5Error", "MEDH5FileError", "MEDH5FileNotFoundError", "MEDH5IOError",
           "MEDH5IntegrityError", "MEDH5IsADirectoryError", "MEDH5PermissionError",
           "MEDH5SchemaError", "MEDH5ValidationError", "MEDH5VersionError"]


class MEDH5ValidationError(MEDH5Error, ValueError):
    """A value the format or the API does not allow."""


class MEDH5SchemaError(MEDH5Error):
    """The sample document does not follow the schema."""


class MEDH5IntegrityError(MEDH5Error):
    """Stored digests or the content id do not match the data."""


class MEDH5VersionError(MEDH5Error):
    """A format version this package does not read."""


class MEDH5FileError(MEDH5Error, OSError):
    """A file could not be opened as a sample."""


class MEDH5FileNotFoundError(MEDH5FileError, FileNotFoundError):
    """The path does not exist."""


class MEDH5IsADirectoryError(MEDH5FileError, IsADirectoryError):
    """The path is a directory."""


class MEDH5PermissionError(MEDH5FileError, PermissionError):
    """The path may not be read or written."""


class MEDH5IOError(OSError):
    """An I/O failure below the format (the reference's: not a MEDH5Error)."""
