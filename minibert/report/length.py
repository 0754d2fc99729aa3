"""The length-generalisation page's figures (results/length.md), read from the length grid's table.

The grid (configs/ablations/length.yaml) pre-trains MLM and next-token LM on Dyck at 32 tokens with each position
scheme (axis `positions`), grades every run at 16, 32, 48 and 64 tokens against each length's exact oracle
(`val/length_<n>/...`; 32 is the run's own `val/...`), and fully fine-tunes the MLM encoders. `Length` reads
rotary and ALiBi against learned positions, whether each gap holds past the training length, and the
published claims; the page lays them out.

Example:
    >>> page = Length(Data.load("results/length"))  # doctest: +SKIP
    >>> page.answer_rows()[0][:3]  # doctest: +SKIP
    ['MLM', 'rotary (RoPE)', 32]
"""

from __future__ import annotations

import functools

from minibert.tables import arms, stats
from minibert.tables.query import Data, Diff, Stat

SCHEMES = {"learned": "learned absolute", "sinusoidal": "sinusoidal", "rotary": "rotary (RoPE)", "alibi": "ALiBi",
           "none": "no positions"}  # fmt: skip
TRAINED = 32
LENGTHS = (16, 32, 48, 64)
PAST = (48, 64)  # the lengths past the trained one
RELATIVE = ("rotary", "alibi")  # the schemes read against learned positions
HOLDS_WITHIN = 0.02  # "the gap holds": within ±2 points of the gap at the trained length


def metric(n: int, name: str) -> str:
    """The logged key of `name` graded at length `n` ('val/gap/acc' at the trained length)."""
    return f"val/{name}" if n == TRAINED else f"val/length_{n}/{name}"


def pretrained(objective: str, scheme: str) -> dict:
    return {"stage": "pretrain", "objective": objective, "positions": scheme}


def tuned(scheme: str) -> dict:
    return {"stage": "finetune", "positions": scheme}


class Length:
    schemes, lengths, past, relative = SCHEMES, LENGTHS, PAST, RELATIVE
    trained, holds_within = TRAINED, HOLDS_WITHIN

    def __init__(self, data: Data):
        self.data = data
        pre = data.rows(stage="pretrain")["objective"].dropna()
        self.objectives = {a: arms.label(a) for a in arms.listed(pre)}  # every arm it pre-trains: its label

    @property
    def untrained_from(self) -> int:
        """The first position a learned table holds past the trained length (position 0 is [CLS])."""
        return TRAINED + 1

    @staticmethod
    def alibi_slopes(heads: int) -> list[str]:
        """ALiBi's slope of each head as the model sets it (minibert.model.alibi_bias), as '1/16'."""
        from minibert.model import alibi_bias  # torch, only for the page that states the slopes

        slopes = -alibi_bias(heads, 2, causal=False)[:, 0, 1]  # (H,): head h's bias one position apart
        return [f"1/{1 / float(m):.3g}" for m in slopes]  # 1/16 exactly at 2 heads; 1/6.35 at 3

    def against_learned(self, objective: str, scheme: str, n: int) -> Diff:
        """The scheme's gap minus learned positions' at length `n`, paired by seed."""
        return self.data.diff(metric(n, "gap/acc"), pretrained(objective, scheme), pretrained(objective, "learned"))

    def growth(self, objective: str, scheme: str, n: int) -> Diff:
        """The gap at length `n` minus the gap at the trained length, each run's two gradings paired by seed."""
        return self.data.between(metric(n, "gap/acc"), metric(TRAINED, "gap/acc"), **pretrained(objective, scheme))

    @functools.cached_property
    def _answer(self) -> tuple[list[list], list[tuple[str, Diff]]]:
        rows, drawn = [], []
        for o, name in self.objectives.items():
            for p in RELATIVE:
                for n in (TRAINED, *PAST):
                    c = self.against_learned(o, p, n)
                    half = stats.number((c.interval.hi - c.interval.lo) / 2)
                    rows.append([name, SCHEMES[p], n, c, half, c.seeds, c.verdict(SCHEMES[p], "learned")])
                    if n != TRAINED:
                        drawn.append((f"{name}, {SCHEMES[p]} vs learned at {n}", c))
        return rows, drawn

    def answer_rows(self) -> list[list]:
        """[objective, scheme, length, A − learned, ±, seeds, verdict] of rotary and ALiBi against learned."""
        return self._answer[0]

    def answer_figure(self) -> list[tuple[str, Diff]]:
        """The answer's differences past the trained length, for the forest figure."""
        return self._answer[1]

    @functools.cached_property
    def _held(self) -> tuple[list[list], dict[int, dict[str, list[str]]]]:
        """The gap at each length past 32 minus the gap at 32, per objective and scheme (> 0 favours the trained
        length, a larger gap being worse, so it is the verdict's first arm), and who got which verdict."""
        rows, held = [], {n: {} for n in PAST}
        for o, name in self.objectives.items():
            for p, scheme in SCHEMES.items():
                row = [name, scheme]
                for n in PAST:
                    d = self.growth(o, p, n)
                    v = d.verdict(f"{TRAINED} (trained)", str(n), margin=HOLDS_WITHIN)
                    held[n].setdefault(v, []).append(f"{name} with {scheme}")
                    row += [stats.fmt(d.interval, signed=True), v]
                rows.append(row)
        return rows, held

    def held_rows(self) -> list[list]:
        """[objective, positions, gap at 48 − at 32, verdict, gap at 64 − at 32, verdict]."""
        return self._held[0]

    def held_sentence(self, n: int) -> str:
        """'equivalent within ±2.0 for 7 of 10 objective and positions pairs (...); ...' at length `n`."""
        held = self._held[1][n]
        total = sum(len(v) for v in held.values())
        said = []
        for v, which in sorted(held.items(), key=lambda item: item[0].lower()):  # as Jinja's dictsort
            named = f" ({', '.join(which)})" if len(which) < total else ""
            said.append(f"{v} for {len(which)} of {total} objective and positions pairs{named}")
        return "; ".join(said) + "."

    def gap_series(self, objective: str) -> dict[str, list[tuple[int, Stat]]]:
        return {name: [(n, self.data.stat(metric(n, "gap/acc"), **pretrained(objective, p))) for n in LENGTHS]
                for p, name in SCHEMES.items()}  # fmt: skip

    def gap_header(self) -> list[str]:
        trained = {TRAINED: f"{TRAINED} (trained)"}
        return ["positions", "seeds", *(trained.get(n, str(n)) for n in LENGTHS),
                f"ceiling at {' / '.join(map(str, LENGTHS))}"]  # fmt: skip

    def gap_rows(self, objective: str) -> list[list]:
        """[positions, seeds, the gap at each length..., the ceilings at each length]."""
        rows = []
        for p, name in SCHEMES.items():
            where = pretrained(objective, p)
            ceilings = " / ".join(stats.number(self.data.stat(metric(n, "ceiling/acc"), **where).mean) for n in LENGTHS)
            rows.append([name, self.data.stat(metric(TRAINED, "gap/acc"), **where).seeds,
                         *(self.data.stat(metric(n, "gap/acc"), **where) for n in LENGTHS), ceilings])  # fmt: skip
        return rows

    def finetune_series(self) -> dict[str, list[tuple[int, Stat]]]:
        return {name: [(n, self.data.stat(metric(n, "acc"), **tuned(p))) for n in LENGTHS]
                for p, name in SCHEMES.items()}  # fmt: skip

    def finetune_header(self) -> list[str]:
        return ["positions", "seeds", *map(str, LENGTHS), f"at {TRAINED} − at {LENGTHS[-1]}"]

    def finetune_rows(self) -> list[list]:
        """[positions, seeds, the fine-tuned accuracy at each length..., at 32 − at 64 in words]."""
        rows = []
        for p, name in SCHEMES.items():
            drop = self.data.between(metric(TRAINED, "acc"), metric(LENGTHS[-1], "acc"), **tuned(p))
            rows.append([name, self.data.stat(metric(TRAINED, "acc"), **tuned(p)).seeds,
                         *(self.data.stat(metric(n, "acc"), **tuned(p)) for n in LENGTHS),
                         drop.say(str(TRAINED), str(LENGTHS[-1]))])  # fmt: skip
        return rows

    def claim(self, objective: str, scheme: str) -> str:
        """The scheme against learned positions at each graded length from the trained one on, in words."""
        return ";".join(f" at {n}, {self.against_learned(objective, scheme, n).say(SCHEMES[scheme], 'learned')}"
                        for n in (TRAINED, *PAST)) + "."  # fmt: skip
