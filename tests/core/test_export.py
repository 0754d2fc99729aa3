"""Export to Hugging Face `transformers`: the exported model gives minibert's logits, on every language and every
exportable layout; the fill-mask pipeline answers as minibert does; a round trip is bit for bit; every refused
configuration says why in one line and writes nothing; and nothing touches the network."""

import logging
import os
import re
import socket
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import torch

transformers = pytest.importorskip("transformers")

from minibert.export import ExportError, Vocabulary, export, load_hf, write  # noqa: E402
from minibert.export.__main__ import main as export_main  # noqa: E402
from minibert.languages import CLS_ID, MASK_ID, BracketPairs, Dyck, Text  # noqa: E402
from minibert.model import EncoderConfig  # noqa: E402
from minibert.objectives import Grammaticality, MaskedLM  # noqa: E402
from minibert.training.module import EncoderModule  # noqa: E402

TOLERANCE = write.TOLERANCE  # the export's own check
BERT = EncoderConfig(layout="bert")
LAYOUTS = {"learned": "BertForMaskedLM", "rotary": "RoFormerForMaskedLM"}


@pytest.fixture(autouse=True)
def offline(monkeypatch):
    """Every test runs offline: the hub's switches set, its endpoint a closed port, and any connection refused
    and recorded (the test fails if one was tried)."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")
    tried = []

    def refuse(self, address, *args):
        tried.append(address)
        raise OSError(f"network access in a test: {address}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    yield
    assert not tried, f"tried to connect to {tried}"


@pytest.fixture
def hf_warnings():
    """The warnings `transformers` logs while the test runs (its logger does not propagate to pytest's)."""
    records: list[logging.LogRecord] = []
    handler = logging.Handler(logging.WARNING)
    handler.emit = records.append
    logger = logging.getLogger("transformers")
    logger.addHandler(handler)
    yield records
    logger.removeHandler(handler)


@pytest.fixture(scope="module")
def text_language(tmp_path_factory) -> Text:
    """A small user corpus with a 100-piece WordPiece, prepared in a cache of its own."""
    root = tmp_path_factory.mktemp("text")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("MINIBERT_CACHE", str(root / "cache"))
        return Text(corpus=str(write_corpus(root / "corpus")), vocab_size=100, length=15, val_share=0.3)


def write_corpus(folder: Path, n_files: int = 10, lines: int = 20) -> Path:
    """Made-up sentences over a few words that repeat, so that WordPiece splits the rarer ones."""
    words = "alpha beta gamma delta epsilon zeta theta iota kappa lambda omicron sigma upsilon omega".split()
    rng = np.random.default_rng(0)
    folder.mkdir(parents=True)
    for i in range(n_files):
        sentences = [" ".join(rng.choice(words, size=rng.integers(4, 12))) + "." for _ in range(lines)]
        (folder / f"doc{i:02d}.txt").write_text(f"Document {i} on tokenizers.\n\n" + " ".join(sentences))
    return folder


def languages(text_language):
    return {"bracket_pairs": BracketPairs(), "dyck": Dyck(kinds=4, length=32, max_depth=6), "text": text_language}


def build(objective, config: EncoderConfig = BERT, seed: int = 0):
    """A randomly initialised encoder and head (eval mode), as pre-training or fine-tuning would start."""
    torch.manual_seed(seed)
    encoder = objective.setup_encoder(config)
    with torch.no_grad():  # LayerNorms start at (1, 0): give them weights that a wrong mapping would show
        for module in [*encoder.modules(), *objective.modules()]:
            if isinstance(module, torch.nn.LayerNorm):
                module.weight.uniform_(0.5, 1.5), module.bias.uniform_(-0.5, 0.5)
    return encoder.eval(), objective.head.eval()


def random_ids(vocab_size: int, max_len: int, n: int = 6, seed: int = 1) -> torch.Tensor:
    """(n, max_len) ids over the whole vocabulary ([PAD] included where there is one), a third of them
    [MASK], [CLS] first."""
    rng = np.random.default_rng(seed)
    ids = rng.integers(0, vocab_size, size=(n, max_len))
    ids[rng.random(ids.shape) < 1 / 3] = MASK_ID
    ids[:, 0] = CLS_ID
    return torch.from_numpy(ids)


def load_clean(cls, folder: Path, hf_warnings: list):
    """`cls.from_pretrained(folder)` in eval mode, checked: no weight missing, unused or resized, and no warning
    about weights that were newly initialised or not used."""
    model, info = cls.from_pretrained(folder, output_loading_info=True)
    assert not any(info.values()), info
    said = [r.getMessage() for r in hf_warnings]
    assert not [m for m in said if "initialized" in m or "not used" in m or "MISSING" in m], said
    return model.eval()


@pytest.mark.parametrize("positions", LAYOUTS)
@pytest.mark.parametrize("name", ["bracket_pairs", "dyck", "text"])
def test_the_exported_masked_lm_gives_minibert_s_logits(name, positions, text_language, tmp_path, hf_warnings):
    language = languages(text_language)[name]
    encoder, head = build(MaskedLM(language=language), replace(BERT, positions=positions))
    done = export(encoder, head, Vocabulary.of(language), tmp_path / "hf")
    assert done.hf_class == LAYOUTS[positions] and done.max_abs_diff <= TOLERANCE

    model = load_clean(transformers.AutoModelForMaskedLM, tmp_path / "hf", hf_warnings)
    assert type(model).__name__ == LAYOUTS[positions]
    ids = random_ids(language.vocab_size, language.seq_len)
    if name == "text":
        ids[:, -4:] = language.token_id["[PAD]"]  # padding, attended to as minibert attends to it
    own = language.vocab_size  # the logits past it are the specials appended for transformers' tokenizer
    pad = transformers.AutoTokenizer.from_pretrained(tmp_path / "hf").pad_token_id
    with torch.no_grad():
        ours = head(encoder(ids))
        theirs = model(input_ids=ids).logits
        diff = (theirs[..., :own] - ours).abs().max().item()
        print(f"{name} {positions}: max |logit difference| {diff:.3g}")
        assert diff <= TOLERANCE
        assert (torch.softmax(theirs, -1)[..., own:] == 0).all()  # an appended special is never predicted
        # a right-padded batch with an attention mask: each sentence's logits are minibert's on that sentence alone
        lengths = [max(2, language.seq_len - 3 * i) for i in range(len(ids))]
        mask = (torch.arange(language.seq_len) < torch.tensor(lengths)[:, None]).long()
        padded = model(input_ids=torch.where(mask.bool(), ids, pad), attention_mask=mask).logits[..., :own]
        for row, n in enumerate(lengths):
            assert (padded[row, :n] - head(encoder(ids[row : row + 1, :n]))[0]).abs().max() <= TOLERANCE


def test_the_tokenizers_read_sentences_as_minibert_does(text_language, tmp_path):
    for name, language in languages(text_language).items():
        encoder, head = build(MaskedLM(language=language))
        export(encoder, head, Vocabulary.of(language), tmp_path / name)
        tokenizer = transformers.AutoTokenizer.from_pretrained(tmp_path / name)
        sentence = {"text": "Return the tokenizers of the [MASK] document."}.get(name, "a A [MASK] B b b B B")
        ids = tokenizer(sentence)["input_ids"]
        expected = language.encode(sentence if name == "text" else f"[CLS] {sentence}")  # text's encode adds [CLS]
        assert ids == expected.tolist()  # [CLS] first, no [SEP] at the end
        assert (tokenizer.cls_token_id, tokenizer.mask_token_id) == (CLS_ID, MASK_ID)
        config = transformers.AutoConfig.from_pretrained(tmp_path / name)
        assert len(tokenizer) == config.vocab_size and config.minibert_vocab_size == language.vocab_size
        assert tokenizer.model_max_length == language.seq_len
        # every tokenizer pads a batch and reads an unknown word: text's own specials, appended to a bracket language's
        assert (tokenizer.pad_token, tokenizer.unk_token) == ("[PAD]", "[UNK]")
        assert tokenizer("a \u2603")["input_ids"][-1] == tokenizer.unk_token_id  # a snowman: in no vocabulary
        if name != "text":
            assert (tokenizer.pad_token_id, tokenizer.unk_token_id) == (language.vocab_size, language.vocab_size + 1)


def test_the_fill_mask_pipeline_answers_as_the_fill_in_demo_does(scripts, tmp_path):
    demo = scripts("demo_fill_in")
    module = EncoderModule(objective=MaskedLM(), encoder=BERT, init_seed=0).eval()
    export(module.encoder, module.objective.head, Vocabulary.of(BracketPairs()), tmp_path / "hf")
    fill_mask = transformers.pipeline("fill-mask", model=str(tmp_path / "hf"), top_k=1)
    data = demo.StreamDataModule(source=module.objective)  # the demo's validation set
    data.setup("validate")
    language = module.objective.language
    for index in range(5):  # the demo's held-out sentence (--index 0) and the next four
        example = data.val_set[index]
        inputs = example["inputs"]
        rows, _, _ = demo.fill_in(module, inputs, example["labels"])
        predicted = next(r for r in rows.splitlines() if r.startswith("predicted")).split()[1:]  # (T,) tokens
        masks = (inputs == MASK_ID).nonzero().ravel().tolist()
        answers = fill_mask(language.decode(inputs[1:]))  # the tokenizer adds the [CLS]
        answers = [answers] if len(masks) == 1 else answers
        assert masks and [a[0]["token_str"] for a in answers] == [predicted[t] for t in masks]


def test_the_fill_mask_pipeline_takes_unknown_words_and_batches_with_minibert_s_answers(tmp_path):
    language = BracketPairs()
    encoder, head = build(MaskedLM(language=language))
    export(encoder, head, Vocabulary.of(language), tmp_path / "hf")
    fill_mask = transformers.pipeline("fill-mask", model=str(tmp_path / "hf"), top_k=1)
    sentences = ["a A b [MASK] c C", "a [MASK] b B", "zzz [MASK] c C"]  # two lengths, and a word it never saw

    def minibert(sentence: str) -> tuple[str, float]:
        words = ["[CLS]", *sentence.split()]
        ids = torch.tensor([[language.token_id.get(w, 0) for w in words]])
        with torch.no_grad():
            probs = torch.softmax(head(encoder(ids))[0, words.index("[MASK]")], -1)
        return language.vocab[int(probs.argmax())], float(probs.max())

    batched = fill_mask(sentences[:2], batch_size=2)  # padded to one length
    for sentence, answer in zip(sentences[:2], batched, strict=True):
        token, score = minibert(sentence)
        assert answer[0]["token_str"] == token and answer[0]["score"] == pytest.approx(score, abs=1e-5)
    unknown = fill_mask(sentences[2])[0]
    assert unknown["token_str"] in language.vocab  # answered, with [UNK] in place of the word


def test_a_fine_tuned_classifier_exports_as_bert_s_with_its_labels(tmp_path, hf_warnings):
    objective = Grammaticality(language=Dyck(kinds=4, length=32, max_depth=6))
    encoder, head = build(objective)
    done = export(encoder, head, Vocabulary.of(objective.language), tmp_path / "hf")
    assert done.hf_class == "BertForSequenceClassification"
    model = load_clean(transformers.AutoModelForSequenceClassification, tmp_path / "hf", hf_warnings)
    batch = objective.make_batch(np.random.default_rng(0), 16, "val")
    with torch.no_grad():
        ours = head(encoder(batch["inputs"])[:, 0])
        theirs = model(input_ids=batch["inputs"]).logits
    assert (theirs - ours).abs().max() <= TOLERANCE
    assert model.config.id2label == dict(enumerate(Grammaticality(language=BracketPairs()).categories[:2]))


def test_the_warning_check_sees_newly_initialised_weights(tmp_path, hf_warnings):
    """The control for `load_clean`: a masked LM's folder read as a classifier does log new weights."""
    encoder, head = build(MaskedLM())
    export(encoder, head, Vocabulary.of(BracketPairs()), tmp_path / "hf")
    with pytest.raises(AssertionError):
        load_clean(transformers.BertForSequenceClassification, tmp_path / "hf", hf_warnings)


ROUND_TRIPS = {
    "bert": (MaskedLM, BERT),
    "roformer": (MaskedLM, replace(BERT, positions="rotary")),
    "classifier": (Grammaticality, BERT),
    "segments": (MaskedLM, replace(BERT, segments=2, layers=1, width=16)),
}


@pytest.mark.parametrize("kind", ROUND_TRIPS)
def test_a_round_trip_through_transformers_is_bit_for_bit(kind, tmp_path):
    objective, config = ROUND_TRIPS[kind]
    encoder, head = build(objective(), config)
    export(encoder, head, Vocabulary.of(BracketPairs()), tmp_path / "hf")
    back = load_hf(tmp_path / "hf")
    assert back.encoder.config == encoder.config and type(back.head) is type(head)
    for ours, theirs in ((encoder, back.encoder), (head, back.head)):
        mine, loaded = ours.state_dict(), theirs.state_dict()
        assert mine.keys() == loaded.keys()
        assert all(torch.equal(mine[k], loaded[k]) for k in mine)
    assert back.vocab.tokens == BracketPairs().vocab


REFUSED = {
    "layout": (MaskedLM, replace(BERT, layout="minibert"), "EncoderConfig.layout='minibert'"),
    "pre-norm": (MaskedLM, replace(BERT, norm="pre"), "EncoderConfig.norm='pre'"),
    "causal": (MaskedLM, replace(BERT, causal=True), "EncoderConfig.causal=True"),
    "alibi": (MaskedLM, replace(BERT, positions="alibi"), "EncoderConfig.positions='alibi'"),
    "sinusoidal": (MaskedLM, replace(BERT, positions="sinusoidal"), "EncoderConfig.positions='sinusoidal'"),
    "no positions": (MaskedLM, replace(BERT, positions="none"), "EncoderConfig.positions='none'"),
    "rotary classifier": (Grammaticality, replace(BERT, positions="rotary"), "EncoderConfig.positions='rotary'"),
}


@pytest.mark.parametrize("kind", REFUSED)
def test_a_refused_configuration_says_why_in_one_line_and_writes_nothing(kind, tmp_path, capsys):
    objective, config, option = REFUSED[kind]
    module = EncoderModule(objective=objective(), encoder=config, init_seed=0)
    with pytest.raises(ExportError) as err:
        export(module.encoder, module.objective.head, Vocabulary.of(BracketPairs()), tmp_path / "out" / "hf")
    message = str(err.value)
    assert "\n" not in message and message.startswith(option) and "; " in message  # the option, then the fix
    assert not any(tmp_path.iterdir())
    # the command, from a checkpoint
    ckpt = tmp_path / "model.ckpt"
    checkpoint = {"state_dict": module.state_dict(), "hyper_parameters": {}}
    module.on_save_checkpoint(checkpoint)
    torch.save(checkpoint, ckpt)
    with pytest.raises(SystemExit) as exit_:
        export_main([str(ckpt), str(tmp_path / "hf")])
    assert exit_.value.code == 2
    assert capsys.readouterr().err == f"python -m minibert.export: error: {message}\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.ckpt"]


def test_the_command_exports_a_checkpoint_and_refuses_a_used_folder(tmp_path, capsys):
    module = EncoderModule(objective=MaskedLM(language=Dyck(kinds=4, length=32, max_depth=6)), encoder=BERT)
    checkpoint = {"state_dict": module.state_dict(), "hyper_parameters": {"objective": {
        "class_path": "minibert.objectives.MaskedLM",
        "init_args": {"language": {"class_path": "minibert.languages.Dyck", "init_args": {"kinds": 4, "length": 32}}},
    }}}  # fmt: skip
    module.on_save_checkpoint(checkpoint)
    torch.save(checkpoint, tmp_path / "model.ckpt")
    export_main([str(tmp_path / "model.ckpt"), str(tmp_path / "hf")])
    assert "(BertForMaskedLM)" in capsys.readouterr().out
    assert load_hf(tmp_path / "hf").vocab.tokens == Dyck().vocab
    before = sorted(p.name for p in (tmp_path / "hf").iterdir())
    with pytest.raises(SystemExit):
        export_main([str(tmp_path / "model.ckpt"), str(tmp_path / "hf")])
    err = capsys.readouterr().err
    assert "OUT_DIR " in err and "already exists and is not empty" in err
    assert sorted(p.name for p in (tmp_path / "hf").iterdir()) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["hf", "model.ckpt"]  # no half-written folder beside it
    umask = os.umask(0)
    os.umask(umask)
    modes = {p.name: p.stat().st_mode & 0o777 for p in [tmp_path / "hf", *(tmp_path / "hf").iterdir()]}
    assert modes["hf"] == 0o777 & ~umask and modes["model.safetensors"] == 0o666 & ~umask  # as mkdir would make
    assert all(m == 0o666 & ~umask for name, m in modes.items() if name != "hf")  # others can read the model


def test_load_hf_refuses_a_setting_minibert_has_no_counterpart_for(tmp_path):
    encoder, head = build(MaskedLM())
    export(encoder, head, Vocabulary.of(BracketPairs()), tmp_path / "hf")
    config = tmp_path / "hf" / "config.json"
    config.write_text(config.read_text().replace('"layer_norm_eps": 1e-05', '"layer_norm_eps": 1e-12'))
    with pytest.raises(ExportError, match=r"^config.json layer_norm_eps=1e-12 .* it needs layer_norm_eps=1e-05$"):
        load_hf(tmp_path / "hf")


def test_the_core_never_imports_transformers():
    """Only minibert.export uses it, and only inside the functions that need it: the rest of minibert works
    without the optional extra."""
    import ast

    root = Path(__file__).resolve().parents[2] / "minibert"
    for path in root.rglob("*.py"):
        tree = ast.parse(path.read_text())
        top = [n for n in tree.body if isinstance(n, ast.Import | ast.ImportFrom)]
        names = [a.name for n in top if isinstance(n, ast.Import) for a in n.names]
        names += [n.module or "" for n in top if isinstance(n, ast.ImportFrom)]
        assert not [m for m in names if m.split(".")[0] in ("transformers", "safetensors")], path
        if "export" not in path.relative_to(root).parts:  # not even inside a function
            assert not re.search(r"^\s*(import|from) (transformers|safetensors)\b", path.read_text(), re.M), path


def test_an_export_that_fails_its_check_leaves_nothing_behind(tmp_path, monkeypatch):
    monkeypatch.setattr(write, "compare", lambda *args: 1.0)  # as if transformers computed something else
    encoder, head = build(MaskedLM())
    with pytest.raises(ExportError, match=f"differ from minibert's by 1 > {write.TOLERANCE:g}"):
        export(encoder, head, Vocabulary.of(BracketPairs()), tmp_path / "new" / "hf")
    assert not any(tmp_path.iterdir())
