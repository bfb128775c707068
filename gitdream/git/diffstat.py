"""A commit's diffstat drawn as `git show --stat` draws it (git's diff.c, `show_stats`).

libgit2's `git_diff_stats_to_buf` scales the graph by another rule: with long paths it drew
a `-` on files that only had insertions (`17 +++++++++++++-`). This module computes the
lines from the per-file counts with git's own widths and scaling, so `gitdream show`
prints what `git show --stat` prints in a terminal of the same width.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass

MIN_WIDTH = 16 + 6
"""git guarantees 3/8 × 16 = 6 columns to the graph and 5/8 × 16 = 10 to the name."""


@dataclass(frozen=True)
class StatFile:
    """One file of a diffstat: its path, lines added and deleted, `binary` (then `sizes`
    is the blob sizes before and after, in bytes), and the summary line git adds for it
    (`create mode 100644`, `delete mode 100644`, `mode change 100644 => 100755`), if any."""

    path: str
    added: int
    deleted: int
    binary: bool = False
    sizes: tuple[int, int] = (0, 0)
    summary: str | None = None


def _width(text: str) -> int:
    """Display columns of `text` (git's utf8_strwidth: wide characters count two,
    combining marks none)."""
    columns = 0
    for char in text:
        if unicodedata.combining(char):
            continue
        columns += 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1
    return columns


def _scale_linear(it: int, width: int, max_change: int) -> int:
    """git's `scale_linear`: at least one column for any change, the rest in proportion
    (as if the graph were one column narrower, plus one)."""
    if not it:
        return 0
    return 1 + (it * (width - 1) // max_change)


def _shorten(name: str, width: int) -> tuple[str, str]:
    """`(prefix, name)` fitting `width` columns: git cuts the front off, keeps the rest
    from the next `/`, and prefixes `...`."""
    if _width(name) <= width:
        return "", name
    room = max(width - 3, 0)
    while name and _width(name) > room:
        name = name[1:]
    slash = name.find("/")
    return "...", name[slash:] if slash >= 0 else name


def format_stat(files: list[StatFile], width: int = 80) -> str:
    """The `--stat` text of `files` for a terminal `width` columns wide: one line per
    file (` path | N +++--`), the summary line (` 2 files changed, 5 insertions(+), 1
    deletion(-)`), then the files' summary lines (` create mode 100644 path`); empty
    when `files` is. Widths and scaling follow git's `show_stats` with no
    `diff.statNameWidth`/`statGraphWidth` set."""
    if not files:
        return ""
    max_len = max(_width(f.path) for f in files)
    text = [f for f in files if not f.binary]
    max_change = max((f.added + f.deleted for f in text), default=0)
    number_width = len(str(max_change))
    bin_width = 0
    for f in files:
        if f.binary:
            bin_width = max(bin_width, 14 + len(str(f.sizes[0])) + len(str(f.sizes[1])))
            number_width = max(number_width, 3)
    width = max(width, MIN_WIDTH + number_width)
    graph_width = max_change if max_change + 4 > bin_width else bin_width - 4
    name_width = max_len
    if name_width + number_width + 6 + graph_width > width:
        if graph_width > width * 3 // 8 - number_width - 6:
            graph_width = max(width * 3 // 8 - number_width - 6, 6)
        if name_width > width - number_width - 6 - graph_width:
            name_width = width - number_width - 6 - graph_width
        else:
            graph_width = width - number_width - 6 - name_width
    lines = []
    for f in files:
        prefix, name = _shorten(f.path, name_width)
        padding = max(name_width - len(prefix) - _width(name), 0)
        head = f" {prefix}{name}{' ' * padding} | "
        if f.binary:
            sizes = f" {f.sizes[0]} -> {f.sizes[1]} bytes" if any(f.sizes) else ""
            lines.append(f"{head}{'Bin':>{number_width}}{sizes}")
            continue
        add, delete = f.added, f.deleted
        if graph_width <= max_change:
            total = _scale_linear(add + delete, graph_width, max_change)
            if total < 2 and add and delete:
                total = 2
            if add < delete:
                add = _scale_linear(add, graph_width, max_change)
                delete = total - add
            else:
                delete = _scale_linear(delete, graph_width, max_change)
                add = total - delete
        count = f.added + f.deleted
        lines.append(f"{head}{count:>{number_width}}{' ' if count else ''}{'+' * add}{'-' * delete}")
    lines.append(_summary(len(files), sum(f.added for f in text), sum(f.deleted for f in text)))
    lines += [f" {f.summary} {f.path}" for f in files if f.summary]
    return "\n".join(lines) + "\n"


def _summary(files: int, insertions: int, deletions: int) -> str:
    """git's `print_stat_summary`: a zero count is left out unless both are zero."""
    line = f" {files} file{'' if files == 1 else 's'} changed"
    if insertions or not deletions:
        line += f", {insertions} insertion{'' if insertions == 1 else 's'}(+)"
    if deletions or not insertions:
        line += f", {deletions} deletion{'' if deletions == 1 else 's'}(-)"
    return line
