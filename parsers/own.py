"""tormortem's own JSON documents (truth.json, params.json / rates files, analysis.json).

They sit beside logs (a simulated campaign's directory, an --out directory) but carry no log
lines: recognised, accounted as one irrelevant record, never read as evidence.
"""

from __future__ import annotations

import json
import re
from typing import ClassVar

from parsers.base import NOISE, DocumentParser

_SCHEMA = re.compile(r'"schema"\s*:\s*"tormortem\.[a-z]+/\d+"')


class OwnDocumentParser(DocumentParser):
    name = "tormortem"
    description = "tormortem's own JSON outputs (truth.json, rates/params, analysis.json)"

    MAX_SCORE: ClassVar[int] = 95

    @classmethod
    def sniff(cls, head: str, path: str) -> int:
        return 95 if head.lstrip().startswith("{") and _SCHEMA.search(head[:4096]) else 0

    def parse_document(self, data: bytes) -> None:
        doc = json.loads(data)
        schema = doc.get("schema", "") if isinstance(doc, dict) else ""  # --source on any JSON
        self.acct.note(NOISE, 1, str(schema)[:100])


PARSERS = [OwnDocumentParser]
