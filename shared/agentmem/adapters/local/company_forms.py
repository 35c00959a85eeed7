"""The legal forms companies of many countries end their names with, as Faker's company providers list them.

Faker (MIT) keeps per-locale ``company_suffixes`` (``faker.providers.company.<locale>.Provider``): "Oyj",
"d.o.o.", "s.r.l.", "k.s.", "v.o.s.", "Kht.", "A.Ş.", "HB", "og Sønner". ``organization_names`` adds them
to its own English list, so "Leinonen Oyj" or "Rožman d.o.o." is an organisation rather than spaCy's
person. Kept: Latin-script forms that are no English word or stop word ("Group", "Limited" are in the
hand-written list already), with a period, a lower-case letter or at least three letters, so that two
capitals of an acronym ("AD", "RA", "ET") do not make a name a firm; and not "URL", "CON", "LOC", "EPIC",
words of English text. Derived once and kept in the cache folder (``word_cache``).
"""

from __future__ import annotations

import functools
import importlib
import pkgutil
import unicodedata
from pathlib import Path

from agentmem.adapters.local.word_cache import WordLists, cached_word_lists

_NOT_FORMS = frozenset({"URL", "CON", "LOC", "EPIC", "INC", "San.", "Tic."})


def _latin(word: str) -> bool:
    return all(not char.isalpha() or char.isascii() or "LATIN" in unicodedata.name(char, "") for char in word)


@functools.cache
def company_forms() -> tuple[str, ...]:
    """Faker's company suffixes that are legal forms, longest first (derived by `derive_company_forms`)."""

    def derive() -> WordLists:
        return {"forms": list(derive_company_forms())}

    from agentmem.adapters.local import english_words
    from agentmem.adapters.local.spacy_pipeline import default_model_dir

    sources = [Path(__file__), Path(english_words.__file__), default_model_dir() / "meta.json"]
    return tuple(cached_word_lists("company-forms", sources, ("faker", "spacy"), derive)["forms"])


def derive_company_forms() -> tuple[str, ...]:
    """Read every locale of ``faker.providers.company``."""
    import faker.providers.company as company

    from agentmem.adapters.local.english_words import ADJECTIVE, ADVERB, NOUN, VERB, wordnet_words
    from agentmem.adapters.local.name_gazetteer import ordinary_words

    english = wordnet_words(NOUN, VERB, ADJECTIVE, ADVERB) | ordinary_words()
    forms: set[str] = set()
    for module_info in pkgutil.iter_modules(company.__path__):
        provider = getattr(importlib.import_module(f"{company.__name__}.{module_info.name}"), "Provider", None)
        for value in getattr(provider, "company_suffixes", ()) or ():
            form = value.strip() if isinstance(value, str) else ""
            if (
                form
                and _latin(form)
                and form not in _NOT_FORMS
                and form.casefold().rstrip(".") not in english
                and ("." in form or any(char.islower() for char in form) or len(form) >= 3)
                and not form.startswith(("&", "-", "("))
            ):
                forms.add(form)
    return tuple(sorted(forms, key=lambda form: (-len(form), form)))
