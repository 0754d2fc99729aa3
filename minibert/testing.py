"""Checks a plug-in author runs: one call builds the plug-in small and checks the rules the rest of minibert
relies on, each failure one sentence naming the broken rule (`RuleBroken`).

    >>> from minibert.testing import check_language, check_objective
    >>> check_objective(MyObjective)                      # doctest: +SKIP
    >>> check_objective(MyObjective, language=Dyck())     # doctest: +SKIP
    >>> check_language(MyLanguage, seq_len=16)            # doctest: +SKIP

`check_language` reads the sentences, the token classes, the exact oracle where there is one (a distribution
at every position that gives the true token weight), the grammaticality task and the minimal pairs.
`check_objective` reads a batch's shapes, its determinism under a seed, the masking invariants where the
objective masks, answers hidden from the encoder's input, the loss and its gradient, the scoring interface, the
oracle's credit as the bound it is, and a loss that stays finite through a few dozen training steps.
Both run in seconds on a CPU; docs/first_day.md runs them, and every shipped plug-in passes them
(tests/core/test_plugin_checks.py).
"""

from __future__ import annotations

import math

import numpy as np
import torch

from minibert.languages import Language
from minibert.languages.base import CLS_ID, MASK_ID
from minibert.masking import IGNORE, MaskingRecipe
from minibert.model import EncoderConfig
from minibert.objectives.base import Objective, Scored

ROWS = 64  # sentences a check draws: enough for rates to be read within a few standard errors
SMALL = EncoderConfig(width=16, heads=2, layers=1)
STEPS = 32  # training steps the finite-loss check takes: a few dozen, enough for a loss that wears out with use
STEP_ROWS = 16  # sentences per training step: tiny, so the steps take a fraction of a second
LR = 3e-3  # EncoderModule's default learning rate, so the check trains as a run does


class RuleBroken(AssertionError):
    """A plug-in breaks a rule minibert relies on; the message is one sentence naming it."""


def _rule(ok: bool, who: str, rule: str, found: str) -> None:
    if not ok:
        raise RuleBroken(f"{who}: {rule}; {found}")


def check_language(cls: type[Language], **init_args) -> Language:
    """Build `cls(**init_args)` and check it as a language; returns it. RuleBroken, in one sentence, otherwise."""
    lang = cls(**init_args)
    who = cls.__name__
    rng = np.random.default_rng(0)
    ids = lang.sample(rng, ROWS)
    _rule(
        isinstance(ids, np.ndarray) and ids.shape == (ROWS, lang.seq_len),
        who,
        f"sample(rng, n) returns an (n, seq_len) array, here ({ROWS}, {lang.seq_len})",
        f"got {getattr(ids, 'shape', type(ids).__name__)}",
    )
    _rule(np.issubdtype(ids.dtype, np.integer), who, "sentences are integer token ids", f"got dtype {ids.dtype}")
    _rule(
        bool((ids[:, 0] == CLS_ID).all()),
        who,
        "every sentence starts with [CLS] (id 0)",
        f"column 0 holds {sorted(set(ids[:, 0].tolist()))[:5]}",
    )
    content = ids[:, 1:]
    _rule(
        bool(((content > MASK_ID) & (content < lang.vocab_size)).all()),
        who,
        f"content tokens are the language's own ids, 2 to vocab_size - 1 = {lang.vocab_size - 1} (never [CLS] or "
        "[MASK])",
        f"found ids {sorted(set(content[(content <= MASK_ID) | (content >= lang.vocab_size)].tolist()))[:5]}",
    )
    again = lang.sample(np.random.default_rng(0), ROWS)
    _rule(
        np.array_equal(ids, again),
        who,
        "sample draws with its rng alone (the same seed gives the same sentences)",
        "two draws with seed 0 differ",
    )
    for name in ("is_opener", "is_closer"):
        mask = getattr(lang, name)(ids)
        _rule(
            np.shape(mask) == ids.shape and np.asarray(mask).dtype == bool,
            who,
            f"{name}(ids) is a boolean array of the sentences' shape",
            f"got {np.shape(mask)}",
        )
    partner = np.asarray(lang.partner(ids))
    _rule(partner.shape == ids.shape, who, "partner(ids) gives a position for every token", f"got {partner.shape}")
    _rule(
        bool(((partner >= -1) & (partner < lang.seq_len)).all()),
        who,
        "partner positions lie in the sentence (or are -1 for none)",
        "found one outside it",
    )
    if lang.has_oracle:
        _check_oracle(lang, ids, who)
    if lang.has_grammar:
        _rule(
            bool(np.asarray(lang.contains(ids)).all()),
            who,
            "contains(ids) says yes to every sentence sample makes",
            f"{int((~np.asarray(lang.contains(ids))).sum())} of {ROWS} were refused",
        )
        bad, kinds, *_ = lang.spoil(ids, np.random.default_rng(1))
        _rule(
            np.shape(bad) == ids.shape,
            who,
            "spoil(ids, rng) returns sentences of the same shape",
            f"got {np.shape(bad)}",
        )
        _rule(
            not bool(np.asarray(lang.contains(bad)).any()),
            who,
            "every sentence spoil makes is out of the language",
            f"contains says yes to {int(np.asarray(lang.contains(bad)).sum())} of them",
        )
    _check_pairs(lang, who)
    return lang


def _check_oracle(lang: Language, ids: np.ndarray, who: str) -> None:
    """The exact oracle, shown every token: a distribution at every position, the true token inside its support."""
    rows = ids[:8]
    likelihood = np.zeros((*rows.shape, lang.vocab_size))
    likelihood[np.arange(len(rows))[:, None], np.arange(rows.shape[1]), rows] = 1.0  # every position shown as is
    for causal in (False, True):
        cavity = np.asarray(lang.cavity(likelihood, causal=causal))
        side = "left context" if causal else "both sides"
        _rule(
            cavity.shape == likelihood.shape,
            who,
            f"cavity(likelihood) ({side}) has the likelihood's shape",
            f"got {cavity.shape}, not {likelihood.shape}",
        )
        content = cavity[:, 1:]
        _rule(
            bool(np.isfinite(content).all() and (content >= -1e-9).all()),
            who,
            f"the oracle's cavity ({side}) holds finite, non-negative weights",
            "found a negative or NaN one",
        )
        total = content.sum(-1)
        _rule(
            bool((total > 0).all()),
            who,
            f"the oracle ({side}) gives some token weight at every position",
            "a position has none",
        )
        true = np.take_along_axis(content, rows[:, 1:, None], -1)[..., 0] / total
        _rule(
            bool((true > 0).all()),
            who,
            f"the oracle ({side}) gives the true token weight at every position of a sentence of the language",
            f"it gives it none at {int((true <= 0).sum())} positions",
        )


def _check_pairs(lang: Language, who: str) -> None:
    """Minimal pairs where the language makes them: the good sentence in the language, the bad one not."""
    from minibert.pairs import PairsUnavailable, draw_pairs, edits_of

    try:
        edits_of(lang)
        pairs = draw_pairs(lang, np.random.default_rng(2), per_cell=4)
    except PairsUnavailable:
        return  # a language may make no pairs; `pair_eval.required` refuses it where pairs are asked for
    if lang.has_grammar:
        _rule(
            bool(np.asarray(lang.contains(pairs.good)).all()),
            who,
            "a minimal pair's good sentence is in the language",
            "contains refuses one",
        )
        _rule(
            not bool(np.asarray(lang.contains(pairs.bad)).any()),
            who,
            "a minimal pair's bad sentence is out of the language",
            "contains accepts one",
        )


def check_objective(cls: type[Objective], language: Language | None = None, **init_args) -> Objective:
    """Build `cls(language=language, **init_args)` (the objective's own default language without one) and check
    it as an objective on a small encoder; returns it. RuleBroken, in one sentence, otherwise."""
    who = cls.__name__
    objective = cls(**init_args) if language is None else cls(language=language, **init_args)
    lang = objective.language
    torch.manual_seed(0)
    encoder = objective.setup_encoder(SMALL)
    batches = {split: objective.make_batch(np.random.default_rng(0), ROWS, split) for split in ("train", "val")}
    for split, batch in batches.items():
        _rule(
            isinstance(batch, dict) and all(isinstance(v, torch.Tensor) for v in batch.values()),
            who,
            "make_batch returns a dict of tensors",
            f"the {split} batch holds {type(batch).__name__}",
        )
        _rule(
            all(v.dim() > 0 and len(v) == ROWS for v in batch.values()),
            who,
            "every tensor of a batch has one row per example",
            f"the {split} batch's sizes are {sorted({len(v) if v.dim() else 0 for v in batch.values()})}, not {ROWS}",
        )
        again = objective.make_batch(np.random.default_rng(0), ROWS, split)
        _rule(
            batch.keys() == again.keys() and all(_same(batch[k], again[k]) for k in batch),
            who,
            "make_batch draws with its rng alone (the same seed gives the same batch)",
            f"two {split} batches drawn with seed 0 differ",
        )
        _check_hidden_answers(objective, encoder, batch, who, split)
    if isinstance(getattr(objective, "masking", None), MaskingRecipe) and "labels" in batches["train"]:
        _check_masking(objective, batches["train"], who)
    objective.train()
    encoder.train()
    scored = objective(encoder, batches["train"])
    _check_scored(scored, objective, who, "train")
    _rule(
        scored.loss.requires_grad,
        who,
        "the loss reaches the weights (it is computed from them, with gradients on)",
        "it requires no gradient (detached, or computed under torch.no_grad)",
    )
    scored.loss.backward()
    grads = [p.grad for p in [*encoder.parameters(), *objective.parameters()] if p.requires_grad]
    _rule(
        any(g is not None and bool(g.abs().sum() > 0) for g in grads),
        who,
        "the loss reaches the weights (its gradient is not zero everywhere)",
        "no parameter got a gradient",
    )
    encoder.eval()
    objective.eval()
    with torch.no_grad():
        first, second = (_seeded(objective, encoder, batches["val"]) for _ in range(2))
    _check_scored(first, objective, who, "val")
    _rule(
        torch.equal(first.loss, second.loss),
        who,
        "in eval mode the same batch under the same torch seed gives the "
        "same loss (what it samples, ELECTRA's generator say, it samples from torch's generator)",
        f"{float(first.loss):.6g} then {float(second.loss):.6g}",
    )
    _check_credit(first, who, "an untrained model")
    _check_scoring(objective, encoder, lang, who)
    _check_training(objective, encoder, who)
    encoder.eval()
    objective.eval()
    with torch.no_grad():
        _check_credit(_seeded(objective, encoder, batches["val"]), who, f"a model trained {STEPS} steps")
    return objective


def _seeded(objective: Objective, encoder, batch: dict) -> Scored:
    torch.manual_seed(0)
    return objective(encoder, batch)


def _same(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Equal, a NaN (a figure not known there) matching a NaN."""
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    return bool(((a == b) | (a.isnan() & b.isnan())).all()) if a.is_floating_point() else torch.equal(a, b)


def _check_masking(objective: Objective, batch: dict, who: str) -> None:
    """Graded positions are content positions holding the language's tokens; the clean sentence is recoverable
    from the inputs and the labels; and about `p_pick` of the content is picked."""
    inputs, labels = batch["inputs"].numpy(), batch["labels"].numpy()
    lang, recipe = objective.language, objective.masking
    picked = labels != IGNORE
    _rule(not bool(picked[:, 0].any()), who, "[CLS] is never picked for grading", "a label sits at position 0")
    _rule(
        bool(((labels[picked] > MASK_ID) & (labels[picked] < lang.vocab_size)).all()),
        who,
        "a graded position's label is the true token, one of the language's own",
        "found another id",
    )
    if lang.has_grammar:
        clean = np.where(picked, labels, inputs)
        _rule(
            bool(np.asarray(lang.contains(clean)).all()),
            who,
            "the inputs with their labels put back give a "
            "sentence of the language (positions not picked are left as they were)",
            "one is not",
        )
    rate, n = float(picked[:, 1:].mean()), picked[:, 1:].size
    se = math.sqrt(recipe.p_pick * (1 - recipe.p_pick) / n)
    _rule(
        abs(rate - recipe.p_pick) <= 5 * se + 1e-9,
        who,
        f"about p_pick = {recipe.p_pick:g} of the content is picked",
        f"{rate:.3f} of {n} positions were",
    )


def _check_hidden_answers(objective: Objective, encoder, batch: dict, who: str, split: str) -> None:
    """A graded answer is not in what the encoder reads, beyond what the objective shows on purpose.

    Read where a batch grades tokens laid over its input: `labels` (B, T) beside `inputs` (B, T), IGNORE where
    nothing is graded. The places the encoder reads are every position of `inputs` (only those on the left, for a
    causal encoder) and of `segments` where it has segment embeddings. Two things show an answer honestly: the
    declared masking recipe, at the answer's own position (BERT keeps 10% of the graded tokens as they are, and a
    random replacement hits the true token 1 time in |content|; an objective without a `MaskingRecipe` declares
    none), and the language, elsewhere (a language that repeats a token at a fixed distance shows it there; read
    from its own sentences, at the same position or for the same token, whichever repeats more). A place leaks
    when it shows the answer on more than half of the questions those leave open (`shown > (1 + explained) / 2`),
    beyond four standard errors: copying it then answers most questions, so the model learns to copy rather than
    the language. A kept token stays honest because it is a minority the model cannot tell from the rest; a
    next-token answer stands one place to the right, where a causal encoder cannot read it."""
    inputs, labels = batch.get("inputs"), batch.get("labels")
    if not (isinstance(inputs, torch.Tensor) and isinstance(labels, torch.Tensor) and inputs.dim() == 2
            and inputs.shape == labels.shape and not labels.is_floating_point()):  # fmt: skip
        return  # the answers are not tokens laid over the input (a class per sentence, say)
    graded = (labels.numpy() != IGNORE) & (labels.numpy() >= 0)  # a negative label grades nothing
    if not graded.any():
        return
    lang = objective.language
    recipe = getattr(objective, "eval_masking" if split == "val" else "masking", None)
    recipe = recipe if isinstance(recipe, MaskingRecipe) else getattr(objective, "masking", None)
    kept = recipe.p_kept + recipe.p_random / len(lang.content_ids) if isinstance(recipe, MaskingRecipe) else 0.0
    places = {"inputs": inputs.numpy()}
    segments = batch.get("segments")
    if encoder.seg is not None and isinstance(segments, torch.Tensor) and segments.shape == inputs.shape:
        places["segments"] = segments.numpy()
    answer = labels.numpy()[graded]  # (N,)
    repeats = _repeats(lang, int(answer.max()) + 1)
    excess, name, d, shown, n, explained = max(
        _places(places, graded, answer, kept, repeats, encoder.config.causal), key=lambda x: x[0]
    )
    side = "in place" if d == 0 else f"{abs(d)} position{'s' * (abs(d) > 1)} to its {'right' if d > 0 else 'left'}"
    _rule(
        excess <= 0,
        who,
        "a graded answer is hidden from the encoder's input (beyond the tokens the masking recipe keeps and the "
        "language repeats)",
        f"in the {split} batch {shown:.0%} of {n} graded positions show their answer {side} in `{name}`, where the "
        f"recipe and the language explain {explained:.0%}",
    )


def _places(places: dict, graded: np.ndarray, answer: np.ndarray, kept: float, repeats: tuple, causal: bool) -> list:
    """For every place the encoder reads (a batch key, and d: how far right of the graded position), (how far the
    share of graded positions showing their answer there lies past its limit, the key, d, that share, the
    questions it is read on, the share the recipe and the language explain).

    An answer's own place is where it stands in the sentence: the graded position itself, unless a causal encoder
    grades a token it cannot read yet (next-token prediction: one to the right, showing its answer every time). The
    language's repeats are counted from that place."""
    rows, cols = np.nonzero(graded)  # (N,) each: the graded positions
    inputs, T = places["inputs"], graded.shape[1]

    def shares(place: np.ndarray, d: int) -> tuple[float, int, np.ndarray]:
        """(share of the graded positions with a place d to their right showing their answer, how many, which)."""
        at = cols + d
        inside = (at >= 0) & (at < T)
        n = int(inside.sum())
        return (float((place[rows[inside], at[inside]] == answer[inside]).mean()) if n else 0.0), n, inside

    def language(d: int, home: int) -> np.ndarray:  # (N,): how often the language shows each answer d - home away
        width, table = repeats
        if d - home not in table:
            return np.zeros(len(answer))
        by_place, by_token = table[d - home]
        here = by_place[cols] if home == 0 and T == width else 0.0
        return np.maximum(here, by_token[answer])

    def limit(explained: float, n: int) -> float:
        return (1 + explained) / 2 + 2 / math.sqrt(n)  # 2 / sqrt(n): 4 standard errors at most

    home, best = 0, 0.0
    for d in range(1, T) if causal else ():  # the places a causal encoder cannot read
        shown, n, inside = shares(inputs, d)
        if n and shown > max(best, limit(float(language(d, 0)[inside].mean()), n)):
            home, best = d, shown
    out = []
    for name, place in places.items():
        for d in range(-(T - 1), 1 if causal else T):
            shown, n, inside = shares(place, d)
            if n == 0:
                continue
            if name == "segments":  # segment ids carry no token on purpose
                explained = 0.0
            elif d == home:
                explained = kept
            else:
                explained = float(language(d, home)[inside].mean())
            out.append((shown - limit(explained, n), name, d, shown, n, explained))
    return out


def _repeats(lang: Language, tokens: int) -> tuple[int, dict[int, tuple[np.ndarray, np.ndarray]]]:
    """How often the language itself shows a token again `d` positions away, read from its own sentences: (their
    length L, offset d -> (by position (L,): from position t; by token (tokens,): from wherever token y stands,
    zero for a token its sentences never hold)), for 0 < |d| < L."""
    ids = lang.draw(np.random.default_rng(5), 4 * ROWS, "train")  # (n, L)
    L = ids.shape[1]
    table = {}
    for d in (*range(-(L - 1), 0), *range(1, L)):
        here = ids[:, max(0, -d) : L - max(0, d)]  # (n, L - |d|): each token, and the one d to its right
        same = here == ids[:, max(0, d) : L - max(0, -d)]
        by_place = np.zeros(L)
        by_place[max(0, -d) : L - max(0, d)] = same.mean(0)
        seen = np.bincount(here.ravel(), minlength=tokens)[:tokens]
        hits = np.bincount(here[same], minlength=tokens)[:tokens]
        table[d] = by_place, np.divide(hits, seen, out=np.zeros(tokens), where=seen > 0)
    return L, table


def _check_training(objective: Objective, encoder, who: str) -> None:
    """The loss and its gradient stay finite as training goes on, not only on the first batch: `STEPS` AdamW steps
    at the training's learning rate, each on a fresh training batch. A loss that divides by something training
    drives to zero, or by a count of calls that runs down, turns NaN or infinite only after some steps, where a run
    would stop, hours in."""
    params = [(f"encoder.{n}", p) for n, p in encoder.named_parameters()] + list(objective.named_parameters())
    named = list({id(p): (n, p) for n, p in params if p.requires_grad}.values())  # each once, a tied head too
    optimizer = torch.optim.AdamW([p for _, p in named], lr=LR)
    rule = f"the loss and its gradient stay finite through {STEPS} training steps (AdamW on fresh training batches)"
    encoder.train()
    objective.train()
    torch.manual_seed(0)
    for step in range(1, STEPS + 1):
        batch = objective.make_batch(np.random.default_rng(step), STEP_ROWS, "train")  # seed 0 drew the val batch
        loss = objective(encoder, batch).loss
        _rule(bool(torch.isfinite(loss).all()), who, rule, f"at step {step} the loss is {loss.detach().tolist()}")
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        bad = [n for n, p in named if p.grad is not None and not bool(torch.isfinite(p.grad).all())]
        _rule(not bad, who, rule, f"at step {step} the gradient of {', '.join(bad[:3])} is not finite")
        optimizer.step()


def _check_scored(scored: Scored, objective: Objective, who: str, split: str) -> None:
    _rule(isinstance(scored, Scored), who, "forward returns a Scored", f"got {type(scored).__name__}")
    _rule(
        scored.loss.dim() == 0 and bool(torch.isfinite(scored.loss)),
        who,
        "the loss is a finite scalar",
        f"on the {split} batch it is {scored.loss.detach().tolist()}",
    )
    boards = objective.boards()
    for prefix, part in scored.graded().items():
        if prefix not in boards:  # an objective that grades no accuracy (its figures are `values`)
            continue
        board, n = boards[prefix], len(part.preds)
        _rule(
            part.preds.shape == part.target.shape == (n,),
            who,
            "preds and target are (N,) alike",
            f"{prefix or 'the'} board's are {tuple(part.preds.shape)} and {tuple(part.target.shape)}",
        )
        _rule(
            tuple(part.categories.shape) == (n, len(board.categories)) and part.categories.dtype == torch.bool,
            who,
            "categories are (N, len(categories)) booleans, in the scoreboard's order",
            f"{prefix or 'the'} board's are {tuple(part.categories.shape)} {part.categories.dtype}",
        )


def _check_credit(scored: Scored, who: str, model: str) -> None:
    """Where the exact oracle grades the questions, its credit is a probability, and its mean bounds what `model`
    (an untrained one, then one trained a few steps) scores on them: the Bayes predictor's expected accuracy is
    the highest any reaches, unless the questions give their answers away."""
    for prefix, part in scored.graded().items():
        if part.credit is None or len(part.preds) == 0:
            continue
        credit = part.credit.double()
        _rule(
            bool(((credit >= -1e-9) & (credit <= 1 + 1e-9)).all()),
            who,
            "the oracle's credit on a question lies in [0, 1]",
            f"{prefix or 'the'} board's runs from {float(credit.min()):.3g} to {float(credit.max()):.3g}",
        )
        acc = float((part.preds == part.target).double().mean())
        se = math.sqrt(max(acc * (1 - acc), 1e-4) / len(credit))
        _rule(
            float(credit.mean()) + 4 * se >= acc,
            who,
            "no model beats the exact oracle's expected accuracy",
            f"{prefix or 'the'} board: {model} scores {acc:.3f} against the oracle's {float(credit.mean()):.3f}",
        )


def _check_scoring(objective: Objective, encoder, lang: Language, who: str) -> None:
    """A sentence score where `scoring` names one: (B,) finite, the same on a second call; none where it names
    none (the pairs' probe reads such an encoder)."""
    ids = torch.from_numpy(lang.sample(np.random.default_rng(3), 8))
    if objective.scoring is None:
        try:
            objective.sentence_scores(encoder, ids)
        except NotImplementedError:
            return
        raise RuleBroken(
            f"{who}: an objective with scoring = None scores no sentence; sentence_scores returned one "
            "(name its rule in `scoring`)"
        )
    try:
        scores = objective.sentence_scores(encoder, ids)
    except NotImplementedError:
        raise RuleBroken(
            f"{who}: an objective that names its scoring rule ({objective.scoring!r}) implements "
            "sentence_scores; it raises NotImplementedError"
        ) from None
    _rule(
        isinstance(scores, torch.Tensor) and scores.shape == (8,),
        who,
        "sentence_scores(encoder, ids) returns one score per sentence, (B,)",
        f"got {getattr(scores, 'shape', scores)}",
    )
    _rule(bool(torch.isfinite(scores).all()), who, "sentence scores are finite", "found a NaN or an infinity")
    _rule(
        torch.equal(scores, objective.sentence_scores(encoder, ids)),
        who,
        "sentence_scores gives the same scores on a second call",
        "they differ",
    )


__all__ = ["RuleBroken", "check_language", "check_objective"]
