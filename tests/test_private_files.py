"""Every file Spyglass writes is readable by its user only (0600; folders it makes 0700), whatever the
umask: one helper (`inspector.private`) makes them, and a scan of the package fails when a new writer
goes around it."""

from __future__ import annotations

import ast
import os
import sqlite3
import stat
from pathlib import Path

import pytest
from importgraph import PKG

from inspector import private
from inspector.private import create_private, make_folder, open_private, write_atomic, write_private

# --------------------------------------------------------------------------------- the scan of the package
# Writes that are not files we create, or that go through the helper by another road; each says why.
ALLOWED = {
    ("inspector/traffic/_sink.py", "sqlite3.connect"):
        "the sink is a stdlib-only script: make_writer creates its database 0600 before starting it",
    ("inspector/demo/http.py", "os.open"):
        "the demo server stands on the standard library and `protocol` alone: its counts file is made 0600 by os.open",
    ("inspector/catalog.py", "os.replace"):
        "a broken catalog moved aside as it was (a rename keeps the file's own mode)",
}
# streams already opened privately (or in memory) that a compressor or an encoder writes through
STREAMS = {"raw", "self._raw", "buffer"}
OPENERS = {"open", "gzip.open", "bz2.open", "lzma.open", "wave.open", "io.open", "codecs.open"}
RAW = {"os.replace", "os.rename", "os.renames", "os.mkdir", "os.makedirs", "shutil.copy", "shutil.copy2",
       "shutil.copyfile", "shutil.move", "shutil.copytree", "tempfile.mkstemp", "tempfile.NamedTemporaryFile",
       "sqlite3.connect"}
METHODS = {"write_text", "write_bytes", "mkdir"}  # (not `touch`: the package's own objects have one)


def _name(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_name(node.value)}.{node.attr}"
    return "?"


def _mode(call: ast.Call, at: int) -> str | None:
    mode = call.args[at] if len(call.args) > at else next((k.value for k in call.keywords if k.arg == "mode"), None)
    return mode.value if isinstance(mode, ast.Constant) and isinstance(mode.value, str) else None


def bypasses(source: str, rel: str) -> list[str]:
    """The writes in one module that do not go through `inspector.private`."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        name = _name(node.func)
        what = None
        if name in OPENERS or (isinstance(node.func, ast.Attribute) and node.func.attr == "open"
                               and name not in ("os.open",)):
            method = name not in OPENERS  # Path.open(mode)
            mode = _mode(node, 0 if method else 1)
            first = "?" if method or not node.args else _name(node.args[0])
            if mode is not None and set(mode) & set("wax+") and first not in STREAMS:
                what = f"{name}(…, {mode!r})"
        elif name == "os.open" and "O_CREAT" in ast.unparse(node):
            what = "os.open(…, O_CREAT)"
        elif name in RAW:
            what = name
        elif isinstance(node.func, ast.Attribute) and node.func.attr in METHODS:
            what = f".{node.func.attr}()"
        elif (isinstance(node.func, ast.Attribute) and node.func.attr == "save" and len(node.args) >= 2
              and isinstance(node.args[1], ast.Constant) and _name(node.args[0]) not in STREAMS):
            what = ".save(path, FORMAT)"  # a QPixmap or QImage written by Qt, as the umask says
        if what is not None and (rel, what.split("(")[0]) not in ALLOWED:
            found.append(f"{rel}:{node.lineno}: {what}")
    return found


def test_no_writer_in_the_package_bypasses_the_private_helper():
    root = Path(PKG)
    found = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root.parent).as_posix()
        if rel == "inspector/private.py":
            continue
        found += bypasses(path.read_text(encoding="utf-8"), rel)
    assert found == [], "write these through inspector.private (or say why not in ALLOWED):\n" + "\n".join(found)


@pytest.mark.parametrize("code", [
    'open(p, "w")', 'open(p, mode="ab")', 'Path(p).write_text("x")', 'p.write_bytes(b"")', 'p.mkdir()',
    'os.makedirs(p)', 'gzip.open(p, "wt")', 'tempfile.mkstemp()', 'os.replace(a, b)', 'sqlite3.connect(p)',
    'os.open(p, os.O_WRONLY | os.O_CREAT)', 'p.open("w")', 'shutil.copy(a, b)', 'pixmap.save(path, "PNG")',
])
def test_the_scan_sees_each_kind_of_write(code):
    assert bypasses(code, "inspector/x.py"), code


@pytest.mark.parametrize("code", ['open(p)', 'open(p, "rb")', 'gzip.open(raw, "wt")',
                                  'os.open(os.devnull, os.O_WRONLY)',
                                  'p.open()', 'painter.save()', 'pixmap.save(buffer, "PNG")'])
def test_the_scan_leaves_reads_alone(code):
    assert bypasses(code, "inspector/x.py") == []


# --------------------------------------------------------------------------------- the helper itself
def private_mode(path: Path) -> bool:
    return (path.stat().st_mode & 0o077) == 0


@pytest.fixture()
def open_umask():
    """The most permissive umask: what the helper makes must not depend on it."""
    old = os.umask(0)
    try:
        yield
    finally:
        os.umask(old)


def test_files_and_folders_are_private_whatever_the_umask(tmp_path, open_umask):
    with open_private(tmp_path / "a" / "b" / "f.txt", "w", folder=True) as fh:
        fh.write("x")
    assert stat.S_IMODE((tmp_path / "a").stat().st_mode) == 0o700
    assert stat.S_IMODE((tmp_path / "a" / "b").stat().st_mode) == 0o700
    assert stat.S_IMODE((tmp_path / "a" / "b" / "f.txt").stat().st_mode) == 0o600
    write_private(tmp_path / "w.bin", b"x")
    write_atomic(tmp_path / "atomic.json", "{}")
    create_private(tmp_path / "db.sqlite")
    for name in ("w.bin", "atomic.json", "db.sqlite"):
        assert stat.S_IMODE((tmp_path / name).stat().st_mode) == 0o600, name
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no temporary file left


def test_an_output_written_over_an_open_file_becomes_private(tmp_path):
    path = tmp_path / "report.xml"
    path.write_text("old")
    os.chmod(path, 0o644)
    write_private(path, "new")
    assert path.read_text() == "new" and stat.S_IMODE(path.stat().st_mode) == 0o600
    with open_private(path, "a") as fh:
        fh.write("!")
    assert path.read_text() == "new!"


def test_an_atomic_edit_keeps_the_mode_of_the_user_s_file_only_when_asked(tmp_path):
    path = tmp_path / "collection.yaml"
    path.write_text("a: 1\n")
    os.chmod(path, 0o644)
    write_atomic(path, "a: 2\n", keep_mode=True)
    assert path.read_text() == "a: 2\n" and stat.S_IMODE(path.stat().st_mode) == 0o644
    write_atomic(path, "a: 3\n")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    write_atomic(tmp_path / "new.yaml", "a: 1\n", keep_mode=True)
    assert stat.S_IMODE((tmp_path / "new.yaml").stat().st_mode) == 0o600


def test_existing_folders_are_left_as_they_are(tmp_path):
    folder = tmp_path / "shared"
    folder.mkdir()
    os.chmod(folder, 0o755)
    make_folder(folder / "mine")
    assert stat.S_IMODE(folder.stat().st_mode) == 0o755
    assert stat.S_IMODE((folder / "mine").stat().st_mode) == 0o700


def test_sqlite_s_wal_and_shm_files_take_the_database_s_mode(tmp_path, open_umask):
    """What the traffic store relies on: SQLite creates -wal and -shm with the database file's mode."""
    path = create_private(tmp_path / "s.sqlite")
    conn = sqlite3.connect(path)
    try:
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("CREATE TABLE t (x)")
        conn.execute("INSERT INTO t VALUES (1)")
        conn.commit()
        made = sorted(p.name for p in tmp_path.iterdir())
        assert made == ["s.sqlite", "s.sqlite-shm", "s.sqlite-wal"], made
        assert all(stat.S_IMODE(p.stat().st_mode) == 0o600 for p in tmp_path.iterdir())
    finally:
        conn.close()


def test_the_helper_is_stdlib_only():
    """The tap loads it before its server starts: nothing heavier than the standard library."""
    import sys

    tree = ast.parse(Path(private.__file__).read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            names = [node.module] if isinstance(node, ast.ImportFrom) and node.module else \
                [a.name for a in node.names]
            for name in names:
                assert name.split(".")[0] in sys.stdlib_module_names or name == "__future__", name


def test_what_the_helper_refuses_is_said(tmp_path):
    from inspector.private import NotPrivate, own_folder, own_socket

    with pytest.raises(ValueError, match="writes only"):
        open_private(tmp_path / "r", "r")
    (tmp_path / "file").write_text("")
    with pytest.raises(NotADirectoryError):
        make_folder(tmp_path / "file" / "sub")
    with pytest.raises(FileExistsError, match="a file is where a folder should be"):
        make_folder(tmp_path / "file")
    with pytest.raises(NotPrivate, match="cannot make"):
        own_folder(tmp_path / "file" / "sub" / "rt")
    with pytest.raises(NotPrivate, match="cannot read"):
        own_socket(tmp_path / "file" / "x.sock")  # a file where a folder is looked into
    with pytest.raises(OSError):
        write_atomic(tmp_path / "file" / "x", "y")  # nothing made, nothing left
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file"]


def test_the_peer_of_a_socket_pair_is_ourselves(tmp_path):
    import socket

    from inspector.private import peer_problem, peer_uid

    a, b = socket.socketpair()
    try:
        assert peer_uid(a) in (os.geteuid(), None) and peer_problem(a) is None
    finally:
        a.close()
        b.close()
    assert peer_uid(a) is None and peer_uid(None) is None  # closed, or no socket at all: not known


def test_qt_s_settings_file_is_made_the_user_s_alone_and_stays_so(tmp_path, open_umask):
    """Qt writes its settings with the umask's mode (0644 in a 0755 folder): the window's start makes the
    file 0600 and its Spyglass folder 0700, and Qt keeps that when it rewrites the file."""
    from PySide6.QtCore import QSettings

    from inspector.app import settings_private

    folder = tmp_path / "config" / "Spyglass"
    qt = QSettings(str(folder / "Spyglass.conf"), QSettings.IniFormat)
    qt.setValue("recent", ["/home/me/a.mcpsession"])
    qt.sync()
    assert stat.S_IMODE((folder / "Spyglass.conf").stat().st_mode) & 0o077  # what Qt does alone, with umask 0
    settings_private(qt)
    assert stat.S_IMODE((folder / "Spyglass.conf").stat().st_mode) == 0o600
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    qt.setValue("theme", "dark")
    qt.sync()
    assert stat.S_IMODE((folder / "Spyglass.conf").stat().st_mode) == 0o600
    fresh = QSettings(str(tmp_path / "other" / "Spyglass" / "Spyglass.conf"), QSettings.IniFormat)
    settings_private(fresh)  # none yet: made private before Qt first writes it
    fresh.setValue("theme", "light")
    fresh.sync()
    assert stat.S_IMODE(Path(fresh.fileName()).stat().st_mode) == 0o600
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o755)
    os.chmod(shared, 0o755)
    settings_private(QSettings(str(shared / "elsewhere.conf"), QSettings.IniFormat))
    assert stat.S_IMODE(shared.stat().st_mode) == 0o755  # a folder not Spyglass's own is left alone
