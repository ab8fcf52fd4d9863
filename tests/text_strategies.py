"""Hypothesis strategies for the texts chunkers meet, shared by the grading tests.

Offset bugs hide in repeated words, CRLF line ends, multi-byte characters and
long runs without spaces, so each strategy mixes those in on purpose.
"""

from hypothesis import strategies as st

# Characters that stress offsets: spaces of every kind, CRLF and lone CR, the
# other characters Python counts as line ends, control characters, emoji with
# joiners and modifiers, combining marks, CJK (some of 4 tokens), right-to-left
# letters and direction marks, a lone surrogate, runs of sentence marks.
TRICKY = [" ", "  ", "\n", "\r\n", "\r", "\t", "\u00a0", "chunk", "word", ".", "#",
          "😀", "👩\u200d👩\u200d👧", "e\u0301", "漢字", "שלום", "𩝕", "\ufeff", "\x00",
          "\x0b", "\x0c", "\x85", "\u2028", "\x1b", "🇫🇷", "👍🏽", "1\ufe0f\u20e3", "𪛖",
          "\u200f", "\u202eابت\u202c", "\ud800", "...", "?!", "-", "|"]

tricky_text = st.lists(st.sampled_from(TRICKY), max_size=80).map("".join)
any_text = st.one_of(
    st.text(max_size=300),
    tricky_text,
    st.text(alphabet="ab", min_size=200, max_size=2000),  # one long run, no spaces
)

# Prose-like text: words, sentence ends, line breaks and blank lines.
prose = st.lists(
    st.one_of(
        st.sampled_from(["Orbit", "runs", "jobs", "satellite", "port", "7401", "chunk", "a", "überall", "漢字"]),
        st.sampled_from([". ", "! ", "? ", "\n", "\n\n", "\r\n\r\n", ", "]),
        st.text(alphabet="abcdefghij", min_size=1, max_size=30),
    ),
    max_size=120,
).map(" ".join)

# Markdown-ish documents: lines drawn from the constructs chunkers get wrong.
MARKDOWN_LINES = [
    "# Title", "## Section", "### Sub", "Setext", "===", "---", "***", "",
    "Some prose with words.", "More prose, a second line.", "```", "```python", "````", "~~~",
    "# comment in code?", "| a | b |", "|---|---|", "| 1 | 2 |", "a | b", "--- | ---",
    "- item", "  continued", "1. step", "   ```", "> quote", "> ```", "<div>", "</div>",
    "<!-- note -->", "    indented code", "\t tab", "漢字 😀 e\u0301",
    "id: page", "title: A page", "...", "\ufeff---", "- - nested item", "> > nested quote",
    "  - sub item", "    - deeper", "1) other step", "- ```", "  | x |", "|:-:|", "~~~~ toml",
    "``` a`b", "###### six", "####### seven", "#no space", "<script>", "</script>", "-->",
    "Ends with dots...", "\x00 nul \x0b vt \x85 nel", "𩝕𪛖 👩\u200d👩\u200d👧",
]
markdown_text = st.tuples(
    st.lists(st.sampled_from(MARKDOWN_LINES), max_size=60),
    st.sampled_from(["\n", "\r\n", "\r"]),
).map(lambda parts: parts[1].join(parts[0]))
