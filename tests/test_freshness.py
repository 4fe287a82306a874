"""Every public page is as fresh as a render that kept nothing, whatever a curator edits and
however the edit is made.

For every model the admin lets a curator change, and every field its change form edits (read
from the admin itself, so a field added later is covered with no change here), the field is
changed and then put back, each time in three ways (``save()``, ``QuerySet.update()`` and a
raw SQL ``UPDATE``, which no Python code sees). After each write every public page is read by
an anonymous and a signed-in reader, from what the site has kept, and then again with
nothing kept (the shared cache and this process's memory emptied): the two must be the same
bytes, apart from the CSRF tokens a page masks afresh on every render.

The site's own check (``settings.KEEP_VERIFY``) is off here: this test looks only at what
readers get, as a check from outside would.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.core.exceptions import ValidationError
from django.db import DatabaseError, connection, models, transaction
from django.test import Client, RequestFactory

from market.models import Term
from peerrevenue import freshness, keep
from tests.factories import announce, buy

pytestmark = [pytest.mark.django_db, pytest.mark.slow]

DAY = dt.date(2026, 11, 24)
WAYS = ("save", "update", "sql")


@dataclass(frozen=True)
class Site:
    """The data every public page shows something of, and the pages."""

    pages: tuple[str, ...]
    readers: dict[str, Client]
    shown: dict[type[models.Model], models.Model]  # the row of each model the pages show

    def row_of(self, model: type[models.Model]) -> models.Model:
        """The row to edit: the one the pages show, or (a model added later) its first."""
        row = self.shown.get(model) or model._default_manager.order_by("pk").first()
        assert row is not None, f"the freshness site has no {model.__name__}: add one to site()"
        return row


@pytest.fixture
def frozen_clock(monkeypatch):
    """One moment for the whole test, so that a page read from what was kept and the fresh
    render after it fall in the same clock bucket (pieces are keyed by it on purpose): what
    differs is then stale, not later."""
    from types import SimpleNamespace

    from django.utils import timezone

    from library import fillers
    from market import tickers

    now = timezone.now()
    monkeypatch.setattr(timezone, "now", lambda: now)
    clock = SimpleNamespace(time=lambda: now.timestamp())
    monkeypatch.setattr(tickers, "time", clock)
    monkeypatch.setattr(fillers, "time", clock)
    return now


@pytest.fixture
def site(settings, frozen_clock, cs_dc, reader, trader, rival, curator) -> Site:
    settings.KEEP_VERIFY = False
    from accounts.models import Preferences

    gpu = Term.objects.create(phrase="GPU", description="Graphics *processors*.")
    quorum = Term.objects.create(phrase="quorum", aliases=["quora"])
    paper = announce(
        gpu,
        date=DAY,
        category=cs_dc,
        title="Consensus on GPUs",
        abstract="A quorum of GPUs agrees.",
        authors=["Ada Lovelace", "Grace Hopper"],
    )
    announce(quorum, date=DAY, category=cs_dc, title="Quorum reads", abstract="A quorum.")
    two_days_ago = dt.datetime.now(dt.UTC) - dt.timedelta(days=2)
    buy(trader, gpu, 10, when=two_days_ago)
    buy(rival, gpu, 5)
    buy(rival, quorum, 3, when=two_days_ago)
    preferences = Preferences.objects.create(
        user=trader, public_trader_page=True, daily_digest=True
    )
    from django.contrib.auth.models import Group

    from accounts.models import DigestDelivery, SavedSearch
    from market.models import TermProposal

    search = SavedSearch.objects.create(user=reader, query="consensus")
    digest = DigestDelivery.objects.create(user=reader, date=DAY, paper_count=2)
    proposal = TermProposal.objects.create(
        user=trader, phrase="gossip", reason="Everywhere.", term=gpu
    )
    group = Group.objects.create(name="curators")
    group.user_set.add(curator)
    from authorship.models import Claim

    # The paper page names its verified author, linked to their trader page.
    claim = Claim.objects.create(
        user=trader, paper=paper, status=Claim.Status.APPROVED, orcid="0000-0002-1825-0097"
    )
    from discussion import writing
    from discussion.models import Report, Suspension
    from discussion.targets import Target

    # Talk on the paper and the term: a curator hides, restores and suspends in the admin.
    comment = writing.post(
        user=rival, target=Target("paper", paper.pk), body="Why $n/3$?", key="fresh"
    )
    writing.post(user=trader, target=Target("term", gpu.pk), body="Holding on.", key="fresh")
    report = Report.objects.create(comment=comment, reporter=reader, reason="spam")
    suspension = Suspension.objects.create(user=curator, reason="a test")
    shown = [cs_dc, paper, gpu, trader, preferences, search, digest, proposal, group, claim]
    shown += [comment, report, suspension]
    signed_in = Client()
    signed_in.force_login(reader)
    pages = (
        "/",
        "/list/cs.DC/",
        f"/list/cs.DC/{DAY:%Y-%m-%d}/",
        "/list/cs.DC/feed/",
        f"/abs/{paper.arxiv_id}/",
        "/search/?q=consensus",
        "/author/Ada Lovelace/",
        "/archive/cs/",
        "/market/",
        f"/market/{gpu.slug}/",
        f"/market/{quorum.slug}/",
        "/market/rules/",
        "/leaderboard/",
        f"/traders/{trader.username}/",
        "/hot/",
        f"/discussion/comment/{comment.pk}/",
        f"/discussion/paper:{paper.pk}/feed.atom",
    )
    return Site(
        pages,
        {"anonymous": Client(), "signed-in": signed_in},
        {type(row): row for row in shown},
    )


# What a curator can edit ----------------------------------------------------------------------


def _superuser_request():
    request = RequestFactory().get("/admin/")
    request.user = get_user_model()(is_superuser=True, is_staff=True, is_active=True)
    return request


def editable_fields() -> Iterator[tuple[type[models.Model], str]]:
    """Every (model, field) the admin's change forms edit: a column, not a relation's rows."""
    request = _superuser_request()
    for model, model_admin in sorted(admin.site._registry.items(), key=lambda i: i[0].__name__):
        if not model_admin.has_change_permission(request):
            continue
        instance = model()
        readonly = set(model_admin.get_readonly_fields(request, instance))
        form_fields = set(model_admin.get_form(request, instance).base_fields)
        for field in model._meta.concrete_fields:
            if (
                field.editable
                and not field.primary_key
                and field.name not in readonly
                and field.name in form_fields
            ):
                yield model, field.name


FIELDS = list(editable_fields())


def changed(field: models.Field, value: Any, instance: models.Model) -> Any:
    """A different value a curator could type for ``field``."""
    if field.choices:
        # The last choice: for a term's status, delisted (and, put back, relisted).
        options = [choice for choice, _ in field.flatchoices if choice != value]
        return options[-1]
    if isinstance(field, models.BooleanField):
        return not value
    if isinstance(field, models.ForeignKey | models.OneToOneField):
        related: Any = field.related_model
        others = related._default_manager.exclude(pk=getattr(value, "pk", value))
        return others.order_by("pk").first()
    if isinstance(field, models.JSONField) or isinstance(value, list):
        items = list(value or [])
        if items and isinstance(items[-1], dict):
            return [
                *items,
                {k: f"{v} Zed" if isinstance(v, str) else v for k, v in items[-1].items()},
            ]
        return [*items, f"{items[-1]}x" if items and isinstance(items[-1], str) else "zed"]
    if isinstance(field, models.DateTimeField):
        return (value or dt.datetime.now(dt.UTC)) - dt.timedelta(days=1)
    if isinstance(field, models.DateField):
        return (value or DAY) - dt.timedelta(days=1)
    if isinstance(field, models.IntegerField | models.FloatField | models.DecimalField):
        return (value or 0) + 1
    if isinstance(field, models.UUIDField):
        return uuid.uuid4()
    if isinstance(field, models.CharField | models.TextField):
        text = f"{value or ''}zed" if isinstance(field, models.SlugField) else f"{value or ''} Zed"
        limit = field.max_length or len(text)
        text = text[-limit:] if len(text) > limit else text
        try:
            field.run_validators(text)
        except ValidationError:  # an identifier of a set form (an arXiv id): another one
            text = re.sub(r"\d+(?=\D*$)", lambda digits: "9" * len(digits[0]), value)
        return text
    raise AssertionError(f"no way to change {field!r} here: teach changed() this field type")


def write(instance: models.Model, field: models.Field, value: Any, way: str) -> None:
    """Set ``field`` of ``instance`` to ``value`` in one of the ``WAYS``."""
    model = type(instance)
    if way == "save":
        setattr(instance, field.name, value)
        instance.save()
    elif way == "update":
        model._default_manager.filter(pk=instance.pk).update(**{field.name: value})
    else:
        stored = getattr(value, "pk", value)
        if isinstance(field, models.JSONField):
            stored = json.dumps(stored)
        elif not isinstance(field, models.ForeignKey):
            stored = field.get_db_prep_value(value, connection)
        table, column = model._meta.db_table, field.column
        with connection.cursor() as cursor:
            cursor.execute(
                f'UPDATE "{table}" SET "{column}" = %s WHERE "{model._meta.pk.column}" = %s',  # noqa: S608 - names from the models
                [stored, instance.pk],
            )


# Comparing pages ------------------------------------------------------------------------------


def _forget() -> None:
    cache.clear()
    keep.forget_local()


def pages_read(site: Site) -> dict[tuple[str, str], tuple[int, bytes]]:
    return {
        (who, url): _normalised(client.get(url))
        for url in site.pages
        for who, client in site.readers.items()
    }


def _normalised(response) -> tuple[int, bytes]:
    return response.status_code, freshness.per_render_removed(response.content)


def stale_pages(site: Site) -> list[str]:
    """The pages whose kept bytes differ from a render with nothing kept (which then keeps
    them, for the next change)."""
    kept = pages_read(site)
    _forget()
    fresh = pages_read(site)
    return [
        f"{who} {url}: {freshness.first_difference(kept[who, url][1], fresh[who, url][1])}"
        for who, url in kept
        if kept[who, url] != fresh[who, url]
    ]


def test_every_curator_editable_field_is_covered():
    assert {f"{model.__name__}.{name}" for model, name in FIELDS} >= {
        "Category.name",
        "Paper.hidden",
        "Paper.title",
        "Term.status",
        "User.username",
        "Preferences.public_trader_page",
        "Claim.status",
        "Claim.user",
        "Claim.paper",
        "Claim.reason",
    }


@pytest.mark.parametrize(
    ("model", "name"),
    [pytest.param(model, name, id=f"{model.__name__}.{name}") for model, name in FIELDS],
)
def test_every_page_is_fresh_after_each_edit(site, model, name):
    field = model._meta.get_field(name)
    instance = site.row_of(model)
    answered = {status for status, _ in pages_read(site).values()}
    assert answered <= {200, 302}, f"a page did not answer: {answered}"
    stale_pages(site)  # everything kept, as of now
    stale: list[str] = []
    refused: list[str] = []
    for way in WAYS:
        instance = model._default_manager.get(pk=instance.pk)
        original = getattr(instance, field.name)
        for step, value in (
            ("changed", changed(field, original, instance)),
            ("put back", original),
        ):
            try:
                with transaction.atomic():
                    write(instance, field, value, way)
            # A value the model's or the database's own rules refuse (a term's curve while
            # shares are out): nothing changed, nothing to compare.
            except (DatabaseError, ValidationError) as error:
                refused.append(f"{way} {step}: {error}")
                continue
            instance = model._default_manager.get(pk=instance.pk)
            stale += [f"{name} {step} by {way}: {page}" for page in stale_pages(site)]
    assert not stale, "\n".join(stale)
    assert len(refused) < 2 * len(WAYS), f"every write of {name} was refused: {refused}"
