"""Table operations of Data Operations (Add Column ... Drop Duplicates, Merge); tables are row lists."""

from __future__ import annotations

import json
from typing import Any

from core.engine import Data, DataFrame, Message
from service_bundle_standard.ops_fields import FILTER_OPERATORS


def _num(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    try:
        return float(str(value).strip())
    except (TypeError, ValueError):
        return None


class TableOperationsMixin:
    """``table_operation(op)`` over ``self.df`` and the table fields."""

    def _tables(self) -> list[DataFrame]:
        raw = getattr(self, "df", None)
        items = raw if isinstance(raw, list) else ([raw] if raw not in (None, "") else [])
        out = []
        for item in items:
            if isinstance(item, DataFrame):
                out.append(item)
            elif isinstance(item, Message):
                out.append(DataFrame([{"text": item.text}]))
            elif isinstance(item, Data):
                out.append(item.to_dataframe())
            elif isinstance(item, list):
                out.append(DataFrame(item))
        return out

    def _column(self, frame: DataFrame, name: str, what: str = "Column") -> str:
        if not name:
            raise ValueError(f"{what} name is required.")
        if name not in frame.columns:
            raise ValueError(f"{what} '{name}' not found. Available columns: {', '.join(frame.columns)}")
        return name

    def table_operation(self, op: str) -> DataFrame:
        if op == "Merge":
            return self._merge()
        tables = self._tables()
        if not tables:
            raise ValueError("No table input provided.")
        if op == "Concatenate":
            rows = [row for t in tables for row in t.rows]
            cols: list[str] = []
            for t in tables:
                cols.extend(c for c in t.columns if c not in cols)
            return DataFrame(rows, columns=cols)
        frame = tables[0]
        rows = [dict(r) for r in frame.rows]
        columns = list(frame.columns)
        if op == "Add Column":
            name = self.new_column_name  # type: ignore[attr-defined]
            if not name:
                raise ValueError("New column name is required.")
            for r in rows:
                r[name] = self.new_column_value  # type: ignore[attr-defined]
            return DataFrame(rows, columns=[*columns, name] if name not in columns else columns)
        if op == "Drop Column":
            col = self._column(frame, self.column_name)  # type: ignore[attr-defined]
            for r in rows:
                r.pop(col, None)
            return DataFrame(rows, columns=[c for c in columns if c != col])
        if op == "Filter":
            col = self._column(frame, self.column_name)  # type: ignore[attr-defined]
            return DataFrame(
                [r for r in rows if _match(r.get(col), self.filter_value, self.filter_operator)], columns=columns
            )  # type: ignore[attr-defined]
        if op in ("Head", "Tail"):
            n = self.num_rows  # type: ignore[attr-defined]
            if n < 0:
                raise ValueError("Number of rows must be non-negative.")
            return DataFrame(rows[:n] if op == "Head" else (rows[-n:] if n else []), columns=columns)
        if op == "Rename Column":
            col = self._column(frame, self.column_name)  # type: ignore[attr-defined]
            new = self.new_column_name  # type: ignore[attr-defined]
            if not new:
                raise ValueError("New column name is required.")
            renamed = [{(new if k == col else k): v for k, v in r.items()} for r in rows]
            return DataFrame(renamed, columns=[new if c == col else c for c in columns])
        if op == "Replace Value":
            col = self._column(frame, self.column_name)  # type: ignore[attr-defined]
            old, new_value = self.replace_value, self.replacement_value  # type: ignore[attr-defined]
            for r in rows:
                if r.get(col) == old or (r.get(col) is not None and str(r.get(col)) == old):
                    r[col] = new_value
            return DataFrame(rows, columns=columns)
        if op == "Select Columns":
            wanted = [c.strip() for c in (self.columns_to_select or []) if c and c.strip()]  # type: ignore[attr-defined]
            if not wanted:
                raise ValueError("Select at least one column.")
            for c in wanted:
                self._column(frame, c)
            return DataFrame([{c: r.get(c) for c in wanted} for r in rows], columns=wanted)
        if op == "Sort":
            col = self._column(frame, self.column_name)  # type: ignore[attr-defined]
            numeric = all(_num(r.get(col)) is not None for r in rows if r.get(col) is not None)

            def key(r: dict[str, Any]) -> tuple[int, Any]:
                v = r.get(col)
                if v is None:
                    return (1, 0)
                return (0, _num(v) if numeric else str(v))

            present = sorted((r for r in rows if r.get(col) is not None), key=key, reverse=not self.ascending)  # type: ignore[attr-defined]
            return DataFrame(present + [r for r in rows if r.get(col) is None], columns=columns)
        if op == "Drop Duplicates":
            subset = [self._column(frame, self.column_name)] if self.column_name else columns  # type: ignore[attr-defined]
            seen: set[str] = set()
            kept = []
            for r in rows:
                sig = json.dumps([r.get(c) for c in subset], sort_keys=True, default=str)
                if sig not in seen:
                    seen.add(sig)
                    kept.append(r)
            return DataFrame(kept, columns=columns)
        raise ValueError(f"Unknown table operation '{op}'")

    def _merge(self) -> DataFrame:
        left, right = self.left_dataframe, self.right_dataframe  # type: ignore[attr-defined]
        if not isinstance(left, DataFrame) or not isinstance(right, DataFrame):
            tables = self._tables()
            if len(tables) >= 2:
                left, right = tables[0], tables[1]
            else:
                raise ValueError("Merge needs a left and a right table.")
        on = self.merge_on_column  # type: ignore[attr-defined]
        self._column(left, on, "Merge column")
        self._column(right, on, "Merge column")
        how = self.merge_how  # type: ignore[attr-defined]
        if how not in ("inner", "outer", "left", "right"):
            raise ValueError(f"Invalid merge type '{how}'")
        overlap = (set(left.columns) & set(right.columns)) - {on}

        def lname(c: str) -> str:
            return f"{c}_x" if c in overlap else c

        def rname(c: str) -> str:
            return f"{c}_y" if c in overlap else c

        columns = [lname(c) for c in left.columns] + [rname(c) for c in right.columns if c != on]
        index: dict[Any, list[dict[str, Any]]] = {}
        for r in right.rows:
            index.setdefault(json.dumps(r.get(on), default=str), []).append(r)
        used: set[int] = set()
        out = []
        for lrow in left.rows:
            matches = index.get(json.dumps(lrow.get(on), default=str), [])
            if matches:
                for rrow in matches:
                    used.add(id(rrow))
                    row = {lname(c): lrow.get(c) for c in left.columns}
                    row.update({rname(c): rrow.get(c) for c in right.columns if c != on})
                    out.append(row)
            elif how in ("left", "outer"):
                row = {lname(c): lrow.get(c) for c in left.columns}
                row.update({rname(c): None for c in right.columns if c != on})
                out.append(row)
        if how in ("right", "outer"):
            for rrow in right.rows:
                if id(rrow) not in used:
                    row = {lname(c): None for c in left.columns}
                    row[on] = rrow.get(on)
                    row.update({rname(c): rrow.get(c) for c in right.columns if c != on})
                    out.append(row)
        return DataFrame(out, columns=columns)


def _match(cell: Any, value: Any, operator: str) -> bool:
    text = "" if cell is None else str(cell)
    value = "" if value is None else str(value)
    if operator == "equals":
        a, b = _num(cell), _num(value)
        return (a == b) if a is not None and b is not None else text == value
    if operator == "not equals":
        a, b = _num(cell), _num(value)
        return (a != b) if a is not None and b is not None else text != value
    if operator == "contains":
        return value in text
    if operator == "not contains":
        return value not in text
    if operator == "starts with":
        return text.startswith(value)
    if operator == "ends with":
        return text.endswith(value)
    if operator in ("greater than", "less than"):
        a, b = _num(cell), _num(value)
        if a is None or b is None:
            return (text > value) if operator == "greater than" else (text < value)
        return a > b if operator == "greater than" else a < b
    raise ValueError(f"Invalid filter operator '{operator}'. Use one of: {', '.join(FILTER_OPERATORS)}")
