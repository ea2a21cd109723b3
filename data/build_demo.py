"""Build the kgsynth demo knowledge graph: ``data/demo/*.ttl`` (``src/kgsynth/kg/demo``, package data).

The graph is invented by the kgsynth team (no third-party data): four subject domains
(payroll and personal finance, insurance, retail, travel) plus shared geography, every
entity labelled in English and Russian, and 25 semantic rules of all five kinds written
with the kgsynth vocabulary (``docs/vocabulary.md``).

Regenerate (deterministic: a fixed seed, so two runs give byte-identical files)::

    .venv/bin/python data/build_demo.py

Only the standard library and ``pyoxigraph`` are used; pyoxigraph writes the Turtle, so
escaping is always right. ``data/README.md`` describes what the graph contains.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from datetime import date, timedelta
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

from pyoxigraph import BlankNode, Literal, NamedNode, RdfFormat, Triple, serialize

SEED = 20250601
OUT_DIR = Path(__file__).resolve().parent / "demo"

EX = "https://kgsynth.example/demo/"
KGS = "https://w3id.org/kgsynth/vocab#"
RDF = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
RDFS = "http://www.w3.org/2000/01/rdf-schema#"
OWL = "http://www.w3.org/2002/07/owl#"
XSD = "http://www.w3.org/2001/XMLSchema#"
PREFIXES = {"ex": EX, "kgs": KGS, "rdf": RDF, "rdfs": RDFS, "owl": OWL, "xsd": XSD}

A = NamedNode(RDF + "type")
LABEL = NamedNode(RDFS + "label")


def ex(local: str) -> NamedNode:
    return NamedNode(EX + local)


def kgs(local: str) -> NamedNode:
    return NamedNode(KGS + local)


# ---------------------------------------------------------------------------- literals


def money(value) -> Literal:
    """An amount as xsd:decimal: whole roubles without a fraction, else two decimals."""
    d = Decimal(value).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)
    text = str(d.to_integral_value()) if d == d.to_integral_value() else str(d)
    return Literal(text, datatype=NamedNode(XSD + "decimal"))


def decimal(text: str) -> Literal:
    return Literal(text, datatype=NamedNode(XSD + "decimal"))


def integer(n: int) -> Literal:
    return Literal(str(n), datatype=NamedNode(XSD + "integer"))


def day(d: date) -> Literal:
    return Literal(d.isoformat(), datatype=NamedNode(XSD + "date"))


def year(y: int) -> Literal:
    return Literal(str(y), datatype=NamedNode(XSD + "gYear"))


def boolean(b: bool) -> Literal:
    return Literal("true" if b else "false", datatype=NamedNode(XSD + "boolean"))


def en(text: str) -> Literal:
    return Literal(text, language="en")


def ru(text: str) -> Literal:
    return Literal(text, language="ru")


# ---------------------------------------------------------------------------- output


class TurtleFile:
    """Triples of one output file, grouped by subject in insertion order."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._by_subject: dict = {}
        self._seen: set[tuple] = set()

    def add(self, s, p, o) -> None:
        key = (str(s), str(p), str(o))
        if key in self._seen:  # RDF would merge it silently: two facts would become one
            raise ValueError(f"duplicate triple in {self.name}: {key}")
        self._seen.add(key)
        self._by_subject.setdefault(str(s), (s, []))[1].append((p, o))

    def entity(self, s, cls: str, label_en: str, label_ru: str) -> NamedNode:
        self.add(s, A, ex(cls))
        self.add(s, LABEL, en(label_en))
        self.add(s, LABEL, ru(label_ru))
        return s

    def facts(self, s, **relations) -> None:
        """Add ``ex:<name> value`` for every keyword; a list value gives several triples."""
        for name, value in relations.items():
            for v in value if isinstance(value, list) else [value]:
                self.add(s, ex(name), v)

    def __len__(self) -> int:
        return len(self._seen)

    def write(self, directory: Path) -> None:
        triples = [Triple(s, p, o) for s, pos in self._by_subject.values() for p, o in pos]
        (directory / self.name).write_bytes(serialize(triples, format=RdfFormat.TURTLE, prefixes=PREFIXES))


# ---------------------------------------------------------------------------- vocabulary

DOMAINS = {  # local name: (en, ru, categories {local: (en, ru)})
    "geography": ("geography", "география", {}),
    "payroll": ("payroll and personal finance", "зарплата и личные финансы", {
        "tax": ("tax", "налоги"),
        "banking": ("bank cards", "банковские карты"),
        "employment": ("employment terms", "трудовые отношения"),
    }),
    "insurance": ("insurance", "страхование", {
        "premiums": ("premiums and commissions", "страховые премии и комиссии"),
        "claims": ("claims", "страховые случаи"),
        "deductibles": ("deductibles", "франшизы"),
        "vehicles": ("vehicles", "транспортные средства"),
    }),
    "retail": ("retail", "розничная торговля", {
        "delivery": ("delivery", "доставка"),
        "loyalty": ("loyalty programme", "программа лояльности"),
        "returns": ("returns", "возвраты"),
    }),
    "travel": ("travel", "путешествия", {
        "accommodation": ("accommodation", "проживание"),
        "business-travel": ("business travel", "командировки"),
        "cancellations": ("cancellations", "отмена бронирований"),
    }),
}

CLASSES = [  # (local, en, ru, domain)
    ("Country", "country", "страна", "geography"),
    ("City", "city", "город", "geography"),
    ("Employer", "employer", "работодатель", "payroll"),
    ("Office", "office", "офис", "payroll"),
    ("Department", "department", "отдел", "payroll"),
    ("Position", "job position", "должность", "payroll"),
    ("Employee", "employee", "сотрудник", "payroll"),
    ("Bank", "bank", "банк", "payroll"),
    ("BankCard", "bank card", "банковская карта", "payroll"),
    ("TaxBracket", "income tax bracket", "ступень шкалы НДФЛ", "payroll"),
    ("Insurer", "insurance company", "страховая компания", "insurance"),
    ("PolicyType", "type of insurance", "вид страхования", "insurance"),
    ("Policyholder", "policyholder", "страхователь", "insurance"),
    ("VehicleModel", "car model", "модель автомобиля", "insurance"),
    ("Vehicle", "vehicle", "автомобиль", "insurance"),
    ("Policy", "insurance policy", "страховой полис", "insurance"),
    ("Claim", "insurance claim", "страховой случай", "insurance"),
    ("ClaimStatus", "claim status", "статус страхового случая", "insurance"),
    ("VehicleClass", "engine power class", "класс мощности двигателя", "insurance"),
    ("Store", "store", "магазин", "retail"),
    ("MembershipLevel", "membership level", "уровень участия", "retail"),
    ("ProductCategory", "product category", "категория товаров", "retail"),
    ("Product", "product", "товар", "retail"),
    ("Customer", "customer", "покупатель", "retail"),
    ("Order", "order", "заказ", "retail"),
    ("ReturnRequest", "product return", "возврат товара", "retail"),
    ("LoyaltyTier", "loyalty tier", "статус в программе лояльности", "retail"),
    ("Hotel", "hotel", "гостиница", "travel"),
    ("Tariff", "booking tariff", "тариф бронирования", "travel"),
    ("TripPurpose", "trip purpose", "цель поездки", "travel"),
    ("Trip", "trip", "поездка", "travel"),
    ("Booking", "hotel booking", "бронирование гостиницы", "travel"),
    ("HotelSegment", "hotel price segment", "ценовой сегмент гостиницы", "travel"),
]

OBJECT, VALUE = "ObjectProperty", "DatatypeProperty"
RELATIONS = {  # domain: [(local, en, ru, kind)]; the domain only groups them here
    "geography": [
        ("country", "in country", "находится в стране", OBJECT),
        ("isoCode", "ISO country code", "код страны ISO", VALUE),
        ("utcOffset", "UTC offset in hours", "смещение от UTC в часах", VALUE),
        ("locatedIn", "located in", "находится в городе", OBJECT),
        ("livesIn", "city of residence", "город проживания", OBJECT),
    ],
    "payroll": [
        ("headquarters", "headquarters city", "город головного офиса", OBJECT),
        ("taxId", "taxpayer number", "ИНН", VALUE),
        ("foundedDate", "date founded", "дата основания", VALUE),
        ("staffCount", "number of staff", "численность персонала", VALUE),
        ("employer", "part of company", "входит в компанию", OBJECT),
        ("floorCount", "number of floors", "число этажей", VALUE),
        ("office", "based at office", "размещается в офисе", OBJECT),
        ("head", "head", "руководитель", OBJECT),
        ("worksIn", "works in", "работает в отделе", OBJECT),
        ("position", "job title", "занимаемая должность", OBJECT),
        ("personnelNumber", "personnel number", "табельный номер", VALUE),
        ("birthDate", "date of birth", "дата рождения", VALUE),
        ("hireDate", "hire date", "дата приёма на работу", VALUE),
        ("monthlySalary", "monthly salary", "месячная зарплата", VALUE),
        ("annualBonus", "annual bonus", "годовая премия", VALUE),
        ("annualIncome", "annual income", "годовой доход", VALUE),
        ("taxResident", "tax resident", "налоговый резидент", VALUE),
        ("bic", "bank identification code", "БИК", VALUE),
        ("cardHolder", "card holder", "держатель карты", OBJECT),
        ("issuedBy", "issued by", "выпущена банком", OBJECT),
        ("cardNumber", "card number", "номер карты", VALUE),
        ("monthlyLimit", "monthly spending limit", "месячный лимит трат", VALUE),
        ("purchaseAmount", "purchase this month", "покупка за месяц", VALUE),
        ("expiryDate", "expiry date", "срок действия", VALUE),
    ],
    "insurance": [
        ("licenceNumber", "licence number", "номер лицензии", VALUE),
        ("drivingExperience", "driving experience in years", "стаж вождения в годах", VALUE),
        ("vehicleModel", "model", "модель", OBJECT),
        ("owner", "owner", "владелец", OBJECT),
        ("plateNumber", "registration plate", "госномер", VALUE),
        ("enginePower", "engine power in hp", "мощность двигателя в л. с.", VALUE),
        ("manufactureYear", "year of manufacture", "год выпуска", VALUE),
        ("policyNumber", "policy number", "номер полиса", VALUE),
        ("insurer", "insurer", "страховщик", OBJECT),
        ("policyholder", "policy holder", "владелец полиса", OBJECT),
        ("policyType", "insurance type", "тип страхования", OBJECT),
        ("insuredVehicle", "insured vehicle", "застрахованный автомобиль", OBJECT),
        ("annualPremium", "annual premium", "годовая страховая премия", VALUE),
        ("deductible", "deductible", "франшиза", VALUE),
        ("coverageLimit", "sum insured", "страховая сумма", VALUE),
        ("startDate", "start date", "дата начала", VALUE),
        ("endDate", "end date", "дата окончания", VALUE),
        ("claimNumber", "claim number", "номер убытка", VALUE),
        ("claimPolicy", "policy", "полис", OBJECT),
        ("incidentDate", "incident date", "дата происшествия", VALUE),
        ("filingDate", "filing date", "дата подачи заявления", VALUE),
        ("claimAmount", "claimed amount", "заявленная сумма ущерба", VALUE),
        ("atFault", "policyholder at fault", "виновен страхователь", VALUE),
        ("claimStatus", "status", "статус рассмотрения", OBJECT),
    ],
    "retail": [
        ("storeCode", "store code", "код магазина", VALUE),
        ("openedDate", "opening date", "дата открытия", VALUE),
        ("salesArea", "sales area in square metres", "торговая площадь в кв. м", VALUE),
        ("sku", "article number", "артикул", VALUE),
        ("price", "price", "цена", VALUE),
        ("productCategory", "category", "категория", OBJECT),
        ("loyaltyCardNumber", "loyalty card number", "номер карты лояльности", VALUE),
        ("membership", "membership", "участие в программе", OBJECT),
        ("annualSpend", "spend over the year", "сумма покупок за год", VALUE),
        ("homeStore", "usual store", "основной магазин", OBJECT),
        ("registeredDate", "registration date", "дата регистрации", VALUE),
        ("orderNumber", "order number", "номер заказа", VALUE),
        ("customer", "ordered by", "заказчик", OBJECT),
        ("store", "placed at store", "магазин оформления", OBJECT),
        ("orderDate", "order date", "дата заказа", VALUE),
        ("item", "item", "товар в заказе", OBJECT),
        ("itemCount", "number of items", "число товаров", VALUE),
        ("orderTotal", "order total", "сумма заказа", VALUE),
        ("returnedOrder", "original order", "исходный заказ", OBJECT),
        ("returnedProduct", "returned product", "возвращённый товар", OBJECT),
        ("purchaseDate", "purchase date", "дата покупки", VALUE),
        ("returnDate", "return date", "дата возврата", VALUE),
        ("refundAmount", "refund amount", "сумма возврата", VALUE),
    ],
    "travel": [
        ("hotelCode", "hotel code", "код гостиницы", VALUE),
        ("stars", "star rating", "число звёзд", VALUE),
        ("nightlyRate", "price per night", "цена за ночь", VALUE),
        ("hasPool", "has a swimming pool", "есть бассейн", VALUE),
        ("traveller", "traveller", "путешественник", OBJECT),
        ("destination", "destination", "место назначения", OBJECT),
        ("tripStart", "departure date", "дата отъезда", VALUE),
        ("tripEnd", "return date of the trip", "дата возвращения из поездки", VALUE),
        ("tripPurpose", "purpose", "цель", OBJECT),
        ("tripBudget", "trip budget", "бюджет поездки", VALUE),
        ("tripExpenses", "trip expenses", "расходы на поездку", VALUE),
        ("bookingReference", "booking reference", "номер бронирования", VALUE),
        ("hotel", "booked hotel", "забронированная гостиница", OBJECT),
        ("forTrip", "part of trip", "часть поездки", OBJECT),
        ("guest", "guest", "гость", OBJECT),
        ("bookingDate", "booking date", "дата бронирования", VALUE),
        ("checkInDate", "check-in date", "дата заезда", VALUE),
        ("checkOutDate", "check-out date", "дата выезда", VALUE),
        ("bookingAmount", "booking amount", "стоимость бронирования", VALUE),
        ("tariff", "tariff", "тариф", OBJECT),
    ],
}


# How each relation is put into words (kgs:nounForm, kgs:inverseNounForm, kgs:yesForm, kgs:noForm,
# kgs:questionForm; docs/vocabulary.md) where its label is not the noun a sentence needs: "located in" is a verb
# phrase, "ordered by" names the order's customer. {s} is the subject; {s:loct} declines it.
FORMS = {  # local: {form: (en, ru)}
    "country": {"noun": ("country", "страна"), "inverse_noun": ("city", "город")},
    "locatedIn": {"noun": ("city", "город")},
    "livesIn": {"inverse_noun": ("resident", "житель")},
    "headquarters": {"inverse_noun": ("company", "компания")},
    "foundedDate": {"noun": ("founding date", "дата основания")},
    "employer": {"noun": ("company", "компания")},
    "office": {"noun": ("office", "офис")},
    "head": {"inverse_noun": ("department", "отдел")},
    "worksIn": {"noun": ("department", "отдел"), "inverse_noun": ("employee", "сотрудник")},
    "position": {"noun": ("job title", "должность"), "inverse_noun": ("employee", "сотрудник")},
    "taxResident": {"noun": ("tax residency", "налоговое резидентство"),
                    "yes": ("{s} is a tax resident", "{s} — налоговый резидент"),
                    "no": ("{s} is not a tax resident", "{s} не является налоговым резидентом"),
                    "question": ("Is {s} a tax resident?", "Есть ли статус налогового резидента у {s:gent}?")},
    "cardHolder": {"inverse_noun": ("card", "карта")},
    "issuedBy": {"noun": ("issuing bank", "банк-эмитент"), "inverse_noun": ("card", "карта")},
    "purchaseAmount": {"noun": ("monthly purchase", "покупка за месяц")},
    "vehicleModel": {"inverse_noun": ("vehicle", "автомобиль")},
    "owner": {"inverse_noun": ("vehicle", "автомобиль")},
    "insurer": {"inverse_noun": ("policy", "полис")},
    "policyholder": {"noun": ("policyholder", "страхователь"), "inverse_noun": ("policy", "полис")},
    "policyType": {"inverse_noun": ("policy", "полис")},
    "insuredVehicle": {"inverse_noun": ("policy", "полис")},
    "claimPolicy": {"inverse_noun": ("claim", "страховой случай")},
    "atFault": {"noun": ("policyholder's fault", "вина страхователя"),
                "yes": ("the policyholder was at fault in {s}", "по {s:datv} виновен страхователь"),
                "no": ("the policyholder was not at fault in {s}", "по {s:datv} страхователь не виновен"),
                "question": ("Was the policyholder at fault in {s}?", "Виновен ли страхователь по {s:datv}?")},
    "claimStatus": {"inverse_noun": ("claim", "страховой случай")},
    "productCategory": {"inverse_noun": ("product", "товар")},
    "membership": {"noun": ("membership level", "уровень участия"), "inverse_noun": ("customer", "покупатель")},
    "annualSpend": {"noun": ("annual spend", "сумма покупок за год")},
    "homeStore": {"inverse_noun": ("customer", "покупатель")},
    "customer": {"noun": ("customer", "заказчик"), "inverse_noun": ("order", "заказ")},
    "store": {"noun": ("store", "магазин"), "inverse_noun": ("order", "заказ")},
    "item": {"noun": ("item", "товар"), "inverse_noun": ("order", "заказ")},
    "returnedOrder": {"inverse_noun": ("return", "возврат")},
    "returnedProduct": {"inverse_noun": ("return", "возврат")},
    "hasPool": {"noun": ("swimming pool", "бассейн"),
                "yes": ("{s} has a swimming pool", "в {s:loct} есть бассейн"),
                "no": ("{s} has no swimming pool", "в {s:loct} нет бассейна"),
                "question": ("Does {s} have a swimming pool?", "Есть ли бассейн в {s:loct}?")},
    "traveller": {"inverse_noun": ("trip", "поездка")},
    "destination": {"inverse_noun": ("trip", "поездка")},
    "tripExpenses": {"noun": ("trip spending", "расходы на поездку")},
    "tripPurpose": {"noun": ("trip purpose", "цель поездки"), "inverse_noun": ("trip", "поездка")},
    "hotel": {"noun": ("hotel", "гостиница"), "inverse_noun": ("booking", "бронирование")},
    "forTrip": {"noun": ("trip", "поездка"), "inverse_noun": ("booking", "бронирование")},
    "guest": {"inverse_noun": ("booking", "бронирование")},
    "tariff": {"inverse_noun": ("booking", "бронирование")},
}
FORM_TERMS = {"noun": "nounForm", "inverse_noun": "inverseNounForm", "yes": "yesForm", "no": "noForm",
              "question": "questionForm"}


def build_vocabulary() -> TurtleFile:
    f = TurtleFile("vocabulary.ttl")
    for local, (label_en, label_ru, categories) in DOMAINS.items():
        f.add(ex(local), A, kgs("Domain"))
        f.add(ex(local), LABEL, en(label_en))
        f.add(ex(local), LABEL, ru(label_ru))
        for cat, (cat_en, cat_ru) in categories.items():
            f.add(ex(cat), A, kgs("Category"))
            f.add(ex(cat), kgs("domain"), ex(local))
            f.add(ex(cat), LABEL, en(cat_en))
            f.add(ex(cat), LABEL, ru(cat_ru))
    for local, label_en, label_ru, domain in CLASSES:
        f.add(ex(local), A, NamedNode(OWL + "Class"))
        f.add(ex(local), kgs("domain"), ex(domain))
        f.add(ex(local), LABEL, en(label_en))
        f.add(ex(local), LABEL, ru(label_ru))
        if local in WORLD_KNOWN_CLASSES:
            f.add(ex(local), kgs("worldKnown"), boolean(True))
    for local, label_en, label_ru, kind in (r for group in RELATIONS.values() for r in group):
        f.add(ex(local), A, NamedNode(OWL + kind))
        f.add(ex(local), LABEL, en(label_en))
        f.add(ex(local), LABEL, ru(label_ru))
        for form, (form_en, form_ru) in FORMS.get(local, {}).items():
            f.add(ex(local), kgs(FORM_TERMS[form]), en(form_en))
            f.add(ex(local), kgs(FORM_TERMS[form]), ru(form_ru))
    return f


# ---------------------------------------------------------------------------- names

MALE = [("Ivan", "Иван"), ("Alexei", "Алексей"), ("Dmitry", "Дмитрий"), ("Sergei", "Сергей"),
        ("Mikhail", "Михаил"), ("Andrei", "Андрей"), ("Nikolai", "Николай"), ("Pavel", "Павел"),
        ("Artyom", "Артём"), ("Maxim", "Максим"), ("Kirill", "Кирилл"), ("Yegor", "Егор"),
        ("Roman", "Роман"), ("Timur", "Тимур"), ("Oleg", "Олег"), ("Viktor", "Виктор"),
        ("Boris", "Борис"), ("Gleb", "Глеб"), ("Stepan", "Степан"), ("Denis", "Денис")]
FEMALE = [("Anna", "Анна"), ("Elena", "Елена"), ("Olga", "Ольга"), ("Maria", "Мария"),
          ("Tatiana", "Татьяна"), ("Natalia", "Наталья"), ("Irina", "Ирина"), ("Svetlana", "Светлана"),
          ("Yulia", "Юлия"), ("Ekaterina", "Екатерина"), ("Daria", "Дарья"), ("Polina", "Полина"),
          ("Ksenia", "Ксения"), ("Alina", "Алина"), ("Vera", "Вера"), ("Sofia", "Софья"),
          ("Marina", "Марина"), ("Anastasia", "Анастасия"), ("Victoria", "Виктория"), ("Lyudmila", "Людмила")]
# Masculine forms; the feminine adds -a / -а (Petrov -> Petrova, Ilyin -> Ilyina).
SURNAMES = [("Petrov", "Петров"), ("Ivanov", "Иванов"), ("Smirnov", "Смирнов"), ("Kuznetsov", "Кузнецов"),
            ("Popov", "Попов"), ("Sokolov", "Соколов"), ("Lebedev", "Лебедев"), ("Kozlov", "Козлов"),
            ("Novikov", "Новиков"), ("Morozov", "Морозов"), ("Volkov", "Волков"), ("Solovyov", "Соловьёв"),
            ("Vasiliev", "Васильев"), ("Zaitsev", "Зайцев"), ("Pavlov", "Павлов"), ("Semyonov", "Семёнов"),
            ("Golubev", "Голубев"), ("Vinogradov", "Виноградов"), ("Bogdanov", "Богданов"),
            ("Vorobyov", "Воробьёв"), ("Fyodorov", "Фёдоров"), ("Mikhailov", "Михайлов"), ("Belyaev", "Беляев"),
            ("Tarasov", "Тарасов"), ("Belov", "Белов"), ("Komarov", "Комаров"), ("Orlov", "Орлов"),
            ("Kiselyov", "Киселёв"), ("Makarov", "Макаров"), ("Andreev", "Андреев"), ("Kovalyov", "Ковалёв"),
            ("Ilyin", "Ильин"), ("Gusev", "Гусев"), ("Titov", "Титов"), ("Kuzmin", "Кузьмин"),
            ("Baranov", "Баранов"), ("Kulikov", "Куликов"), ("Stepanov", "Степанов"), ("Yakovlev", "Яковлев"),
            ("Sorokin", "Сорокин"), ("Zakharov", "Захаров"), ("Borisov", "Борисов"), ("Korolyov", "Королёв"),
            ("Gerasimov", "Герасимов"), ("Lazarev", "Лазарев"), ("Nikitin", "Никитин"), ("Sobolev", "Соболев"),
            ("Polyakov", "Поляков"), ("Tsvetkov", "Цветков"), ("Danilov", "Данилов"), ("Zhukov", "Жуков"),
            ("Frolov", "Фролов"), ("Krylov", "Крылов"), ("Osipov", "Осипов"), ("Kalinin", "Калинин")]

# Deliberate homonyms: different entities with the same label (real graphs have them).
HOMONYM_MAN = ("Ivan Petrov", "Иван Петров")          # two employees
HOMONYM_WOMAN = ("Elena Smirnova", "Елена Смирнова")  # a policyholder and a customer


class People:
    """Draws unique person names (en, ru) so that the only homonyms are the deliberate ones."""

    def __init__(self, rng: random.Random) -> None:
        names = []
        for sur_en, sur_ru in SURNAMES:
            names += [(f"{f_en} {sur_en}", f"{f_ru} {sur_ru}") for f_en, f_ru in MALE]
            names += [(f"{f_en} {sur_en}a", f"{f_ru} {sur_ru}а") for f_en, f_ru in FEMALE]
        names = [n for n in names if n not in (HOMONYM_MAN, HOMONYM_WOMAN)]
        rng.shuffle(names)
        self._names = names

    def next(self) -> tuple[str, str]:
        return self._names.pop()


# ---------------------------------------------------------------------------- helpers


def between(rng: random.Random, start: date, end: date) -> date:
    return start + timedelta(days=rng.randrange((end - start).days + 1))


def log_uniform(rng: random.Random, low: float, high: float) -> float:
    return math.exp(rng.uniform(math.log(low), math.log(high)))


def round_to(value: float, step: int) -> int:
    return max(step, round(value / step) * step)


def codes(rng: random.Random, n: int, make) -> list[str]:
    """n distinct codes from ``make(rng)``, in drawing order."""
    seen: dict[str, None] = {}
    while len(seen) < n:
        seen.setdefault(make(rng), None)
    return list(seen)


# ---------------------------------------------------------------------------- geography

COUNTRIES = [("ru", "Russia", "Россия", "RU"), ("kz", "Kazakhstan", "Казахстан", "KZ"),
             ("am", "Armenia", "Армения", "AM"), ("ge", "Georgia", "Грузия", "GE"),
             ("tr", "Turkey", "Турция", "TR"), ("uz", "Uzbekistan", "Узбекистан", "UZ"),
             ("rs", "Serbia", "Сербия", "RS")]
CITIES = {  # local: (en, ru, ru "in <city>", country, UTC offset)
    "moscow": ("Moscow", "Москва", "в Москве", "ru", 3),
    "saint-petersburg": ("Saint Petersburg", "Санкт-Петербург", "в Санкт-Петербурге", "ru", 3),
    "kazan": ("Kazan", "Казань", "в Казани", "ru", 3),
    "novosibirsk": ("Novosibirsk", "Новосибирск", "в Новосибирске", "ru", 7),
    "yekaterinburg": ("Yekaterinburg", "Екатеринбург", "в Екатеринбурге", "ru", 5),
    "nizhny-novgorod": ("Nizhny Novgorod", "Нижний Новгород", "в Нижнем Новгороде", "ru", 3),
    "samara": ("Samara", "Самара", "в Самаре", "ru", 4),
    "sochi": ("Sochi", "Сочи", "в Сочи", "ru", 3),
    "kaliningrad": ("Kaliningrad", "Калининград", "в Калининграде", "ru", 2),
    "almaty": ("Almaty", "Алматы", "в Алматы", "kz", 5),
    "astana": ("Astana", "Астана", "в Астане", "kz", 5),
    "yerevan": ("Yerevan", "Ереван", "в Ереване", "am", 4),
    "tbilisi": ("Tbilisi", "Тбилиси", "в Тбилиси", "ge", 4),
    "istanbul": ("Istanbul", "Стамбул", "в Стамбуле", "tr", 3),
    "antalya": ("Antalya", "Анталья", "в Анталье", "tr", 3),
    "tashkent": ("Tashkent", "Ташкент", "в Ташкенте", "uz", 5),
    "samarkand": ("Samarkand", "Самарканд", "в Самарканде", "uz", 5),
    "belgrade": ("Belgrade", "Белград", "в Белграде", "rs", 1),
}
RUSSIAN_CITIES = [c for c, v in CITIES.items() if v[3] == "ru"]


# Real places: a model knows their facts without any dialogue, so they are marked world-known
# (kgs:worldKnown on their classes, and each linked to DBpedia by owl:sameAs): retrieval items
# about them are not built offline (docs/vocabulary.md, "World knowledge").
WORLD_KNOWN_CLASSES = ("Country", "City")
DBPEDIA = "http://dbpedia.org/resource/"
DBPEDIA_NAMES = {"Georgia": "Georgia_(country)"}  # where the English label is not the resource's name


def same_as(label_en: str) -> NamedNode:
    return NamedNode(DBPEDIA + DBPEDIA_NAMES.get(label_en, label_en.replace(" ", "_")))


def city(local: str) -> NamedNode:
    return ex(f"city-{local}")


def build_geography() -> TurtleFile:
    f = TurtleFile("geography.ttl")
    for local, label_en, label_ru, iso in COUNTRIES:
        s = f.entity(ex(f"country-{local}"), "Country", label_en, label_ru)
        f.facts(s, isoCode=Literal(iso))
        f.add(s, NamedNode(OWL + "sameAs"), same_as(label_en))
    for local, (label_en, label_ru, _in, country, offset) in CITIES.items():
        s = f.entity(city(local), "City", label_en, label_ru)
        f.facts(s, country=ex(f"country-{country}"), utcOffset=integer(offset))
        f.add(s, NamedNode(OWL + "sameAs"), same_as(label_en))
    return f


# ---------------------------------------------------------------------------- payroll

EMPLOYERS = [  # (local, en, ru, headquarters, second office or None)
    ("vostok-logistics", "Vostok Logistics", "Восток Логистик", "moscow", "novosibirsk"),
    ("oblako-soft", "Oblako Soft", "Облако Софт", "saint-petersburg", "kazan"),
    ("rassvet-foods", "Rassvet Foods", "Рассвет Фудс", "samara", "moscow"),
    ("kedr-pharma", "Kedr Pharma", "Кедр Фарма", "novosibirsk", None),
    ("mayak-media", "Mayak Media", "Маяк Медиа", "moscow", "yekaterinburg"),
    ("granit-stroy", "Granit Stroy", "Гранит Строй", "yekaterinburg", "nizhny-novgorod"),
    ("volna-telecom", "Volna Telecom", "Волна Телеком", "kazan", "samara"),
    ("severny-veter", "Severny Veter Energy", "Северный Ветер Энерджи", "nizhny-novgorod", None),
]
FUNCTIONS = {  # department function: (en, ru, staff positions)
    "management": ("Management board", "Дирекция", []),
    "sales": ("Sales department", "Отдел продаж", ["sales-manager", "analyst"]),
    "accounting": ("Accounting department", "Бухгалтерия", ["accountant"]),
    "it": ("IT department", "ИТ-отдел", ["software-engineer", "analyst"]),
    "logistics": ("Logistics department", "Отдел логистики", ["logistics-coordinator"]),
    "marketing": ("Marketing department", "Отдел маркетинга", ["marketing-manager", "analyst"]),
    "hr": ("HR department", "Отдел кадров", ["hr-specialist"]),
    "legal": ("Legal department", "Юридический отдел", ["lawyer"]),
    "procurement": ("Procurement department", "Отдел закупок", ["procurement-specialist"]),
}
POSITIONS = {  # local: (en, ru, monthly salary range in roubles)
    "managing-director": ("Managing director", "Генеральный директор", (1_200_000, 2_200_000)),
    "head-of-department": ("Head of department", "Руководитель отдела", (220_000, 650_000)),
    "sales-manager": ("Sales manager", "Менеджер по продажам", (60_000, 140_000)),
    "analyst": ("Analyst", "Аналитик", (90_000, 200_000)),
    "accountant": ("Accountant", "Бухгалтер", (60_000, 110_000)),
    "software-engineer": ("Software engineer", "Инженер-программист", (130_000, 380_000)),
    "logistics-coordinator": ("Logistics coordinator", "Координатор логистики", (60_000, 110_000)),
    "marketing-manager": ("Marketing manager", "Маркетолог", (80_000, 170_000)),
    "hr-specialist": ("HR specialist", "Специалист по кадрам", (55_000, 95_000)),
    "lawyer": ("Lawyer", "Юрист", (90_000, 230_000)),
    "procurement-specialist": ("Procurement specialist", "Специалист по закупкам", (65_000, 120_000)),
}
BANKS = [("yantar", "Yantar Bank", "Янтарь Банк", "kaliningrad"), ("berezka", "Berezka Bank", "Берёзка Банк", "moscow"),
         ("sokol", "Sokol Bank", "Сокол Банк", "saint-petersburg"), ("rodnik", "Rodnik Bank", "Родник Банк", "kazan"),
         ("zarechye", "Zarechye Bank", "Заречье Банк", "yekaterinburg")]
N_STAFF = 58  # besides 8 managing directors and 24 heads of department: 90 employees
N_CARDS = 60
CARD_LIMITS = [30_000, 50_000, 75_000, 100_000, 150_000, 200_000]


def build_payroll(rng: random.Random, people: People) -> TurtleFile:
    f = TurtleFile("payroll.ttl")
    for local, (label_en, label_ru, _range) in POSITIONS.items():
        f.entity(ex(f"position-{local}"), "Position", label_en, label_ru)
    for local, label_en, label_ru, hq in BANKS:
        s = f.entity(ex(f"bank-{local}"), "Bank", label_en, label_ru)
        f.facts(s, headquarters=city(hq), bic=Literal(f"04{rng.randrange(10**7):07d}"))

    departments = []  # (iri, positions)
    tax_ids = codes(rng, len(EMPLOYERS), lambda r: f"{r.randrange(10**9, 10**10)}")
    for (local, name_en, name_ru, hq, second), tax_id in zip(EMPLOYERS, tax_ids):
        employer = f.entity(ex(f"employer-{local}"), "Employer", name_en, name_ru)
        f.facts(employer, headquarters=city(hq), taxId=Literal(tax_id),
                foundedDate=day(between(rng, date(1992, 1, 1), date(2016, 12, 31))),
                staffCount=integer(rng.randrange(120, 6000)))
        offices = []
        for c in [hq] + ([second] if second else []):
            c_en, _c_ru, c_in, *_ = CITIES[c]
            office = f.entity(ex(f"office-{local}-{c}"), "Office", f"{name_en} office in {c_en}",
                              f"Офис «{name_ru}» {c_in}")
            f.facts(office, employer=employer, locatedIn=city(c), floorCount=integer(rng.randrange(1, 25)))
            offices.append(office)
        functions = ["management"] + sorted(rng.sample(sorted(set(FUNCTIONS) - {"management"}), 3))
        for i, function in enumerate(functions):
            f_en, f_ru, positions = FUNCTIONS[function]
            dept = f.entity(ex(f"dept-{local}-{function}"), "Department", f"{f_en} of {name_en}",
                            f"{f_ru} «{name_ru}»")
            f.facts(dept, employer=employer, office=offices[0] if i == 0 else rng.choice(offices))
            departments.append((dept, positions))

    staff = [(dept, "managing-director" if not pos else "head-of-department") for dept, pos in departments]
    staff += [(dept, rng.choice(pos)) for dept, pos in rng.choices([d for d in departments if d[1]], k=N_STAFF)]
    rng.shuffle(staff)
    personnel = codes(rng, len(staff), lambda r: f"TN-{r.randrange(10**5):05d}")
    homonyms = {7, 61}  # indices of the two "Ivan Petrov"
    employees = []
    for i, ((dept, pos), number) in enumerate(zip(staff, personnel), start=1):
        name_en, name_ru = HOMONYM_MAN if i in homonyms else people.next()
        emp = f.entity(ex(f"emp-{i:03d}"), "Employee", name_en, name_ru)
        low, high = POSITIONS[pos][2]
        salary = round_to(log_uniform(rng, low, high), 500)
        bonus = round_to(salary * rng.uniform(0.5, 3.0), 1000) if rng.random() < 0.6 else 0
        f.facts(emp, personnelNumber=Literal(number), worksIn=dept, position=ex(f"position-{pos}"),
                birthDate=day(between(rng, date(1962, 1, 1), date(2002, 12, 31))),
                hireDate=day(between(rng, date(2009, 1, 1), date(2025, 5, 31))),
                monthlySalary=money(salary), annualIncome=money(12 * salary + bonus),
                taxResident=boolean(rng.random() < 0.8))
        if bonus:
            f.facts(emp, annualBonus=money(bonus))
        if pos in ("managing-director", "head-of-department"):
            f.facts(dept, head=emp)
        employees.append(emp)

    banks = [ex(f"bank-{b[0]}") for b in BANKS]
    last4 = codes(rng, N_CARDS, lambda r: f"{r.randrange(10**4):04d}")
    for i, digits in enumerate(last4, start=1):
        bank_i = rng.randrange(len(BANKS))
        card = f.entity(ex(f"card-{i:03d}"), "BankCard", f"{BANKS[bank_i][1]} card *{digits}",
                        f"Карта «{BANKS[bank_i][2]}» *{digits}")
        if i == 1:  # the worked example of docs/vocabulary.md: (52 700 - 50 000) x 10% = 270
            limit, purchases = 50_000, [46_500, 6_200]
        else:
            limit = rng.choice(CARD_LIMITS)
            purchases = split(rng, limit * rng.uniform(0.5, 1.35), rng.randrange(2, 6))
            if i % 12 == 6 and sum(purchases[:-1]) < limit:  # on the edge: exactly at the limit, not over it
                purchases[-1] = Decimal(limit) - sum(purchases[:-1])
        f.facts(card, cardHolder=rng.choice(employees), issuedBy=banks[bank_i],
                cardNumber=Literal(f"{rng.randrange(2200, 2205)} **** **** {digits}"),
                expiryDate=day(between(rng, date(2026, 1, 31), date(2030, 12, 31))),
                monthlyLimit=money(limit), purchaseAmount=[money(p) for p in purchases])
    return f


def split(rng: random.Random, total: float, n: int) -> list[Decimal]:
    """n distinct purchase amounts (some with kopecks) adding up to about ``total``."""
    weights = [rng.uniform(0.2, 1.0) for _ in range(n)]
    amounts: list[Decimal] = []
    for w in weights:
        amount = Decimal(total * w / sum(weights)).quantize(Decimal("1" if rng.random() < 0.6 else "0.01"))
        while amount in amounts:
            amount += 1
        amounts.append(amount)
    return amounts


# ---------------------------------------------------------------------------- insurance

INSURERS = [("shchit", "Shchit Insurance", "Щит Страхование", "moscow"),
            ("opora", "Opora Insurance", "Опора Страхование", "saint-petersburg"),
            ("parus", "Parus Insurance", "Парус Страхование", "kazan"),
            ("kupol", "Kupol Insurance", "Купол Страхование", "novosibirsk"),
            ("bereg", "Bereg Insurance", "Берег Страхование", "samara"),
            ("obereg", "Obereg Insurance", "Оберег Страхование", "yekaterinburg")]
POLICY_TYPES = {  # local: (en, ru, number prefix, premium range, deductibles, sum insured range)
    "casco": ("comprehensive motor insurance", "КАСКО", "KS", (35_000, 160_000),
              [10_000, 15_000, 20_000, 30_000, 50_000], (900_000, 9_000_000)),
    "home": ("home insurance", "страхование квартиры", "HM", (4_000, 25_000),
             [5_000, 10_000, 15_000], (1_000_000, 8_000_000)),
    "travel-medical": ("travel medical insurance", "медицинская страховка для путешествий", "TM",
                       (1_500, 9_000), [3_000, 5_000, 7_500], (2_000_000, 5_000_000)),
    "accident": ("accident insurance", "страхование от несчастных случаев", "AC", (2_000, 15_000),
                 [5_000, 10_000], (300_000, 3_000_000)),
}
VEHICLE_MODELS = {  # local: (en, ru, engine powers in hp)
    "lada-granta": ("Lada Granta", "Лада Гранта", [87, 90, 98]),
    "lada-vesta": ("Lada Vesta", "Лада Веста", [106, 113, 122]),
    "kia-rio": ("Kia Rio", "Киа Рио", [100, 123]),
    "hyundai-solaris": ("Hyundai Solaris", "Хендай Солярис", [100, 123]),
    "vw-polo": ("Volkswagen Polo", "Фольксваген Поло", [90, 110, 125]),
    "skoda-octavia": ("Skoda Octavia", "Шкода Октавия", [110, 150, 180]),
    "toyota-camry": ("Toyota Camry", "Тойота Камри", [150, 181, 200, 249]),
    "haval-jolion": ("Haval Jolion", "Хавейл Джолион", [143, 150]),
    "chery-tiggo-7": ("Chery Tiggo 7 Pro", "Чери Тигго 7 Про", [147, 186]),
    "geely-coolray": ("Geely Coolray", "Джили Кулрей", [150, 177]),
    "bmw-x5": ("BMW X5", "БМВ X5", [249, 340, 381]),
}
PLATE_LETTERS = "АВЕКМНОРСТУХ"  # Cyrillic letters allowed on Russian plates ...
PLATE_LATIN = "ABEKMHOPCTYX"     # ... and the Latin letters they look like
PLATE_REGIONS = ["77", "97", "78", "16", "54", "66", "52", "63", "39", "23", "197", "799"]
CLAIM_STATUSES = {"approved": ("approved", "одобрен"), "rejected": ("rejected", "отклонён"),
                  "under-review": ("under review", "на рассмотрении")}
N_HOLDERS, N_VEHICLES, N_OTHER_POLICIES, N_CLAIMS = 50, 45, 35, 65


def plate(rng: random.Random) -> str:
    """A Russian registration plate such as "А123ВС 77" (letter, 3 digits, 2 letters, region)."""
    letters = "".join(rng.choice(PLATE_LETTERS) for _ in range(3))
    return f"{letters[0]}{rng.randrange(1, 1000):03d}{letters[1:]} {rng.choice(PLATE_REGIONS)}"


def build_insurance(rng: random.Random, people: People) -> TurtleFile:
    f = TurtleFile("insurance.ttl")
    for local, (label_en, label_ru, *_rest) in POLICY_TYPES.items():
        f.entity(ex(f"policy-type-{local}"), "PolicyType", label_en, label_ru)
    for local, (label_en, label_ru) in CLAIM_STATUSES.items():
        f.entity(ex(f"claim-status-{local}"), "ClaimStatus", label_en, label_ru)
    for local, (label_en, label_ru, _powers) in VEHICLE_MODELS.items():
        f.entity(ex(f"model-{local}"), "VehicleModel", label_en, label_ru)
    licences = codes(rng, len(INSURERS), lambda r: f"SI-{r.randrange(10**4):04d}")
    insurers = []
    for (local, label_en, label_ru, hq), licence in zip(INSURERS, licences):
        s = f.entity(ex(f"insurer-{local}"), "Insurer", label_en, label_ru)
        f.facts(s, headquarters=city(hq), licenceNumber=Literal(licence),
                foundedDate=day(between(rng, date(1991, 6, 1), date(2012, 12, 31))))
        insurers.append(s)

    holders = []
    for i in range(1, N_HOLDERS + 1):
        name_en, name_ru = HOMONYM_WOMAN if i == 12 else people.next()
        s = f.entity(ex(f"holder-{i:03d}"), "Policyholder", name_en, name_ru)
        f.facts(s, birthDate=day(between(rng, date(1958, 1, 1), date(2004, 12, 31))),
                livesIn=city(rng.choice(RUSSIAN_CITIES)))
        holders.append(s)

    # Every vehicle has one comprehensive policy; other policies go to random policyholders.
    policies = []  # (policyholder, policy type, insured vehicle or None)
    drivers: set[str] = set()
    for i, number in enumerate(codes(rng, N_VEHICLES, plate), start=1):
        model = rng.choice(sorted(VEHICLE_MODELS))
        m_en, m_ru, powers = VEHICLE_MODELS[model]
        owner = rng.choice(holders)
        latin = number.translate(str.maketrans(PLATE_LETTERS, PLATE_LATIN))
        vehicle = f.entity(ex(f"vehicle-{i:03d}"), "Vehicle", f"{m_en} {latin}", f"{m_ru} {number}")
        f.facts(vehicle, vehicleModel=ex(f"model-{model}"), owner=owner, plateNumber=Literal(number),
                enginePower=integer(rng.choice(powers)), manufactureYear=year(rng.randrange(2012, 2025)))
        if str(owner) not in drivers:
            drivers.add(str(owner))
            f.facts(owner, drivingExperience=integer(rng.randrange(1, 30)))
        policies.append((owner, "casco", vehicle))
    other_types = ["home", "travel-medical", "accident"]
    policies += [(rng.choice(holders), rng.choice(other_types), None) for _ in range(N_OTHER_POLICIES)]
    rng.shuffle(policies)

    issued = []  # (policy, start, end, deductible, sum insured)
    for i, (holder, kind, vehicle) in enumerate(policies, start=1):
        _en, _ru, prefix, premium, deductibles, insured = POLICY_TYPES[kind]
        start = between(rng, date(2024, 1, 1), date(2025, 3, 31))
        end = start + timedelta(days=364)
        number = f"{prefix}-{start.year}-{i:05d}"
        deductible = rng.choice(deductibles)
        coverage = round_to(log_uniform(rng, *insured), 10_000)
        policy = f.entity(ex(f"policy-{i:03d}"), "Policy", f"Policy {number}", f"Полис {number}")
        f.facts(policy, policyNumber=Literal(number), insurer=rng.choice(insurers), policyholder=holder,
                policyType=ex(f"policy-type-{kind}"), annualPremium=money(round_to(log_uniform(rng, *premium), 10)),
                deductible=money(deductible), coverageLimit=money(coverage), startDate=day(start), endDate=day(end))
        if vehicle is not None:
            f.facts(policy, insuredVehicle=vehicle)
        issued.append((policy, start, end, deductible, coverage))

    for i in range(1, N_CLAIMS + 1):
        policy, start, end, deductible, coverage = rng.choice(issued)
        number = f"CL-{i:04d}"
        incident = between(rng, start, min(end, date(2025, 9, 30)))
        delay = rng.randrange(0, 31) if rng.random() < 0.75 else rng.randrange(31, 60)
        amount = min(coverage, round_to(deductible * log_uniform(rng, 0.3, 15), 100))
        # on the rules' edges (no random draw, so every other value stays as it was):
        # filed on the last allowed day, a claim of exactly the deductible
        delay = 30 if i % 10 == 7 else delay
        amount = deductible if i % 10 == 3 else amount
        claim = f.entity(ex(f"claim-{i:03d}"), "Claim", f"Claim {number}", f"Страховой случай {number}")
        f.facts(claim, claimNumber=Literal(number), claimPolicy=policy, incidentDate=day(incident),
                filingDate=day(incident + timedelta(days=delay)), claimAmount=money(amount),
                deductible=money(deductible), atFault=boolean(rng.random() < 0.4),
                claimStatus=ex("claim-status-" + rng.choice(sorted(CLAIM_STATUSES))))
    return f


# ---------------------------------------------------------------------------- retail

STORES = [  # (local, en, ru, city): two stores share the label "Central store"
    ("central-moscow", "Central store", "Магазин «Центральный»", "moscow"),
    ("central-kazan", "Central store", "Магазин «Центральный»", "kazan"),
    ("northern", "Northern store", "Магазин «Северный»", "saint-petersburg"),
    ("riverside", "Riverside store", "Магазин «Набережный»", "nizhny-novgorod"),
    ("park", "Park store", "Магазин «Парковый»", "yekaterinburg"),
    ("sunny", "Sunny store", "Магазин «Солнечный»", "sochi"),
    ("garden", "Garden store", "Магазин «Садовый»", "novosibirsk"),
    ("station", "Station store", "Магазин «Вокзальный»", "samara"),
    ("market-square", "Market Square store", "Магазин «Рыночный»", "kaliningrad"),
    ("eastern", "Eastern store", "Магазин «Восточный»", "moscow"),
    ("lakeside", "Lakeside store", "Магазин «Озёрный»", "kazan"),
    ("pine", "Pine store", "Магазин «Сосновый»", "saint-petersburg"),
]
MEMBERSHIPS = {"standard": ("standard", "обычный участник"), "club": ("club", "участник клуба"),
               "premium": ("premium", "премиум-участник")}
PRODUCT_CATEGORIES = {"electronics": ("electronics", "электроника"), "home": ("home goods", "товары для дома"),
                      "clothing": ("clothing", "одежда"), "books": ("books", "книги"),
                      "sports": ("sports and outdoors", "спорт и отдых"), "toys": ("toys", "игрушки")}
PRODUCTS = [  # (local, en, ru, category, price in roubles)
    ("wireless-headphones", "Wireless headphones", "Беспроводные наушники", "electronics", "4990"),
    ("power-bank", "Power bank", "Внешний аккумулятор", "electronics", "1890"),
    ("smart-watch", "Smart watch", "Умные часы", "electronics", "12990"),
    ("usb-c-cable", "USB-C cable", "Кабель USB-C", "electronics", "590"),
    ("bluetooth-speaker", "Bluetooth speaker", "Беспроводная колонка", "electronics", "3490"),
    ("electric-kettle", "Electric kettle", "Электрический чайник", "home", "2490"),
    ("frying-pan", "Frying pan", "Сковорода", "home", "1790"),
    ("towel-set", "Bath towel set", "Набор банных полотенец", "home", "1290"),
    ("desk-lamp", "Desk lamp", "Настольная лампа", "home", "2190"),
    ("coffee-grinder", "Coffee grinder", "Кофемолка", "home", "3290"),
    ("wool-scarf", "Wool scarf", "Шерстяной шарф", "clothing", "1490"),
    ("rain-jacket", "Rain jacket", "Дождевик", "clothing", "5990"),
    ("running-socks", "Running socks, 3 pairs", "Беговые носки, 3 пары", "clothing", "689.50"),
    ("knitted-hat", "Knitted hat", "Вязаная шапка", "clothing", "890"),
    ("cookbook", "Home cooking cookbook", "Книга рецептов домашней кухни", "books", "990"),
    ("encyclopedia", "Children's encyclopedia", "Детская энциклопедия", "books", "1590"),
    ("detective-novel", "Detective novel", "Детективный роман", "books", "549.90"),
    ("travel-guide", "Travel guide", "Путеводитель", "books", "790"),
    ("yoga-mat", "Yoga mat", "Коврик для йоги", "sports", "1990"),
    ("dumbbells", "Dumbbells, 2 kg", "Гантели, 2 кг", "sports", "1190"),
    ("water-bottle", "Sports water bottle", "Спортивная бутылка для воды", "sports", "690"),
    ("hiking-backpack", "Hiking backpack", "Туристический рюкзак", "sports", "6490"),
    ("building-blocks", "Building blocks set", "Конструктор", "toys", "2990"),
    ("jigsaw-puzzle", "Jigsaw puzzle, 1000 pieces", "Пазл, 1000 деталей", "toys", "890"),
    ("plush-bear", "Plush bear", "Плюшевый медведь", "toys", "1290"),
]
N_CUSTOMERS, N_ORDERS, N_RETURNS = 70, 90, 30


def build_retail(rng: random.Random, people: People) -> tuple[TurtleFile, list]:
    f = TurtleFile("retail.ttl")
    for local, (label_en, label_ru) in MEMBERSHIPS.items():
        f.entity(ex(f"membership-{local}"), "MembershipLevel", label_en, label_ru)
    for local, (label_en, label_ru) in PRODUCT_CATEGORIES.items():
        f.entity(ex(f"category-{local}"), "ProductCategory", label_en, label_ru)
    stores = []
    for i, (local, label_en, label_ru, c) in enumerate(STORES, start=1):
        s = f.entity(ex(f"store-{local}"), "Store", label_en, label_ru)
        f.facts(s, locatedIn=city(c), storeCode=Literal(f"ST-{i:03d}"),
                openedDate=day(between(rng, date(2008, 1, 1), date(2023, 12, 31))),
                salesArea=integer(round_to(rng.uniform(300, 2500), 10)))
        stores.append((s, c))
    products = []
    skus = codes(rng, len(PRODUCTS), lambda r: f"{r.randrange(10**7, 10**8)}")
    for (local, label_en, label_ru, category, price), sku in zip(PRODUCTS, skus):
        s = f.entity(ex(f"product-{local}"), "Product", label_en, label_ru)
        f.facts(s, sku=Literal(sku), price=money(price), productCategory=ex(f"category-{category}"))
        products.append((s, Decimal(price)))

    customers = []  # (iri, home store)
    cards = codes(rng, N_CUSTOMERS, lambda r: f"LC-{r.randrange(10**6):06d}")
    for i, card in enumerate(cards, start=1):
        name_en, name_ru = HOMONYM_WOMAN if i == 33 else people.next()
        store, c = rng.choice(stores)
        level = rng.choices(["standard", "club", "premium"], weights=[5, 3, 2])[0]
        s = f.entity(ex(f"customer-{i:03d}"), "Customer", name_en, name_ru)
        f.facts(s, loyaltyCardNumber=Literal(card), membership=ex(f"membership-{level}"),
                annualSpend=money(round_to(log_uniform(rng, 8_000, 700_000), 10)), homeStore=store,
                livesIn=city(c), registeredDate=day(between(rng, date(2016, 1, 1), date(2024, 12, 31))))
        customers.append((s, store))

    orders = []  # (iri, date, items)
    for i in range(1, N_ORDERS + 1):
        customer, home = rng.choice(customers)
        store = home if rng.random() < 0.8 else rng.choice(stores)[0]
        items = rng.sample(products, rng.choices([1, 2, 3, 4], weights=[4, 4, 2, 1])[0])
        when = between(rng, date(2024, 1, 10), date(2025, 9, 30))
        number = f"ORD-{when.year}-{i:05d}"
        s = f.entity(ex(f"order-{i:03d}"), "Order", f"Order {number}", f"Заказ {number}")
        f.facts(s, orderNumber=Literal(number), customer=customer, store=store, orderDate=day(when),
                item=[p for p, _ in items], itemCount=integer(len(items)), orderTotal=money(sum(p for _, p in items)))
        orders.append((s, when, items))

    for i, (order, when, items) in enumerate(rng.sample(orders, N_RETURNS), start=1):
        product, price = rng.choice(items)
        after = rng.randrange(1, 15) if rng.random() < 0.65 else rng.randrange(15, 31)
        s = f.entity(ex(f"return-{i:03d}"), "ReturnRequest", f"Return R-{i:04d}", f"Возврат R-{i:04d}")
        f.facts(s, returnedOrder=order, returnedProduct=product, purchaseDate=day(when),
                returnDate=day(when + timedelta(days=after)), refundAmount=money(price))
    return f, [c for c, _ in customers]


# ---------------------------------------------------------------------------- travel

HOTELS = [  # (local, en, ru, city, stars): two hotels share the label "Hotel Riviera"
    ("riviera-sochi", "Hotel Riviera", "Отель «Ривьера»", "sochi", 4),
    ("riviera-kaliningrad", "Hotel Riviera", "Отель «Ривьера»", "kaliningrad", 3),
    ("aurora", "Hotel Aurora", "Отель «Аврора»", "saint-petersburg", 4),
    ("panorama", "Hotel Panorama", "Отель «Панорама»", "kazan", 3),
    ("old-town", "Old Town Hotel", "Отель «Старый город»", "tbilisi", 3),
    ("silk-road", "Silk Road Hotel", "Отель «Шёлковый путь»", "samarkand", 4),
    ("ararat-view", "Ararat View Hotel", "Отель «Вид на Арарат»", "yerevan", 4),
    ("caravan", "Caravan Hotel", "Отель «Караван»", "tashkent", 3),
    ("lighthouse", "Lighthouse Hotel", "Отель «Маяк»", "kaliningrad", 2),
    ("north-star", "North Star Hotel", "Отель «Северная звезда»", "moscow", 5),
    ("emerald", "Emerald Hotel", "Отель «Изумруд»", "sochi", 5),
    ("pine-grove", "Pine Grove Hotel", "Отель «Сосновая роща»", "almaty", 3),
    ("golden-horn", "Golden Horn Hotel", "Отель «Золотой Рог»", "istanbul", 4),
    ("seaside", "Seaside Hotel", "Отель «Приморский»", "antalya", 5),
    ("cedar", "Cedar Hotel", "Отель «Кедр»", "moscow", 2),
    ("meridian", "Meridian Hotel", "Отель «Меридиан»", "belgrade", 3),
    ("sapphire", "Sapphire Hotel", "Отель «Сапфир»", "kazan", 5),
    ("orient", "Orient Hotel", "Отель «Ориент»", "tbilisi", 2),
]
RATE_BY_STARS = {2: (2_500, 4_500), 3: (3_500, 8_500), 4: (7_000, 17_000), 5: (15_000, 32_000)}
TARIFFS = {"flexible": ("flexible", "гибкий"), "semi-flexible": ("semi-flexible", "полугибкий"),
           "non-refundable": ("non-refundable", "невозвратный")}
PURPOSES = {"business": ("business", "командировка"), "leisure": ("leisure", "отдых")}
N_TRIPS = 30


def _on_budget(i: int, budget: int, expenses: int) -> int:
    """Every tenth trip spends exactly its budget: the edge of "over budget"."""
    return budget if i % 10 == 4 else expenses


def build_travel(rng: random.Random, customers: list) -> TurtleFile:
    f = TurtleFile("travel.ttl")
    for local, (label_en, label_ru) in TARIFFS.items():
        f.entity(ex(f"tariff-{local}"), "Tariff", label_en, label_ru)
    for local, (label_en, label_ru) in PURPOSES.items():
        f.entity(ex(f"purpose-{local}"), "TripPurpose", label_en, label_ru)
    hotels_in: dict[str, list] = {}
    for i, (local, label_en, label_ru, c, stars) in enumerate(HOTELS, start=1):
        rate = round_to(log_uniform(rng, *RATE_BY_STARS[stars]), 100)
        s = f.entity(ex(f"hotel-{local}"), "Hotel", label_en, label_ru)
        f.facts(s, locatedIn=city(c), hotelCode=Literal(f"HT-{i:03d}"), stars=integer(stars),
                nightlyRate=money(rate), hasPool=boolean(stars >= 4 and rng.random() < 0.7))
        hotels_in.setdefault(c, []).append((s, rate))

    references = iter(codes(rng, 3 * N_TRIPS, lambda r: "BK-" + "".join(r.choices("ABCDEFGHJKLMNPQRSTUVWXYZ23456789", k=6))))
    booking = 0
    for i in range(1, N_TRIPS + 1):
        destination = rng.choice(sorted(hotels_in))
        traveller = rng.choice(customers)
        start = between(rng, date(2024, 3, 1), date(2025, 10, 15))
        nights = rng.randrange(2, 13)
        budget = round_to(log_uniform(rng, 40_000, 250_000), 1000)
        trip = f.entity(ex(f"trip-{i:03d}"), "Trip", f"Trip TR-{i:04d}", f"Поездка TR-{i:04d}")
        f.facts(trip, traveller=traveller, destination=city(destination), tripStart=day(start),
                tripEnd=day(start + timedelta(days=nights)), tripPurpose=ex("purpose-" + rng.choice(sorted(PURPOSES))),
                tripBudget=money(budget), tripExpenses=money(_on_budget(i, budget, round_to(budget * rng.uniform(0.7, 1.3), 100))))
        # The stay is split into one to three consecutive hotel bookings.
        stays = min(rng.choices([1, 2, 3], weights=[5, 3, 1])[0], nights)
        cuts = sorted(rng.sample(range(1, nights), stays - 1)) if stays > 1 else []
        check_in, previous = start, None
        for check_out_after in cuts + [nights]:
            check_out = start + timedelta(days=check_out_after)
            hotel, rate = rng.choice([h for h in hotels_in[destination] if h[0] != previous] or hotels_in[destination])
            previous = hotel
            booking += 1
            reference = next(references)
            s = f.entity(ex(f"booking-{booking:03d}"), "Booking", f"Booking {reference}", f"Бронирование {reference}")
            f.facts(s, bookingReference=Literal(reference), hotel=hotel, forTrip=trip, guest=traveller,
                    bookingDate=day(check_in - timedelta(days=rng.randrange(3, 61))),
                    checkInDate=day(check_in), checkOutDate=day(check_out),
                    bookingAmount=money(rate * (check_out - check_in).days),
                    tariff=ex("tariff-" + rng.choice(sorted(TARIFFS))))
            check_in = check_out
    return f


# ---------------------------------------------------------------------------- rules

BRACKET_CLASSES = {  # local: (class, en, ru)
    "bracket-13": ("TaxBracket", "13% bracket", "ставка 13%"),
    "bracket-15": ("TaxBracket", "15% bracket", "ставка 15%"),
    "bracket-18": ("TaxBracket", "18% bracket", "ставка 18%"),
    "bracket-20": ("TaxBracket", "20% bracket", "ставка 20%"),
    "bracket-22": ("TaxBracket", "22% bracket", "ставка 22%"),
    "power-class-a": ("VehicleClass", "power class A", "класс мощности A"),
    "power-class-b": ("VehicleClass", "power class B", "класс мощности B"),
    "power-class-c": ("VehicleClass", "power class C", "класс мощности C"),
    "power-class-d": ("VehicleClass", "power class D", "класс мощности D"),
    "tier-bronze": ("LoyaltyTier", "bronze", "бронзовый"),
    "tier-silver": ("LoyaltyTier", "silver", "серебряный"),
    "tier-gold": ("LoyaltyTier", "gold", "золотой"),
    "tier-platinum": ("LoyaltyTier", "platinum", "платиновый"),
    "segment-budget": ("HotelSegment", "budget", "эконом"),
    "segment-midrange": ("HotelSegment", "mid-range", "средний"),
    "segment-upscale": ("HotelSegment", "upscale", "высокий"),
    "segment-luxury": ("HotelSegment", "luxury", "люкс"),
}

@dataclass(frozen=True)
class RuleSpec:
    """One rule of rules.ttl; optional fields are named after their kgs: terms."""

    id: str  # the IRI is ex:rule-<id>
    domain: str
    category: str
    cls: str  # kgs:appliesToClass
    kind: str
    operation: str
    label: tuple[str, str]  # (en, ru)
    en: str  # kgs:statement
    ru: str
    inputs: list[tuple[str, ...]]  # (role, relation) or (role, relation, "sum") for kgs:aggregate kgs:Sum
    cases: list[tuple] = field(default_factory=list)  # (kgs:when term, rate)
    brackets: list[tuple] = field(default_factory=list)  # (lower or None, upper or None, class local name)
    rate: str | None = None
    threshold: str | None = None
    defaultRate: str | None = None  # field names follow the kgs: terms
    comparison: str | None = None
    maxDays: int | None = None
    rounding: int | None = None
    unit: str | None = None


RULES = [
    RuleSpec(
        "income-tax", "payroll", "tax", "Employee", "Arithmetic", "PercentOf",
        label=("personal income tax", "НДФЛ с зарплаты"),
        en="Personal income tax is 13% of the monthly salary.",
        ru="НДФЛ составляет 13% от месячной зарплаты.",
        inputs=[("amount", "monthlySalary")], rate="0.13", rounding=0, unit="RUB",
    ),
    RuleSpec(
        "residency-tax", "payroll", "tax", "Employee", "Conditional", "CaseRate",
        label=("income tax by residency", "НДФЛ в зависимости от резидентства"),
        en="Income tax on the monthly salary is 13% for tax residents and 30% for non-residents.",
        ru="Налог с месячной зарплаты составляет 13% для налоговых резидентов и 30% для нерезидентов.",
        inputs=[("amount", "monthlySalary"), ("condition", "taxResident")],
        cases=[(boolean(True), "0.13")],
        defaultRate="0.30",
        rounding=0,
        unit="RUB",
    ),
    RuleSpec(
        "income-bracket", "payroll", "tax", "Employee", "Classification", "BracketClass",
        label=("progressive income tax bracket", "ступень прогрессивной шкалы НДФЛ"),
        en="Annual income up to 2.4 million roubles falls in the 13% bracket, up to 5 million in the 15% "
           "bracket, up to 20 million in the 18% bracket, up to 50 million in the 20% bracket, and above that in "
           "the 22% bracket.",
        ru="Годовой доход до 2,4 млн рублей облагается по ставке 13%, до 5 млн — по ставке 15%, до 20 млн — по "
           "ставке 18%, до 50 млн — по ставке 20%, а свыше — по ставке 22%.",
        inputs=[("amount", "annualIncome")],
        brackets=[
            (None, 2_400_000, "bracket-13"),
            (2_400_000, 5_000_000, "bracket-15"),
            (5_000_000, 20_000_000, "bracket-18"),
            (20_000_000, 50_000_000, "bracket-20"),
            (50_000_000, None, "bracket-22"),
        ],
    ),
    RuleSpec(
        "overlimit-penalty", "payroll", "banking", "BankCard", "Arithmetic", "PercentOfExcess",
        label=("card overlimit penalty", "штраф за превышение лимита карты"),
        en="The bank charges a penalty of 10% of the month's purchases above the card's monthly limit.",
        ru="Банк берёт штраф 10% от суммы покупок за месяц сверх месячного лимита карты.",
        inputs=[("amount", "purchaseAmount", "sum"), ("limit", "monthlyLimit")], rate="0.10", rounding=2, unit="RUB",
    ),
    RuleSpec(
        "card-over-limit", "payroll", "banking", "BankCard", "Threshold", "Compare",
        label=("card limit exceeded", "превышение лимита карты"),
        en="A card's monthly limit is exceeded when the month's purchases add up to more than the limit.",
        ru="Месячный лимит карты превышен, если сумма покупок за месяц больше лимита.",
        inputs=[("amount", "purchaseAmount", "sum"), ("threshold", "monthlyLimit")], comparison="GreaterThan",
    ),
    RuleSpec(
        "probation-end", "payroll", "employment", "Employee", "Interval", "Deadline",
        label=("end of probation", "окончание испытательного срока"),
        en="The probation period ends 90 days after the hire date.",
        ru="Испытательный срок заканчивается через 90 дней после даты приёма.",
        inputs=[("start", "hireDate")], maxDays=90,
    ),
    RuleSpec(
        "agent-commission", "insurance", "premiums", "Policy", "Arithmetic", "PercentOf",
        label=("agent commission", "комиссия агента"),
        en="The insurance agent's commission is 15% of the policy's annual premium.",
        ru="Комиссия страхового агента составляет 15% от годовой премии по полису.",
        inputs=[("amount", "annualPremium")], rate="0.15", rounding=0, unit="RUB",
    ),
    RuleSpec(
        "payout-over-deductible", "insurance", "deductibles", "Claim", "Arithmetic", "PercentOfExcess",
        label=("insurance payout", "страховая выплата"),
        en="The insurer pays the part of the claimed amount that exceeds the deductible.",
        ru="Страховщик выплачивает часть заявленного ущерба сверх франшизы.",
        inputs=[("amount", "claimAmount"), ("limit", "deductible")], rate="1.00", rounding=0, unit="RUB",
    ),
    RuleSpec(
        "claim-above-deductible", "insurance", "deductibles", "Claim", "Threshold", "Compare",
        label=("claim above the deductible", "ущерб больше франшизы"),
        en="A claim is paid only if the claimed amount is greater than the deductible.",
        ru="Выплата положена, только если заявленный ущерб больше франшизы.",
        inputs=[("amount", "claimAmount"), ("threshold", "deductible")], comparison="GreaterThan",
    ),
    RuleSpec(
        "fault-payout", "insurance", "claims", "Claim", "Conditional", "CaseRate",
        label=("payout by fault", "выплата с учётом вины"),
        en="If the policyholder caused the incident, 50% of the claimed amount is reimbursed; otherwise the full "
           "amount is.",
        ru="Если происшествие произошло по вине страхователя, возмещается 50% заявленной суммы, иначе — вся сумма.",
        inputs=[("amount", "claimAmount"), ("condition", "atFault")],
        cases=[(boolean(True), "0.50")],
        defaultRate="1.00",
        rounding=0,
        unit="RUB",
    ),
    RuleSpec(
        "claim-filing-window", "insurance", "claims", "Claim", "Interval", "WithinDays",
        label=("claim filed in time", "своевременная подача заявления"),
        en="A claim must be filed within 30 days of the incident.",
        ru="Заявление о страховом случае нужно подать в течение 30 дней после происшествия.",
        inputs=[("start", "incidentDate"), ("end", "filingDate")], maxDays=30,
    ),
    RuleSpec(
        "claim-deadline", "insurance", "claims", "Claim", "Interval", "Deadline",
        label=("claim filing deadline", "крайний срок подачи заявления"),
        en="The last day to file a claim is 30 days after the incident.",
        ru="Последний день подачи заявления — через 30 дней после происшествия.",
        inputs=[("start", "incidentDate")], maxDays=30,
    ),
    RuleSpec(
        "vehicle-power-class", "insurance", "vehicles", "Vehicle", "Classification", "BracketClass",
        label=("engine power class of a car", "класс мощности автомобиля"),
        en="A car under 100 hp is power class A, from 100 to under 150 hp class B, from 150 to under 200 hp "
           "class C, and from 200 hp class D.",
        ru="Автомобиль мощностью до 100 л. с. относится к классу мощности A, от 100 до 150 л. с. — к классу B, "
           "от 150 до 200 л. с. — к классу C, от 200 л. с. — к классу D.",
        inputs=[("amount", "enginePower")],
        brackets=[
            (None, 100, "power-class-a"),
            (100, 150, "power-class-b"),
            (150, 200, "power-class-c"),
            (200, None, "power-class-d"),
        ],
    ),
    RuleSpec(
        "bonus-points", "retail", "loyalty", "Order", "Arithmetic", "PercentOf",
        label=("bonus points for an order", "бонусные баллы за заказ"),
        en="Every order earns bonus points equal to 5% of its total.",
        ru="За каждый заказ начисляются бонусные баллы в размере 5% от его суммы.",
        inputs=[("amount", "orderTotal")], rate="0.05", rounding=0, unit="points",
    ),
    RuleSpec(
        "free-delivery", "retail", "delivery", "Order", "Threshold", "Compare",
        label=("free delivery", "бесплатная доставка"),
        en="Delivery is free for orders of 3 000 roubles or more.",
        ru="Доставка бесплатна для заказов от 3 000 рублей.",
        inputs=[("amount", "orderTotal")], threshold="3000", comparison="GreaterOrEqual",
    ),
    RuleSpec(
        "membership-cashback", "retail", "loyalty", "Customer", "Conditional", "CaseRate",
        label=("annual cashback", "годовой кешбэк"),
        en="Annual cashback is 5% of the year's spend for premium members, 3% for club members and 1% for "
           "everyone else.",
        ru="Годовой кешбэк составляет 5% от суммы покупок за год для премиум-участников, 3% для участников клуба "
           "и 1% для остальных.",
        inputs=[("amount", "annualSpend"), ("condition", "membership")],
        cases=[(ex("membership-premium"), "0.05"), (ex("membership-club"), "0.03")],
        defaultRate="0.01",
        rounding=0,
        unit="RUB",
    ),
    RuleSpec(
        "return-window", "retail", "returns", "ReturnRequest", "Interval", "WithinDays",
        label=("return period", "срок возврата"),
        en="Goods may be returned within 14 days of purchase.",
        ru="Товар можно вернуть в течение 14 дней с даты покупки.",
        inputs=[("start", "purchaseDate"), ("end", "returnDate")], maxDays=14,
    ),
    RuleSpec(
        "loyalty-tier", "retail", "loyalty", "Customer", "Classification", "BracketClass",
        label=("loyalty tier by annual spend", "статус лояльности по сумме покупок"),
        en="A customer who spends under 30 000 roubles a year is bronze, from 30 000 silver, from 100 000 gold, "
           "and from 300 000 platinum.",
        ru="Покупатель с суммой покупок за год до 30 000 рублей получает бронзовый статус, от 30 000 — "
           "серебряный, от 100 000 — золотой, от 300 000 — платиновый.",
        inputs=[("amount", "annualSpend")],
        brackets=[
            (None, 30_000, "tier-bronze"),
            (30_000, 100_000, "tier-silver"),
            (100_000, 300_000, "tier-gold"),
            (300_000, None, "tier-platinum"),
        ],
    ),
    RuleSpec(
        "booking-service-fee", "travel", "accommodation", "Booking", "Arithmetic", "PercentOf",
        label=("booking service fee", "сервисный сбор за бронирование"),
        en="The booking platform charges a service fee of 2% of the booking amount.",
        ru="Платформа бронирования берёт сервисный сбор 2% от стоимости бронирования.",
        inputs=[("amount", "bookingAmount")], rate="0.02", rounding=2, unit="RUB",
    ),
    RuleSpec(
        "trip-over-budget", "travel", "business-travel", "Trip", "Threshold", "Compare",
        label=("trip over budget", "перерасход по поездке"),
        en="A trip is over budget when its expenses exceed its budget.",
        ru="Поездка вышла за бюджет, если расходы на неё больше бюджета.",
        inputs=[("amount", "tripExpenses"), ("threshold", "tripBudget")], comparison="GreaterThan",
    ),
    RuleSpec(
        "cancellation-refund", "travel", "cancellations", "Booking", "Conditional", "CaseRate",
        label=("cancellation refund", "возврат при отмене"),
        en="When a booking is cancelled, a flexible tariff refunds 100% of the booking amount, a semi-flexible "
           "tariff 50%, and a non-refundable tariff nothing.",
        ru="При отмене бронирования по гибкому тарифу возвращается 100% стоимости, по полугибкому — 50%, по "
           "невозвратному — ничего.",
        inputs=[("amount", "bookingAmount"), ("condition", "tariff")],
        cases=[(ex("tariff-flexible"), "1.00"), (ex("tariff-semi-flexible"), "0.50")],
        defaultRate="0.00",
        rounding=2,
        unit="RUB",
    ),
    RuleSpec(
        "stay-nights", "travel", "accommodation", "Booking", "Interval", "DaysBetween",
        label=("nights of a stay", "число ночей проживания"),
        en="The number of nights of a stay is the number of days from check-in to check-out.",
        ru="Число ночей проживания равно числу дней от даты заезда до даты выезда.",
        inputs=[("start", "checkInDate"), ("end", "checkOutDate")], unit="nights",
    ),
    RuleSpec(
        "invoice-due", "travel", "accommodation", "Booking", "Interval", "Deadline",
        label=("hotel invoice due date", "срок оплаты счёта гостиницы"),
        en="The hotel invoice must be paid within 10 days after check-out.",
        ru="Счёт гостиницы нужно оплатить в течение 10 дней после выезда.",
        inputs=[("start", "checkOutDate")], maxDays=10,
    ),
    RuleSpec(
        "trip-length", "travel", "business-travel", "Trip", "Interval", "DaysBetween",
        label=("trip length", "продолжительность поездки"),
        en="A trip lasts the number of days from the departure date to the return date.",
        ru="Продолжительность поездки — число дней от даты отъезда до даты возвращения.",
        inputs=[("start", "tripStart"), ("end", "tripEnd")], unit="days",
    ),
    RuleSpec(
        "hotel-segment", "travel", "accommodation", "Hotel", "Classification", "BracketClass",
        label=("hotel segment by price per night", "сегмент гостиницы по цене за ночь"),
        en="A hotel costing under 4 000 roubles a night is budget, from 4 000 mid-range, from 9 000 upscale, and "
           "from 18 000 luxury.",
        ru="Гостиница дешевле 4 000 рублей за ночь относится к сегменту «эконом», от 4 000 — к среднему, от 9 "
           "000 — к высокому, от 18 000 — к сегменту «люкс».",
        inputs=[("amount", "nightlyRate")],
        brackets=[
            (None, 4_000, "segment-budget"),
            (4_000, 9_000, "segment-midrange"),
            (9_000, 18_000, "segment-upscale"),
            (18_000, None, "segment-luxury"),
        ],
    ),
]


# kgs:question per rule: what a dialogue-based item asks ({entity} is the entity's label; a Russian
# {entity:gent}, {entity:datv}, {entity:accs} declines it).
# Questions name the quantity, never the rule's numbers.
QUESTIONS = {
    "income-tax": ("How much personal income tax is due on the monthly salary of {entity}?",
                   "Сколько НДФЛ нужно удержать с месячной зарплаты {entity:gent}?"),
    "residency-tax": ("How much income tax is due on the monthly salary of {entity}?",
                      "Сколько налога нужно удержать с месячной зарплаты {entity:gent}?"),
    "income-bracket": ("Which income tax bracket does the annual income of {entity} fall into?",
                       "В какую ступень шкалы НДФЛ попадает годовой доход {entity:gent}?"),
    "overlimit-penalty": ("How much overlimit penalty will the bank charge on {entity} this month?",
                          "Какой штраф за превышение лимита банк начислит по {entity:datv} за этот месяц?"),
    "card-over-limit": ("Has the monthly limit of {entity} been exceeded?",
                        "Превышен ли месячный лимит по {entity:datv}?"),
    "probation-end": ("On which date does the probation period of {entity} end?",
                      "Какого числа заканчивается испытательный срок {entity:gent}?"),
    "agent-commission": ("How much commission does the agent earn on {entity}?",
                         "Какую комиссию получит агент по {entity:datv}?"),
    "payout-over-deductible": ("How much will the insurer pay out on {entity}?",
                               "Сколько выплатит страховщик по {entity:datv}?"),
    "claim-above-deductible": ("Is {entity} eligible for a payout?",
                               "Положена ли выплата по {entity:datv}?"),
    "fault-payout": ("How much will be reimbursed on {entity}?",
                     "Сколько будет возмещено по {entity:datv}?"),
    "claim-filing-window": ("Was {entity} filed in time?",
                            "Подано ли заявление по {entity:datv} в срок?"),
    "claim-deadline": ("What is the last day to file {entity}?",
                       "Какой последний день подачи заявления по {entity:datv}?"),
    "vehicle-power-class": ("Which engine power class does {entity} belong to?",
                            "К какому классу мощности двигателя относится автомобиль {entity}?"),
    "bonus-points": ("How many bonus points does {entity} earn?",
                     "Сколько бонусных баллов начислят за {entity:accs}?"),
    "free-delivery": ("Does {entity} qualify for free delivery?",
                      "Положена ли бесплатная доставка для {entity:gent}?"),
    "membership-cashback": ("How much annual cashback will {entity} receive?",
                            "Какой кешбэк за год получит {entity}?"),
    "return-window": ("Was {entity} made within the return period?",
                      "Оформлен ли {entity} в пределах срока возврата?"),
    "loyalty-tier": ("Which loyalty tier does {entity} reach?",
                     "Какой уровень программы лояльности получает {entity}?"),
    "booking-service-fee": ("How much is the service fee for {entity}?",
                            "Какой сервисный сбор возьмут за {entity:accs}?"),
    "trip-over-budget": ("Did {entity} go over budget?",
                         "Вышла ли {entity} за рамки бюджета?"),
    "cancellation-refund": ("How much will be refunded if {entity} is cancelled?",
                            "Сколько вернут при отмене {entity:gent}?"),
    "stay-nights": ("How many nights does {entity} cover?",
                    "Сколько ночей включает {entity}?"),
    "invoice-due": ("By which date must the hotel invoice for {entity} be paid?",
                    "До какого числа нужно оплатить счёт гостиницы по {entity:datv}?"),
    "trip-length": ("How many days does {entity} last?",
                    "Сколько дней длится {entity}?"),
    "hotel-segment": ("Which price segment does {entity} belong to?",
                      "К какому ценовому сегменту относится {entity}?"),
}


def build_rules() -> TurtleFile:
    f = TurtleFile("rules.ttl")
    for local, (cls, label_en, label_ru) in BRACKET_CLASSES.items():
        f.entity(ex(local), cls, label_en, label_ru)
    for rule in RULES:
        s = ex(f"rule-{rule.id}")
        f.add(s, A, kgs("Rule"))
        f.add(s, LABEL, en(rule.label[0]))
        f.add(s, LABEL, ru(rule.label[1]))
        f.add(s, kgs("statement"), en(rule.en))
        f.add(s, kgs("statement"), ru(rule.ru))
        question_en, question_ru = QUESTIONS[rule.id]
        f.add(s, kgs("question"), en(question_en))
        f.add(s, kgs("question"), ru(question_ru))
        f.add(s, kgs("kind"), kgs(rule.kind))
        f.add(s, kgs("operation"), kgs(rule.operation))
        f.add(s, kgs("domain"), ex(rule.domain))
        f.add(s, kgs("category"), ex(rule.category))
        f.add(s, kgs("appliesToClass"), ex(rule.cls))
        for role, relation, *aggregate in rule.inputs:
            node = BlankNode(f"{rule.id}-{role}")
            f.add(s, kgs("input"), node)
            f.add(node, kgs("role"), Literal(role))
            f.add(node, kgs("relation"), ex(relation))
            if aggregate:
                f.add(node, kgs("aggregate"), kgs("Sum"))
        for name in ("rate", "threshold", "defaultRate"):
            if getattr(rule, name) is not None:
                f.add(s, kgs(name), decimal(getattr(rule, name)))
        if rule.comparison is not None:
            f.add(s, kgs("comparison"), kgs(rule.comparison))
        for name in ("maxDays", "rounding"):
            if getattr(rule, name) is not None:
                f.add(s, kgs(name), integer(getattr(rule, name)))
        if rule.unit is not None:
            f.add(s, kgs("unit"), Literal(rule.unit))
        for i, (when, rate) in enumerate(rule.cases, start=1):
            node = BlankNode(f"{rule.id}-case-{i}")
            f.add(s, kgs("case"), node)
            f.add(node, kgs("when"), when)
            f.add(node, kgs("rate"), decimal(rate))
        for i, (lower, upper, cls) in enumerate(rule.brackets, start=1):
            node = BlankNode(f"{rule.id}-bracket-{i}")
            f.add(s, kgs("bracket"), node)
            if lower is not None:
                f.add(node, kgs("lowerBound"), decimal(str(lower)))
            if upper is not None:
                f.add(node, kgs("upperBound"), decimal(str(upper)))
            f.add(node, kgs("class"), ex(cls))
    return f


# ---------------------------------------------------------------------------- main


def main() -> None:
    rng = random.Random(SEED)
    people = People(rng)
    retail, customers = build_retail(rng, people)
    files = [build_vocabulary(), build_geography(), build_payroll(rng, people), build_insurance(rng, people),
             retail, build_travel(rng, customers), build_rules()]
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    for f in files:
        f.write(OUT_DIR)
        print(f"{OUT_DIR.name}/{f.name}: {len(f)} triples")
    print(f"total: {sum(len(f) for f in files)} triples")


if __name__ == "__main__":
    main()
