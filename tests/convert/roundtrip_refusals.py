"""Regenerate roundtrip_expected_refusals.json: which older-opset exports of the node
tests (test_roundtrip.py::test_node_export_to_older_opset) the exporter refuses, and
with what refusal (`refusal_prefix` of the ConversionError's message).

Run from the repository root after a deliberate exporter change, then review the diff:

    python -m tests.convert.roundtrip_refusals          # rewrite the file
    python -m tests.convert.roundtrip_refusals --check  # exit 1 if it is out of date

onnxruntime is not needed to decide a refusal; the run takes under a minute.
"""

import json
import sys

from .test_roundtrip import EXPECTED_REFUSALS_PATH, OLDER_CASES, older_id, older_refusal


def current_refusals() -> dict[str, str]:
    out = {}
    for case, target in OLDER_CASES:
        _, refused, _ = older_refusal(case, target)
        if refused is not None:
            out[older_id(case, target)] = refused
    return dict(sorted(out.items()))


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    text = json.dumps(current_refusals(), indent=1, ensure_ascii=False) + "\n"
    with open(EXPECTED_REFUSALS_PATH, encoding="utf-8") as f:
        old = f.read()
    if "--check" in argv:
        print("up to date" if text == old else "out of date", file=sys.stderr)
        return 0 if text == old else 1
    with open(EXPECTED_REFUSALS_PATH, "w", encoding="utf-8") as f:
        f.write(text)
    print(f"wrote {len(json.loads(text))} refusals to {EXPECTED_REFUSALS_PATH}",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
