"""Claiming papers: what a reader asks, the mailed link that confirms their institutional
address, a withdrawal, and the curator's decision.

Every write keeps the record: a refused or withdrawn claim stays as it is, and a new claim of
the same paper is a new row (the partial unique constraint only holds standing claims).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass

from django.core import signing
from django.core.mail import send_mail
from django.db import IntegrityError, transaction
from django.template.loader import render_to_string
from django.utils import timezone

from papers.models import Paper, author_page

from .models import Claim

# The most papers one request claims: an author page lists thirty a page, and a reader with
# more signs a second form rather than one request touching hundreds of rows.
MAX_PAPERS_PER_REQUEST = 50
MAX_NOTE = 2000
CONFIRM_SALT = "authorship.claims.confirm-email"
CONFIRM_DAYS = 7
# Addresses anyone can open are no evidence of a place at an institution.
WEBMAIL_DOMAINS = frozenset(
    {
        "gmail.com",
        "googlemail.com",
        "outlook.com",
        "hotmail.com",
        "live.com",
        "yahoo.com",
        "icloud.com",
        "me.com",
        "proton.me",
        "protonmail.com",
        "gmx.com",
        "gmx.de",
        "mail.ru",
        "yandex.ru",
        "qq.com",
        "163.com",
        "aol.com",
    }
)


class ClaimError(Exception):
    """A claim that cannot be made or changed; the message says why, for the reader."""


@dataclass(frozen=True, slots=True)
class Submitted:
    made: list[Claim]
    already: list[Paper]  # papers this reader already has a standing claim to


def is_webmail(address: str) -> bool:
    return address.rpartition("@")[2].lower() in WEBMAIL_DOMAINS


def submit(
    *, user, papers: Sequence[Paper], orcid: str, institution_email: str, note: str
) -> Submitted:
    """One pending claim per paper, with the same evidence; papers this reader already claims
    (pending or approved) are left as they are. ``orcid`` is already normalised."""
    if not papers:
        raise ClaimError("Tick at least one paper that is yours.")
    if len(papers) > MAX_PAPERS_PER_REQUEST:
        raise ClaimError(f"Claim at most {MAX_PAPERS_PER_REQUEST} papers at a time.")
    if not (orcid or institution_email or note.strip()):
        raise ClaimError(
            "Give some evidence that these papers are yours: an ORCID iD, an address at your "
            "institution, or a note for the curator."
        )
    made: list[Claim] = []
    already: list[Paper] = []
    with transaction.atomic():
        for paper in papers:
            try:
                # A savepoint each: the constraint, not a look first, decides whether a
                # standing claim exists, so two racing submissions make one row.
                with transaction.atomic():
                    made.append(
                        Claim.objects.create(
                            user=user,
                            paper=paper,
                            orcid=orcid,
                            institution_email=institution_email,
                            note=note.strip(),
                        )
                    )
            except IntegrityError:
                already.append(paper)
    return Submitted(made=made, already=already)


def confirmation_token(*, claims: Sequence[Claim]) -> str:
    """A signed token naming the claims and the address they gave: whoever can read mail at
    that address can confirm it, and nobody can make a token for another address."""
    first = claims[0]
    return signing.dumps(
        {"claims": [claim.pk for claim in claims], "email": first.institution_email.lower()},
        salt=CONFIRM_SALT,
        compress=True,
    )


def mail_confirmation(*, claims: Sequence[Claim], link: str) -> None:
    first = claims[0]
    context = {"claims": claims, "link": link, "days": CONFIRM_DAYS, "user": first.user}
    send_mail(
        subject="Confirm your address for your Peer Revenue claims",
        message=render_to_string("authorship/confirm_email.txt", context),
        from_email=None,
        recipient_list=[first.institution_email],
    )


def claims_of_token(token: str) -> tuple[list[Claim], str]:
    """The claims a mailed link names that still ask for its address, and the address."""
    try:
        found = signing.loads(token, salt=CONFIRM_SALT, max_age=dt.timedelta(days=CONFIRM_DAYS))
    except signing.SignatureExpired:
        raise ClaimError(
            f"This link is more than {CONFIRM_DAYS} days old. Claim the papers again to be "
            "sent a new one."
        ) from None
    except signing.BadSignature:
        raise ClaimError("This link is not one we sent, or it was cut short.") from None
    email = str(found.get("email", ""))
    ids = [pk for pk in found.get("claims", []) if isinstance(pk, int)]
    claims = list(
        Claim.objects.filter(pk__in=ids, institution_email__iexact=email)
        .live()
        .select_related("paper")
    )
    if not claims:
        raise ClaimError("The claims this link confirms were withdrawn or decided since.")
    return claims, email


def confirm_email(*, token: str) -> list[Claim]:
    """Mark the address of the token's claims confirmed (once: a second visit changes
    nothing)."""
    claims, _ = claims_of_token(token)
    now = timezone.now()
    Claim.objects.filter(pk__in=[c.pk for c in claims], email_confirmed_at=None).update(
        email_confirmed_at=now
    )
    return claims


def withdraw(*, user, claim_id: int) -> Claim:
    """The reader's own standing claim, withdrawn (kept, not deleted)."""
    with transaction.atomic():
        # Locked so that a curator's decision in between is not overwritten unseen.
        claim = Claim.objects.select_for_update().filter(pk=claim_id, user=user).first()
        if claim is None:
            raise ClaimError("There is no such claim of yours.")
        if claim.status not in Claim.LIVE:
            raise ClaimError(
                f"This claim is {claim.get_status_display().lower()} already: nothing to withdraw."
            )
        claim.status = Claim.Status.WITHDRAWN
        claim.decided_at = timezone.now()
        claim.save(update_fields=["status", "decided_at"])
    return claim


def approve(*, claims, curator) -> int:
    """Approve the pending ones among ``claims`` (a QuerySet); how many were."""
    return claims.filter(status=Claim.Status.PENDING).update(
        status=Claim.Status.APPROVED, decided_at=timezone.now(), decided_by=curator, reason=""
    )


def refuse(*, claims, curator, reason: str) -> int:
    """Refuse the pending or approved ones among ``claims``, with the reason the reader
    reads; how many were."""
    reason = reason.strip()
    if not reason:
        raise ClaimError("Give the reason the reader will see.")
    return claims.filter(status__in=Claim.LIVE).update(
        status=Claim.Status.REFUSED, decided_at=timezone.now(), decided_by=curator, reason=reason
    )


def papers_to_claim(*, arxiv_ids: Sequence[str]) -> list[Paper]:
    """The shown papers among these identifiers, in the order given."""
    wanted = list(dict.fromkeys(arxiv_ids))[: MAX_PAPERS_PER_REQUEST + 1]
    found = {p.arxiv_id: p for p in Paper.objects.visible().filter(arxiv_id__in=wanted)}
    return [found[arxiv_id] for arxiv_id in wanted if arxiv_id in found]


def papers_by_author(*, name: str) -> list[Paper]:
    """The first papers shown under an author's name, newest first: the ones an author page
    offers to claim together (one name can be many people: the reader ticks theirs)."""
    rows, _ = author_page(name=name, start=0, stop=MAX_PAPERS_PER_REQUEST)
    found = Paper.objects.visible().in_bulk([paper_id for paper_id, _ in rows])
    return [found[paper_id] for paper_id, _ in rows if paper_id in found]


def claims_of(*, user) -> list[Claim]:
    """A reader's claims, newest first, standing or not."""
    return list(Claim.objects.filter(user=user).select_related("paper"))
