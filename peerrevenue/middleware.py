from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest
from django.utils.cache import patch_cache_control


def replace_content(response: HttpResponse, content: str | bytes) -> None:
    """Give a finished response a new body. CommonMiddleware, below the middlewares that fill
    or annotate pages on their way out, has already set Content-Length: left as it was, a
    longer body is cut off by the browser and a shorter one keeps it waiting."""
    response.content = content
    if response.has_header("Content-Length"):
        response["Content-Length"] = str(len(response.content))


class ContentSecurityPolicyMiddleware:
    """Send the site's Content-Security-Policy: our own scripts and styles only, no inline script.

    Abstracts and term descriptions are sanitised already; this is the second wall should a
    sanitiser ever miss something.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response
        self.policy = settings.CONTENT_SECURITY_POLICY

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if self.policy:
            response.headers.setdefault("Content-Security-Policy", self.policy)
        return response


class PrivateResponsesMiddleware:
    """Send ``Cache-Control: private`` with every response to a signed-in reader.

    Any page a signed-in reader gets is theirs (their name in the header, their CSRF token,
    and on many pages their money, library or searches): a shared proxy or CDN must never keep
    it for the next person. ``no-cache`` too, unless the view said how long it may be kept: the
    browser may keep the page for the back button but asks again before showing it anew.
    Anonymous pages keep the headers their views give them. Below the authentication
    middleware, which gives the request its user.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        # Without a session cookie nobody is signed in: asking the user would load an empty
        # session, which marks the response as varying by cookie for nothing.
        if settings.SESSION_COOKIE_NAME not in request.COOKIES and not request.session.modified:
            return response
        user = getattr(request, "user", None)
        if user is None or not user.is_authenticated:
            return response
        directives = response.get("Cache-Control", "")
        if not directives:  # most pages: what the two patches below would write
            response["Cache-Control"] = "private, no-cache"
            return response
        if "no-store" in directives:
            return response  # kept by no cache at all, shared or not
        patch_cache_control(response, private=True)
        if "max-age" not in directives and "no-cache" not in directives:
            patch_cache_control(response, no_cache=True)
        return response


class RejectNulCharactersMiddleware:
    """Refuse, with a 400, any address whose path or query string contains a NUL character.

    No page of the site has one, and PostgreSQL cannot store or even compare text containing
    NUL: a category code, archive, search or admin filter carrying ``%00`` would otherwise
    reach a query and fail as a server error. Forms already refuse NUL in what they read
    (Django's CharField does); this covers the address, for every view at once.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        # A NUL reaches the query as %00 (or raw): without one, the query is not parsed here.
        query = request.META.get("QUERY_STRING", "")
        if "\x00" in request.path_info or (
            ("%00" in query or "\x00" in query)
            and any(
                "\x00" in key or any("\x00" in value for value in values)
                for key, values in request.GET.lists()
            )
        ):
            return HttpResponseBadRequest(
                "This address contains a NUL character, which no page here has.",
                content_type="text/plain; charset=utf-8",
            )
        return self.get_response(request)


FORM_CONTENT_TYPES = frozenset({"application/x-www-form-urlencoded", "multipart/form-data"})


class RejectNonUtf8FormsMiddleware:
    """Refuse, with a 400 that says why, a form whose Content-Type names a charset other than
    UTF-8.

    Every page here is UTF-8 and browsers send its forms back that way (with no charset at
    all). Django refuses other charsets on url-encoded forms, but in production the refusal
    itself fails: the 400 handler's CSRF bookkeeping reads the form again, raises again, and
    gunicorn answers a bare 500. Multipart forms in another charset are read as if they were
    it, turning every field to mojibake. So both are turned away here, before anything reads
    the form.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        # None on a request that was never given a content type (a bare HttpRequest).
        charset = (request.content_params or {}).get("charset")
        # Exactly "utf-8", as Django's own check wants: it refuses even the alias "utf8".
        if request.content_type in FORM_CONTENT_TYPES and charset and charset.lower() != "utf-8":
            return HttpResponseBadRequest(
                f"This form says its character set is {charset[:40]!r}; this site reads forms "
                "in UTF-8 only, labelled charset=utf-8 or not labelled at all (as browsers "
                "send them).",
                content_type="text/plain; charset=utf-8",
            )
        return self.get_response(request)
