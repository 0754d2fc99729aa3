"""How fast the machine ran a recorded comparison, against the first record's machine: records made in
different sessions on one machine type ran at different paces, so a page compares their wall times through
the mean wall time of one run every record holds with the same configuration (Dyck pre-training of the
control arm).

Example:
    >>> p = Pace(run_s=30.0, first_run_s=20.0, wall_s=900.0)
    >>> p.differs, round(p.ratio, 2), p.at_first_pace_s
    (True, 1.5, 600.0)
"""

from __future__ import annotations

from dataclasses import dataclass

from minibert.tables import arms
from minibert.tables.query import Data

SAME_PACE = (0.8, 1.25)  # ratios within this range read as the same pace: the machine's own noise


@dataclass(frozen=True)
class Pace:
    run_s: float  # this record's mean wall time of the paced run, seconds
    first_run_s: float  # the first record's
    wall_s: float  # this record's invocation's wall time

    @classmethod
    def of(cls, data: Data, first: Data, wall_s: float) -> Pace:
        def mean(d: Data) -> float:
            return d.stat("wall_time_s", experiment=f"dyck/pretrain/{arms.control()}").mean  # every record's

        return cls(mean(data), mean(first), wall_s)

    @property
    def ratio(self) -> float:
        """This record's pace over the first one's (> 1: slower)."""
        return self.run_s / self.first_run_s

    @property
    def differs(self) -> bool:
        return self.ratio < SAME_PACE[0] or self.ratio > SAME_PACE[1]

    @property
    def at_first_pace_s(self) -> float:
        """What the record's wall time would have been at the first record's pace."""
        return self.wall_s / self.ratio
