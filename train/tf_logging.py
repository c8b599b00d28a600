"""og.logging: TF1's tf.logging over Python's logging, on the logger named "onegraph".

As TF's: level constants DEBUG..FATAL are logging's; the logger gets no level of its own, so
the default verbosity is the root's (WARN unless the program configured logging); a stderr
handler with logging's BASIC_FORMAT is added the first time the logger is used, only when the
root logger has no handlers (so messages are not printed twice); log_every_n and log_first_n
count per call site (file and line). Records name the caller, not this module.
"""

from __future__ import annotations

import logging as _logging
import sys
import threading

from .module_namespace import namespace

__all__ = ["DEBUG", "INFO", "WARN", "ERROR", "FATAL", "get_logger", "set_verbosity",
           "get_verbosity", "log", "debug", "info", "warn", "warning", "error", "fatal",
           "vlog", "log_if", "log_every_n", "log_first_n", "TaskLevelStatusMessage", "flush",
           "logging_namespace"]

DEBUG = _logging.DEBUG
INFO = _logging.INFO
WARN = _logging.WARN
ERROR = _logging.ERROR
FATAL = _logging.FATAL

LOGGER_NAME = "onegraph"

_lock = threading.Lock()
_configured = False
_counts: dict = {}  # (file, line) -> calls so far, for log_every_n / log_first_n


def get_logger() -> _logging.Logger:
    """The "onegraph" logger, given a stderr handler on first use when the root logger has
    none (TF's get_logger)."""
    global _configured
    logger = _logging.getLogger(LOGGER_NAME)
    with _lock:
        if not _configured:
            _configured = True
            if not _logging.getLogger().handlers:
                handler = _logging.StreamHandler(sys.stderr)
                handler.setFormatter(_logging.Formatter(_logging.BASIC_FORMAT))
                logger.addHandler(handler)
    return logger


def _check_level(level) -> int:
    if isinstance(level, bool) or not isinstance(level, int):
        raise TypeError("a logging level is an int (og.logging.INFO, ...), got %r" % (level,))
    return level


def _emit(level, msg, args, kwargs, depth):
    # depth: frames between the user's call and this function, so records name the caller
    get_logger().log(_check_level(level), msg, *args, stacklevel=depth + 1, **kwargs)


def log(level, msg, *args, **kwargs):
    """Logs msg % args at level; TypeError for a non-int level."""
    _emit(level, msg, args, kwargs, 2)


def debug(msg, *args, **kwargs):
    """Logs msg % args at DEBUG."""
    _emit(DEBUG, msg, args, kwargs, 2)


def info(msg, *args, **kwargs):
    """Logs msg % args at INFO."""
    _emit(INFO, msg, args, kwargs, 2)


def warning(msg, *args, **kwargs):
    """Logs msg % args at WARN."""
    _emit(WARN, msg, args, kwargs, 2)


def warn(msg, *args, **kwargs):
    """Logs msg % args at WARN (TF's old name)."""
    _emit(WARN, msg, args, kwargs, 2)


def error(msg, *args, **kwargs):
    """Logs msg % args at ERROR."""
    _emit(ERROR, msg, args, kwargs, 2)


def fatal(msg, *args, **kwargs):
    """Logs msg % args at FATAL; the program goes on, as TF's fatal."""
    _emit(FATAL, msg, args, kwargs, 2)


def vlog(level, msg, *args, **kwargs):
    """Logs msg % args at level (TF's vlog is log)."""
    _emit(level, msg, args, kwargs, 2)


def TaskLevelStatusMessage(msg):
    """Logs msg at ERROR (as TF's)."""
    _emit(ERROR, msg, (), {}, 2)


def log_if(level, msg, condition, *args):
    """Logs msg % args at level when condition is true."""
    if condition:
        _emit(level, msg, args, {}, 2)


def _next_count(depth: int) -> int:
    """0 on the first call from the caller's file and line, then 1, 2, ..."""
    frame = sys._getframe(depth)
    key = (frame.f_code.co_filename, frame.f_lineno)
    with _lock:
        _counts[key] = _counts.get(key, -1) + 1
        return _counts[key]


def log_every_n(level, msg, n, *args):
    """Logs msg % args on the 1st, (n+1)th, (2n+1)th... call from the same line; ValueError
    for n < 1."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError("log_every_n needs a positive int n, got %r" % (n,))
    if _next_count(2) % n == 0:
        _emit(level, msg, args, {}, 2)


def log_first_n(level, msg, n, *args):
    """Logs msg % args on the first n calls from the same line; TypeError for a non-int n."""
    if isinstance(n, bool) or not isinstance(n, int):
        raise TypeError("log_first_n needs an int n, got %r" % (n,))
    if _next_count(2) < n:
        _emit(level, msg, args, {}, 2)


def get_verbosity() -> int:
    """The level at and above which messages are logged (the logger's effective level)."""
    return get_logger().getEffectiveLevel()


def set_verbosity(v) -> None:
    """Logs only messages at level v and above; TypeError for a non-int level."""
    get_logger().setLevel(_check_level(v))


def flush() -> None:
    """Flushes the logger's handlers (TF's own flush raises NotImplementedError)."""
    for handler in get_logger().handlers:
        handler.flush()


logging_namespace = namespace("logging", "TF1's tf.logging.",
                              {n: globals()[n] for n in __all__[:-1]})
