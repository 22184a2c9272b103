"""``save_graph(payload, path)``: one graph document written to a file, its suffix picking what.

``.json`` the graph document itself, ``.dot`` the view's Graphviz source, ``.svg``/``.png`` the
picture of the view, ``.html`` the self-contained explorer. The file appears whole or not at
all: it is written to a temporary file in the same directory and moved into place.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import stat
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

# suffix -> (what the file holds, for messages and docstrings)
FORMATS = {
    ".json": "the graph document (what build_graph returns)",
    ".dot": "the Graphviz source of the view",
    ".svg": "the picture of the view",
    ".png": "the picture of the view",
    ".html": "the self-contained explorer (one file, works offline)",
}


def supported_suffixes() -> str:
    return ", ".join(FORMATS)


def check_target(path: str | os.PathLike[str]) -> Path:
    """``path`` as a Path (``~`` is the home directory, as for every path the package reads),
    or a clear error if no graph can be saved there (bad suffix, no such directory, a directory
    that takes no new file): lets a caller fail before doing the work that makes the graph."""
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(
            f"cannot save a graph to {path!r} ({type(path).__name__}): pass the file's path, "
            "e.g. 'graph.html'"
        )
    target = Path(path).expanduser()
    if target.suffix.lower() not in FORMATS and target.is_dir():  # '.', '~': no name to show
        raise IsADirectoryError(
            f"cannot save as {str(path)!r}: it is a directory; name a file in it, e.g. "
            f"{str(target / 'graph.html')!r}"
        )
    if target.suffix.lower() not in FORMATS:
        raise ValueError(
            f"cannot save a graph as {target.name!r}: the file name's suffix picks the format, "
            f"one of {supported_suffixes()}"
        )
    check_place(target)
    return target


def check_place(target: Path) -> None:
    """A clear error, naming ``target`` and the fix, if no file can be written there: it is a
    directory, its directory is missing or is a file, or that directory takes no new file
    (read-only, no permission). Tried with an empty temporary file beside it, removed at once:
    permission bits alone do not say it (root, ACLs, read-only mounts)."""
    parent = target.parent
    try:  # (a name too long for the file system fails here: said like a failed write)
        is_dir, parent_is_dir = target.is_dir(), parent.is_dir()
        parent_is_file = not parent_is_dir and parent.exists()
    except OSError as exc:
        raise _naming(exc, target) from None
    if is_dir:
        raise IsADirectoryError(
            f"cannot save as {str(target)!r}: it is a directory (name a file in it)"
        )
    if parent_is_file:
        raise NotADirectoryError(
            f"cannot save {target.name!r}: {str(parent)!r} is a file, not a directory "
            "(save it in a directory)"
        )
    if not parent_is_dir:
        raise FileNotFoundError(
            f"cannot save {target.name!r}: there is no directory {str(parent)!r} (create it first)"
        )
    try:
        fd, temp = _temporary_beside(_through_link(target))
        os.close(fd)
        os.unlink(temp)
    except OSError as exc:
        raise _naming(exc, target, "save it in a directory you can write to") from None


def said(error: Exception) -> str:
    """An error's words for a command line: an OSError's own message, without Python's
    "[Errno 13] ...: '/path'" around it (the message names the path already)."""
    if isinstance(error, OSError) and error.strerror:
        return error.strerror
    return str(error)


def refuse_replacing(output: Path, *, force: bool, numbered: bool = False) -> None:
    """The command line's one rule for its -o files (the graph mode and ``view``): an
    existing file is not replaced without --force, said before any work is done.
    ``numbered``: the files are FILE_001.suffix, ... (--all): any of them counts."""
    if force:
        return
    if not numbered:
        existing = output if output.exists() else None
    else:
        pattern = f"{output.stem}_[0-9][0-9][0-9]*{output.suffix}"
        existing = next(iter(sorted(output.parent.glob(pattern))), None)
    if existing is not None:
        raise FileExistsError(f"{existing} exists: pass --force to replace it, or another -o")


def save_graph(
    payload: Mapping[str, Any],
    path: str | os.PathLike[str],
    *,
    expanded: list[str] | None = None,
    depth: int | None = None,
    options: Mapping[str, Any] | None = None,
) -> Path:
    """Write ``payload`` (a graph document, as build_graph returns) to ``path``; returns it.

    The suffix picks the format (see FORMATS). ``expanded``/``depth``/``options`` describe the
    view the .dot/.svg/.png show (None: the explorer's default view) and the view the .html
    opens on; .json is the whole document whatever the view. Raises ValueError for an unknown
    suffix, StaticPictureUnavailable if the view cannot be drawn here; nothing is written then.
    """
    if not isinstance(payload, Mapping):
        raise TypeError(
            f"save_graph takes the graph document build_graph returns (a dict), got a "
            f"{type(payload).__name__}"
        )
    target = check_target(path)
    make = _MAKERS[target.suffix.lower()]
    data = make(payload, expanded, depth, dict(options or {}))
    _write_atomically(target, data)
    return target


def _json(payload: Mapping[str, Any], *_: Any) -> bytes:
    # allow_nan=False: a NaN would make a file no JSON reader accepts; better an error here.
    return json.dumps(payload, separators=(",", ":"), allow_nan=False).encode()


def _dot_text(
    payload: Mapping[str, Any], expanded: list[str] | None, depth: int | None,
    options: dict[str, Any],
) -> str:  # fmt: skip
    from .view_rules import view_dot

    return view_dot(payload, expanded=expanded, depth=depth, options={**options, "static": True})


def _dot(payload: Mapping[str, Any], *view: Any) -> bytes:
    return _dot_text(payload, *view).encode()


def _picture(fmt: str) -> Callable[..., bytes]:
    def make(payload: Mapping[str, Any], *view: Any) -> bytes:
        from .picture import render_picture

        return render_picture(_dot_text(payload, *view), fmt)

    return make


def _html(
    payload: Mapping[str, Any], expanded: list[str] | None, depth: int | None, options: Any
) -> bytes:
    from .standalone import standalone_html

    # Of the view's options, the page's traits (the reading, folding): the drawing's own
    # (direction, labels, colours) are the toolbar's, which every new view starts afresh.
    return standalone_html(
        payload,
        expanded=expanded,
        depth=-1 if depth is None else depth,
        view="forward" if options.get("view") == "forward" else "backward",
        fold=options.get("fold") is not False,
    ).encode()


_MAKERS: dict[str, Callable[[Mapping[str, Any], Any, Any, dict[str, Any]], bytes]] = {
    ".json": _json,
    ".dot": _dot,
    ".svg": _picture("svg"),
    ".png": _picture("png"),
    ".html": _html,
}


def _write_atomically(target: Path, data: bytes) -> None:
    """``data`` into ``target`` whole or not at all: a temporary file beside it, then a rename.
    Created with mode 0o666 like open() would (the umask applies), not mkstemp's 0o600. An
    error names ``target``, the file asked for, never the hidden temporary file. A symbolic
    link is written through, as open() would: the file it points to is replaced, the link kept."""
    try:
        _write_via_temp(_through_link(target), data)
    except OSError as exc:
        raise _naming(exc, target) from None


def move_into_place(staged: Path, target: Path) -> None:
    """A file written whole elsewhere in ``target``'s directory (the CLI's --all stages its
    files) moved to ``target`` as a save writes it: through a symbolic link, keeping the
    replaced file's permissions."""
    real = _through_link(target)
    _keep_mode(staged, real)
    os.replace(staged, real)


def _through_link(target: Path) -> Path:
    """The file a symbolic link ``target`` points to (the link itself must stay), else target."""
    return Path(os.path.realpath(target)) if target.is_symlink() else target


def _naming(exc: OSError, target: Path, fix: str = "") -> OSError:
    """``exc`` said of ``target``, the file asked for (its errno and type kept), and the fix."""
    words = exc.strerror or str(exc)
    words = f"{words} ({fix})" if fix else words
    return type(exc)(exc.errno, f"cannot write {target}: {words}", str(target))


# The temporary file's name starts with the target's, cut to this many bytes: a name the file
# system takes (up to 255 bytes) must still leave room for ".", ".<8 hex>.tmp".
_TEMP_HEAD_BYTES = 200


def _temporary_beside(target: Path) -> tuple[int, Path]:
    """A new hidden file beside ``target``, opened for writing: (its descriptor, its path)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    while True:
        head = os.fsencode(target.name)[:_TEMP_HEAD_BYTES].decode(errors="ignore")
        temp = target.with_name(f".{head}.{secrets.token_hex(4)}.tmp")
        try:
            return os.open(temp, flags, 0o666), temp
        except FileExistsError:
            continue


def _keep_mode(temp: Path, target: Path) -> None:
    """The permissions of the file being replaced, as open(target, "w") keeps them: a graph
    saved again over a private (0o600) file must not become readable by all."""
    try:
        mode = os.stat(target).st_mode
    except OSError:  # no such file yet: the umask's mode, as open() gives
        return
    if stat.S_ISREG(mode):
        os.chmod(temp, stat.S_IMODE(mode))


def _write_via_temp(target: Path, data: bytes) -> None:
    fd, temp = _temporary_beside(target)
    try:
        with os.fdopen(fd, "wb") as file:
            file.write(data)
            file.flush()
            os.fsync(file.fileno())
        _keep_mode(temp, target)
        os.replace(temp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise
