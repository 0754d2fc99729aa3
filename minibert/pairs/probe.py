"""The rule-free reading of minimal pairs: a convex probe on the frozen encoder's features.

Each sentence is the mean of the encoder's last hidden states over its content positions, (B, C). A pair is
the difference good minus bad; the probe is an L2-regularised logistic regression with no intercept, fitted
on pairs of a separate training draw, half of them presented bad minus good with the label flipped, so that it
learns a direction w with w . (f(good) - f(bad)) > 0. A pair of the graded set is right where that holds (a tie
is half right). The loss is convex, so the fit has one optimum: no seed, no schedule, no lottery. It reads
masked and causal encoders alike, by what their states hold rather than by how their heads score.

Example:
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> lean = np.eye(8)[0]  # good - bad leans along the first feature, by one SD
    >>> w = fit_direction(rng.normal(size=(2000, 8)) + lean, rng)
    >>> credit = probe_credit(w, rng.normal(size=(2000, 8)) + lean)
    >>> bool(0.8 < credit.mean() < 0.87)  # the Bayes rule's share is P(Z < 1) = 0.841
    True
"""

from __future__ import annotations

import numpy as np
import torch

from minibert.model import Encoder
from minibert.objectives.base import read_sentences

L2 = 1e-3  # on the mean logistic loss, over standardised features: a light ridge that keeps the optimum unique


@torch.no_grad()
def pooled_features(encoder: Encoder, ids: np.ndarray, content: np.ndarray, batch_size: int = 2048) -> np.ndarray:
    """(B, T) ids and their (B, T) content mask -> (B, C) float64: the last layer's mean over content positions."""
    device = next(encoder.parameters()).device
    out = []
    for start in range(0, len(ids), batch_size):
        part = torch.from_numpy(ids[start : start + batch_size]).to(device)
        keep = torch.from_numpy(content[start : start + batch_size]).to(device).float()[..., None]  # (b, T, 1)
        hidden = read_sentences(encoder, part).float()  # (b, T, C)
        out.append(((hidden * keep).sum(1) / keep.sum(1).clamp(min=1)).double().cpu().numpy())
    return np.concatenate(out)


def fit_direction(differences: np.ndarray, rng: np.random.Generator, l2: float = L2) -> np.ndarray:
    """(N, C) good-minus-bad differences -> (C,) the probe's direction in the original feature units. Half of
    the rows (drawn with `rng`) are flipped with their label, so both classes are present and balanced."""
    sign = np.where(rng.random(len(differences)) < 0.5, -1.0, 1.0)
    x = torch.from_numpy(differences * sign[:, None])
    y = torch.from_numpy((sign > 0).astype(np.float64))
    scale = x.std(0).clamp(min=1e-12)  # standardised, so that one ridge fits every width and scale
    z = x / scale
    w = torch.zeros(z.shape[1], dtype=torch.float64, requires_grad=True)
    optimizer = torch.optim.LBFGS([w], lr=1.0, max_iter=500, tolerance_grad=1e-10, tolerance_change=1e-12,
                                  line_search_fn="strong_wolfe")  # fmt: skip

    def loss() -> torch.Tensor:
        optimizer.zero_grad()
        value = torch.nn.functional.binary_cross_entropy_with_logits(z @ w, y) + l2 * (w @ w)
        value.backward()
        return value

    with torch.enable_grad():
        optimizer.step(loss)
    return (w.detach() / scale).numpy()


def probe_credit(direction: np.ndarray, differences: np.ndarray) -> np.ndarray:
    """(N,) credit of each graded pair: 1 where the probe prefers the good sentence, 1/2 on a tie."""
    margin = differences @ direction
    return np.where(margin > 0, 1.0, np.where(margin < 0, 0.0, 0.5))
