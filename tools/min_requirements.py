"""Print the core dependencies of pyproject.toml pinned to the oldest versions it allows,
one pip requirement per line, for `make test-min-deps`.

"numpy>=1.24" becomes "numpy==1.24.*" (the newest patch release of the oldest allowed
minor: bug fixes within it are what a user on that floor gets), and "flatbuffers>=25.12.19"
becomes "flatbuffers==25.12.19". A dependency without a ">=" floor is printed as it is.

Exit status 1, with a message on stderr, when pyproject.toml cannot be read or has no
[project] dependencies.

    python tools/min_requirements.py [PYPROJECT]
"""

from __future__ import annotations

import os
import sys
import tomllib

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def pinned_to_floor(requirement: str) -> str:
    """`requirement` ("name>=X.Y[.Z]", maybe with other clauses after a comma) pinned to
    its floor: "name==X.Y.*" for a two-part floor, "name==X.Y.Z" for a longer one; the
    requirement unchanged when it has no ">=" clause."""
    name, sep, rest = requirement.partition(">=")
    if not sep:
        return requirement
    floor = rest.split(",")[0].strip()
    if floor.count(".") == 1:
        floor += ".*"
    return f"{name.strip()}=={floor}"


def main(argv: list[str] | None = None) -> int:
    """Print the pinned core requirements; 0 on success, 1 if pyproject.toml is
    unreadable or lists no dependencies."""
    args = sys.argv[1:] if argv is None else argv
    path = args[0] if args else os.path.join(REPO, "pyproject.toml")
    try:
        with open(path, "rb") as f:
            project = tomllib.load(f).get("project", {})
    except (OSError, tomllib.TOMLDecodeError) as e:
        print(f"min_requirements: cannot read {path}: {e}", file=sys.stderr)
        return 1
    deps = project.get("dependencies") or []
    if not deps:
        print(f"min_requirements: {path} lists no [project] dependencies", file=sys.stderr)
        return 1
    for dep in deps:
        print(pinned_to_floor(dep))
    return 0


if __name__ == "__main__":
    sys.exit(main())
