"""benchmarks/README.md quotes benchmarks/RESULTS.md (a run's output) as printed: no figure typed by hand."""

import importlib.util
from pathlib import Path

import pytest

QUOTE = Path(__file__).resolve().parent.parent / "benchmarks" / "quote.py"
spec = importlib.util.spec_from_file_location("benchmark_quote", QUOTE)
quote = importlib.util.module_from_spec(spec)
spec.loader.exec_module(quote)


def test_readme_quotes_match_results():
    readme = quote.README.read_text(encoding="utf-8")
    output = quote.output_of(quote.RESULTS.read_text(encoding="utf-8"))
    assert quote.BLOCK.findall(readme), "benchmarks/README.md quotes nothing of RESULTS.md"
    assert quote.refreshed(readme, output) == readme, "stale quotes: run python benchmarks/quote.py"


def test_a_quote_names_what_it_holds():
    output = "## Benchmark\n\n### Orbit docs\n\nTargets of hybrid search (rag11):\n- met\n\nnext\n"
    assert quote.quoted(output, "rag11-targets") == "Targets of hybrid search (rag11):\n- met\n"
    with pytest.raises(quote.QuoteError, match="does not know"):
        quote.quoted(output, "nothing-such")
    with pytest.raises(quote.QuoteError, match="printed nothing like"):
        quote.quoted(output, "speed")
