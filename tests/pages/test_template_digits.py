"""Every number a page shows comes from data: a template's prose holds no digit outside a slot.

What is not prose: Jinja (slots, statements, comments), code (fenced blocks and `inline`), link targets and HTML
tags. What a digit may still stand in: a list marker, a year, an identifier (float32, x86_64, SIGTERM, H100, a
commit), and the phrases of `ALLOWED`, each a definition rather than a measurement, with the reason it is one.
Everything else is a figure typed by hand: read it from a table (a page model), the configs (`run` for a run's
settings, `language`, `config`) or `results/measurements.yaml` (`measured`).
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGES = ROOT / "configs" / "pages"

ALLOWED = {  # phrase -> why it is a definition, not a figure that data could change
    "95%": "the level of every interval the statistics module draws",
    "15%": "BERT's masking rate, the recipe the project reproduces",
    "80/10/10": "BERT's split of masked positions ([MASK] / random / kept)",
    "80-10-10": "BERT's split of masked positions ([MASK] / random / kept)",
    "80%": "BERT's share of masked positions that become [MASK]",
    "10%": "BERT's share of masked positions that become a random token, or stay",
    "2-core": "the kind of machine the project's figures are measured on",
    "p(1-p)/n": "the binomial variance, a formula",
    "p(1-p)/variance": "the binomial variance, a formula",
    "S-1": "a t distribution's degrees of freedom, a formula",
    "1.96": "the normal quantile of a 95% interval",
    "[0, 1]": "the range of a proportion",
    "1/t": "the Bayes predictor's uniform guess among t candidates, a formula",
    "arXiv:1810.04805": "the BERT paper's identifier",
    "2.2+": "the version floors of torch and Lightning that pyproject.toml declares",
    "8 or more tokens": "Dyck's longest distance bin, `dist_8_plus`, a category's name",
    "DataDecide reports about 80%": "a published figure (Magnusson et al. 2025), cited",
    "150M": "a published model size (DataDecide), cited",
    "1B-parameter": "a published model size (DataDecide), cited",
    "text at 1x": "a setting's name: text at 1x Dyck's FLOPs",
    "majority class 50%": "two balanced classes, by construction",
    "chance is 50": "a coin's accuracy on two balanced classes",
    "50 is a coin": "a coin's accuracy on two balanced classes",
    "exactly 100%": "the ceiling of a minimal pair by construction: the good sentence is in the language",
    "the ceiling is 100.0": "the ceiling of a minimal pair by construction: the good sentence is in the language",
    "ceiling 100%": "the grammaticality task's ceiling: its label is a function of the sentence",
    "(100 x)": "what a point is: a proportion times 100",
    "not against 1": "a correlation's largest value",
    "> 0 favours": "the orientation of a difference, a definition",
    "distance 1": "Dyck's nearest distance bin, `dist_1`, a category's name",
    "at 8+": "Dyck's longest distance bin, `dist_8_plus`, a category's name",
    "chance 50": "a coin's accuracy on two balanced classes",
    "ceiling 100": "the grammaticality task's ceiling: its label is a function of the sentence",
    "(Physics of Language Models, part 1)": "a cited paper's title",
    "Table 7": "BERT's table of feature-based probes, cited",
    "Table 1,": "a cited paper's table",
    "at position 0": "a position's name: where [CLS] stands",
    "of layer 1": "a layer's name",
    "on seed 0": "a seed's name",
    "Table 5": "BERT's table of pre-training tasks, cited",
    "SST-2": "a cited benchmark's name",
    "segment 0": "a segment's name: the first of a pair",
    "Chance is 50%": "a coin's accuracy on two balanced classes",
    "multiply-add 2 FLOPs": "how FLOPs are counted, a definition (minibert.flops)",
    "backward 2x forward": "how FLOPs are counted, a definition (minibert.flops)",
    "at 1x": "a budget's name: today's run",
    "on 2 cores": "the kind of machine the project's figures are measured on",
    "scores 100% on kept tokens": "copying a kept token is right by definition",
    "not 12.5% chance": "a guesser's accuracy among the seed language's 8 bracket types",
    "at width 64": "an arm's name: mlm-w64",
    '"40% beats 15%"': "a cited claim, quoted",
    "±100 points": "the range of a difference of two accuracies, in points",
    "a 30%": "the example plug-in's masking rate, its name (MaskRate30)",
    "against its 5%": "the nominal level of a verdict",
    "A multiply-add is 2 FLOPs": "how FLOPs are counted, a definition (minibert.flops)",
    "so 2x forward when everything trains": "how FLOPs are counted, a definition (minibert.flops)",
    "1x for the head above a frozen encoder": "how FLOPs are counted, a definition (minibert.flops)",
    "0 for the frozen encoder": "how FLOPs are counted, a definition (minibert.flops)",
    "4 B T² C": "attention's FLOPs, a formula",
    "8 B T² C": "attention's FLOPs, a formula",
    "stream of seed 0": "a seed's name",
    "√(p(1−p)/n)": "the binomial standard error, a formula",
    "step 1 (": "the first step's name",
    "Table 8": "BERT's table of masking strategies, cited",
    "CoNLL-2003": "a cited benchmark's name",
    "100-0-0": "a masking strategy's name: the MASK-SAME-RND percentages of BERT's Table 8",
    "80-20-0": "a masking strategy's name: the MASK-SAME-RND percentages of BERT's Table 8",
    "80-0-20": "a masking strategy's name: the MASK-SAME-RND percentages of BERT's Table 8",
    "0-20-80": "a masking strategy's name: the MASK-SAME-RND percentages of BERT's Table 8",
    "0-0-100": "a masking strategy's name: the MASK-SAME-RND percentages of BERT's Table 8",
    "SAME = 1 − both": "a formula: the share of picked positions kept",
    "run seeds 0, 1, ...": "the runner's seeds, counted from zero",
    "near 1": "an accuracy at its largest value, where the answer is given away",
}
# exit statuses are the programs' definitions: "status 2", "exits 1", "2 bad input", "128 + signal"
EXIT_STATUSES = re.compile(r"\b(status|exits?|statuses)\b[^.]*|\b\d+ (bad input|the machine|done|some|\+ signal)\b")


def prose(text: str) -> str:
    """The template's text a reader sees typed, with slots, statements, code, link targets and tags blanked."""
    for pattern, flags in ((r"\{#.*?#\}", re.S), (r"\{%.*?%\}", re.S), (r"\{\{.*?\}\}", re.S),
                           (r"^```.*?^```", re.S | re.M), (r"`[^`]*`", 0), (r"<[^>]+>", 0)):  # fmt: skip
        text = re.sub(pattern, lambda m: re.sub(r"[^\n]", " ", m[0]), text, flags=flags)  # keeps line numbers
    return re.sub(r"\]\([^)\s]*\)", "]", text)


def typed(text: str) -> list[tuple[int, str]]:
    """(line, token) of every digit-bearing token of `text`'s prose that no rule above allows."""
    found = []
    for number, line in enumerate(prose(text).splitlines(), 1):
        line = re.sub(r"^\s*(\d+\.|[-*])\s", " ", line)  # a list marker
        for phrase in sorted(ALLOWED, key=len, reverse=True):  # "40% beats 15%" before its "15%"
            line = line.replace(phrase, " ")
        line = EXIT_STATUSES.sub(lambda m: re.sub(r"\b\d{1,3}\b", " ", m[0]), line)
        for token in re.findall(r"\S*\d\S*", line):
            if re.search(r"[A-Za-z_]\d", token) or re.fullmatch(r"\W*(19|20)\d\d(-\d\d-\d\d)?\W*", token):  # name, date
                continue
            found.append((number, token))
    return found


def test_no_template_types_a_figure_in_its_prose():
    wrong = []
    for page in sorted(PAGES.rglob("*.j2")):
        found = typed(page.read_text())
        if found:
            tokens = ", ".join(f"line {line}: {token}" for line, token in found)
            wrong.append(f"{page.relative_to(PAGES).as_posix()}: {tokens}")
    assert not wrong, (
        "a figure typed in template prose: read it from data (a page model, `run` or `config` for a run's "
        "settings, `measured` for results/measurements.yaml, `code` for a constant the package defines), or add "
        "a definition to ALLOWED with its reason.\n" + "\n".join(wrong)
    )


def test_the_rule_finds_a_typed_figure_and_passes_slots_code_and_definitions():
    page = (
        "{{ number(x) }} points ({% if y %}9{% endif %}), `--seeds 5`, a 95% interval, float32, 2026, SIGUSR1,\n"
        "- the 2-core machine, exit status 2 on bad input\n"
        "1. took 61 s and 3.083 at step 1\n"
        "```\npython run.py --steps 600\n```\n"
    )
    assert typed(page) == [(1, "9"), (3, "61"), (3, "3.083"), (3, "1")]  # text inside a block is prose too


def test_no_template_line_runs_over_160_characters():
    """A template is read and reviewed as text: a slot that runs long breaks inside its own braces."""
    long = [f"{page.relative_to(PAGES)}:{number}: {len(line)}" for page in sorted(PAGES.rglob("*.j2"))
            for number, line in enumerate(page.read_text().splitlines(), 1) if len(line) > 160]  # fmt: skip
    assert not long, "template lines over 160 characters: " + ", ".join(long)


def test_only_rendered_pages_carry_a_rendered_footer():
    """The footers a render appends (the families' verdicts, the code behind the tables) hold figures; a Markdown
    page without a template would keep them typed, to go stale as the tables change."""
    rendered = {(ROOT / t.relative_to(PAGES)).with_suffix("") for t in PAGES.rglob("*.md.j2")}
    plain = [p for p in ROOT.rglob("*.md") if ".git" not in p.parts and p not in rendered]
    plain = [p for p in plain if not p.is_relative_to(ROOT / "results")]  # grids' own reports: grid_report writes them
    stale = [str(p.relative_to(ROOT)) for p in plain if "<sub>Code behind the tables" in p.read_text()]
    assert not stale, f"pages with a rendered footer but no template: {stale}"
