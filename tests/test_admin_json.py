"""JSON boxes in the admin refuse what Python cannot decode, with a message, not a server error."""

from __future__ import annotations

import html

import pytest
from django.contrib import admin
from django.db import models
from django.test import RequestFactory
from django.urls import reverse

from market.models import Term
from peerrevenue.forms import JSONField
from tests.factories import make_paper
from tests.html import Page

pytestmark = [
    pytest.mark.django_db,
    # The paper form's licence box; Django's own deprecation notice, not ours.
    pytest.mark.filterwarnings("ignore:The default scheme will be changed"),
]

HUGE_NUMBER = "1" * 5000  # past Python's 4,300-digit limit for int() of a string
DEEP = "[" * 100_000 + "]" * 100_000  # past the decoder's recursion limit


def term_change(staff) -> tuple[str, dict[str, str], object]:
    term = Term.objects.create(phrase="KV cache", aliases=["KV-cache"])
    url = reverse("admin:market_term_change", args=[term.pk])
    return url, Page.of(staff.get(url)).form("term_form"), term


def paper_change(staff) -> tuple[str, dict[str, str], object]:
    paper = make_paper(title="Gossip with huge numbers")
    url = reverse("admin:papers_paper_change", args=[paper.pk])
    return url, Page.of(staff.get(url)).form("paper_form"), paper


def saved(obj) -> dict:
    return type(obj).objects.filter(pk=obj.pk).values().get()


@pytest.mark.parametrize(
    ("change", "field"),
    [(term_change, "aliases"), (paper_change, "authors"), (paper_change, "categories")],
)
@pytest.mark.parametrize(
    ("text", "message"),
    [
        (HUGE_NUMBER, "Numbers can have at most 4,300 digits."),
        (f'["a", {HUGE_NUMBER}]', "Numbers can have at most 4,300 digits."),
        (DEEP, "This is nested too deeply: use fewer levels of brackets."),
    ],
    ids=["number", "number-in-list", "nesting"],
)
def test_undecodable_json_is_refused_with_a_message(staff, change, field, text, message):
    url, data, obj = change(staff)
    before = saved(obj)
    response = staff.post(url, {**data, field: text})
    assert response.status_code == 200
    page = response.content.decode()
    assert message in page
    assert 'class="errornote"' in page  # the admin's "Please correct the error below."
    assert html.escape(text) in page  # the text is shown again, to be fixed rather than retyped
    assert saved(obj) == before


def test_every_json_column_in_the_admin_is_edited_with_the_checking_field(curator):
    request = RequestFactory().get("/admin/")
    request.user = curator
    checked = []
    for model, model_admin in admin.site._registry.items():
        json_names = {f.name for f in model._meta.fields if isinstance(f, models.JSONField)}
        if not json_names or not model_admin.has_change_permission(request):
            continue
        form = model_admin.get_form(request)
        for name in json_names & set(form.base_fields):
            assert isinstance(form.base_fields[name], JSONField), f"{model.__name__}.{name}"
            checked.append(f"{model.__name__}.{name}")
    assert {"Term.aliases", "Paper.authors", "Paper.categories"} <= set(checked)
