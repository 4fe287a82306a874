"""Django's model backend, with a cheaper look-up of the signed-in user."""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass
from functools import cache
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend
from django.core.exceptions import ValidationError
from django.db import connection

from peerrevenue import replicas


@dataclass(frozen=True)
class UserColumns:
    """The user table's columns, in the order a row of them fills ``attnames``."""

    table: str
    columns: list[str]
    attnames: list[str]
    pk: str  # the primary key's column
    pk_index: int

    def sql(self, alias: str) -> str:
        quote = connection.ops.quote_name
        return ", ".join(f"{alias}.{quote(column)}" for column in self.columns)


@cache
def user_columns() -> UserColumns:
    """Every signed-in request reads its user by these columns, with its session
    (``accounts.sessions``) or by id. Through the ORM the look-up costs about 0.4 ms on this
    kind of machine, two thirds of that building the same SQL again; so the SQL is built once,
    from the model's own fields. The user model's fields all come from the database as Python
    needs them (no ``from_db_value`` converters), so a row goes straight into ``from_db``."""
    meta = get_user_model()._meta
    fields = meta.concrete_fields
    attnames = [field.attname for field in fields]
    return UserColumns(
        table=meta.db_table,
        columns=[field.column for field in fields],
        attnames=attnames,
        pk=meta.pk.column,
        pk_index=attnames.index(meta.pk.attname),
    )


@dataclass(frozen=True, slots=True)
class OfferedRow:
    """A user's row, read with the request's session (``accounts.sessions``)."""

    user_id: int
    row: tuple[Any, ...]  # the columns of ``user_columns()``, in order
    alias: str  # the database it came from


# The row offered by this request's session, until get_user takes it: per request (a context
# variable) and taken once, so any later look-up of the user reads it again.
_offered: ContextVar[OfferedRow | None] = ContextVar("offered_user_row", default=None)


def offer_user_row(offered: OfferedRow | None) -> None:
    _offered.set(offered)


def _take_offered(user_id: int) -> OfferedRow | None:
    offered = _offered.get()
    if offered is None or offered.user_id != user_id:
        return None
    _offered.set(None)
    return offered


@cache
def _user_by_id_sql() -> str:
    columns = user_columns()
    quote = connection.ops.quote_name
    return (
        f"SELECT {columns.sql('u')} FROM {quote(columns.table)} AS u"  # noqa: S608 - our names
        f" WHERE u.{quote(columns.pk)} = %s"
    )


class UserBackend(ModelBackend):
    """Signs in as ``ModelBackend`` does; only ``get_user`` (each request's) is cheaper."""

    def get_user(self, user_id):
        model = get_user_model()
        try:
            pk = model._meta.pk.to_python(user_id)
        except ValidationError:
            return None
        # Read with the request's session, most often (accounts.sessions); else from where the
        # request reads (peerrevenue.replicas): a reader page's replica, which has the user's
        # row, since whoever signed up or in since reads the primary until then.
        offered = _take_offered(pk)
        if offered is not None:
            row, alias = offered.row, offered.alias
        else:
            reading = replicas.reading_connection()
            with reading.cursor() as cursor:
                cursor.execute(_user_by_id_sql(), [pk])
                row = cursor.fetchone()
            if row is None:
                return None
            alias = reading.alias
        user = model.from_db(alias, user_columns().attnames, row)
        return user if self.user_can_authenticate(user) else None
