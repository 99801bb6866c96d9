#!/usr/bin/env python3
"""Reference scores for tests/data/bleu_test.cpp, from sacreBLEU itself (default BLEU(): 4-grams,
exp smoothing, 13a tokenizer, case-sensitive). Regenerate in a scratch venv outside the repo:

    python3 -m venv /tmp/sbvenv && /tmp/sbvenv/bin/pip install sacrebleu
    /tmp/sbvenv/bin/python tests/data/sacrebleu_reference.py

and paste the printed values into the test (they were produced with sacrebleu 2.6.0)."""
import json

import sacrebleu
from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a

# name -> (hypotheses, references): one reference per hypothesis.
CASES = {
    "perfect": (["the cat sat on the mat today"], ["the cat sat on the mat today"]),
    "empty_hypothesis": ([""], ["the cat sat on the mat"]),
    "short_hypothesis": (["the cat sat on the"], ["the cat sat on the mat today"]),
    "punctuation": (["Hello, world! it's 3.5$ -- ok"], ["Hello world, it's 3.5 $ -- ok!"]),
    "no_4gram_match": (["a b c x d e f y g h"], ["a b c d e f g h i j"]),
    "multi_sentence": (
        ["The quick brown fox jumps over the lazy dog.", "A stitch in time saves nine!",
         "w1 w2 w3 w4 w5", "It costs $3,000 (or 2.5k) -- cheap."],
        ["The quick brown fox jumped over the lazy dog.", "A stitch in time saves nine.",
         "w1 w2 w4 w3 w5", "It costs $3,000 (or 2.5k) - cheap!"]),
    "case_sensitive": (["The cat sat on the Mat ."], ["the cat sat on the mat."]),
    "too_short_for_4grams": (["a b c"], ["a b c"]),
    "unicode_whitespace": (["the cat\u00a0sat on\u2003the mat \u3000"], ["the cat sat on the mat"]),
    "html_entities": (["Tom &amp; Jerry &lt;3 &quot;ok&quot;"], ["Tom & Jerry <3 \"ok\""]),
}

TOKENIZE = ["Hello, world!", "it's 3.5$ -- ok", "a-\nb", "x &amp; y &lt;z&gt; &quot;q&quot;",
            "1,000.50 and 3-4, end.", "e.g. U.S.A., (a) [b] {c} 5% #1 @me /path", "<skipped> a"]

if __name__ == "__main__":
    # Printed as the C++ test's table rows, each with the exact Python call in a comment.
    print(f"// sacrebleu {sacrebleu.__version__}")
    for name, (hyps, refs) in CASES.items():
        call = f"sacrebleu.corpus_bleu({json.dumps(hyps)}, [{json.dumps(refs)}]).score"
        score = eval(call)
        print(f"    // {call}")
        print(f"    {{\"{name}\", {json.dumps(hyps)}, {json.dumps(refs)}, {score!r}}},".replace("[", "{").replace("]", "}"))
    tok = Tokenizer13a()
    for line in TOKENIZE:
        print(f"    // Tokenizer13a()({json.dumps(line)})")
        print(f"    {{{json.dumps(line)}, {json.dumps(tok(line))}}},")
