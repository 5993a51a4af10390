"""The pattern rules of Guardrails V2: findings with a risk in [0, 1], and redaction.

Each finding names the guardrail it belongs to (``PII``, ``Tokens/Passwords``, ``Jailbreak``,
``Prompt Injection``, ``Malicious Code``, ``Offensive Content``) and its span. Risks: credentials,
card numbers (Luhn-checked) and national ids are high (0.9); e-mail addresses and phone numbers
medium (0.5); injection phrases are scored by weight. Offensive content has no built-in word list:
``custom_blocklist`` supplies the words (0.9). Encoded payloads (base64) are decoded and scanned
again when ``scan_encoded`` is on.
"""

from __future__ import annotations

import base64
import binascii
import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlparse

from core.engine.types import to_text

__all__ = ["Finding", "RuleSettings", "injection_score", "redact", "scan", "split_list"]


@dataclass(frozen=True)
class Finding:
    check: str
    kind: str
    start: int
    end: int
    risk: float
    value: str = field(repr=False, default="")

    def to_dict(self) -> dict[str, Any]:
        return {"check": self.check, "kind": self.kind, "start": self.start, "end": self.end, "risk": self.risk}


@dataclass
class RuleSettings:
    enterprise_orgs: list[str] = field(default_factory=list)
    enterprise_domains: list[str] = field(default_factory=list)
    internal_host_labels: list[str] = field(default_factory=list)
    classification_markers: list[str] = field(default_factory=list)
    url_allowlist: list[str] = field(default_factory=list)
    custom_blocklist: list[str] = field(default_factory=list)
    scan_encoded: bool = True


def split_list(value: Any) -> list[str]:
    """``"a, b\\nc"`` -> ``["a", "b", "c"]``."""
    return [p.strip() for p in re.split(r"[,\n]", to_text(value) if value is not None else "") if p.strip()]


_PII: list[tuple[str, re.Pattern[str], float]] = [
    ("EMAIL", re.compile(r"\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+\b"), 0.5),
    ("SSN", re.compile(r"\b\d{3}-\d{2}-\d{4}\b"), 0.9),
    ("PHONE", re.compile(r"(?<![\w+])(?:\+\d{1,3}[ .-]?)?\(?\d{3}\)?[ .-]\d{3}[ .-]\d{4}\b"), 0.5),
    ("IBAN", re.compile(r"\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){3,7}\b"), 0.9),
]
_CARD = re.compile(r"\b(?:\d[ -]?){13,19}\b")
_SECRETS: list[tuple[str, re.Pattern[str]]] = [
    ("OPENAI_KEY", re.compile(r"\bsk-[A-Za-z0-9_-]{16,}")),
    ("AWS_KEY", re.compile(r"\bAKIA[0-9A-Z]{16}\b")),
    ("GITHUB_TOKEN", re.compile(r"\bgh[pousr]_[A-Za-z0-9]{20,}")),
    ("SLACK_TOKEN", re.compile(r"\bxox[abprs]-[A-Za-z0-9-]{10,}")),
    ("JWT", re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}")),
    ("PRIVATE_KEY", re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----")),
    ("BEARER", re.compile(r"\b[Bb]earer\s+[A-Za-z0-9._~+/-]{16,}=*")),
    ("PASSWORD", re.compile(r"(?i)\b(?:password|passwd|pwd|secret|api[_-]?key)\s*[:=]\s*\S{4,}")),
]
#: (pattern, weight): the score of a text is its highest weight
_INJECTION: list[tuple[re.Pattern[str], float]] = [
    (re.compile(r"(?i)\b(ignore|disregard|forget)\b.{0,40}\b(previous|prior|above|all|your)\b.{0,40}\binstruc"), 0.95),
    (re.compile(r"(?i)\b(reveal|print|show|output|repeat)\b.{0,30}\bsystem prompt"), 0.9),
    (re.compile(r"(?i)\byou are now\b.{0,40}\b(unrestricted|dan|jailbroken|without (any )?restrictions)"), 0.95),
    (re.compile(r"(?i)\bjailbreak"), 0.8),
    (re.compile(r"(?i)\b(no|without) (rules|restrictions|filters|limits)\b"), 0.75),
    (re.compile(r"(?i)\b(bypass|override)\b.{0,30}\b(safety|filter|guard|polic|instruc)"), 0.85),
    (re.compile(r"(?i)\bdeveloper mode\b"), 0.7),
    (re.compile(r"(?i)\b(pretend|act as if)\b.{0,40}\b(no|without)\b"), 0.7),
    (re.compile(r"(?i)\bact as\b"), 0.4),
    (re.compile(r"(?i)\bsystem prompt\b"), 0.5),
]
_CODE: list[tuple[str, re.Pattern[str]]] = [
    ("SHELL_DESTRUCTIVE", re.compile(r"\brm\s+-[a-z]*r[a-z]*f?\s+/(?:\s|$|\*)")),
    ("PIPE_TO_SHELL", re.compile(r"\b(curl|wget)\b[^\n|]*\|\s*(ba|z)?sh\b")),
    ("SCRIPT_TAG", re.compile(r"(?i)<script\b")),
    ("SQL_DESTRUCTIVE", re.compile(r"(?i)\b(drop\s+table|truncate\s+table|;\s*delete\s+from)\b")),
    ("SQL_INJECTION", re.compile(r"(?i)'\s*or\s+'?1'?\s*=\s*'?1")),
    ("ENCODED_POWERSHELL", re.compile(r"(?i)\bpowershell\b.{0,40}-e(nc(odedcommand)?)?\b")),
    ("REVERSE_SHELL", re.compile(r"/dev/tcp/|\bnc\b\s+-e\b")),
    ("FORK_BOMB", re.compile(r":\(\)\s*\{\s*:\|:&\s*\};:")),
]
_URL = re.compile(r"https?://[^\s<>\"')]+")
_B64 = re.compile(r"\b[A-Za-z0-9+/]{20,}={0,2}")


def _luhn(digits: str) -> bool:
    total, parity = 0, len(digits) % 2
    for i, ch in enumerate(digits):
        d = int(ch)
        if i % 2 == parity:
            d *= 2
            if d > 9:
                d -= 9
        total += d
    return total % 10 == 0


def injection_score(text: str) -> float:
    """The highest weight of the jailbreak / prompt-injection phrases found in ``text`` (0 when none)."""
    return max((w for p, w in _INJECTION if p.search(text)), default=0.0)


def _find(text: str, checks: list[str], s: RuleSettings, offset: int = 0) -> list[Finding]:
    out: list[Finding] = []

    def add(check: str, kind: str, m: re.Match[str], risk: float) -> None:
        out.append(Finding(check, kind, offset + m.start(), offset + m.end(), risk, m.group()))

    if "PII" in checks:
        for kind, pattern, risk in _PII:
            for m in pattern.finditer(text):
                add("PII", kind, m, risk)
        for m in _CARD.finditer(text):
            digits = re.sub(r"\D", "", m.group())
            if 13 <= len(digits) <= 19 and _luhn(digits):
                add("PII", "CARD", m, 0.9)
    if "Tokens/Passwords" in checks:
        for kind, pattern in _SECRETS:
            for m in pattern.finditer(text):
                add("Tokens/Passwords", kind, m, 0.95)
        for marker in s.classification_markers:
            for m in re.finditer(re.escape(marker), text, re.IGNORECASE):
                add("Tokens/Passwords", "CLASSIFIED", m, 0.9)
        for label in [*s.internal_host_labels, *s.enterprise_domains]:
            for m in re.finditer(r"\b[\w.-]*" + re.escape(label) + r"\b", text, re.IGNORECASE):
                add("Tokens/Passwords", "INTERNAL_HOST", m, 0.6)
        for org in s.enterprise_orgs:
            for m in re.finditer(r"\b" + re.escape(org) + r"\b", text, re.IGNORECASE):
                add("PII", "ORGANISATION", m, 0.4)
    for check in ("Jailbreak", "Prompt Injection"):
        if check in checks:
            for pattern, weight in _INJECTION:
                for m in pattern.finditer(text):
                    add(check, "INJECTION_PHRASE", m, weight)
    if "Malicious Code" in checks:
        for kind, pattern in _CODE:
            for m in pattern.finditer(text):
                add("Malicious Code", kind, m, 0.9)
        if s.url_allowlist:
            for m in _URL.finditer(text):
                host = (urlparse(m.group()).hostname or "").lower()
                if not any(host == a.lower() or host.endswith("." + a.lower()) for a in s.url_allowlist):
                    add("Malicious Code", "URL_NOT_ALLOWED", m, 0.5)
    if "Offensive Content" in checks or s.custom_blocklist:
        for word in s.custom_blocklist:
            for m in re.finditer(r"\b" + re.escape(word) + r"\b", text, re.IGNORECASE):
                add("Offensive Content", "BLOCKLIST", m, 0.9)
    return out


def scan(text: str, checks: list[str], settings: RuleSettings | None = None) -> list[Finding]:
    """The findings of the enabled ``checks`` in ``text`` (and in its base64 payloads), by position."""
    s = settings or RuleSettings()
    found = _find(text, checks, s)
    if s.scan_encoded:
        for m in _B64.finditer(text):
            try:
                decoded = base64.b64decode(m.group() + "=" * (-len(m.group()) % 4), validate=True).decode("utf-8")
            except (binascii.Error, UnicodeDecodeError, ValueError):
                continue
            if decoded.isprintable() or "\n" in decoded:
                for f in _find(decoded, checks, s):
                    found.append(Finding(f.check, f"ENCODED_{f.kind}", m.start(), m.end(), f.risk, m.group()))
    return sorted(found, key=lambda f: (f.start, -f.end))


def redact(text: str, findings: list[Finding], mode: str = "mask") -> str:
    """``text`` with every finding's span replaced: ``mask`` ``[EMAIL]``, ``tokenize`` ``<EMAIL_1>``,
    ``partial`` all but the last four characters starred."""
    out: list[str] = []
    pos = 0
    counters: dict[str, int] = {}
    for f in findings:
        if f.start < pos:
            continue  # overlaps a span already replaced
        out.append(text[pos : f.start])
        original = text[f.start : f.end]
        if mode == "tokenize":
            counters[f.kind] = counters.get(f.kind, 0) + 1
            out.append(f"<{f.kind}_{counters[f.kind]}>")
        elif mode == "partial":
            keep = 4 if len(original) > 8 else 0
            out.append("*" * (len(original) - keep) + original[len(original) - keep :])
        else:
            out.append(f"[{f.kind}]")
        pos = f.end
    out.append(text[pos:])
    return "".join(out)
