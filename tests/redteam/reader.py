"""Attack (rag4): with the audit hook off (kit.break_the_wall), import the grader's judges (markdown-it-py
answers rag6's rules, bm25s rag11's weights, scipy rag8's bootstrap), leave a file in /tmp and in the course's
tests/, and fill the scratch folder. test_walls.py checks that only the scratch took anything, and no more
than its size."""

from kit import break_the_wall


def word_windows(text, size, overlap=0):
    """What this lab could import and write, with the hook off; `text` is the course's tests/ folder."""
    if not break_the_wall():
        return {"hook": "not broken"}
    found = {}
    for name, judge in (("markdown_it", "MarkdownIt"), ("bm25s", "BM25"), ("scipy", "__version__")):
        try:
            getattr(__import__(name), judge)
            found[name] = "imported"
        except Exception as error:
            found[name] = type(error).__name__
    for name, path in (("tmp", "/tmp/walls-left-behind"), ("course", text + "/walls-left-behind")):
        try:
            with open(path, "w") as handle:
                handle.write("x")
            found[name] = "written"
        except OSError as error:
            found[name] = type(error).__name__
    written = 0
    try:
        for number in range(12):  # 12 files of 32 MB, each under the 64 MB limit of a file
            with open(f"big-{number}", "wb") as handle:
                handle.write(bytes(32 << 20))
            written += 32
    except OSError:
        pass
    found["scratch MB"] = written
    return found


def attack(lab: dict) -> None:
    lab["word_windows"] = word_windows
