"""Personal data in a reply: contact and account identifiers found by pattern.

The governance stage redacts the feedback with Presidio before the policy sees it, so a reply can only
contain personal data the policy made up or copied from a lesson. Patterns are enough to catch that and
keep the reward fast (Presidio with spaCy runs ~100 texts/s; the reward must keep up with VADER).
"""

import ipaddress
import re
from dataclasses import dataclass

from rewards.config import PrivacyConfig

# Placeholders written by the governance stage (<EMAIL_1>, <PERSON_2>) are not personal data.
PLACEHOLDER = re.compile(r"<[A-Z_]+_\d+>")
DIGIT = re.compile(r"\d")
SENTENCE_END = re.compile(r"\.\s")
ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}\b")
DECIMAL = re.compile(r"\d+\.\d+")


@dataclass(frozen=True)
class PiiFinding:
    kind: str
    start: int
    end: int


def _luhn_ok(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch)
        if i % 2 == 1:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def _is_ip(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


class PiiPatterns:
    """Compiled patterns with the checks that keep them from firing on ordinary numbers."""

    def __init__(self, config: PrivacyConfig):
        self._min_phone_digits = config.phone_min_digits
        self._patterns = {
            "EMAIL_ADDRESS": re.compile(config.email),
            "US_SSN": re.compile(config.us_ssn),
            "CREDIT_CARD": re.compile(config.card),
            "IBAN_CODE": re.compile(config.iban),
            "IP_ADDRESS": re.compile(config.ip_address),
            "PHONE_NUMBER": re.compile(config.phone),
        }

    def find(self, text: str) -> list[PiiFinding]:
        if "<" in text:
            text = PLACEHOLDER.sub(" ", text)
        found: list[PiiFinding] = []
        has_at, has_digit = "@" in text, DIGIT.search(text) is not None
        for kind, pattern in self._patterns.items():
            # Cheap gates: the regexes cost ~50 us on a reply, the gates ~1 us, and most replies pass them.
            if not (has_at if kind == "EMAIL_ADDRESS" else has_digit):
                continue
            for m in pattern.finditer(text):
                if any(f.start <= m.start() < f.end for f in found):
                    continue  # already reported as a more specific kind
                if self._accept(kind, m.group()):
                    found.append(PiiFinding(kind, m.start(), m.end()))
        return found

    def _accept(self, kind: str, value: str) -> bool:
        digits = re.sub(r"\D", "", value)
        if kind == "CREDIT_CARD":
            return 13 <= len(digits) <= 19 and _luhn_ok(digits)
        if kind == "IP_ADDRESS":
            return _is_ip(value)
        if kind == "PHONE_NUMBER":
            # A date and a version across a sentence end ("after 2023-10-01. 0.9.1 works") is not a phone number,
            # nor is a decimal quoted from the feedback ("I get 103.19999999 instead of 103.2").
            dated = SENTENCE_END.search(value) or ISO_DATE.match(value) or DECIMAL.fullmatch(value)
            return len(digits) >= self._min_phone_digits and not dated
        return True
