"""Record what TF1's tf.make_template does in the scenarios of
tests/train/test_make_template.py: the variables it creates and shares, the names of
the ops of each call, the values in a Session, its properties and its errors.

Needs tensorflow (not a onegraph dependency); run it by hand when the scenarios change:

    /tmp/s51/tfvenv/bin/python tools/record_tf_make_template.py

It writes tests/train/data/tf1_make_template_reference.json ({scenario: {...}}). Names
are recorded without TF's ":0" output suffix (onegraph names tensors without it).
"""

from __future__ import annotations

import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "tests", "train", "data",
                   "tf1_make_template_reference.json")


def _names(items) -> list:
    """Names of variables or tensors without TF's ":0" (onegraph's have none)."""
    return [t.name[:-2] if t.name.endswith(":0") else t.name for t in items]


def _error(exc: Exception) -> dict:
    """Type and message of an error: its first line, and whether TF appended the
    template's definition site."""
    text = str(exc)
    return {"type": type(exc).__name__, "first_line": text.split("\n")[0],
            "annotated": "\n\noriginally defined at:\n" in text}


class Scenarios:
    """One method per scenario; each builds in a fresh graph and returns a dict.

    `tf` is tensorflow.compat.v1 here; tests/train/test_make_template.py runs the same
    scenarios with onegraph in its place.
    """

    def __init__(self, tf):
        self.tf = tf

    def _linear(self, x):
        tf = self.tf
        w = tf.get_variable("w", [2, 3], initializer=tf.constant_initializer(
            [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]))
        b = tf.get_variable("b", [3], initializer=tf.constant_initializer(0.5))
        return tf.add(tf.matmul(x, w), b, name="out")

    def _x(self, k: float):
        return self.tf.constant([[k, 2.0 * k]], name="x")

    def _values(self, outs) -> list:
        tf = self.tf
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(tf.local_variables_initializer())
            return [v.tolist() for v in sess.run(outs)]

    def _globals(self) -> dict:
        tf = self.tf
        return {"global": _names(tf.global_variables()),
                "trainable": _names(tf.trainable_variables()),
                "local": _names(tf.local_variables())}

    def _props(self, t) -> dict:
        scope = t.variable_scope
        return {"name": t.name, "variable_scope_name": t.variable_scope_name,
                "scope_name": None if scope is None else scope.name,
                "variables": _names(t.variables),
                "trainable_variables": _names(t.trainable_variables),
                "non_trainable_variables": _names(t.non_trainable_variables),
                "global_variables": _names(t.global_variables),
                "local_variables": _names(t.local_variables)}

    def repeat(self) -> dict:
        """One template called three times."""
        t = self.tf.make_template("linear", self._linear)
        before = self._props(t)
        outs = [t(self._x(k)) for k in (1.0, 2.0, 3.0)]
        return {"before": before, "after": self._props(t), "outs": _names(outs),
                "values": self._values(outs), **self._globals()}

    def two_templates(self) -> dict:
        """Two templates from one name, each called twice."""
        tf = self.tf

        def scale(x):
            s = tf.get_variable("s", [], initializer=tf.constant_initializer(3.0))
            return tf.multiply(x, s, name="scaled")

        a = tf.make_template("scale", scale)
        b = tf.make_template("scale", scale)
        outs = [a(self._x(1.0)), b(self._x(2.0)), a(self._x(3.0)), b(self._x(4.0))]
        return {"a": self._props(a), "b": self._props(b), "outs": _names(outs),
                "values": self._values(outs), **self._globals()}

    def create_scope_now(self) -> dict:
        """The scope is made at construction; a later template of the same name."""
        tf = self.tf
        t = tf.make_template("linear", self._linear, create_scope_now_=True)
        before = self._props(t)
        outs = [t(self._x(1.0)), t(self._x(2.0))]
        later = tf.make_template("linear", self._linear)
        outs.append(later(self._x(3.0)))
        return {"before": before, "after": self._props(t), "later": self._props(later),
                "outs": _names(outs), "values": self._values(outs), **self._globals()}

    def unique_name(self) -> dict:
        """unique_name_ overrides name_; a second template of that name fails."""
        tf = self.tf
        t = tf.make_template("ignored", self._linear, unique_name_="custom")
        outs = [t(self._x(1.0)), t(self._x(2.0))]
        now = tf.make_template("other", self._linear, unique_name_="fixed",
                               create_scope_now_=True)
        now_before = self._props(now)
        outs.append(now(self._x(3.0)))
        twin = tf.make_template("ignored", self._linear, unique_name_="custom")
        try:
            twin(self._x(4.0))
            twin_error = None
        except ValueError as e:
            twin_error = _error(e)
        return {"t": self._props(t), "now_before": now_before, "now": self._props(now),
                "twin_error": twin_error, "outs": _names(outs),
                "values": self._values(outs), **self._globals()}

    def kwargs(self) -> dict:
        """Keyword arguments bound at make time; a call's own override them."""
        tf = self.tf

        def my_op(x, scalar_name, factor=1.0):
            v = tf.get_variable(scalar_name, [], initializer=tf.constant_initializer(1.5))
            return tf.multiply(x * factor, v, name="prod")

        t = tf.make_template("scale_by_y", my_op, scalar_name="y", factor=2.0)
        outs = [t(self._x(1.0)), t(self._x(2.0), factor=3.0)]
        return {"t": self._props(t), "outs": _names(outs), "values": self._values(outs),
                **self._globals()}

    def new_trainable_error(self) -> dict:
        """tf.Variable (trainable) in func: fine once, an error on the second call."""
        tf = self.tf

        def bad(x):
            v = tf.Variable(2.0, name="v")
            return x * v

        t = tf.make_template("bad", bad)
        t(self._x(1.0))
        after_first = self._globals()
        try:
            t(self._x(2.0))
            err = None
        except ValueError as e:
            err = _error(e)
        return {"after_first": after_first, "error": err, **self._globals()}

    def non_trainable_variable(self) -> dict:
        """tf.Variable(trainable=False) in func: allowed, one more per call."""
        tf = self.tf

        def counted(x):
            c = tf.Variable(0.0, trainable=False, name="counter")
            w = tf.get_variable("w", [], initializer=tf.constant_initializer(4.0))
            return tf.add(x * w, c, name="sum")

        t = tf.make_template("tmpl", counted)
        outs = [t(self._x(1.0)), t(self._x(2.0))]
        return {"t": self._props(t), "outs": _names(outs), "values": self._values(outs),
                **self._globals()}

    def _inner_fn(self, x):
        tf = self.tf
        w = tf.get_variable("w", [], initializer=tf.constant_initializer(2.0))
        return tf.multiply(x, w, name="inner_out")

    def nested(self) -> dict:
        """A template made outside, called inside another's func; then on its own."""
        tf = self.tf
        inner = tf.make_template("inner", self._inner_fn)

        def outer_fn(x):
            v = tf.get_variable("v", [], initializer=tf.constant_initializer(10.0))
            return tf.add(inner(x), v, name="outer_out")

        outer = tf.make_template("outer", outer_fn)
        outs = [outer(self._x(1.0)), outer(self._x(2.0)), inner(self._x(3.0))]
        return {"inner": self._props(inner), "outer": self._props(outer),
                "outs": _names(outs), "values": self._values(outs), **self._globals()}

    def nested_made_inside(self) -> dict:
        """A template made (anew) inside another's func at every call."""
        tf = self.tf
        made = []

        def outer_fn(x):
            inner = tf.make_template("inner", self._inner_fn)
            made.append(inner)
            return tf.add(inner(x), inner(x), name="outer_out")

        outer = tf.make_template("outer", outer_fn)
        outs = [outer(self._x(1.0)), outer(self._x(2.0))]
        return {"inners": [self._props(t) for t in made], "outer": self._props(outer),
                "outs": _names(outs), "values": self._values(outs), **self._globals()}

    def in_scope(self) -> dict:
        """First call inside variable_scope("model"); the second outside it."""
        tf = self.tf
        t = tf.make_template("linear", self._linear)
        with tf.variable_scope("model"):
            first = t(self._x(1.0))
        second = t(self._x(2.0))
        outs = [first, second]
        return {"t": self._props(t), "outs": _names(outs), "values": self._values(outs),
                **self._globals()}

    def collections(self) -> dict:
        """Trainable, non-trainable and local variables of a template."""
        tf = self.tf

        def fn(x):
            w = tf.get_variable("w", [], initializer=tf.constant_initializer(1.0))
            n = tf.get_variable("n", [], trainable=False,
                                initializer=tf.constant_initializer(2.0))
            loc = tf.get_variable("loc", [], trainable=False,
                                  collections=[tf.GraphKeys.LOCAL_VARIABLES],
                                  initializer=tf.constant_initializer(3.0))
            return tf.add(x * w + n, loc, name="total")

        t = tf.make_template("coll", fn)
        other = tf.make_template("coll_extra", fn)
        outs = [t(self._x(1.0)), t(self._x(2.0)), other(self._x(3.0))]
        return {"t": self._props(t), "other": self._props(other), "outs": _names(outs),
                "values": self._values(outs), **self._globals()}

    def retry_after_error(self) -> dict:
        """func fails in its first call after nothing was created; the next call
        creates the variables with reuse off."""
        tf = self.tf
        fail = [True]

        def fn(x):
            if fail[0]:
                fail[0] = False
                raise RuntimeError("first call fails")
            return self._linear(x)

        t = tf.make_template("retry", fn)
        try:
            t(self._x(1.0))
            err = None
        except RuntimeError as e:
            err = _error(e)
        outs = [t(self._x(2.0)), t(self._x(3.0))]
        return {"error": err, "t": self._props(t), "outs": _names(outs),
                "values": self._values(outs), **self._globals()}

    def bad_arguments(self) -> dict:
        """name_ None or not a str, func_ not callable: when and what TF raises."""
        tf = self.tf
        found = {}
        for label, name, func in (("name_none", None, self._linear),
                                  ("name_int", 5, self._linear),
                                  ("func_int", "f", 5)):
            try:
                t = tf.make_template(name, func)
            except Exception as e:  # noqa: BLE001 - recording whatever TF raises
                found[label] = {"at": "make", **_error(e)}
                continue
            try:
                t(self._x(1.0))
                found[label] = None
            except Exception as e:  # noqa: BLE001
                found[label] = {"at": "call", **_error(e)}
        return found


def main() -> None:
    import tensorflow.compat.v1 as tf
    tf.disable_eager_execution()
    scenarios = Scenarios(tf)
    recorded = {}
    for name in sorted(n for n in vars(Scenarios) if not n.startswith("_")):
        with tf.Graph().as_default():
            recorded[name] = getattr(scenarios, name)()
    text = json.dumps(recorded, indent=1, sort_keys=True)
    print(text)
    tmp = OUT + ".tmp"
    with open(tmp, "w") as f:
        f.write(text + "\n")
    os.replace(tmp, OUT)


if __name__ == "__main__":
    main()
