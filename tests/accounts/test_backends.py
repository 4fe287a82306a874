"""Who is signed in: the per-request user look-up must agree with Django's own."""

from __future__ import annotations

import pytest
from django.contrib.auth.backends import ModelBackend
from django.test import Client

from accounts.backends import UserBackend
from tests.html import Page

pytestmark = pytest.mark.django_db


def fields(user) -> dict:
    return {field.attname: getattr(user, field.attname) for field in user._meta.concrete_fields}


def test_the_user_loaded_is_the_one_django_loads(curator):
    assert fields(UserBackend().get_user(curator.pk)) == fields(ModelBackend().get_user(curator.pk))


@pytest.mark.parametrize("user_id", [987654, "not a number", None])
def test_no_such_user_is_nobody(user_id):
    assert UserBackend().get_user(user_id) is None


def test_a_deactivated_reader_is_signed_out_on_their_next_page(reader, cs_dc):
    client = Client()
    client.force_login(reader)
    assert reader.username in Page.of(client.get("/list/cs.DC/")).text
    reader.is_active = False
    reader.save()
    page = Page.of(client.get("/list/cs.DC/"))
    assert reader.username not in page.text
    assert "Log in" in page.text
