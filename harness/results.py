"""The collection's append-only JSON Lines file: one row per finished configuration.

A row is appended with one write and flushed to disk when its configuration finishes, so a kill
loses at most the configuration that was running. A rerun reads the ids already there and skips
them. A last line without its newline can only be a write the kill cut short; `repair` drops it
(the one change ever made to existing bytes) so the next row starts on a line of its own.
"""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any, Dict, Iterator, List, Set, Tuple, Union

#: Row statuses that finish a configuration: a rerun does not repeat it.
FINISHED = ("ok", "oom", "error", "crashed")


def read_rows(path: Union[str, Path]) -> List[Dict[str, Any]]:
    return list(iter_rows(path))


def iter_rows(path: Union[str, Path]) -> Iterator[Dict[str, Any]]:
    for _, row in iter_numbered_rows(path):
        yield row


def iter_numbered_rows(path: Union[str, Path]) -> Iterator[Tuple[int, Dict[str, Any]]]:
    """Each JSON object row with its line number; a last line cut short by a kill ends the file."""
    path = Path(path)
    if not path.exists():
        return
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.endswith("\n"):
                # An unfinished write (still running, or cut short by a kill); `repair` removes it.
                print(f"{path}:{number}: ignoring an unfinished last line", file=sys.stderr)
                break
            line = line.strip()
            if not line:
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError:
                print(f"{path}:{number}: skipping a line that is not JSON", file=sys.stderr)
                continue
            if not isinstance(row, dict):
                print(f"{path}:{number}: skipping a line that is not a JSON object", file=sys.stderr)
                continue
            yield number, row


def finished_ids(path: Union[str, Path]) -> Set[str]:
    return {row["id"] for row in iter_rows(path) if row.get("status") in FINISHED and isinstance(row.get("id"), str)}


def repair(path: Union[str, Path]) -> int:
    """Drops an unterminated last line; returns the number of bytes dropped."""
    path = Path(path)
    if not path.exists():
        return 0
    with open(path, "rb+") as handle:
        handle.seek(0, os.SEEK_END)
        size = handle.tell()
        if size == 0:
            return 0
        handle.seek(size - 1)
        if handle.read(1) == b"\n":
            return 0
        handle.seek(0)
        data = handle.read()
        keep = data.rfind(b"\n") + 1
        handle.truncate(keep)
        return size - keep


def append_row(path: Union[str, Path], row: Dict[str, Any]) -> None:
    line = json.dumps(row, separators=(",", ":"), sort_keys=False) + "\n"
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(line)
        handle.flush()
        os.fsync(handle.fileno())
