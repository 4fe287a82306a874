"""Posting as a reader does: through the forms, and reading the thread back as shown."""

from __future__ import annotations

import uuid

from tests.html import Element, Page


def post(client, *, target: str, body: str, parent: int | None = None, next_: str = "/"):
    data = {"target": target, "body": body, "key": uuid.uuid4().hex, "next": next_}
    if parent is not None:
        data["parent"] = str(parent)
    return client.post("/discussion/post/", data)


def comments_on(client, url: str) -> list[Element]:
    """The comments of the page's thread, in the order shown (replies after their parent)."""
    page = Page.of(client.get(url))
    section = page.one("section", id="discussion")
    return section.select("article", cls="comment")


def texts(client, url: str) -> list[str]:
    return [
        comment.one("div", cls="comment__body").text
        for comment in comments_on(client, url)
        if comment.select("div", cls="comment__body")
    ]
