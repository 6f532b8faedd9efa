"""What verify reports: one finding per check, the first failure named by seq."""

from __future__ import annotations

import msgspec


class Finding(msgspec.Struct, frozen=True):
    check: str
    ok: bool
    detail: str
    seq: int | None = None


class Report(msgspec.Struct):
    game: str
    events: int = 0
    findings: list[Finding] = []

    @property
    def ok(self) -> bool:
        return all(f.ok for f in self.findings)

    @property
    def first_failure(self) -> Finding | None:
        return next((f for f in self.findings if not f.ok), None)
