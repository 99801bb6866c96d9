#!/usr/bin/env python3
"""Reference scores for tests/data/bleu_test.cpp and chrf_test.cpp, from sacreBLEU itself (default BLEU(): 4-grams,
exp smoothing, 13a tokenizer, case-sensitive; default CHRF(): 6 character orders, beta 2, and
chrF++, CHRF(word_order=2)), with one or several references. Regenerate in a scratch venv outside
the repo:

    python3 -m venv /tmp/sbvenv && /tmp/sbvenv/bin/pip install sacrebleu
    /tmp/sbvenv/bin/python tests/data/sacrebleu_reference.py

and paste the printed values into the tests (they were produced with sacrebleu 2.6.0): the rows
before "// BLEU with several references" go to bleu_test.cpp's MatchesSacreBleu and
Tokenize13aMatchesSacreBleu, the next to its SeveralReferencesMatchSacreBleu, the rows after
"// chrF and chrF++" to chrf_test.cpp. Signatures are printed as sacreBLEU's ("version:2.6.0"); the
tests expect ours, "version:normlab-sacrebleu-2.6.0" (data/bleu.h)."""
import json

import sacrebleu
from sacrebleu.metrics import BLEU, CHRF
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
    # Papineni et al. 2002, section 2.1: the modified unigram precision is 2/7, not 7/7.
    "repeated_ngram_clipped": (["the the the the the the the"], ["the cat is on the mat"]),
}

FOUR_SENTENCES = ["The quick brown fox jumps over the lazy dog.", "A stitch in time saves nine!",
                  "w1 w2 w3 w4 w5", "It costs $3,000 (or 2.5k) -- cheap."]

# name -> (hypotheses, reference streams): several references per hypothesis, as
# sacrebleu.corpus_bleu(hyps, [refs1, refs2, ...]).
MULTI_CASES = {
    # Papineni's two references: "the" is clipped by its maximum count in one reference (2), not
    # by the sum over both (3).
    "papineni_two_references": (["the the the the the the the"],
                                [["the cat is on the mat"], ["there is a cat on the mat"]]),
    # "cat", "on the", "the mat", ... match only in the second reference.
    "second_reference_matches_alone": (["the cat sat on the mat"], [["the dog sat on a rug"]]),
    "second_reference_matches": (["the cat sat on the mat"], [["the dog sat on a rug"], ["a cat lay on the mat"]]),
    # 5 tokens against 6 and 4: a tie, the shorter (4) wins, so BP = 1; the first (6) gives BP < 1.
    "reference_length_tie_goes_to_shorter": (["a b c d e"], [["a b c d e f"], ["a b c d"]]),
    # 5 tokens against 9, 6 and 3: the closest is 6.
    "reference_length_closest": (["a b c d e"], [["a b c d e f g h i"], ["a b c d e f"], ["a b c"]]),
    "multi_sentence_two_references": (
        FOUR_SENTENCES,
        [["The quick brown fox jumped over the lazy dog.", "A stitch in time saves nine.",
          "w1 w2 w4 w3 w5", "It costs $3,000 (or 2.5k) - cheap!"],
         ["A quick brown fox jumps over a lazy dog!", "Saving nine stitches in time!",
          "w1 w2 w3 w5 w4 w6", "It is cheap: $3,000 (or 2.5k)."]]),
    "empty_second_reference": (["the cat sat on the mat", "a b c d e"],
                               [["the cat sat on a mat", "a b c d e"], ["", "a b c"]]),
}

# name -> (hypotheses, reference streams, word_order): CHRF(word_order=...).corpus_score.
CHRF_CASES = {
    "perfect": (["the cat sat on the mat"], [["the cat sat on the mat"]], 0),
    "multi_sentence": (FOUR_SENTENCES, MULTI_CASES["multi_sentence_two_references"][1][:1], 0),
    "multi_sentence_two_references": (FOUR_SENTENCES, MULTI_CASES["multi_sentence_two_references"][1], 0),
    "whitespace_removed": (["the cat\u00a0sat  on\tthe mat \u3000"], [["thecat saton themat"]], 0),
    "code_points_not_bytes": (["\u00c9l comi\u00f3 una manzana, \u00bfno? \U0001F600"],
                              [["\u00c9l se comi\u00f3 la manzana \u00bfverdad? \U0001F600"]], 0),
    "shorter_than_six_characters": (["abc", "abd"], [["abd", "abd"]], 0),
    "empty_hypothesis": (["", "the cat"], [["a dog", "the cat"]], 0),
    "empty_reference": (["the cat", "a dog"], [["the cat", ""]], 0),
    "recall_weighs_more": (["the cat"], [["the cat sat on the mat"]], 0),
    # Segment 1 is closer to the first reference, segment 2 to the second.
    "best_reference_per_segment": (["the cat sat on the mat", "a quick brown fox"],
                                   [["the cat sat on a mat", "the slow red dog"],
                                    ["a dog lay on a rug", "a quick brown fox!"]], 0),
    "chrf_plus_plus": (FOUR_SENTENCES, MULTI_CASES["multi_sentence_two_references"][1][:1], 2),
    "chrf_plus_plus_punctuation": (["(hi) there, friend. a ! 'quoted' end."],
                                   [["hi there friend , a! 'quoted end ."]], 2),
    "chrf_plus_plus_two_references": (FOUR_SENTENCES, MULTI_CASES["multi_sentence_two_references"][1], 2),
}

TOKENIZE = ["Hello, world!", "it's 3.5$ -- ok", "a-\nb", "x &amp; y &lt;z&gt; &quot;q&quot;",
            "1,000.50 and 3-4, end.", "e.g. U.S.A., (a) [b] {c} 5% #1 @me /path", "<skipped> a"]

def cpp_string(text):
    """A C++ string literal: ASCII as is, other characters as universal character names."""
    out = []
    for ch in text:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif " " <= ch <= "~":
            out.append(ch)
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f'\\x{ord(ch):02x}""')
        elif ord(ch) <= 0xFFFF:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(f"\\U{ord(ch):08x}")
    return '"' + "".join(out) + '"'


def cpp(value):
    """A C++ braced initializer of nested lists of strings."""
    if isinstance(value, str):
        return cpp_string(value)
    return "{" + ", ".join(cpp(v) for v in value) + "}"


def print_multi_cases():
    for name, (hyps, refs) in MULTI_CASES.items():
        metric = BLEU()
        score = metric.corpus_score(hyps, refs)
        print(f"    // BLEU().corpus_score({json.dumps(hyps)}, {json.dumps(refs)})")
        print(f"    {{\"{name}\", {cpp(hyps)}, {cpp(refs)}, {score.score!r},")
        print(f"     {cpp_string(score._verbose)}, {cpp_string(str(metric.get_signature()))}}},")


def print_chrf_cases():
    for name, (hyps, refs, word_order) in CHRF_CASES.items():
        metric = CHRF(word_order=word_order)
        score = metric.corpus_score(hyps, refs)
        print(f"    // CHRF(word_order={word_order}).corpus_score({json.dumps(hyps)}, {json.dumps(refs)})")
        print(f"    {{\"{name}\", {cpp(hyps)}, {cpp(refs)}, {word_order}, {score.score!r}, {cpp_string(score.name)},")
        print(f"     {cpp_string(str(metric.get_signature()))}}},")


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
    print("// BLEU with several references")
    print_multi_cases()
    print("// chrF and chrF++")
    print_chrf_cases()
