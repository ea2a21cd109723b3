"""Russian morphology for generated text and for answer checking, through pymorphy3.

Labels in a graph are nominative ("Дмитрий Макаров", "дата рождения", "Заказ ORD-1"); a
sentence needs them in its case ("у Дмитрия Макарова", "даты рождения", "заказа ORD-1").
A noun phrase is declined by its head: the leading adjectives and participles and the
first noun agree with the case, the words after the head (genitive dependents, codes,
quoted names) stay as written. A person's name is declined word by word in the gender of
its first name. Words pymorphy does not know (Latin codes, numbers) stay as they are.
"""

from __future__ import annotations

import functools
import re

import pymorphy3

CASES = ("nomn", "gent", "datv", "accs", "ablt", "loct")
_CYRILLIC_WORD = re.compile(r"[А-Яа-яЁё]+(?:-[А-Яа-яЁё]+)*")
_TOKEN = re.compile(r"\S+")
_HAS_CYRILLIC = re.compile(r"[А-Яа-яЁё]")
_AGREEING = frozenset({"ADJF", "PRTF", "NUMR"})


@functools.cache
def analyzer() -> pymorphy3.MorphAnalyzer:
    """One analyzer per process (loading its dictionaries takes about 50 ms)."""
    return pymorphy3.MorphAnalyzer()


@functools.lru_cache(maxsize=65536)
def _parses(word: str) -> tuple:
    return tuple(analyzer().parse(word))


@functools.lru_cache(maxsize=65536)
def lemma(word: str) -> str:
    """The dictionary form of one Russian word, casefolded with ё as е ("среднему" -> "средний")."""
    if not _HAS_CYRILLIC.search(word):  # Latin words, numbers, codes are their own lemma: no parse needed
        return word.casefold()
    parses = _parses(word.casefold())
    return (parses[0].normal_form if parses else word.casefold()).replace("ё", "е")


def lemma_key(text: str) -> str:
    """``text`` with every Cyrillic word replaced by its lemma: two writings of one Russian
    phrase in different cases ("магазину «Парковый»", "магазин Парковый") share
    a key once quotes and case are ignored; other characters are kept."""
    return _CYRILLIC_WORD.sub(lambda m: lemma(m.group()), text.casefold().replace("ё", "е"))


_NAMES = frozenset({"Name", "Surn", "Patr"})


def _nominative(word: str, gender: str | None = None, pos: frozenset[str] = frozenset(), names: bool = True):
    """The parse of ``word`` as a nominative singular (in ``gender`` when given), else None;
    ``names=False`` passes over readings as a person's name ("пол" is a sex, not Paul)."""
    for parse in _parses(word):
        tag = parse.tag
        if not names and _NAMES & set(tag.grammemes):
            continue
        if "nomn" in tag and (not pos or tag.POS in pos) and (gender is None or tag.gender in (gender, None)):
            if "plur" not in tag or tag.POS is None:
                return parse
    return None


def _inflected(parse, grammemes: set[str], like: str) -> str:
    """``parse`` inflected to ``grammemes``, keeping how ``like`` writes the letters the two
    forms share ("ИТ-отдел" -> "ИТ-отдела", "Ёлка" -> "Ёлки", "Ростов-на-Дону" -> "Ростова-на-Дону")."""
    form = parse.inflect(grammemes)
    if form is None:
        return like
    word = form.word
    shared = 0
    folded = like.casefold().replace("ё", "е")
    while shared < min(len(word), len(like)) and word[shared].replace("ё", "е") == folded[shared]:
        shared += 1
    said, parts = like[:shared] + word[shared:], like.split("-")
    if len(parts) > 1 and said.count("-") == len(parts) - 1:  # each part as written opens it: «Ростова-на-Дону»
        said = "-".join(p[:1].upper() + p[1:] if w[:1].isupper() else p for p, w in zip(said.split("-"), parts, strict=True))
    return said


@functools.lru_cache(maxsize=65536)
def person_gender(label: str) -> str | None:
    """"masc" or "femn" when ``label`` reads as a Russian person's name ("Ксения Воробьёва":
    a first name, then surnames or a patronymic), else None."""
    words = label.split()
    if not 2 <= len(words) <= 3 or not all(_CYRILLIC_WORD.fullmatch(w) and w[:1].isupper() for w in words):
        return None
    first = next((p for p in _parses(words[0]) if "Name" in p.tag and "nomn" in p.tag and "sing" in p.tag), None)
    if first is None:
        return None
    gender = str(first.tag.gender) if first.tag.gender else None
    if gender is None:
        return None
    rest = [next((p for p in _parses(w) if {"nomn", "sing"} <= set(p.tag.grammemes) and ({"Surn", "Patr"} & set(p.tag.grammemes))
                  and p.tag.gender in (gender, None)), None) for w in words[1:]]
    return gender if all(rest) else None


@functools.lru_cache(maxsize=65536)
def decline(label: str, case: str, number: str = "sing") -> str:
    """``label`` (nominative, as a graph writes it) in ``case``: a person's name word by
    word; a noun phrase by its head (leading adjectives and the first noun); anything
    else (a code, a foreign name, a word pymorphy does not know) as written."""
    if case == "nomn" and number == "sing":
        return label
    gender = person_gender(label)
    words = label.split(" ")
    if not gender and is_proper_name(label):
        return label  # "Парус Страхование": the caller puts a common noun before it
    if gender:
        out = []
        for word in words:
            parse = next(p for p in _parses(word) if "nomn" in p.tag and "sing" in p.tag and p.tag.gender in (gender, None)
                         and ({"Name", "Surn", "Patr"} & set(p.tag.grammemes)))
            out.append(_inflected(parse, {case, number}, word))
        return " ".join(out)
    for joined in (" или ", " и "):  # "брат или сестра": each noun phrase in the case, "брата или сестры"
        parts = label.split(joined)
        if len(parts) > 1 and all(nominative_head(part.split(" ")[0]) for part in parts):
            return joined.join(" ".join(_decline_head(part.split(" "), case, number)) for part in parts)
    return " ".join(_decline_head(words, case, number))


_QUOTED = re.compile(r"«[^»]*»")


def is_proper_name(label: str) -> bool:
    """Two or more capitalised Cyrillic words outside quotes and no person's name
    ("Парус Страхование", "Берёзка Банк"): a name pymorphy would decline as common nouns."""
    words = _CYRILLIC_WORD.findall(_QUOTED.sub(" ", label))
    return len(words) > 1 and all(w[:1].isupper() for w in words) and person_gender(label) is None


def starts_with_common_noun(label: str) -> bool:
    """Whether a label opens with a common noun phrase ("Отель «Аврора»", "Страховой случай
    CL-1"), not a name, a place or an abbreviation: inside a sentence it is written lower-case."""
    first = label.split(" ", 1)[0].rstrip(",;:")  # "Пазл, 1000 деталей"
    if not _CYRILLIC_WORD.fullmatch(first) or first[1:2].isupper() or is_proper_name(label) or person_gender(label):
        return False
    parse = nominative_head(first)
    return parse is not None and not {"Name", "Surn", "Patr", "Geox", "Orgn", "Trad"} & set(parse.tag.grammemes)


def nominative_head(word: str):
    """The parse of ``word`` as the nominative opening of a noun phrase (a noun, an
    adjective or a participle), or None."""
    folded = word.casefold()
    return (_nominative(folded, pos=frozenset({"NOUN"})) or _plural_noun(folded) or _nominative(folded, pos=_AGREEING)
            or _plural_agreeing(folded))


def _plural_noun(word: str):
    """The parse of a plural-only noun in the nominative ("Гантели", "Ножницы"), or None."""
    return next((p for p in _parses(word) if p.tag.POS == "NOUN" and {"nomn", "plur"} <= set(p.tag.grammemes)
                 and not _NAMES & set(p.tag.grammemes)), None)  # "новые" is no family of Новый


def _plural_agreeing(word: str):
    """The parse of an adjective or participle in the nominative plural, before a plural-only
    noun ("Умные" of "Умные часы"), or None."""
    return next((p for p in _parses(word.casefold()) if p.tag.POS in _AGREEING and {"nomn", "plur"} <= set(p.tag.grammemes)),
                None)


def _decline_head(words: list[str], case: str, number: str) -> list[str]:
    out = list(words)
    for i, written in enumerate(words):
        word = written.rstrip(",;:")  # "покупатель, у которого …": the clause after the head stays
        tail = written[len(word):]
        if not _CYRILLIC_WORD.fullmatch(word):
            return words  # a code or a foreign word before the head: leave the phrase alone
        if i == 0 and (compound := _compound(word, case, number)):
            out[0] = compound + tail
            return out
        noun = _nominative(word, pos=frozenset({"NOUN"}), names=not word[:1].islower()) or _plural_noun(word)
        if noun is not None and _modifies_next(word, words[i + 1:]):
            noun = None  # "часовой пояс": an adjective that is a noun too, before the noun it agrees with
        if noun is not None and "Fixd" not in noun.tag:
            number = "plur" if "plur" in noun.tag else number  # "Гантели" stay plural
            gender = str(noun.tag.gender) if noun.tag.gender else None
            out[i] = _inflected(noun, {case, number}, word) + tail
            # before a noun written in the plural («Умные часы») the adjectives are written in the plural too
            adjectives = [_plural_agreeing(words[j]) if "plur" in noun.tag else _nominative(words[j], gender, _AGREEING)
                          for j in range(i)]
            if None in adjectives:  # a word before the head that does not agree with it: not a phrase we can decline
                return words
            for j, adjective in enumerate(adjectives):  # the adjectives before the head agree with it
                animacy = case == "accs" and (number == "plur" or gender == "masc")  # accusative = genitive or nominative
                grammemes = {case, number} | ({"anim" if "anim" in noun.tag else "inan"} if animacy else set())
                out[j] = _inflected(adjective, grammemes | ({gender} if number == "sing" and gender else set()), words[j])
            return out
        if noun is not None or (_nominative(word, pos=_AGREEING) or _plural_agreeing(word)) is None:
            return words  # an indeclinable noun (Сочи) or not a noun phrase
    return words


def _compound(word: str, case: str, number: str) -> str | None:
    """A compound of two nouns («страна-участница», «член-корреспондент») in ``case``, each
    part declined, the second with the first's animacy: «страны-участницы» as objects, not
    «страны-участниц»; None for any other word."""
    first, hyphen, second = word.partition("-")
    if not first.islower():
        return None  # a name («Санкт-Петербург», «Нью-Йорк») declines as pymorphy reads it whole
    head = hyphen and _nominative(first, pos=frozenset({"NOUN"}), names=False)
    tail = head and _nominative(second, pos=frozenset({"NOUN"}), names=False)
    if not tail:
        return None
    # the accusative of a thing is its nominative in the plural and for a masculine noun
    inanimate = case == "accs" and "anim" not in head.tag and (number == "plur" or tail.tag.gender == "masc")
    return f"{_inflected(head, {case, number}, first)}-{_inflected(tail, {'nomn' if inanimate else case, number}, second)}"


def _modifies_next(word: str, rest: list[str]) -> bool:
    """Whether ``word`` reads as an adjective agreeing with the nominative noun after it."""
    if not rest or not _CYRILLIC_WORD.fullmatch(rest[0]):
        return False
    after = _nominative(rest[0].casefold(), pos=frozenset({"NOUN"}))
    if after is None:  # "новые технологии": a plural noun, and an adjective in the plural before it
        return _plural_noun(rest[0].casefold()) is not None and _plural_agreeing(word) is not None
    return _nominative(word, str(after.tag.gender), _AGREEING) is not None


@functools.lru_cache(maxsize=4096)
def head_gender(phrase: str) -> str:
    """The gender of a phrase's head noun ("masc", "femn", "neut"; "plur" for a plural
    head; "masc" when unknown), for words that must agree with it."""
    gender = person_gender(phrase)
    if gender:
        return gender
    for word in phrase.split():
        if not _CYRILLIC_WORD.fullmatch(word):
            break
        for parse in _parses(word.casefold()):
            if parse.tag.POS == "NOUN" and "nomn" in parse.tag:
                return "plur" if "plur" in parse.tag and "Pltm" not in parse.tag else str(parse.tag.gender or "masc")
    return "masc"


@functools.lru_cache(maxsize=4096)
def agree(word: str, phrase: str, case: str = "nomn") -> str:
    """An adjective or pronoun (dictionary form, e.g. "какой", "который", "его") made to
    agree with the head of ``phrase`` in ``case``: agree("какой", "дата рождения") -> "какая"."""
    gender = head_gender(phrase)
    parse = _nominative(word, "masc") or _parses(word)[0]
    grammemes = {case, "plur"} if gender == "plur" else {case, "sing", gender}
    if case == "accs" and gender in ("masc", "plur"):
        grammemes.add("anim" if animate(phrase) else "inan")
    return _inflected(parse, grammemes, word)


@functools.lru_cache(maxsize=4096)
def animate(phrase: str) -> bool:
    """Whether the head of ``phrase`` is animate (a person: "сотрудник", "Анна Петрова")."""
    if person_gender(phrase):
        return True
    words = phrase.split()
    for i, word in enumerate(words):
        noun = _nominative(word, pos=frozenset({"NOUN"}), names=not word[:1].islower()) if _CYRILLIC_WORD.fullmatch(word) else None
        if noun is not None and not _modifies_next(word.casefold(), words[i + 1:]):
            return "anim" in noun.tag
    return False


def accusative(phrase: str, number: str = "sing") -> str:
    """``phrase`` as the object of a verb («Возьмём страхователя», «Перечислите всех
    знаменитостей», «Возьмём компанию»): a head that can name a person («держатель»,
    «знаменитость», which pymorphy reads as things first) takes the animate form, the
    genitive's for a masculine noun and in the plural."""
    if may_name_a_person(phrase) and (number == "plur" or head_gender(phrase) == "masc"):
        return decline(phrase, "gent", number)
    return decline(phrase, "accs", number)


# nouns whose reading as a person is slang («тип» a guy): as a relation's head they name a kind («тип союза»)
_KINDS_NOT_PEOPLE = frozenset({"тип", "вид", "род"})


def may_name_a_person(phrase: str) -> bool:
    """Whether the head noun of ``phrase`` has a reading as a person."""
    words = phrase.split()
    for i, word in enumerate(words):
        if not _CYRILLIC_WORD.fullmatch(word):
            return False
        # a compound is what its first part is: «страна-участница» is a country, «член-корреспондент» a person
        head = word.casefold().split("-")[0]
        if head in _KINDS_NOT_PEOPLE:
            return False
        nouns = [p for p in _parses(head) if p.tag.POS == "NOUN" and "nomn" in p.tag]
        if nouns and not _modifies_next(word.casefold(), words[i + 1:]):
            return any("anim" in p.tag for p in nouns)
    return False


def genitive_run(text: str) -> int:
    """The most links in one chain of nouns in ``text``: each noun in the genitive after the
    chain's head, and «у» before one, is a link («страна у города проживания Веры Комаровой»:
    3, as "the country of the city of residence of X" has three "of"s); adjectives and
    pronouns between them aside, a person's name counted once; any other word or a
    punctuation mark ends the chain."""
    longest = run = 0
    head = linked = after_name = False
    for token in _TOKEN.findall(text):
        word = token.strip("«»\"'.,;:?!()")
        parses = _parses(word.casefold()) if _CYRILLIC_WORD.fullmatch(word) else ()
        # the likeliest reading says what the word is; its lemma's other forms, whether it may be genitive
        best = parses[0] if parses else None
        pos = best.tag.POS if best else None
        name = any(_NAMES & set(p.tag.grammemes) for p in parses)
        genitive = any(p.tag.POS == pos and "gent" in p.tag for p in parses if p.normal_form == best.normal_form) if best else False
        if word.casefold() == "у":
            linked = True
        elif (head or linked) and pos == "NOUN" and genitive:
            run += 0 if name and after_name else 1
            head, linked = True, False
        elif pos == "NOUN":
            head, run, linked = True, 0, False
        elif pos not in _AGREEING | {"NPRO"}:
            head = linked = False
            run = 0
        after_name = name
        longest = max(longest, run)
        if token[-1:] in ",;:?!.":
            head = linked = after_name = False
            run = 0
    return longest
