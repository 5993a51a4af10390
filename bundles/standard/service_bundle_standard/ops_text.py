"""Text operations of Data Operations (Word Count ... Text to DataFrame)."""

from __future__ import annotations

import re
from typing import Any

from core.engine import DataFrame
from core.engine.types import to_text
from service_bundle_standard.user_regex import UserPattern


class TextOperationsMixin:
    """``text_operation(op)`` over ``self.text_input`` and the text fields."""

    def text_operation(self, op: str) -> Any:
        text = to_text(getattr(self, "text_input", ""))
        if not text and op != "Text Join":
            return ""
        if op == "Word Count":
            result: dict[str, int] = {}
            if self.count_words:  # type: ignore[attr-defined]
                words = text.split()
                result["word_count"] = len(words)
                result["unique_words"] = len(set(words))
            if self.count_characters:  # type: ignore[attr-defined]
                result["character_count"] = len(text)
                result["character_count_no_spaces"] = len(text.replace(" ", ""))
            if self.count_lines:  # type: ignore[attr-defined]
                lines = text.split("\n")
                result["line_count"] = len(lines)
                result["non_empty_lines"] = sum(1 for line in lines if line.strip())
            return result
        if op == "Case Conversion":
            case = self.case_type  # type: ignore[attr-defined]
            funcs = {
                "uppercase": str.upper,
                "lowercase": str.lower,
                "title": str.title,
                "capitalize": str.capitalize,
                "swapcase": str.swapcase,
            }
            if case not in funcs:
                raise ValueError(f"Invalid case type '{case}'. Use one of: {', '.join(funcs)}")
            return funcs[case](text)
        if op == "Text Replace":
            pattern = self.search_pattern  # type: ignore[attr-defined]
            if not pattern:
                return text
            if self.use_regex:  # type: ignore[attr-defined]
                return UserPattern(pattern).sub(self.replacement_text or "", text)  # type: ignore[attr-defined]
            return text.replace(pattern, self.replacement_text or "")  # type: ignore[attr-defined]
        if op == "Text Extract":
            pattern = self.extract_pattern  # type: ignore[attr-defined]
            if not pattern:
                return ""
            matches = UserPattern(pattern).finditer_groups(text)
            limit = self.max_matches  # type: ignore[attr-defined]
            if limit and limit > 0:
                matches = matches[:limit]
            return "\n".join(matches)
        if op == "Text Head":
            n = self.head_characters  # type: ignore[attr-defined]
            if n < 0:
                raise ValueError("Characters from Start must be a non-negative number.")
            return text[:n]
        if op == "Text Tail":
            n = self.tail_characters  # type: ignore[attr-defined]
            if n < 0:
                raise ValueError("Characters from End must be a non-negative number.")
            return text[-n:] if n else ""
        if op == "Text Strip":
            chars = self.strip_characters or None  # type: ignore[attr-defined]
            mode = self.strip_mode  # type: ignore[attr-defined]
            if mode == "left":
                return text.lstrip(chars)
            if mode == "right":
                return text.rstrip(chars)
            if mode != "both":
                raise ValueError(f"Invalid strip mode '{mode}'. Use both, left or right.")
            return text.strip(chars)
        if op == "Text Join":
            second = to_text(self.text_input_2)  # type: ignore[attr-defined]
            if text and second:
                return f"{text}\n{second}"
            return text or second
        if op == "Text Clean":
            result_text = text
            if self.remove_special_chars:  # type: ignore[attr-defined]
                result_text = re.sub(r"[^A-Za-z0-9\s]", "", result_text)
            if self.remove_empty_lines:  # type: ignore[attr-defined]
                result_text = "\n".join(line for line in result_text.split("\n") if line.strip())
            if self.remove_extra_spaces:  # type: ignore[attr-defined]
                result_text = "\n".join(re.sub(r"[ \t]+", " ", line).strip() for line in result_text.split("\n"))
            return result_text
        if op == "Text to DataFrame":
            return self._text_to_table(text)
        raise ValueError(f"Unknown text operation '{op}'")

    def _text_to_table(self, text: str) -> DataFrame:
        sep = self.table_separator or "|"  # type: ignore[attr-defined]
        rows: list[list[str]] = []
        for line in text.split("\n"):
            stripped = line.strip()
            if not stripped:
                continue
            if stripped.startswith(sep) and stripped.endswith(sep) and len(stripped) > len(sep):
                stripped = stripped[len(sep) : -len(sep)]
            cells = [c.strip() for c in stripped.split(sep)]
            if all(re.fullmatch(r":?-{2,}:?", c) for c in cells if c) and any(cells):
                continue  # markdown separator row
            rows.append(cells)
        if not rows:
            return DataFrame([])
        if self.has_header:  # type: ignore[attr-defined]
            header, body = rows[0], rows[1:]
        else:
            header, body = [f"col_{i}" for i in range(len(rows[0]))], rows
        width = len(header)
        records = []
        for r in body:
            r = (r + [""] * width)[:width]
            records.append(dict(zip(header, r, strict=True)))
        return DataFrame(records, columns=header)
