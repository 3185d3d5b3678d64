"""Token authentication for the API (settings.REST_FRAMEWORK and the game views).

Two kinds of token, told apart by their length, each found in one raw statement:

- a login's own token (`casino.models.LoginToken`, 48 hex characters): every login makes
  one, so each device has its own, listed and revoked one by one; only its SHA-256 digest is
  stored;
- DRF's single token per user (`rest_framework.authtoken`, 40 characters), made by
  `manage.py drf_create_token`, the admin or scripts: it still authenticates, as before.

Its own module: DRF imports the authentication classes while `rest_framework.views` itself
is loading, so this module must not import any view.
"""

from __future__ import annotations

import hashlib
import secrets
from functools import cache
from typing import TYPE_CHECKING, Any

from django.contrib.auth import get_user_model
from django.db import DEFAULT_DB_ALIAS, connections, router
from django.utils.translation import gettext_lazy as _
from rest_framework import authentication as drf_authentication
from rest_framework import exceptions

from casino.platform import rawsql

if TYPE_CHECKING:
    from rest_framework.authtoken.models import Token

    from casino.models import LoginToken

LOGIN_KEY_LENGTH = 48  # secrets.token_hex(24); DRF's keys have 40
_TOKEN_SQL: dict[tuple[str, bool], tuple[str, Any, list[Any]]] = {}  # (alias, login) -> ...


def new_login_key() -> str:
    return secrets.token_hex(LOGIN_KEY_LENGTH // 2)


def key_digest(key: str) -> str:
    """What a login token's row holds instead of its key."""
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()


def _login_token_model() -> Any:
    # Not at the top: DRF imports this module from its settings, maybe while models load.
    from casino.models import LoginToken

    return LoginToken


def _token_sql(db: str, login: bool) -> tuple[str, Any, list[Any]]:
    """The token lookup's SQL for `db`, built once: the user's columns, the token's id (a
    login token) and `created` (with the converters the ORM would apply to it)."""
    found = _TOKEN_SQL.get((db, login))
    if found is None:
        connection = connections[db]
        qn = connection.ops.quote_name
        user: Any = get_user_model()._meta
        model: Any = (
            _login_token_model() if login else drf_authentication.TokenAuthentication().get_model()
        )
        token: Any = model._meta
        columns = ", ".join(f"u.{qn(f.column)}" for f in user.concrete_fields)
        created = token.get_field("created")
        lookup = token.get_field("digest").column if login else token.pk.column
        token_id = f"t.{qn(token.pk.column)}, " if login else ""
        sql = (
            f"SELECT {columns}, {token_id}t.{qn(created.column)} AS {qn('_token_created')} "
            f"FROM {qn(user.db_table)} u INNER JOIN {qn(token.db_table)} t "
            f"ON u.{qn(user.pk.column)} = t.{qn(token.get_field('user').column)} "
            f"WHERE t.{qn(lookup)} = %s"
        )
        expression = created.get_col(token.db_table)
        converters = [
            *connection.ops.get_db_converters(expression),
            *created.get_db_converters(connection),
        ]
        found = _TOKEN_SQL[db, login] = (sql, expression, converters)
    return found


@cache
def _user_model() -> Any:
    return get_user_model()  # settings.AUTH_USER_MODEL does not change while serving


class TokenAuthentication(drf_authentication.TokenAuthentication):
    """DRF's token check (same header rules, errors and `(user, token)`), with the lookup as
    one raw statement built once, where the ORM would compile
    `select_related("user").get(key=...)` anew for every request. A login's token (48 characters)
    is looked up by its digest in `casino.models.LoginToken`, any other in DRF's table."""

    def authenticate_credentials(self, key: str) -> tuple[Any, Token | LoginToken]:
        login = len(key) == LOGIN_KEY_LENGTH
        model: Any = _login_token_model() if login else self.get_model()
        db = router.db_for_read(model) if router.routers else DEFAULT_DB_ALIAS
        sql, expression, converters = _token_sql(db, login)
        row = rawsql.fetch_one(sql, [key_digest(key) if login else key], using=db)
        if row is None:
            raise exceptions.AuthenticationFailed(_("Invalid token."))
        if login:
            user_columns, token_id, created = row[:-2], row[-2], row[-1]
        else:
            user_columns, token_id, created = row[:-1], None, row[-1]
        user: Any = rawsql.instance(_user_model(), user_columns, using=db)
        for convert in converters:
            created = convert(created, expression, connections[db])
        if login:
            token = model.from_db(db, ["id", "user_id", "created"], [token_id, user.pk, created])
        else:
            token = model.from_db(db, ["key", "user_id", "created"], [key, user.pk, created])
        # `token.user` without the reverse cache (`user.auth_token`) that assigning it sets: the
        # pair would be a reference cycle, garbage for the collector after every request.
        token._state.fields_cache["user"] = user
        if not user.is_active:
            raise exceptions.AuthenticationFailed(_("User inactive or deleted."))
        return user, token


def token_user(key: str) -> Any:
    """The active user of a good token (either kind), None otherwise (the WebSocket's check)."""
    try:
        return TokenAuthentication().authenticate_credentials(key)[0]
    except exceptions.AuthenticationFailed:
        return None
