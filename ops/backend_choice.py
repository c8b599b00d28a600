"""The switch between numpy and one optional accelerator (MKL for ops/blas.py, numba for
ops/jit.py): the choice an environment variable asks for, read at first use, changed at
run time by `use`, and the accelerator loaded once, when first wanted."""

from __future__ import annotations

import os
import threading
from typing import Any, Callable

from ..errors import InvalidArgumentError, UnavailableError


class BackendChoice:
    """"auto" (the accelerator when it loads, numpy otherwise), "numpy", or the
    accelerator's `name` (it, or UnavailableError), as asked by the environment
    variable `variable` or by `use`. `load()` returns the loaded accelerator, or None
    when it cannot be loaded; it is called at most once. `install_hint` completes the
    UnavailableError's message (what to install)."""

    def __init__(self, variable: str, name: str, load: Callable[[], Any],
                 install_hint: str):
        self.variable, self.name = variable, name
        self.names = ("auto", "numpy", name)
        self._load, self._hint = load, install_hint
        self._lock = threading.Lock()
        self.choice: str | None = None   # the requested backend, once read
        self.loaded: Any = None          # None: not tried; False: not loadable

    def requested(self) -> str:
        """The backend the environment variable (or `use`) asks for.

        Raises:
            InvalidArgumentError: the variable holds an unknown value.
        """
        if self.choice is None:
            value = os.environ.get(self.variable, "auto").strip().lower() or "auto"
            if value not in self.names:
                raise InvalidArgumentError(
                    f"{self.variable}={value!r}: expected one of {', '.join(self.names)}")
            self.choice = value
        return self.choice

    def active(self) -> Any:
        """The loaded accelerator when the backend is the accelerator, else None.

        Raises:
            InvalidArgumentError: the variable holds an unknown value.
            UnavailableError: the accelerator was asked for by name and does not load.
        """
        choice = self.requested()
        if choice == "numpy":
            return None
        if self.loaded is None:
            with self._lock:
                if self.loaded is None:
                    self.loaded = self._load() or False
        if self.loaded is False:
            if choice == self.name:
                raise UnavailableError(f"{self.variable}={self.name}, but {self._hint}")
            return None
        return self.loaded

    def backend(self) -> str:
        """The backend in use now: the accelerator's name or "numpy".

        Raises:
            InvalidArgumentError: the variable holds an unknown value.
            UnavailableError: the accelerator was asked for by name and does not load.
        """
        return "numpy" if self.active() is None else self.name

    def use(self, name: str, caller: str = "use_backend") -> str:
        """Ask for backend `name` (one of `names`) from now on; the backend now in use.

        Raises:
            InvalidArgumentError: `name` is not one of `names`.
            UnavailableError: the accelerator by name, and it does not load (the
                choice is then unchanged).
        """
        if not isinstance(name, str) or name.strip().lower() not in self.names:
            raise InvalidArgumentError(
                f"{caller}: expected one of {', '.join(self.names)}, got {name!r}")
        before, self.choice = self.choice, name.strip().lower()
        try:
            return self.backend()
        except UnavailableError:
            self.choice = before
            raise

    def reset(self) -> None:
        """Forget the requested backend (the variable is read again at next use)."""
        self.choice = None
