"""No analysis in a template: a page's model (minibert.report) compares, counts up, picks and words the verdicts;
its template only places what the model returns. That holds for the pages (configs/pages) and for the grid
reports' own templates (minibert/report/templates: each grid's ablation.md and dashboard).

Read from Jinja's own syntax tree, so strings and prose never count. What a template may not hold:
- a comparison (`<`, `>`, `==`, `in`, ...), a method that tests (`.startswith`, `.count`, ...) or arithmetic
  (`+`, `-`, `*`, `/`, `//`, `%`, `**`, a sign on anything but a constant, `|abs`, `|round`): a choice of words
  or a figure computed from figures belongs to the model, where a test can call it on constructed tables;
- `and` / `or`: two readings combined into a third are a reading;
- a filter that picks or orders (`min`, `max`, `sum`, `sort`, `unique`, `select`, `first`, ...), a loop over a
  filtered sequence (`{% for x in xs if ... %}`) or a test (`is ...`);
- a call made for its side effect (`.append`, `.setdefault`, `.update`, ...), `namespace()` or `range()`.
What stays: slots, `if` on a value the model returns, loops over what it returns, `~` to join strings, and
formatting (`number`, `fmt`, `minutes`, `|join`, `|length`, `|format`).
"""

from __future__ import annotations

from pathlib import Path

import jinja2
from jinja2 import nodes

ROOT = Path(__file__).resolve().parents[2]
TEMPLATES = (ROOT / "configs" / "pages", ROOT / "minibert" / "report" / "templates")

ARITHMETIC = (nodes.Add, nodes.Sub, nodes.Mul, nodes.Div, nodes.FloorDiv, nodes.Mod, nodes.Pow)
SIGNS = (nodes.Neg, nodes.Pos)
LOGIC = (nodes.And, nodes.Or)
PICKING = {"min", "max", "sum", "sort", "dictsort", "unique", "select", "reject", "selectattr", "rejectattr",
           "groupby", "batch", "slice", "random", "reverse", "first", "last", "abs", "round"}  # fmt: skip
TESTING = {"startswith", "endswith", "count", "index", "find", "rfind", "isdigit", "isalpha", "issubset"}
SIDE_EFFECTS = {"append", "extend", "insert", "pop", "remove", "setdefault", "update", "clear"}
STATEMENTS = {"namespace", "range", "cycler", "joiner"}


def analysis(source: str) -> list[tuple[int, str]]:
    """(line, what) of every piece of analysis in a template's source."""
    found = []
    for n in jinja2.Environment().parse(source).find_all(nodes.Node):
        what = None
        if isinstance(n, nodes.Compare):
            what = "a comparison (" + ", ".join(op.op for op in n.ops) + ")"
        elif isinstance(n, ARITHMETIC):
            what = f"arithmetic ({n.operator})"
        elif isinstance(n, SIGNS) and not isinstance(n.node, nodes.Const):  # xs[-1] places; -x computes
            what = f"arithmetic (unary {n.operator})"
        elif isinstance(n, LOGIC):
            what = f"'{type(n).__name__.lower()}'"
        elif isinstance(n, nodes.Filter) and n.name in PICKING:
            what = f"a filter that picks (|{n.name})"
        elif isinstance(n, nodes.Test):
            what = f"a test (is {n.name})"
        elif isinstance(n, nodes.For) and n.test is not None:
            what = "a loop over a filtered sequence (for ... if)"
        elif isinstance(n, nodes.Call) and isinstance(n.node, nodes.Getattr) and n.node.attr in SIDE_EFFECTS:
            what = f"a call for its side effect (.{n.node.attr})"
        elif isinstance(n, nodes.Call) and isinstance(n.node, nodes.Getattr) and n.node.attr in TESTING:
            what = f"a method that tests (.{n.node.attr})"
        elif isinstance(n, nodes.Call) and isinstance(n.node, nodes.Name) and n.node.name in STATEMENTS:
            what = f"{n.node.name}()"
        if what:
            found.append((n.lineno, what))
    return sorted(found)


def test_no_template_holds_analysis():
    wrong = [f"{page.relative_to(ROOT).as_posix()}:{line}: {what}" for folder in TEMPLATES
             for page in sorted(folder.rglob("*.j2")) for line, what in analysis(page.read_text())]  # fmt: skip
    assert all(any(folder.rglob("*.j2")) for folder in TEMPLATES)
    assert not wrong, (
        "analysis in a template: compute it in the page's model (minibert/report/) and place its result\n"
        + "\n".join(wrong)
    )


def test_the_rule_finds_each_kind_of_analysis_and_passes_placement():
    page = """{% set n = d.total() / 60 %}{{ "above" if g.lo > 0.03 else "not" }}
{% for x in xs if x.ok %}{{ x }}{% endfor %}{{ xs|max }}{% set _ = out.append(1) %}{{ a and b }}
{% set ns = namespace(k=1) %}{% for i in range(3) %}{% endfor %}{{ x is none }}{{ "s" if n in ns }}
{{ -x.mean }}{{ xs|first }}{{ "a" if v.endswith(" better") }}"""
    kinds = sorted(what for _, what in analysis(page))
    assert kinds == sorted(["arithmetic (/)", "a comparison (gt)", "a loop over a filtered sequence (for ... if)",
                     "a filter that picks (|max)", "a call for its side effect (.append)", "'and'", "namespace()",
                     "range()", "a test (is none)", "a comparison (in)", "arithmetic (unary -)",
                           "a filter that picks (|first)", "a method that tests (.endswith)"])  # fmt: skip
    placing = """{% import "_macros.j2" as page %}{% set P = dyck_page() %}
{{ "meets" if P.meets_sd_target else "misses" }} {{ number(x.mean, 100, 1) }} {{ minutes(d.total(), 1) }}
{% for j in r.judged %}{{ j.words(m, "A", "B") }}{{ ", " if not loop.last else "." }}{% endfor %}
{{ a ~ " and " ~ b }} {{ xs|join(", ") }} {{ xs|length }} {{ "%+.2f"|format(r) }} {{ xs[-1] }}"""
    assert analysis(placing) == []
