"""Why a paper counted for a term: the matched words marked in their sentence, and the rule of
the rulebook (``market/rulebook.py``, on the rules page) that matched them.

It asks the one matcher (``market.highlighting``) over the same texts the dividends read (the
title and the abstract, each alone), with every listed term, so the longest-match rule decides
here as it did when the paper was counted; the term itself is added if it is no longer listed.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass

from papers.calendar import NEW_YORK
from papers.models import Paper

from .highlighting import Match, Matcher, current_matcher
from .models import DividendEvent, Mention, Term
from .rulebook import cite
from .withholding import withheld_on

_SEPARATORS = re.compile(r"[\s~\-\u2010\u2011]+")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z$\\(])")
_POSSESSIVE = re.compile(r"^['’]s?(?!\w)")


@dataclass(frozen=True, slots=True)
class Place:
    field: str  # "title" or "abstract"
    before: str  # the sentence up to the match
    matched: str
    after: str
    rules: list[str]  # the rules that made these words count, in plain words


@dataclass(frozen=True, slots=True)
class Window:
    """The paper's submission window, in New York time as the rules page states it."""

    opens: dt.datetime
    closes: dt.datetime
    source: str  # what it opened with, in words


@dataclass(frozen=True, slots=True)
class Why:
    paper: Paper
    date: object  # the announcement date it was counted on
    places: list[Place]
    paid: DividendEvent | None
    window: Window | None = None
    withheld_shares: int = 0  # held by the paper's verified authors, not paid
    withheld_amount: int = 0


def _norm(text: str) -> str:
    return _SEPARATORS.sub(" ", text.strip().lower())


def rules_for(
    matched: str, *, phrase: str, aliases: list[str], text: str, match: Match
) -> list[str]:
    """Which counting rules let ``matched`` stand for the term (case, plural, hyphen/space,
    alias), and what was around it (a possessive, a hyphenated compound)."""
    found = _norm(matched)
    rules: list[str] = []
    for variant, is_alias in [(phrase, False), *((a, True) for a in aliases)]:
        base = _norm(variant)
        if found == base:
            plural = ""
        elif found in (base + "s", base + "es") or (
            base.endswith("y") and found == base[:-1] + "ies"
        ):
            plural = found[len(base) - (1 if found.endswith("ies") else 0) :]
        else:
            continue
        if is_alias:
            rules.append(
                f"Alias: “{variant}” is listed as another spelling of “{phrase}” "
                f"({cite('aliases')})."
            )
        if plural:
            rules.append(f"Plural: the last word takes “{plural}” ({cite('plurals')}).")
        stem = matched[: len(matched) - len(plural)] if plural else matched
        spaced = re.sub(r"\s+", " ", stem.lower()) != re.sub(r"\s+", " ", variant.lower())
        if " " in base and spaced:
            rules.append(f"Hyphens and spaces between its words are the same ({cite('spacing')}).")
        if stem != variant and stem.lower() == variant.lower():
            rules.append(f"Case does not matter ({cite('case')}).")
        if not rules:
            rules.append(f"Exactly the term's words ({cite('whole-words')}).")
        break
    tail = text[match.end :]
    if _POSSESSIVE.match(tail):
        rules.append(
            f"Followed by a possessive ’s, which leaves the word whole ({cite('possessives')})."
        )
    head = text[: match.start]
    if re.search(r"\w[\-\u2010\u2011]$", head) or re.match(r"^[\-\u2010\u2011]\w", tail):
        rules.append(
            "Part of a hyphenated compound: a hyphen separates words, so the term counts "
            f"within it ({cite('hyphenated')})."
        )
    return rules


def _sentence(text: str, start: int, end: int) -> tuple[str, str, str]:
    begin = 0
    finish = len(text)
    for found in _SENTENCE_END.finditer(text):
        if found.end() <= start:
            begin = found.end()
        elif found.start() >= end:
            finish = found.start()
            break
    return text[begin:start], text[start:end], text[end:finish]


def explain(*, term: Term, arxiv_id: str) -> Why | None:
    """Where and why ``arxiv_id`` mentions ``term``, or None when it was not counted for it."""
    paper = Paper.objects.filter(arxiv_id=arxiv_id, hidden=False).first()
    if paper is None:
        return None
    mention = Mention.objects.filter(term=term, paper=paper).first()
    if mention is None:
        return None
    matcher = current_matcher()
    if term.pk not in matcher.terms:
        rows = list(Term.objects.listed().values("id", "slug", "phrase", "aliases"))
        rows.append(
            {"id": term.pk, "slug": term.slug, "phrase": term.phrase, "aliases": term.aliases}
        )
        matcher = Matcher.from_terms(rows)
    aliases = [a for a in term.aliases or [] if isinstance(a, str)]
    places = []
    for field, text in (("title", paper.title), ("abstract", paper.abstract)):
        for match in matcher.find_mentions(text):
            if match.term.id != term.pk:
                continue
            before, matched, after = _sentence(text, match.start, match.end)
            places.append(
                Place(
                    field=field,
                    before=before,
                    matched=matched,
                    after=after,
                    rules=rules_for(
                        matched, phrase=term.phrase, aliases=aliases, text=text, match=match
                    ),
                )
            )
    paid = DividendEvent.objects.filter(term=term, paper=paper).first()
    if paid is None:
        return Why(paper=paper, date=mention.date, places=places, paid=None)
    withheld_shares, withheld_amount = withheld_on(paid)
    window = Window(
        opens=paid.window_opens_at.astimezone(NEW_YORK),
        closes=paid.announced_at.astimezone(NEW_YORK),
        source=paid.get_window_source_display(),
    )
    return Why(
        paper=paper,
        date=mention.date,
        places=places,
        paid=paid,
        window=window,
        withheld_shares=withheld_shares,
        withheld_amount=withheld_amount,
    )
