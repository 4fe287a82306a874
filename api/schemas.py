"""What the API reads out: the shapes of its answers (OpenAPI is generated from these).

Money is in µ¢ (millionths of a credit), as the market stores it; times are ISO 8601 with
their offset; a trader who keeps their page private is ``null`` wherever a name would be.
"""

from __future__ import annotations

import datetime as dt

from ninja import Schema
from pydantic import Field


class Category(Schema):
    code: str
    name: str
    archive_code: str
    archive_name: str
    ingested: bool = Field(description="Whether the site takes this category's daily listings")


class Categories(Schema):
    items: list[Category]


class DayCount(Schema):
    date: dt.date
    papers: int = Field(description="New papers and cross-lists shown that day")
    replacements: int


class Days(Schema):
    category: str
    items: list[DayCount] = Field(description="Newest day first")
    next_cursor: str | None


class PaperSummary(Schema):
    arxiv_id: str
    version: int
    title: str = Field(description="Plain text (TeX turned to Unicode)")
    authors: list[str]
    more_authors: bool = Field(description="The byline ends in “et al.”")
    primary_category: str
    categories: list[str]
    submitted_at: dt.datetime | None
    url: str = Field(description="The paper's page on this site")


class ListedPaper(Schema):
    announce_type: str = Field(description="new, cross, replace or replace-cross")
    version: int
    paper: PaperSummary


class Listing(Schema):
    category: str
    date: dt.date
    new: list[ListedPaper]
    cross_lists: list[ListedPaper]
    replacements: list[ListedPaper]


class Version(Schema):
    number: int
    submitted_at: dt.datetime | None
    current: bool
    title: str = Field(description="This version's title where it differs from the current")


class Subject(Schema):
    code: str
    name: str
    primary: bool


class Author(Schema):
    name: str
    affiliation: str


class TermRef(Schema):
    slug: str
    phrase: str


class PaperListing(Schema):
    category: str
    date: dt.date
    announce_type: str


class Paper(Schema):
    arxiv_id: str
    version: int
    title: str
    title_tex: str
    abstract: str = Field(description="Plain text")
    abstract_tex: str
    authors: list[Author]
    more_authors: bool
    subjects: list[Subject]
    versions: list[Version]
    listings: list[PaperListing]
    terms: list[TermRef] = Field(description="Market terms highlighted in its title or abstract")
    comment: str
    journal_ref: str
    doi: str
    license: str
    url: str


class Papers(Schema):
    items: list[PaperSummary]
    next_cursor: str | None


class SearchResults(Papers):
    found: int = Field(description="Matches, counted up to the site's cap")
    similar: bool = Field(description="Nothing matched exactly; these are similar spellings")


class Term(Schema):
    slug: str
    phrase: str
    status: str
    price: int = Field(description="µ¢ for the next share")
    supply: int
    change_1d_bp: int | None = Field(description="Price change over a day, basis points")
    change_7d_bp: int | None
    mentions: int = Field(description="Visible papers mentioning it, last seven listing days")
    holders: int


class Terms(Schema):
    items: list[Term]
    next_cursor: str | None


class PricePoint(Schema):
    at: dt.datetime
    price: int = Field(description="µ¢ for the next share after this trade")
    supply: int


class PriceHistory(Schema):
    term: str
    items: list[PricePoint] = Field(description="Oldest first")
    next_cursor: str | None


class PublicTrade(Schema):
    id: int
    at: dt.datetime
    trader: str | None = Field(description="null: a trader who keeps their page private")
    side: str
    shares: int
    price_after: int


class Trades(Schema):
    term: str
    items: list[PublicTrade] = Field(description="Newest first")
    next_cursor: str | None


class Holder(Schema):
    trader: str
    shares: int


class Holders(Schema):
    term: str
    items: list[Holder] = Field(description="Public traders only, most shares first")
    next_cursor: str | None


class Dividend(Schema):
    id: int
    term: TermRef
    paper: PaperSummary
    date: dt.date
    per_share: int
    shares: int = Field(description="Shares paid")
    amount: int


class Dividends(Schema):
    items: list[Dividend] = Field(description="Newest first")
    next_cursor: str | None


class Leader(Schema):
    rank: int
    trader: str | None
    net_worth: int
    gain: int = Field(description="µ¢ gained over the period")


class Leaderboard(Schema):
    period: str
    items: list[Leader]
    next_cursor: str | None
