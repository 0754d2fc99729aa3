"""A language added from outside the package (tests/languages_plugin.py, the walk-through of
docs/languages.md) plugs into the oracle, MLM pre-training and fine-tuning by class path alone."""

import itertools

import numpy as np
import pytest

from minibert.training.fit import fit
from tests.languages_plugin import Copy


def members(lang: Copy) -> np.ndarray:
    strings = np.array([(0, *s) for s in itertools.product(range(2, lang.vocab_size), repeat=lang.seq_len - 1)])
    return strings[lang.contains(strings)]


@pytest.mark.parametrize("causal", [False, True])
def test_its_oracle_matches_enumerating_its_words(causal):
    lang = Copy(kinds=2, half=3)
    words = members(lang)
    assert len(words) == 2**3
    lik = np.random.default_rng(0).random((4, lang.seq_len, lang.vocab_size))
    cavity = lang.cavity(lik, causal=causal)
    for b, t in itertools.product(range(4), range(1, lang.seq_len)):
        seen = [s for s in range(1, lang.seq_len) if s != t and (s < t or not causal)]
        weight = np.prod([lik[b, s, words[:, s]] for s in seen] or [np.ones(len(words))], axis=0)
        expected = np.bincount(words[:, t], weights=weight, minlength=lang.vocab_size)
        np.testing.assert_allclose(cavity[b, t], expected / expected.sum(), rtol=1e-9)


def test_its_spoiled_sentences_are_outside_it_and_its_samples_inside():
    lang, rng = Copy(), np.random.default_rng(1)
    ids = lang.sample(rng, 500)
    assert lang.contains(ids).all() and not lang.contains(lang.spoil(ids, rng)[0]).any()


def test_it_pretrains_and_finetunes_by_class_path(tmp_path):
    language = (
        '--model.init_args.objective.init_args.language={"class_path": "tests.languages_plugin.Copy", '
        '"init_args": {"kinds": 3, "half": 5}}'
    )
    tiny = ["--trainer.max_steps=2", "--data.val_size=100", language]
    pre = fit(["configs/pretrain.yaml"], tiny, root_dir=tmp_path / "pre")
    assert pre["val/ceiling/acc"] > 0 and pre["val/gap/acc"] == pytest.approx(pre["val/ceiling/acc"] - pre["val/acc"])
    tuned = fit(["configs/finetune.yaml"], [*tiny, "--model.init_args.regime=no_pretrain"], root_dir=tmp_path / "ft")
    assert tuned["val/ceiling/acc"] == 1.0 and "val/acc_grammatical" in tuned


def test_a_language_without_partners_gets_no_partner_categories_and_keeps_its_own():
    from minibert.masking import IGNORE, KEPT, KIND_CATEGORIES, MaskingRecipe, categories
    from minibert.objectives import MaskedLM

    class Unpaired(Copy):
        shared_categories = ("opener", "closer")  # its "partner" is only a copy position: not a bracket's

    lang = Unpaired()
    mlm = MaskedLM(language=lang)
    assert mlm.categories == ("opener", "closer", *KIND_CATEGORIES)
    rng = np.random.default_rng(0)
    ids = lang.sample(rng, 50)
    masked = MaskingRecipe().apply(ids, rng, lang)
    cats = categories(lang, ids, masked.labels, masked.kind)
    assert cats.shape == (50, lang.seq_len, 5)
    picked = masked.labels != IGNORE
    assert (cats[..., 0] == (lang.is_opener(ids) & picked)).all() and (cats[..., 4] == (masked.kind == KEPT)).all()

    class Odd(Copy):
        shared_categories = ("opener", "sideways")

    with pytest.raises(ValueError, match=r"shared_categories names \['sideways'\]"):
        MaskedLM(language=Odd())
