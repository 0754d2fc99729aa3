"""A corpus of documents, for objectives that need consecutive segments to be related (next sentence
prediction): each document has its own Markov chain over opener kinds.

In the plain bracket language every opener is uniform and independent, so two segments never say anything
about each other and "does B follow A?" is unanswerable. Here a document draws its own transition matrix
(each row from a symmetric Dirichlet with `concentration`; small values make each kind strongly prefer a
few successors), and its openers walk that chain from a uniform start, across segment boundaries. Closers
still follow their openers, so every segment is a well-formed bracket sentence. A true continuation
shares its document's transitions (and continues the walk from A's last opener); a segment from another
document follows another chain. As `concentration` grows, rows approach uniform and the corpus approaches
the plain language, where the pair relation carries no signal.

Example:
    >>> import numpy as np
    >>> from minibert.languages import BracketPairs
    >>> rng = np.random.default_rng(0)
    >>> docs = MarkovDocuments(0.1).sample(rng, n=4, n_segments=2, n_pairs=8, language=BracketPairs())
    >>> docs.shape  # (documents, segments, 2 * pairs): consecutive segments of each document
    (4, 2, 16)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from minibert.languages import BracketPairs
from minibert.validation import POSITIVE, check


@dataclass(frozen=True)
class MarkovDocuments:
    """Documents whose opener kinds follow a per-document Markov chain; rows ~ Dirichlet(concentration)."""

    concentration: float = 0.1

    def __post_init__(self) -> None:
        check("MarkovDocuments", "concentration", self.concentration, POSITIVE)

    def chains(self, rng: np.random.Generator, n: int, kinds: int) -> np.ndarray:
        """Transition matrices of `n` documents, (n, K, K): row k is the distribution of the kind after k."""
        return rng.dirichlet(np.full(kinds, float(self.concentration)), size=(n, kinds))

    def sample(
        self, rng: np.random.Generator, n: int, n_segments: int, n_pairs: int, language: BracketPairs
    ) -> np.ndarray:
        """`n` documents of `n_segments` consecutive segments of `n_pairs` pairs of the language's bracket
        types, as token ids (n, n_segments, 2 * n_pairs) int64 (no [CLS]: the objective lays segments out)."""
        chains = self.chains(rng, n, language.kinds)  # (n, K, K)
        kinds = np.empty((n, n_segments * n_pairs), dtype=np.int64)
        kinds[:, 0] = rng.integers(0, language.kinds, size=n)
        docs = np.arange(n)
        for t in range(1, kinds.shape[1]):
            cdf = np.cumsum(chains[docs, kinds[:, t - 1]], axis=-1)  # (n, K)
            u = rng.random(n)[:, None] * cdf[:, -1:]  # scaled by the row sum, which rounds to just under 1
            kinds[:, t] = (u >= cdf).sum(-1)
        openers = language.content_ids[0] + kinds
        pairs = np.stack([openers, openers + language.kinds], axis=-1)  # (n, S * P, 2)
        return pairs.reshape(n, n_segments, 2 * n_pairs)
