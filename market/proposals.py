"""Traders propose terms; curators list them; the proposer is told.

A proposal is a phrase and a reason. It waits in the admin's candidate list (with how many
papers use it) until a curator lists a term that covers the phrase, by ticking it there or by
adding the term by hand. Then the proposal records the term, the proposer gets one e-mail, and
their next page view shows one notice.
"""

from __future__ import annotations

import datetime as dt
import functools
from collections.abc import Iterable
from dataclasses import dataclass

from django.conf import settings
from django.core.mail import send_mail
from django.db import transaction
from django.db.models import QuerySet
from django.template.loader import render_to_string
from django.utils import timezone
from django.utils.text import slugify

from .highlighting import Matcher, TermRef
from .models import Term, TermProposal

MAX_WORDS = 6


class ProposalRefused(ValueError):
    """A phrase that cannot be proposed; the message says why."""


def normalise(phrase: str) -> str:
    return " ".join(phrase.split())


def _full_match(matcher: Matcher, phrase: str) -> TermRef | None:
    for match in matcher.find_mentions(phrase):
        if match.start == 0 and match.end == len(phrase):
            return match.term
    return None


def check_phrase(phrase: str) -> str:
    """The phrase, tidied, or ProposalRefused saying why it cannot be proposed."""
    phrase = normalise(phrase)
    if not slugify(phrase):
        raise ProposalRefused("A term needs at least one letter or digit.")
    if len(phrase.split()) > MAX_WORDS:
        raise ProposalRefused(
            f"Keep a term to at most {MAX_WORDS} words; papers rarely repeat longer phrases."
        )
    # Every term, whatever its status: a delisted term is not proposed again either. One
    # matcher over all of them applies the counting rules (plurals, hyphens, aliases).
    rows = list(Term.objects.values("id", "slug", "phrase", "aliases", "status"))
    covered = _full_match(Matcher.from_terms(rows), phrase)
    if covered is not None:
        row = next(row for row in rows if row["id"] == covered.id)
        state = "delisted" if row["status"] == Term.Status.DELISTED else "already on the market"
        raise ProposalRefused(f"“{phrase}” is {state} as “{row['phrase']}”.")
    if open_proposals().filter(phrase__iexact=phrase).exists():
        raise ProposalRefused(
            f"“{phrase}” is already proposed and waiting for a curator; it needs no second vote."
        )
    return phrase


def propose(*, user, phrase: str, reason: str) -> TermProposal:
    """Record a proposal; raises ProposalRefused for a phrase that cannot be proposed."""
    reason = (reason or "").strip()
    if not reason:
        raise ProposalRefused("Say why papers will use this term; curators read the reason.")
    return TermProposal.objects.create(user=user, phrase=check_phrase(phrase), reason=reason)


def open_proposals() -> QuerySet[TermProposal]:
    return TermProposal.objects.filter(listed_at__isnull=True)


def proposals_of(user) -> QuerySet[TermProposal]:
    return TermProposal.objects.filter(user=user).select_related("term")


# Listing -------------------------------------------------------------------------------------


def mark_listed(*, term: Term) -> list[TermProposal]:
    """Record that ``term`` covers the open proposals whose phrase it matches, and e-mail each
    proposer once, after the listing commits. Returns the proposals it closed.

    The update is conditional on the proposal still being open, so two saves of the term racing
    each other close (and mail) a proposal once.
    """
    if term.status != Term.Status.LISTED:
        return []
    aliases = [a for a in term.aliases or [] if isinstance(a, str)]
    matcher = Matcher([(TermRef(term.pk, term.slug, term.phrase), [term.phrase, *aliases])])
    closed = []
    for proposal in open_proposals().select_related("user"):
        if _full_match(matcher, proposal.phrase) is None:
            continue
        now = timezone.now()
        if open_proposals().filter(pk=proposal.pk).update(term=term, listed_at=now):
            proposal.term, proposal.listed_at = term, now
            closed.append(proposal)
    for proposal in closed:
        transaction.on_commit(functools.partial(_mail_proposer, proposal))
    return closed


def _mail_proposer(proposal: TermProposal) -> None:
    # Only listed proposals are told, and listing one sets its term.
    if not proposal.user.email or proposal.term is None:
        return
    context = {"proposal": proposal, "term": proposal.term, "base_url": settings.SITE_URL}
    send_mail(
        subject=f"“{proposal.term.phrase}” is now on the Peer Revenue market",
        message=render_to_string("market/proposal_listed.txt", context),
        from_email=None,
        recipient_list=[proposal.user.email],
        fail_silently=True,  # the notice on their next visit still tells them
    )


def take_notices(*, user) -> list[TermProposal]:
    """The user's listed proposals not yet shown as a notice, marked shown: each once. Asked
    only once the reader's session said there is news (``notices.news_sql``)."""
    waiting = list(
        TermProposal.objects.filter(
            user=user, listed_at__isnull=False, notice_shown_at__isnull=True
        ).select_related("term")
    )
    if not waiting:
        return []
    claimed = TermProposal.objects.filter(
        pk__in=[p.pk for p in waiting], notice_shown_at__isnull=True
    ).update(notice_shown_at=timezone.now())
    return waiting if claimed else []


# The admin's candidate list --------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ProposedCandidate:
    proposal: TermProposal
    papers_recent: int  # papers announced since ``since`` that use the phrase
    papers_total: int  # in the whole ingested history


def proposed_candidates(
    *, since: dt.date, papers: Iterable[tuple[str, str, dt.date]]
) -> list[ProposedCandidate]:
    """Open proposals with how many papers use each phrase (by the counting rules), counted
    in one pass over ``papers`` (title, abstract, first announced) for all proposals."""
    proposals = list(open_proposals().select_related("user").order_by("created_at", "id"))
    if not proposals:
        return []
    matcher = Matcher((TermRef(p.pk, "", p.phrase), [p.phrase]) for p in proposals)
    recent: dict[int, int] = dict.fromkeys((p.pk for p in proposals), 0)
    total = dict(recent)
    for title, abstract, day in papers:
        for pk in matcher.mentioned_terms(title) | matcher.mentioned_terms(abstract):
            total[pk] += 1
            if day >= since:
                recent[pk] += 1
    return [ProposedCandidate(p, recent[p.pk], total[p.pk]) for p in proposals]
