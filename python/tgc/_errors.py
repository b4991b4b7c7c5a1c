"""Exceptions carrying tgc's messages, and the diagnostics list behind them."""
import threading

from ._lib import lib

OK, INVALID, IO, NOMEM, UNSUPPORTED, RUNTIME = range(6)
_SEVERITY = {0: "error", 1: "warning", 2: "note"}


class Error(Exception):
    """A tgc call failed.

    Attributes
    ----------
    status : str
        tgc's status name ("invalid input", "out of memory", ...).
    diagnostics : list of dict
        One per message: ``file``, ``line``, ``column`` (1-based; 0 when there
        is none), ``severity``, ``rule`` (kebab-case, e.g. ``"unknown-op"``)
        and ``message``. ``str(error)`` gives them as
        ``FILE:LINE:COL: error: MESSAGE [RULE]``, one a line, as the command
        line prints them.
    """

    def __init__(self, status, diagnostics, fallback=""):
        self.status = lib.tgc_status_name(status).decode()
        self.diagnostics = diagnostics
        lines = [_format(d) for d in diagnostics if d["severity"] == "error"] or [_format(d) for d in diagnostics]
        super().__init__("\n".join(lines) if lines else (fallback or self.status))


class InvalidError(Error, ValueError):
    """Input that breaks a rule: a graph file, a feed, an op's shapes or attributes."""


class FileError(Error, OSError):
    """A file could not be opened, read or written."""


class OutOfMemoryError(Error, MemoryError):
    """A device is out of memory or at its limit (the message gives its figures)."""


class UnsupportedError(Error, NotImplementedError):
    """Valid, but tgc cannot do it (yet)."""


class RuntimeFailure(Error, RuntimeError):
    """A kernel or a device failed while running."""


_CLASSES = {INVALID: InvalidError, IO: FileError, NOMEM: OutOfMemoryError, UNSUPPORTED: UnsupportedError,
            RUNTIME: RuntimeFailure}


def _format(d):
    where = d["file"]
    if d["line"] > 0:
        where = "%s:%d:%d" % (where, d["line"], d["column"])
    head = where + ": " if where else ""
    rule = " [%s]" % d["rule"] if d["rule"] else ""
    return "%s%s: %s%s" % (head, d["severity"], d["message"], rule)


def read_diags(d):
    """The messages of tgc_diags `d` as a list of dicts."""
    out = []
    for i in range(lib.tgc_diags_count(d)):
        out.append({"file": (lib.tgc_diag_file(d, i) or b"").decode("utf-8", "replace"),
                    "line": lib.tgc_diag_line(d, i), "column": lib.tgc_diag_column(d, i),
                    "severity": _SEVERITY.get(lib.tgc_diag_severity(d, i), "error"),
                    "rule": (lib.tgc_diag_rule(d, i) or b"").decode(),
                    "message": (lib.tgc_diag_message(d, i) or b"").decode("utf-8", "replace")})
    return out


def error(status, diagnostics=(), fallback=""):
    """The exception for a failed call's status and messages."""
    return _CLASSES.get(status, Error)(status, list(diagnostics), fallback)


class _ThreadDiags(threading.local):
    handle = None


_thread = _ThreadDiags()


def diags():
    """This thread's reusable tgc_diags (empty between calls): the fast path
    makes none per call; a call that fails has its list read and replaced."""
    d = _thread.handle
    if d is None:
        d = _thread.handle = lib.tgc_diags_create()
        if not d:
            raise MemoryError("tgc: no memory for a diagnostics list")
    return d


def take_messages():
    """This thread's messages (a list of dicts, as read_diags), emptied: an
    error's (raise_for), or a successful call's warnings."""
    d = _thread.handle
    if not d or lib.tgc_diags_count(d) == 0:
        return []
    msgs = read_diags(d)
    lib.tgc_diags_free(d)
    _thread.handle = None
    return msgs


def raise_for(status, fallback=""):
    """Raises the error of `status` with this thread's messages, and empties them."""
    raise error(status, take_messages(), fallback)

