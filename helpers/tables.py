"""A tiny table that prints as text, renders as HTML in notebooks; a benchmark's Result."""

from __future__ import annotations

import html
from dataclasses import dataclass, field

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


@dataclass
class Result:
    """What a benchmark measured: rows for a Table, a matplotlib Figure, and summary figures for --json."""

    name: str
    columns: list[str]
    rows: list[list]
    figure: object
    extra: dict = field(default_factory=dict)

    def table(self) -> Table:
        return Table(self.columns, self.rows, title=self.name)

    def as_json(self, png: str) -> dict:
        return {"benchmark": self.name, "results": [dict(zip(self.columns, r)) for r in self.rows], **self.extra,
                "png": png}
