"""Write docs/onnx_coverage.md (ONNX node tests through import + Session).

Thin wrapper over `python -m onegraph.convert.coverage`; same arguments.
"""

import sys

from onegraph.convert.coverage import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
