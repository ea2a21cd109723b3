"""Properties of the offline filters' cheap pre-checks: they never hide what the full
check finds. Every number that ``numbers_in`` reads in a text is matched there by its
``number_pattern`` and holds one of its ``number_marks`` (rule leakage, answer stated),
and a label is found said in a text exactly as by normalising the whole text (answer
stated)."""

from __future__ import annotations

from decimal import Decimal

from hypothesis import given, settings
from hypothesis import strategies as st

from kgsynth.filters.answer_stated import _first_said
from kgsynth.formats.answers import has_word, normalize_text, number_marks, number_pattern, numbers_in

SEPARATORS = ", \u00a0\u202f\u2009"
# digits, every separator and sign the number grammar knows, and pieces of dates
PIECES = ["0", "00", "1", "2", "3", "13", "14", "100", "000", "500", "2024", ".", *SEPARATORS, "-", "\u2212", "%", "x",
          "\n", "June ", "14, 2023", "-01-05", "31.12.", " мая ", "2024-01-05", "5 June 2024"]
texts = st.lists(st.sampled_from(PIECES), max_size=14).map("".join)
numbers = st.builds(lambda digits, places, sign: sign * Decimal(digits).scaleb(-places),
                    st.integers(0, 10**9), st.integers(0, 4), st.sampled_from([1, -1]))


def _writings(number: Decimal) -> list[str]:
    """Writings of ``number`` the checker reads: plain, grouped by each separator, with
    padding zeros, a decimal comma, and a lone comma's second reading ("14,000" for 14)."""
    plain = f"{number:f}"
    whole, _, fraction = plain.partition(".")
    writings = [plain, plain.replace(".", ","), f"{plain}{'' if fraction else '.'}00", f"0{plain.lstrip('-')}"]
    writings += [f"{int(number):,}".replace(",", sep) + (f".{fraction}" if fraction else "") for sep in SEPARATORS]
    if len(fraction) <= 3 and 1 <= abs(int(whole or 0)) <= 999:
        writings.append(f"{whole},{fraction.ljust(3, '0')}")
    return writings


def _prechecks_pass(text: str, number: Decimal) -> bool:
    return number_pattern(number).search(text) is not None and any(mark in text for mark in number_marks(number))


@settings(max_examples=400, deadline=None)
@given(texts)
def test_every_number_read_in_a_text_passes_its_prechecks(text):
    for number in numbers_in(text):
        assert _prechecks_pass(text, number), (text, number)


@settings(max_examples=300, deadline=None)
@given(numbers, texts, texts)
def test_every_writing_of_a_number_passes_its_prechecks(number, before, after):
    for written in _writings(number):
        text = f"{before}{written}{after}"
        for read in numbers_in(text):
            assert _prechecks_pass(text, read), (text, read)


def test_a_number_inside_another_does_not_match():
    assert not number_pattern(Decimal(13)).search("the salary is 133,527.92 or 213")
    assert not number_pattern(Decimal("0.1")).search("it came to $19,090.12")
    assert number_pattern(Decimal(13)).search("13% of it, 14,000 in all")
    assert number_pattern(Decimal(14)).search("by 14.2024-01-05")  # the date goes, 14 stays
    assert number_pattern(Decimal(100000)).search("up to 100\u00a0000,00")


# words of labels in any case, with the quotes, apostrophes, articles and spaces normalize_text drops
WORDS = ["Silver", "silver", "SILVER", "class", "B", "b", "Ёлка", "елка", "the ", "The ", "a ", " ", "  ", "\n",
         "«", "»", '"', "'", "’", "`", "-", ".", ",", "%", " %", "13", "x", "_", "Bob: "]
LABELS = ["Silver", "class B", "B", "Ёлка", "the Silver", "13 %", "13%", "o'silver", "o’silver", "«Silver»",
          "x_b", ""]
words = st.lists(st.sampled_from(WORDS), max_size=12).map("".join)


def _first_said_by_normalising(text: str, labels: list[str]) -> str | None:
    said = normalize_text(text)
    keys = [(label, normalize_text(label)) for label in labels]
    return next((label for label, key in keys if len(key) > 1 and has_word(said, key)), None)


@settings(max_examples=400, deadline=None)
@given(words, st.lists(st.sampled_from(LABELS), min_size=1, max_size=3))
def test_a_label_is_found_said_as_by_normalising_the_whole_text(text, labels):
    assert _first_said(text, labels) == _first_said_by_normalising(text, labels), (text, labels)
