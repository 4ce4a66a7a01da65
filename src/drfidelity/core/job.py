"""What one job is, apart from how it runs: studies plan their jobs with it and score stages
read their maps by it, without loading the runner or any method."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Job:
    """One map to make: ``method`` with ``settings`` and ``seed`` on input ``config``.

    ``label`` is the name the map is stored under (the method's, unless one method runs in
    two arms, e.g. toorPIA's embedding arm on the noise-dims probe). ``extend`` jobs fit on
    the input's ``X_fit`` and place its ``X_add`` rows (the out-of-sample test).
    """

    method: str
    seed: int
    settings: tuple[tuple[str, object], ...] = ()
    config: str = ""
    label: str = ""
    extend: bool = False

    @classmethod
    def of(cls, method: str, seed: int, settings: dict | None = None, **where) -> "Job":
        """A job with ``settings`` given as a mapping (stored as sorted pairs: hashable)."""
        return cls(method, seed, tuple(sorted((settings or {}).items())), **where)

    @property
    def kwargs(self) -> dict:
        return dict(self.settings)

    @property
    def name(self) -> str:
        return self.label or self.method

    def describe(self) -> str:
        where = f" on {self.config}" if self.config else ""
        return f"{self.name} seed {self.seed}{where}"
