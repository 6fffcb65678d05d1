"""Text for an 80-column terminal: widths, wrapping, a three-column table and a progress bar.

The command's output must fit the terminal it is shown in (``COLUMNS``; 80 columns when the output
is not a terminal), counting wide East Asian characters as two columns, so that nothing wraps and
a progress bar redrawn in place stays on its line.

Example
-------
>>> print(table([("load", "1.0 ms", "a result long enough to need a second line")], width=40))
  step    time  result
  --------------------------------------
  load  1.0 ms  a result long enough to
                need a second line
>>> cut("日本語のテキスト", width=9)
'日本語の…'
>>> print(folded("[1,2,3,4,5,6]", indent=2, width=8))
[1,2,3,4
  ,5,6]

Column widths follow Unicode's East Asian Width property (UAX #11), as terminals do.
"""

from __future__ import annotations

import shutil
import sys
import textwrap
import threading
import time
import unicodedata

__all__ = ["columns", "cells", "cut", "folded", "wrapped", "table", "fmt_seconds", "fmt_bytes", "Progress"]


def fmt_seconds(s: float) -> str:
    """A duration for people: ``12 µs``, ``3.4 ms``, ``1.25 s``."""
    if s < 1e-3:
        return f"{s * 1e6:.0f} µs"
    if s < 1:
        return f"{s * 1e3:.1f} ms"
    return f"{s:.2f} s"


def fmt_bytes(n: int) -> str:
    """A size for people: ``512 B``, ``2.7 MiB``."""
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} B"


def columns() -> int:
    """The terminal's width (``COLUMNS`` when set; 80 when not a terminal), at least 40."""
    return max(40, shutil.get_terminal_size((80, 24)).columns)


def wrapped(text: str, width: int, indent: int) -> str:
    """``text`` wrapped to ``width - indent`` columns, continuation lines indented by ``indent``."""
    lines = textwrap.wrap(text, max(20, width - indent), break_on_hyphens=False) or [""]
    return ("\n" + " " * indent).join(lines)


def table(rows: list[tuple[str, str, str]], header=("step", "time", "result"),
          width: int | None = None) -> str:
    """Three columns, the last one wrapped so that no line is wider than ``width`` (default: the
    terminal's, less one)."""
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(2)]
    indent = widths[0] + widths[1] + 6
    width = columns() - 1 if width is None else width
    line = lambda r: f"  {r[0]:<{widths[0]}}  {r[1]:>{widths[1]}}  {wrapped(r[2], width, indent)}"  # noqa: E731
    rule = "  " + "-" * min(width - 2, indent - 2 + max(len(r[2]) for r in [header, *rows]))
    return "\n".join([line(header), rule] + [line(r) for r in rows])


class Progress:
    """A plain-text progress bar on stderr: ``[####......] 2/5 compiling schema 1.3 s``.

    On a terminal the line is redrawn in place and a background ticker keeps the elapsed time
    moving during long steps; otherwise one line is written per step.

    Parameters
    ----------
    total : int
        Number of steps.
    enabled : bool
        False writes nothing.
    """

    def __init__(self, total: int, enabled: bool = True, width: int = 24):
        self.total, self.enabled, self.width = total, enabled, width
        self.done, self.label, self.t0 = 0, "", time.perf_counter()
        self.tty = enabled and sys.stderr.isatty()
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread = None
        if self.tty:
            self._thread = threading.Thread(target=self._tick, daemon=True)
            self._thread.start()

    def _line(self) -> str:
        filled = self.width * self.done // max(self.total, 1)
        bar = "#" * filled + "." * (self.width - filled)
        head = f"[{bar}] {self.done}/{self.total} "
        tail = f" {time.perf_counter() - self.t0:5.1f} s"
        room = columns() - 1 - len(head) - len(tail)  # one line, or redrawing it would wrap
        label = self.label if len(self.label) <= room else self.label[: max(room - 1, 0)] + "…"
        return head + label + tail

    def _draw(self) -> None:
        with self._lock:
            if self.tty:
                sys.stderr.write("\r\033[K" + self._line())
            else:
                sys.stderr.write(self._line() + "\n")
            sys.stderr.flush()

    def _tick(self) -> None:
        while not self._stop.wait(0.2):
            self._draw()

    def step(self, label: str) -> None:
        """Start a step (the previous one counts as done)."""
        if not self.enabled:
            return
        if self.label:
            self.done += 1
        self.label = label
        self._draw()

    def close(self) -> None:
        if not self.enabled:
            return
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        self.done, self.label = self.total, "done"
        self._draw()
        if self.tty:
            sys.stderr.write("\n")
            sys.stderr.flush()


def cells(ch: str) -> int:
    """Terminal columns a character takes (wide East Asian characters take two)."""
    return 2 if unicodedata.east_asian_width(ch) in "WF" else 1


def cut(line: str, width: int | None = None) -> str:
    """``line`` cut to ``width`` columns (default: the terminal's, less one), marked with …."""
    room = columns() - 1 if width is None else width
    if sum(cells(ch) for ch in line) <= room:
        return line
    used = 0
    for i, ch in enumerate(line):
        if used + cells(ch) > room - 1:  # one column for the mark
            return line[:i] + "…"
        used += cells(ch)
    return line


def folded(text: str, indent: int, width: int | None = None) -> str:
    """``text`` broken into lines of at most ``width`` columns (default: the terminal's, less one)
    wherever it reaches them (for documents, whose spaces mean nothing to a reader); continuation
    lines are indented by ``indent``."""
    room = columns() - 1 if width is None else width
    lines, line, used = [], "", 0
    for ch in text:
        if used + cells(ch) > room:
            lines.append(line)
            line, used = " " * indent, indent
        line += ch
        used += cells(ch)
    return "\n".join(lines + [line])
