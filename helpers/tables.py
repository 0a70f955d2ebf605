"""A tiny table that prints as text and renders as HTML in notebooks."""

from __future__ import annotations

import html

from helpers.errors import CourseError


class Table:
    def __init__(self, columns, rows, title: str = ""):
        self.columns = [str(c) for c in columns]
        self.rows = [[_cell(v) for v in row] for row in rows]
        for row in self.rows:
            if len(row) != len(self.columns):
                raise CourseError(f"Table(): row {row} has {len(row)} cells, expected {len(self.columns)}; "
                                  "give one value per column.")
        self.title = title

    def __str__(self) -> str:
        widths = [max(len(r[i]) for r in [self.columns, *self.rows]) for i in range(len(self.columns))]
        lines = [self.title] if self.title else []
        lines.append("  ".join(c.ljust(w) for c, w in zip(self.columns, widths)).rstrip())
        lines.append("  ".join("-" * w for w in widths))
        lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in self.rows]
        return "\n".join(lines)

    __repr__ = __str__

    def _repr_html_(self) -> str:
        head = "".join(f"<th>{html.escape(c)}</th>" for c in self.columns)
        body = "".join(
            "<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in r) + "</tr>" for r in self.rows
        )
        caption = f"<caption>{html.escape(self.title)}</caption>" if self.title else ""
        return f"<table>{caption}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _cell(value) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)
