"""Module objects for TF's namespaces (og.sparse, og.gfile, og.io, og.math, ...)."""

from __future__ import annotations

import types


def namespace(name: str, doc: str, entries: dict) -> types.ModuleType:
    """A module object `onegraph.<name>` holding `entries` (name -> object), its
    `__all__` their sorted names (TF's tf.<name> namespaces). Never raises."""
    module = types.ModuleType(f"onegraph.{name}", doc)
    for key, value in entries.items():
        setattr(module, key, value)
    module.__all__ = sorted(entries)
    return module
