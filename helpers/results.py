"""What a benchmark measured (`python -m helpers.bench NAME`): rows, a figure, and summary figures for --json."""

from __future__ import annotations

from dataclasses import dataclass, field

from helpers.tables import Table


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
