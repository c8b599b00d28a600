"""onegraph.compat.v1: TF's tf.compat.v1, which here is onegraph's own API (graph mode
only), plus the switches TF1 programs call to leave TF2's eager mode.

    import onegraph.compat.v1 as tf
    tf.disable_eager_execution()
    x = tf.placeholder(tf.float32, [None, 3])
"""

from __future__ import annotations


def disable_eager_execution() -> None:
    """Nothing to do: onegraph always builds graphs (TF's disable_eager_execution).
    Never raises."""


def disable_v2_behavior() -> None:
    """Nothing to do: onegraph behaves as TF1 (TF's disable_v2_behavior). Never
    raises."""


def executing_eagerly() -> bool:
    """False: onegraph builds graphs and runs them in Sessions. Never raises."""
    return False


def enable_eager_execution(config=None, device_policy=None, execution_mode=None) -> None:
    """Refused: onegraph has no eager mode.

    Raises:
        NotImplementedError: always.
    """
    raise NotImplementedError("onegraph has no eager execution: build a graph and run it "
                              "with og.Session")


def __getattr__(name: str):
    # everything else is onegraph's API (og.placeholder, og.nn, og.train, ...)
    import onegraph

    if name.startswith("__"):
        raise AttributeError(name)
    return getattr(onegraph, name)


def __dir__() -> list:
    import onegraph

    return sorted(set(globals()) | set(dir(onegraph)))
