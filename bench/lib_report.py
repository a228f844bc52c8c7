"""Tables for compare.py: the same rows rendered as plain text and as markdown.

Every measurement is a table whose value columns are redis | volley | ratio
(volley / redis), plus optional extra columns (target, notes). Cells that
could not be measured show the reason ("unsupported", "error").
"""
import statistics


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def ratio(volley, redis):
    if volley is None or redis in (None, 0):
        return None
    return volley / redis


def fmt(v, digits=2):
    if v is None:
        return "-"
    if isinstance(v, str):
        return v
    if abs(round(v)) >= 1000:
        return f"{v:,.0f}"
    return f"{v:.{digits}f}"


class Table:
    def __init__(self, title, first_col, extra_cols=(), unit=""):
        self.title, self.unit = title, unit
        self.header = [first_col, "redis", "volley", "ratio", *extra_cols]
        self.rows, self.notes = [], []

    def add(self, label, redis, volley, *extra, digits=2):
        """redis/volley: a number, or a string such as 'unsupported'."""
        r = ratio(volley, redis) if not isinstance(redis, str) and not isinstance(volley, str) else None
        self.rows.append([label, fmt(redis, digits), fmt(volley, digits), fmt(r, 3), *map(fmt, extra)])

    def note(self, text):
        if text not in self.notes:
            self.notes.append(text)

    def text(self):
        widths = [max(len(str(r[i])) for r in [self.header] + self.rows) for i in range(len(self.header))]
        line = lambda r: "  ".join(str(c).ljust(w) if i == 0 else str(c).rjust(w)  # noqa: E731
                                  for i, (c, w) in enumerate(zip(r, widths)))
        title = f"{self.title}" + (f" [{self.unit}]" if self.unit else "")
        out = [title, "-" * len(title), line(self.header)]
        out += [line(r) for r in self.rows]
        out += [f"  * {n}" for n in self.notes]
        return "\n".join(out)

    def markdown(self):
        title = f"**{self.title}**" + (f" ({self.unit})" if self.unit else "")
        out = [title, "", "| " + " | ".join(self.header) + " |",
               "|" + "|".join("---" if i == 0 else "---:" for i in range(len(self.header))) + "|"]
        out += ["| " + " | ".join(str(c) for c in r) + " |" for r in self.rows]
        if self.notes:
            out.append("")
            out += [f"- {n}" for n in self.notes]
        return "\n".join(out)

    def as_dict(self):
        return {"title": self.title, "unit": self.unit, "header": self.header,
                "rows": self.rows, "notes": self.notes}
