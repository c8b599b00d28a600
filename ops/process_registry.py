"""Python objects that graph nodes name by a token: TF's FuncRegistry.

A node cannot hold a Python callable (a py_func's function, a tf.data pipeline) in a
graph file, so it holds a string token and the object lives here, in this process. A
graph loaded elsewhere names tokens this process never registered; looking one up then
raises ExecutionError saying why, and what to do.
"""

from __future__ import annotations

import itertools
import threading

from ..errors import ExecutionError


class ProcessRegistry:
    """token -> object, tokens "<prefix>_<n>" unique in the process. Lookups take no lock
    (a dict get is atomic); registering and changing entries do, so two threads never
    share a number.

    Args:
        prefix: the tokens' prefix ("pyfunc", "dataset").
        missing: the sentence after "... is not registered in this process" that says
            why an object may be missing and what to do.
    """

    def __init__(self, prefix: str, missing: str):
        self._prefix, self._missing = prefix, missing
        self._items: dict = {}
        self.lock = threading.Lock()
        self._numbers = itertools.count()

    def register(self, item) -> str:
        """Keep `item` under a new token and return the token. Never raises."""
        with self.lock:
            token = f"{self._prefix}_{next(self._numbers)}"
            self._items[token] = item
        return token

    def replace(self, token: str, update) -> None:
        """Set token's entry to update(entry) if there is one. Never raises itself."""
        with self.lock:
            if token in self._items:
                self._items[token] = update(self._items[token])

    def unregister(self, token: str) -> None:
        """Drop `token`'s entry (its graph is gone). Never raises."""
        with self.lock:
            self._items.pop(token, None)

    def __contains__(self, token) -> bool:
        return token in self._items

    def get(self, token: str):
        """The object registered under `token`.

        Raises:
            ExecutionError: none is, in this process.
        """
        item = self._items.get(token)
        if item is None:
            raise ExecutionError(f"the {self._prefix} of token {token!r} is not registered "
                                 f"in this process ({self._missing})")
        return item
