"""Fine-tuning: regimes, checkpoint loading, the grammaticality data."""

import lightning as L
import numpy as np
import pytest
import torch

from minibert.languages.base import SPECIALS
from minibert.model import Encoder, EncoderConfig, count_parameters
from minibert.objectives.grammaticality import GRAMMATICAL, UNGRAMMATICAL, Grammaticality
from minibert.training.checkpoints import last_checkpoint
from minibert.training.finetune import FinetuneModule
from tests.finetuning import checksum, train


@pytest.fixture(scope="module")
def checkpoint(short_run):
    """A briefly pre-trained default encoder (the session's shared 60-step run)."""
    return last_checkpoint(short_run["log_dir"])


@pytest.mark.parametrize(("regime", "encoder_trains"), [("frozen", False), ("full", True)])
def test_the_regime_decides_whether_the_encoder_trains_and_the_head_always_does(checkpoint, regime, encoder_trains):
    """Frozen: the encoder is bit-identical after training and stays in eval mode; full: it changes, in train
    mode at every step."""
    module = FinetuneModule(regime=regime, encoder_ckpt=str(checkpoint))
    before, head_before = checksum(module.encoder), checksum(module.objective)
    probe = train(module)
    assert (checksum(module.encoder) != before) == encoder_trains
    assert checksum(module.objective) != head_before  # the head did train
    assert probe.modes and all(mode == encoder_trains for mode in probe.modes)
    assert module.encoder.training == encoder_trains


@pytest.mark.parametrize("norm", ["post", "pre"])
def test_the_encoder_computes_the_same_in_train_and_eval_mode(norm):
    """No dropout or batch norm: a frozen encoder's eval mode is BERT's habit, and no result depends on it."""
    torch.manual_seed(0)
    encoder = Encoder(EncoderConfig(vocab_size=18, max_len=17, norm=norm))
    ids = torch.randint(0, 18, (8, 17))
    trained, evaluated = encoder.train()(ids), encoder.eval()(ids)
    assert torch.equal(trained, evaluated)


def test_loaded_encoder_equals_checkpoint_and_mlm_head_is_not_loaded(checkpoint):
    state = torch.load(checkpoint, map_location="cpu", weights_only=True)["state_dict"]
    module = FinetuneModule(regime="full", encoder_ckpt=str(checkpoint))
    for name, tensor in module.encoder.state_dict().items():
        assert torch.equal(tensor, state[f"encoder.{name}"]), name
    mlm_head = state["objective.head.weight"]  # (vocab, width)
    assert all(p.shape != mlm_head.shape for p in module.objective.parameters())


def test_no_pretrain_starts_from_fresh_weights(checkpoint):
    state = torch.load(checkpoint, map_location="cpu", weights_only=True)["state_dict"]
    module = FinetuneModule(regime="no_pretrain", encoder_ckpt=str(checkpoint))
    assert not torch.equal(module.encoder.tok.weight, state["encoder.tok.weight"])


@pytest.mark.parametrize(("regime", "trainable"), [("frozen", 66), ("full", 26_594), ("no_pretrain", 26_594)])
def test_trainable_parameter_counts_and_optimizer_sees_only_those(checkpoint, regime, trainable):
    module = FinetuneModule(regime=regime, encoder_ckpt=str(checkpoint))
    assert module.parameter_counts() == {"params": 26_594, "trainable_params": trainable}
    assert count_parameters(module.objective) == 66  # nn.Linear(32, 2) on [CLS]
    module.trainer = L.Trainer(max_steps=10, logger=False)
    optimizer = module.configure_optimizers()["optimizer"]
    handed = sum(p.numel() for group in optimizer.param_groups for p in group["params"])
    assert handed == trainable


def test_checkpoint_errors_are_clear(checkpoint, tmp_path):
    with pytest.raises(FileNotFoundError, match="encoder_ckpt=.*no such file"):
        FinetuneModule(regime="full", encoder_ckpt=str(tmp_path / "missing.ckpt"))
    corrupt = tmp_path / "corrupt.ckpt"
    corrupt.write_bytes(b"not a checkpoint")
    with pytest.raises(ValueError, match="not a readable PyTorch checkpoint"):
        FinetuneModule(regime="full", encoder_ckpt=str(corrupt))
    with pytest.raises(ValueError, match="regime='half'.*allowed"):
        FinetuneModule(regime="half", encoder_ckpt=str(checkpoint))
    with pytest.raises(ValueError, match="encoder_ckpt is required"):
        FinetuneModule(regime="frozen")


def test_checkpoint_of_another_shape_is_refused(checkpoint):
    with pytest.raises(ValueError, match="differs from the checkpoint"):
        FinetuneModule(regime="full", encoder_ckpt=str(checkpoint), encoder=EncoderConfig(width=64))


def test_grammaticality_data_is_balanced_with_exactly_one_wrong_closer_in_negatives():
    task = Grammaticality()
    lang = task.language
    first_opener, first_closer, kinds, n_pairs = lang.content_ids[0], lang.first_closer, lang.kinds, lang.pairs
    assert (first_opener, first_closer, kinds, n_pairs) == (2, 10, 8, 8)  # the seed's language by default
    batch = task.make_batch(np.random.default_rng(0), 4000, "train")
    ids, labels, where = (batch[k].numpy() for k in ("inputs", "labels", "corrupted_at"))
    assert (labels == GRAMMATICAL).sum() == (labels == UNGRAMMATICAL).sum() == 2000
    openers, closers = ids[:, 1::2], ids[:, 2::2]  # (B, 8) each
    wrong = closers - first_closer != openers - first_opener  # (B, 8)
    assert (wrong.sum(1)[labels == GRAMMATICAL] == 0).all()
    assert (wrong.sum(1)[labels == UNGRAMMATICAL] == 1).all()
    assert ((openers >= first_opener) & (openers < first_opener + kinds)).all()
    assert ((closers >= first_closer) & (closers < first_closer + kinds)).all()
    # the corrupted pair is uniform over the eight pairs (each ~250 of 2000; 5 sigma band)
    pairs = np.bincount((where[labels == UNGRAMMATICAL] - 2) // 2, minlength=n_pairs)
    assert np.all(np.abs(pairs - 250) < 5 * np.sqrt(2000 * (1 / 8) * (7 / 8)))
    assert (wrong.argmax(1)[labels == UNGRAMMATICAL] == (where[labels == UNGRAMMATICAL] - 2) // 2).all()


@pytest.mark.parametrize("causal", [False, True])
def test_the_classifier_reads_the_row_that_has_seen_the_whole_sentence(causal):
    """Bidirectional: the [CLS] row (row 0). Causal: the last row, since a causal [CLS] sees only itself.
    Either way the features change when any token changes, the first and the last included."""
    torch.manual_seed(0)
    task = Grammaticality()
    config = task.configure_encoder(EncoderConfig(causal=causal))
    encoder = Encoder(config).eval()
    task.build(config)
    assert task.readout == (-1 if causal else 0)
    ids = torch.from_numpy(task.language.sample(np.random.default_rng(0), 4))
    with torch.no_grad():
        base = task.features(encoder, ids)
        for position in (1, ids.shape[1] - 1):
            changed = ids.clone()
            first = len(SPECIALS)  # content tokens follow the specials
            changed[:, position] = torch.where(ids[:, position] == first, first + 1, first)  # another token
            assert not torch.allclose(task.features(encoder, changed), base), position
        if causal:  # and row 0 would not have: it is the same for every sentence
            rows = encoder(ids)[:, 0]
            assert torch.allclose(rows, rows[:1].expand_as(rows))
