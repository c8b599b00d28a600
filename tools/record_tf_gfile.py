"""Record TF1's tf.gfile, tf.logging and tf.flags behaviour for the onegraph tests.

Run by hand with a TensorFlow venv (never from the tests):
    /tmp/s51/tfvenv/bin/python tools/record_tf_gfile.py
Writes tests/train/data/tf1_gfile_reference.json:
- "tree": the files and directories built under a fresh temp root "D" before the steps;
- "steps": tf.gfile calls run in order on that tree (later steps see earlier changes), each
  with TF's result (paths with the root replaced by "D") or its error class and message;
  listings also say whether TF's order was the directory's readdir order (os.listdir);
- "logging": tf.logging's level constants, default verbosity and logger name;
- "flags": absl's (tf.flags') parse of argument lists against a fixed set of definitions.
"""

from __future__ import annotations

import fnmatch
import json
import os
import shutil
import tempfile

import tensorflow.compat.v1 as tf

tf.disable_eager_execution()

OUT = os.path.join(os.path.dirname(__file__), "..", "tests", "train", "data",
                   "tf1_gfile_reference.json")

TREE = {"dirs": ["a", "a/b", "a/c", "e"],
        "files": {"a/x.txt": "hello\nworld\n", "a/b/y.bin": "\u0000\u0001\u00ff",
                  "z.txt": "zz", "a/b/q.txt": "q1\nq2", "e/one": "1"}}

# [op, args...]; "D" starts every path; "file" steps run methods on one GFile
STEPS = [
    ["Exists", "D/a"], ["Exists", "D/nope"], ["Exists", "D/a/x.txt"],
    ["IsDirectory", "D/a"], ["IsDirectory", "D/z.txt"], ["IsDirectory", "D/nope"],
    ["ListDirectory", "D"], ["ListDirectory", "D/a"], ["ListDirectory", "D/a/"],
    ["ListDirectory", "D/a/c"], ["ListDirectory", "D/nope"], ["ListDirectory", "D/z.txt"],
    ["Glob", "D/*"], ["Glob", "D/*/*"], ["Glob", "D/a/x.txt"], ["Glob", "D/a/nope.txt"],
    ["Glob", "D/*/x.txt"], ["Glob", "D/?.txt"], ["Glob", "D/[az]*"], ["Glob", "D/nope*"],
    ["Glob", "D/a/*/*.txt"], ["Glob", "D/a/"], ["Glob", "D/nope/*"],
    ["Walk", "D"], ["Walk", "D", False], ["Walk", "D/a/"], ["Walk", "D/nope"],
    ["Walk", "D/z.txt"],
    ["Stat", "D/a/x.txt"], ["Stat", "D/a"], ["Stat", "D/nope"],
    ["file", "D/a/x.txt", "r", [["read"]]],
    ["file", "D/a/x.txt", "rb", [["read"]]],
    ["file", "D/a/x.txt", "r", [["readlines"]]],
    ["file", "D/a/x.txt", "r", [["iter"]]],
    ["file", "D/a/x.txt", "rb", [["iter"]]],
    ["file", "D/a/x.txt", "r", [["size"], ["read", 3], ["tell"], ["readline"], ["seek", 1],
                                ["read"], ["read"], ["readline"], ["readlines"], ["read", 0],
                                ["seek", 2, 0], ["seek", 1, 1], ["tell"], ["seek", -2, 2],
                                ["read"], ["seek", 0, 5], ["write", "x"], ["mode"],
                                ["close"]]],
    ["file", "D/a/x.txt", "rb", [["read", -1], ["seek", 0], ["readline"], ["iter"]]],
    ["file", "D/a/b/y.bin", "rb", [["read"]]],
    ["file", "D/nope", "r", [["read"]]],
    ["file", "D/a", "r", [["read"]]],
    ["file", "D/a/x.txt", "x", [["read"]]],
    ["file", "D/w.txt", "w", [["close"]]], ["exists_disk", "D/w.txt"],
    ["file", "D/w.txt", "w", [["write", "ab"], ["tell"], ["read"], ["seek", 0], ["size"],
                              ["flush"], ["size"], ["write", b"\xc3\xa9"], ["close"]]],
    ["read_disk", "D/w.txt"],
    ["file", "D/w.txt", "a", [["write", "++"], ["close"]]], ["read_disk", "D/w.txt"],
    ["file", "D/w.bin", "wb", [["write", b"\x00\xff"], ["write", "str"], ["close"]]],
    ["read_disk", "D/w.bin"],
    ["file", "D/w.bin", "ab", [["write", b"!"], ["close"]]], ["read_disk", "D/w.bin"],
    ["file", "D/a/x.txt", "w", [["size"], ["write", "abc"], ["flush"], ["size"], ["close"]]],
    ["read_disk", "D/a/x.txt"],
    ["file", "D/q/new.txt", "w", [["write", "x"]]],
    ["ctx", "D/w.txt", "w", "written"], ["read_disk", "D/w.txt"],
    ["Remove", "D/nope"], ["Remove", "D/a"], ["Remove", "D/a/"], ["Remove", "D/w.bin"],
    ["exists_disk", "D/w.bin"],
    ["DeleteRecursively", "D/nope"], ["DeleteRecursively", "D/e/one"],
    ["exists_disk", "D/e/one"],
    ["MkDir", "D/a"], ["MkDir", "D/q/r"], ["MkDir", "D/z.txt"], ["MkDir", "D/m"],
    ["IsDirectory", "D/m"],
    ["MakeDirs", "D/a"], ["MakeDirs", "D/z.txt"], ["MakeDirs", "D/z.txt/k"],
    ["MakeDirs", "D/n/o/p"], ["IsDirectory", "D/n/o/p"],
    ["Rename", "D/z.txt", "D/a/x.txt"], ["Rename", "D/nope", "D/nope2"],
    ["Rename", "D/z.txt", "D/a", True], ["Rename", "D/a", "D/z.txt", True],
    ["Rename", "D/n", "D/n2"], ["IsDirectory", "D/n2/o"],
    ["Rename", "D/w.txt", "D/a/x.txt", True], ["read_disk", "D/a/x.txt"],
    ["exists_disk", "D/w.txt"],
    ["Copy", "D/z.txt", "D/a/x.txt"], ["Copy", "D/nope", "D/a/x2.txt"],
    ["Copy", "D/a", "D/a2"], ["Copy", "D/z.txt", "D/a", True],
    ["Copy", "D/z.txt", "D/a/x.txt", True], ["read_disk", "D/a/x.txt"],
    ["Copy", "D/z.txt", "D/z2.txt"], ["read_disk", "D/z2.txt"],
    ["DeleteRecursively", "D/a"], ["exists_disk", "D/a"],
    ["Exists", "hdfs://host/x"], ["ListDirectory", "hdfs://host/dir"],
    ["Exists", "file://D/z.txt"], ["Exists", 3],
    ["join", "a", "b", "/c"], ["join", "a", "b/", "c"], ["join", "a"],
]


def _sub(value, root):
    """Turns "D..." paths into real ones under root (also after a file:// prefix)."""
    if isinstance(value, str):
        if value.startswith("D"):
            return root + value[1:]
        if value.startswith("file://D"):
            return "file://" + root + value[len("file://D"):]
    return value


def _norm(value, root):
    """Makes a result JSON-able, with the root written back as "D"."""
    if isinstance(value, bytes):
        return {"bytes": value.decode("latin-1")}
    if isinstance(value, str):
        return {"str": value.replace(root, "D")}
    if isinstance(value, (list, tuple)):
        return [_norm(v, root) for v in value]
    if value is None or isinstance(value, (bool, int, float)):
        return value
    if hasattr(value, "mtime_nsec"):
        return {"stat": {"length": value.length, "mtime_nsec": value.mtime_nsec,
                         "is_directory": value.is_directory}}
    raise TypeError(type(value))


def _readdir_order(op, args, root):
    """The listing as the directory's readdir order would give it (os.listdir/os.walk)."""
    path = args[0]
    if op == "ListDirectory":
        return os.listdir(path)
    if op == "Walk":
        walked = list(os.walk(path, topdown=True))
        if len(args) > 1 and not args[1]:
            walked = _post_order(path)
        return [(d, list(s), list(f)) for d, s, f in walked]
    parts = path[len(root) + 1:].split("/")
    found = [root]
    for part in parts:
        found = [os.path.join(p, name) for p in found if os.path.isdir(p)
                 for name in os.listdir(p) if fnmatch.fnmatchcase(name, part)]
    return found


def _post_order(top):
    names = os.listdir(top)
    subdirs = [n for n in names if os.path.isdir(os.path.join(top, n))]
    out = []
    for s in subdirs:
        out.extend(_post_order(os.path.join(top, s)))
    out.append((top, subdirs, [n for n in names if n not in subdirs]))
    return out


def _file_steps(path, mode, methods, root):
    results = []
    try:
        handle = tf.gfile.GFile(path, mode)
    except Exception as error:  # noqa: BLE001 - the mode is checked when opening
        return [_error(error, root)]
    for method in methods:
        name, margs = method[0], method[1:]
        try:
            if name == "iter":
                value = list(handle)
            elif name in ("mode",):
                value = getattr(handle, name)
            else:
                value = getattr(handle, name)(*margs)
            results.append({"value": _norm(value, root)})
        except Exception as error:  # noqa: BLE001 - recording every failure
            results.append(_error(error, root))
    return results


def _error(error, root):
    return {"error": type(error).__name__, "message": str(error).replace(root, "D")}


def _encode(step):
    """bytes arguments as {"bytes": latin-1 text} (JSON has no bytes)."""
    if isinstance(step, bytes):
        return {"bytes": step.decode("latin-1")}
    if isinstance(step, list):
        return [_encode(s) for s in step]
    return step


def _run_step(step, root):
    op, args = step[0], [_sub(a, root) for a in step[1:]]
    if op == "file":
        return {"steps": _file_steps(args[0], args[1], step[3], root)}
    if op == "ctx":
        with tf.gfile.GFile(args[0], args[1]) as handle:
            handle.write(args[2])
        return {"value": None}
    if op == "read_disk":
        with open(args[0], "rb") as raw:
            return {"value": _norm(raw.read(), root)}
    if op == "exists_disk":
        return {"value": os.path.exists(args[0])}
    if op == "join":
        return {"value": _norm(tf.io.gfile.join(*args), root)}
    try:
        value = getattr(tf.gfile, op)(*args)
        if op == "Walk":
            value = list(value)
    except Exception as error:  # noqa: BLE001 - recording every failure
        return _error(error, root)
    out = {"value": _norm(value, root)}
    if op in ("ListDirectory", "Glob", "Walk") and "://" not in args[0]:
        reference = _norm(_readdir_order(op, args, root), root)
        out["readdir_order"] = out["value"] == reference
    if op == "Stat":
        st = os.stat(args[0])
        out["st_size"] = value.length == st.st_size
        out["mtime_whole_seconds"] = value.mtime_nsec == int(st.st_mtime) * 10 ** 9
    return out


def _record_gfile():
    root = tempfile.mkdtemp(prefix="tfgfile")
    try:
        for d in TREE["dirs"]:
            os.makedirs(os.path.join(root, d))
        for name, text in TREE["files"].items():
            with open(os.path.join(root, name), "wb") as out:
                out.write(text.encode("latin-1"))
        return [{"step": _encode(step), **_run_step(step, root)} for step in STEPS]
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _record_logging():
    return {"DEBUG": tf.logging.DEBUG, "INFO": tf.logging.INFO, "WARN": tf.logging.WARN,
            "ERROR": tf.logging.ERROR, "FATAL": tf.logging.FATAL,
            "default_verbosity": tf.logging.get_verbosity(),
            "logger_name": tf.get_logger().name}


FLAG_ARGVS = [
    [], ["--s=hi"], ["--s", "hi"], ["--i=7", "--f=2.5"], ["--b"], ["--nob"], ["--b=false"],
    ["--b=true"], ["--b=0"], ["--b=yes"], ["--l=a,b,c"], ["--l="], ["--e=red"], ["--e=pink"],
    ["--m=x", "--m=y"], ["--mi=1", "--mi", "2"], ["--i=seven"], ["--f=x"], ["--unknown=1"],
    ["--s"], ["pos1", "--i=3", "pos2"], ["--i=3", "--", "--s=late"], ["-i=4"], ["--nos"],
    ["--s=a", "--s=b"], ["--b", "false"], ["--i=-3"], ["--i", "-3"], ["--b=T"],
    ["--b=FALSE"], ["--b=f"], ["--b=1"], ["--i=0x10"], ["--i= 5"], ["--l=a, b"], ["--f=1e3"],
    ["--mi=1", "--mi=x"], ["---i=2"], ["--=1"], ["-"], ["--i=3", "-", "x"], ["--l", "q"],
]

# flag "r" (string, default None) marked required, and "k" (int, default 1)
REQUIRED_ARGVS = [[], ["--r=v"], ["--k=2"], ["--r="], ["--r", "v", "--k=3"]]


def _record_flags():
    from absl import flags as absl_flags
    results = []
    for argv in FLAG_ARGVS:
        fv = absl_flags.FlagValues()
        absl_flags.DEFINE_string("s", "dflt", "a string", flag_values=fv)
        absl_flags.DEFINE_integer("i", 1, "an int", flag_values=fv)
        absl_flags.DEFINE_float("f", 0.5, "a float", flag_values=fv)
        absl_flags.DEFINE_boolean("b", False, "a bool", flag_values=fv)
        absl_flags.DEFINE_list("l", ["x"], "a list", flag_values=fv)
        absl_flags.DEFINE_enum("e", "red", ["red", "green"], "an enum", flag_values=fv)
        absl_flags.DEFINE_multi_string("m", [], "strings", flag_values=fv)
        absl_flags.DEFINE_multi_integer("mi", None, "ints", flag_values=fv)
        try:
            rest = fv(["prog"] + argv)
        except absl_flags.Error as error:
            results.append({"argv": argv, "error": type(error).__name__,
                            "message": str(error)})
            continue
        values = {n: fv[n].value for n in ("s", "i", "f", "b", "l", "e", "m", "mi")}
        results.append({"argv": argv, "rest": rest, "values": values})
    for argv in REQUIRED_ARGVS:
        fv = absl_flags.FlagValues()
        absl_flags.DEFINE_string("r", None, "required", flag_values=fv)
        absl_flags.DEFINE_integer("k", 1, "an int", flag_values=fv)
        absl_flags.mark_flag_as_required("r", flag_values=fv)
        try:
            rest = fv(["prog"] + argv)
        except absl_flags.Error as error:
            results.append({"argv": argv, "required": True, "error": type(error).__name__,
                            "message": str(error)})
            continue
        results.append({"argv": argv, "required": True, "rest": rest,
                        "values": {"r": fv.r, "k": fv.k}})
    return results


def main():
    record = {"tree": TREE, "steps": _record_gfile(), "logging": _record_logging(),
              "flags": _record_flags()}
    with open(OUT, "w") as out:
        json.dump(record, out, indent=1, sort_keys=True)
        out.write("\n")
    print("wrote", OUT)


if __name__ == "__main__":
    main()
