"""Forms sent in a character set other than UTF-8 are refused with a 400 that says why.

The client checks CSRF as a browser's request is checked in production: without that, the
test client skips the step that turned Django's refusal into a bare 500 under gunicorn.
"""

from __future__ import annotations

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db

TOKEN = "abcdefghijklmnopqrstuvwxyz012345"
MULTIPART = (
    b'--XX\r\nContent-Disposition: form-data; name="username"\r\n\r\nr\xe9ka\r\n'
    b'--XX\r\nContent-Disposition: form-data; name="password"\r\n\r\nsecret\r\n--XX--\r\n'
)
ODD_FORMS = [
    ("application/x-www-form-urlencoded; charset=latin-1", b"username=r%E9ka&password=secret"),
    ("application/x-www-form-urlencoded; charset=ISO-8859-1", b"username=r%E9ka&password=x"),
    ("application/x-www-form-urlencoded; charset=utf-16", "username=r\xe9ka".encode("utf-16")),
    ("application/x-www-form-urlencoded; charset=no-such-charset", b"username=reka"),
    ("application/x-www-form-urlencoded; charset=utf8", b"username=reka"),
    ("multipart/form-data; boundary=XX; charset=utf-16", MULTIPART),
    ("multipart/form-data; boundary=XX; charset=latin-1", MULTIPART),
]


@pytest.fixture
def browser() -> Client:
    client = Client(enforce_csrf_checks=True)
    client.cookies["csrftoken"] = TOKEN
    return client


@pytest.mark.parametrize(("content_type", "body"), ODD_FORMS)
@pytest.mark.parametrize("url", ["/accounts/login/", "/accounts/signup/", "/admin/login/"])
def test_a_form_in_another_charset_is_refused_with_a_reason(browser, url, content_type, body):
    response = browser.generic("POST", url, body, content_type=content_type, HTTP_X_CSRFTOKEN=TOKEN)
    assert response.status_code == 400
    text = response.content.decode()
    assert "this site reads forms in UTF-8 only" in text
    assert content_type.split("charset=")[1] in text


@pytest.mark.parametrize("charset", ["utf-8", "UTF-8"])
def test_a_form_that_says_utf8_is_read(browser, reader, password, charset):
    response = browser.generic(
        "POST",
        "/accounts/login/",
        f"username=rosalind&password={password.replace(' ', '+')}".encode(),
        content_type=f"application/x-www-form-urlencoded; charset={charset}",
        HTTP_X_CSRFTOKEN=TOKEN,
    )
    assert response.status_code == 302
